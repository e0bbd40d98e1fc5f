"""``replicator verify`` against the file writer's real output: clean, a changed row, a removed
rotation file, a torn last line, and the formats and writers it refuses."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from verify_fixtures import check, cli, config_with, generated, positions, replicate, reported

from replicator.errors import ReplicatorError
from replicator.redogen.generate import GenerationResult


@pytest.fixture(scope="module")
def redo(tmp_path_factory: pytest.TempPathFactory) -> GenerationResult:
    return generated(tmp_path_factory.mktemp("verify-file"), log_blocks=2048)


@pytest.fixture(scope="module")
def plain(redo: GenerationResult) -> tuple[Path, Path]:
    """The batch run's one output file and its config."""
    output = redo.config.parent / "plain.json"
    config = config_with(redo, "plain-config.json", {"type": "file", "output": str(output), "new-line": 1, "append": 1})
    replicate(config)
    return config, output


def test_a_clean_output_verifies_ok_with_its_figures(plain: tuple[Path, Path]) -> None:
    config, output = plain
    status, doc, err = cli(config)
    assert status == 0, err
    lines = output.read_bytes().splitlines()
    assert doc["result"] == "ok" and doc["counts"] == {"missing": 0, "duplicated": 0, "differs": 0, "extra": 0}
    assert doc["compared"]["redo_changes"] == doc["compared"]["sink_changes"] == len(lines)
    assert doc["compared"]["transactions"] == sum(b'"op":"commit"' in line for line in lines)
    assert all(row["equal"] for row in doc["tables"]) and len(doc["tables"]) > 5
    assert doc["redo"]["mb_per_s"] > 0 and doc["sink"]["mb_per_s"] > 0 and doc["peak_rss_mb"] > 0


def test_a_sink_ahead_of_the_redo_read_is_checked_as_far_as_the_redo_goes(
    redo: GenerationResult, plain: tuple[Path, Path]
) -> None:
    config, _ = plain
    first = str(redo.logs[0].path)
    report = check(config, "--redo", first)  # the daemon is further on: the next logs are not archived yet
    assert report.ok, report.text()
    assert report.result.after_redo > 0 and report.notes and report.bounds.startswith("every change of the redo")
    everything = check(config)
    assert report.result.redo_changes + report.result.after_redo == everything.result.redo_changes


def test_a_changed_row_is_found_at_its_position(plain: tuple[Path, Path], tmp_path: Path) -> None:
    config, output = plain
    lines = output.read_bytes().splitlines(keepends=True)
    victim = next(n for n in range(len(lines) // 2, len(lines)) if b'"op":"u"' in lines[n])
    doc = json.loads(lines[victim])
    after = doc["payload"][0]["after"]
    column = next(c for c in after if c != "ID")
    after[column] = "changed by hand"
    copy = tmp_path / "changed.json"
    copy.write_bytes(
        b"".join(lines[:victim])
        + json.dumps(doc, separators=(",", ":")).encode()
        + b"\n"
        + b"".join(lines[victim + 1 :])
    )
    report = check(config, "--sink", f"file:{copy}")
    assert not report.ok and report.result.counts == {"missing": 0, "duplicated": 0, "differs": 1, "extra": 0}
    [d] = report.details
    assert (d.kind, d.c_scn, d.c_idx, d.xid) == ("differs", doc["c_scn"], doc["c_idx"], doc["xid"])
    assert d.table == f"APP.{doc['payload'][0]['schema']['table']}" and d.key == {"ID": after["ID"]}
    assert d.columns == [f"after.{column}"] and d.sink == [f"{copy} line {victim + 1}"]
    assert report.result.differing_transactions == 1
    [txn] = report.as_json()["differing_transactions"]
    assert (txn["c_scn"], txn["xid"]) == (doc["c_scn"], doc["xid"]) and txn["redo"] == txn["sink"]
    assert txn["redo_digest"] != txn["sink_digest"]


@pytest.mark.parametrize("newline", [1, 2])
def test_a_removed_rotation_file_is_found_with_every_change_it_held(redo: GenerationResult, newline: int) -> None:
    out_dir = redo.config.parent / f"rotated{newline}"
    out_dir.mkdir()
    config = config_with(
        redo,
        f"rotated{newline}.json",
        {
            "type": "file",
            "output": str(out_dir / "cdc-%i.json"),
            "max-file-size": 96 * 1024,
            "new-line": newline,
            "append": 1,
        },
    )
    replicate(config)
    files = sorted(out_dir.iterdir(), key=lambda p: int(p.stem.split("-")[1]))
    assert len(files) > 4
    assert check(config).ok
    removed = files[len(files) // 2]
    held = positions(removed.read_bytes().splitlines())
    removed.unlink()
    report = check(config)
    assert report.result.counts == {"missing": len(held), "duplicated": 0, "differs": 0, "extra": 0}
    assert reported(report, "missing") == held
    assert [(f.kind, f.where) for f in report.findings] == [("rotation", str(removed))]


def test_a_torn_last_line_is_a_finding(plain: tuple[Path, Path], tmp_path: Path) -> None:
    config, output = plain
    data = output.read_bytes()
    copy = tmp_path / "torn.json"
    copy.write_bytes(data[:-40])  # a crash in the middle of the last message
    report = check(config, "--sink", f"file:{copy}")
    assert not report.ok and report.result.total == 0  # its change lies after what the sink claims
    assert sorted(f.kind for f in report.findings) == ["torn", "unreadable"]
    assert report.result.not_claimed == 1


def test_formats_and_writers_that_cannot_be_verified_are_refused(
    redo: GenerationResult, plain: tuple[Path, Path], tmp_path: Path
) -> None:
    output = str(tmp_path / "p.out")
    cases = [
        (
            config_with(
                redo, "protobuf.json", {"type": "file", "output": output, "append": 1}, fmt={"type": "protobuf"}
            ),
            "verify reads OpenLogReplicator JSON sinks only",
        ),
        (config_with(redo, "stdout.json", {"type": "file"}), "writes to stdout"),
        (config_with(redo, "network.json", {"type": "network", "uri": "127.0.0.1:1"}), "--sink capture:FILE"),
        (
            config_with(redo, "glued.json", {"type": "file", "output": output, "new-line": 0, "append": 1}),
            "no message boundaries",
        ),
    ]
    for config, text in cases:
        status, _, err = cli(config)
        assert status == 1 and "ERROR 10401" in err and text in err, err
    with pytest.raises(ReplicatorError) as missing:
        check(plain[0], "--sink", f"file:{tmp_path}/none-%i.json")
    assert missing.value.code == 10402
    assert not os.path.exists(output)
