"""Change digests and checkpoint digests (replicator.formats.olr_digest) on real pipeline output."""

from __future__ import annotations

import re
from pathlib import Path

import orjson
import pytest
from verify_units import batch_run, generated

from replicator.config import explain_config
from replicator.formats.olr_digest import (
    CHAIN_BROKEN,
    DIGEST_MISMATCH,
    NO_DIGESTS,
    StreamCheckFailed,
    StreamVerifier,
    changes_of,
    decode,
)

ROW = (
    b'{"c_scn":100,"c_idx":2,"xid":"1.2.3","payload":[{"op":"u","schema":{"owner":"APP","table":"T"},'
    b'"before":{"ID":1,"V":"a","N":1.50},"after":{"ID":1,"V":"b","N":2}}]}'
)


def _digest(body: bytes) -> int:
    [change] = changes_of(decode(body))
    return change.digest


def test_a_change_digest_is_its_content_not_its_layout() -> None:
    same = (
        b'{"scn":7,"tm":9,"c_scn":100,"c_idx":2,"xid":"1.2.3","db":"X","payload":[{"op":"u","schema":'
        b'{"table":"T","owner":"APP"},"after":{"V":"b","N":2,"ID":1},"before":{"N":1.50,"V":"a","ID":1}}]}'
    )
    assert _digest(same) == _digest(ROW)  # header fields and key order are not content
    assert _digest(ROW.replace(b'"N":1.50', b'"N":1.5')) != _digest(ROW)  # numbers as printed
    assert _digest(ROW.replace(b'"N":2}', b'"N":"2"}')) != _digest(ROW)  # a number is not a string
    assert _digest(ROW.replace(b'"V":"b"', b'"V":null')) != _digest(ROW)
    assert _digest(ROW.replace(b'"op":"u"', b'"op":"c"')) != _digest(ROW)
    assert _digest(ROW.replace(b'"table":"T"', b'"table":"U"')) != _digest(ROW)
    [change] = changes_of(decode(ROW))
    assert (change.id.c_scn, change.id.c_idx, change.id.elem, change.id.xid) == (100, 2, 0, "1.2.3")
    big = ROW.replace(b'"N":2}', b'"N":100000000000000000000000}')  # beyond 64 bits: still exact
    assert _digest(big) != _digest(big.replace(b"0000}", b"0001}"))
    nonfinite = ROW.replace(b'"N":2}', b'"N":-inf}')  # OLR prints BINARY_DOUBLE infinities unquoted
    assert _digest(nonfinite) != _digest(ROW)


def test_full_mode_elements_are_changes_of_their_own() -> None:
    body = (
        b'{"scn":5,"c_scn":100,"c_idx":1,"xidn":77,"payload":[{"op":"c","schema":{"owner":"A","table":"T"},'
        b'"after":{"ID":1}},{"op":"d","schema":{"owner":"A","table":"U"},"before":{"ID":2}}]}'
    )
    changes = changes_of(decode(body))
    assert [(c.id.elem, c.id.xid, c.table) for c in changes] == [(0, "77", "T"), (1, "77", "U")]
    assert changes_of(decode(b'{"c_scn":1,"c_idx":1,"payload":[{"op":"chkpt","seq":1,"offset":512}]}')) == []


@pytest.fixture(scope="module")
def digest_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[bytes], list[bytes]]:
    """The same redo with checkpoint messages (flag 0x1000), with and without checkpoint-digests."""
    result = generated(tmp_path_factory.mktemp("digests"))
    _, plain = batch_run(result, "plain", flags=0x1000)
    _, signed = batch_run(result, "signed", flags=0x1000, fmt={"checkpoint-digests": 1})
    return plain.read_bytes().splitlines(), signed.read_bytes().splitlines()


def test_the_option_only_adds_the_digests_member(digest_runs: tuple[list[bytes], list[bytes]]) -> None:
    plain, signed = digest_runs
    assert len(plain) == len(signed) and any(b'"op":"chkpt"' in line for line in plain)
    stripped = [re.sub(rb',"digests":\{.*\}\}\]\}$', b"}]}", line) for line in signed]
    assert stripped == plain
    assert all(b'"digests":' in line for line in signed if b'"op":"chkpt"' in line)


def _verify(lines: list[bytes]) -> StreamVerifier:
    verifier = StreamVerifier()
    for line in lines:
        verifier.take(line)
    return verifier


def test_a_clean_stream_verifies_every_checkpoint(digest_runs: tuple[list[bytes], list[bytes]]) -> None:
    _, signed = digest_runs
    checkpoints = [n for n, line in enumerate(signed) if b'"op":"chkpt"' in line]
    verifier = _verify(signed)
    assert verifier.checked == len(checkpoints) - 1  # the first one synchronises
    changes = sum(len(changes_of(decode(line))) for line in signed[checkpoints[0] :])
    assert verifier.changes == changes > 1000
    assert _verify(signed[checkpoints[5] - 3 :]).checked == len(checkpoints) - 6  # a start inside a segment


def _row_lines(lines: list[bytes]) -> list[int]:
    """The inserts (their after image starts with the ID column)."""
    return [n for n, line in enumerate(lines) if b'"op":"c"' in line and b'"after":{"ID":' in line]


def test_a_lost_or_altered_message_stops_at_its_checkpoint(digest_runs: tuple[list[bytes], list[bytes]]) -> None:
    _, signed = digest_runs
    victim = _row_lines(signed)[len(_row_lines(signed)) // 2]
    table = orjson.loads(signed[victim])["payload"][0]["schema"]["table"]
    with pytest.raises(StreamCheckFailed) as lost:
        _verify(signed[:victim] + signed[victim + 1 :])
    assert lost.value.code == DIGEST_MISMATCH
    assert f"table APP.{table}: " in lost.value.message and "lost, duplicated or altered" in lost.value.message
    altered = signed[victim].replace(b'"after":{"ID":', b'"after":{"ID":9', 1)
    assert altered != signed[victim]
    with pytest.raises(StreamCheckFailed) as changed:
        _verify(signed[:victim] + [altered] + signed[victim + 1 :])
    assert changed.value.code == DIGEST_MISMATCH


def test_a_replay_is_set_aside_but_a_changed_replay_is_not(digest_runs: tuple[list[bytes], list[bytes]]) -> None:
    _, signed = digest_runs
    victim = _row_lines(signed)[40]
    assert _verify(signed[: victim + 1] + [signed[victim]] + signed[victim + 1 :]).replayed == 1
    checkpoints = [n for n, line in enumerate(signed) if b'"op":"chkpt"' in line]
    again = signed[: checkpoints[9] + 1] + signed[checkpoints[6] + 1 :]  # a restart re-sends three segments
    replay = _verify(again)
    assert replay.checked == len(checkpoints) - 1 and replay.replayed > 0
    changed = signed[victim].replace(b'"after":{"ID":', b'"after":{"ID":9', 1)
    with pytest.raises(StreamCheckFailed) as twice:
        _verify(signed[: victim + 1] + [changed] + signed[victim + 1 :])
    assert twice.value.code == DIGEST_MISMATCH and "came again with another content" in twice.value.message


def test_a_lost_checkpoint_with_its_changes_breaks_the_chain(digest_runs: tuple[list[bytes], list[bytes]]) -> None:
    _, signed = digest_runs
    checkpoints = [n for n, line in enumerate(signed) if b'"op":"chkpt"' in line]
    a, b = checkpoints[10], checkpoints[11]
    with pytest.raises(StreamCheckFailed) as broken:
        _verify(signed[: a + 1] + signed[b + 1 :])  # the segment up to checkpoint b and b itself are gone
    assert broken.value.code == CHAIN_BROKEN
    assert "were lost" in broken.value.message


def test_checkpoints_without_digests_are_refused(digest_runs: tuple[list[bytes], list[bytes]]) -> None:
    plain, _ = digest_runs
    with pytest.raises(StreamCheckFailed) as missing:
        _verify(plain)
    assert missing.value.code == NO_DIGESTS and "format.checkpoint-digests" in missing.value.message


@pytest.mark.parametrize(
    ("fmt", "flags", "ok"),
    [("json", 0x1000, True), ("json", 0, False), ("protobuf", 0x1000, False), ("debezium", 0x1000, True)],
)
def test_the_option_needs_olr_json_and_checkpoint_messages(tmp_path: Path, fmt: str, flags: int, ok: bool) -> None:
    doc = {
        "version": "1.9.0",
        "state": {"type": "disk", "path": str(tmp_path)},
        "source": [
            {
                "alias": "S1",
                "name": "DB",
                "flags": flags,
                "reader": {"type": "batch", "redo-log": ["x"]},
                "format": {"type": fmt, "checkpoint-digests": 1},
            }
        ],
        "target": [{"alias": "T1", "source": "S1", "writer": {"type": "file", "output": "o.json"}}],
    }
    path = tmp_path / "c.json"
    path.write_text(orjson.dumps(doc).decode())
    problems = explain_config(str(path))
    if ok:
        assert problems == []
    else:
        assert any("checkpoint-digests" in p and "30001" in p for p in problems), problems
