"""Online mode: a ring of groups written in place, archived at each switch, read while growing."""

from __future__ import annotations

import filecmp
import json
import struct
import threading
import time
from pathlib import Path

import pytest
from redocheck import check_file, online_valid_blocks
from redogen_helpers import pipeline_missing, run_pipeline

from replicator.redogen import workloads
from replicator.redogen.generate import generate
from replicator.redogen.online import generate_online, record_online


def _scenario(events: int = 150):
    return workloads.mixed(3, events, version="19", log_blocks=80, lwn_max_blocks=16)


def test_archives_equal_batch_logs(tmp_path: Path) -> None:
    batch = generate(_scenario(), tmp_path / "batch")
    online = generate_online(_scenario(), tmp_path / "online", groups=3, final_switch=True)
    assert len(batch.logs) == len(online.logs) > 3  # the 3-group ring was reused
    for a, b in zip(batch.logs, online.logs):
        assert a.path.name == b.path.name and filecmp.cmp(a.path, b.path, shallow=False)
        assert b.path.parent.parent.name == "archivelog"
    assert batch.expected.read_bytes() == online.expected.read_bytes()


def test_recorded_replay_writes_what_the_live_generator_writes(tmp_path: Path) -> None:
    """The lag benchmark's recording, replayed (pausing once), leaves the same online groups,
    archives, checkpoint and config as the generator writing them live; every LWN is reported
    once, in order, after it is on disk."""
    live = generate_online(_scenario(), tmp_path / "live", groups=3)
    recording = record_online(_scenario(), tmp_path / "replay", groups=3)
    groups = list((tmp_path / "replay" / "online").glob("*.log"))
    assert len(groups) == 3 and not any(p.read_bytes().strip(b"\0") for p in groups), "redo written before the replay"
    ready = threading.Event()
    reported: list[tuple[int, int]] = []
    paused: list[int] = []
    recording.replay(
        0,
        ready=ready,
        on_lwn_written=lambda first, last: reported.append((first, last)),
        pause_after=recording.bytes // 2,
        at_pause=lambda: paused.append(len(reported)),
    )
    assert ready.is_set() and len(paused) == 1 and 0 < paused[0] < len(reported)
    assert reported == sorted(reported) and len(set(reported)) == len(reported)
    for sub in ("online", "fra"):
        names = sorted(p.relative_to(tmp_path / "live") for p in (tmp_path / "live" / sub).rglob("*") if p.is_file())
        assert names and names == sorted(
            p.relative_to(tmp_path / "replay") for p in (tmp_path / "replay" / sub).rglob("*") if p.is_file()
        )
        for name in names:
            assert filecmp.cmp(tmp_path / "live" / name, tmp_path / "replay" / name, shallow=False), name
    for name in ("OpenLogReplicator.json", f"checkpoint/{live.checkpoint.name}"):
        live_doc = (tmp_path / "live" / name).read_text().replace(str(tmp_path / "live"), "DIR")
        assert live_doc == (tmp_path / "replay" / name).read_text().replace(str(tmp_path / "replay"), "DIR")


def test_current_log_and_group_reuse(tmp_path: Path) -> None:
    result = generate_online(_scenario(), tmp_path, groups=3)
    doc = json.loads(result.checkpoint.read_text())
    groups = [Path(g["path"][0]) for g in doc["online-redo"]]
    assert len(groups) == 3 and doc["db-recovery-file-dest"].endswith("fra")
    heads = {}
    for path in groups:
        data = path.read_bytes()
        assert len(data) == 80 * 512  # preallocated group size
        seq, valid = online_valid_blocks(path)
        heads[seq] = (path, data, valid)
    current_seq = max(heads)
    path, data, valid = heads[current_seq]
    assert data[512 + 192 : 512 + 200] == b"\xff" * 8  # next SCN: none
    assert struct.unpack_from("<I", data, 512 + 156)[0] == 0xFFFFFFFF  # NAB not set while current
    assert valid > 2
    stale = data[valid * 512 : (valid + 1) * 512]
    assert stale[:2] == b"\0\0" or struct.unpack_from("<I", stale, 8)[0] < current_seq  # older sequence left over
    for seq, (_, gdata, _) in heads.items():
        if seq != current_seq:  # switched groups carry their final header
            assert gdata[512 + 192 : 512 + 200] != b"\xff" * 8
    assert {log.sequence for log in result.logs} == set(range(1, current_seq))
    for log in result.logs:
        check_file(log.path)


def test_reader_sees_the_current_log_grow(tmp_path: Path) -> None:
    sc = workloads.mixed(5, 400, version="23", log_blocks=400, lwn_max_blocks=8, wide=False)
    done = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        try:
            generate_online(sc, tmp_path, groups=2, rate_mb_s=0.5, with_expected=False)
        except BaseException as exc:  # surfaced by the main thread
            errors.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=write)
    thread.start()
    seen: dict[int, int] = {}
    group1 = tmp_path / "online" / "redo01.log"
    while not done.is_set():
        if group1.exists() and group1.stat().st_size:
            for path in (tmp_path / "online").glob("redo*.log"):
                seq, valid = online_valid_blocks(path)
                if seq and valid >= seen.get(seq, 0):
                    seen[seq] = valid
                assert valid >= seen.get(seq, 0) or seq not in seen  # a log never shrinks under a reader
        time.sleep(0.01)
    thread.join()
    assert not errors, errors
    assert len(seen) >= 1 and max(seen.values()) > 2


def test_offline_reader_on_online_groups(tmp_path: Path) -> None:
    reason = pipeline_missing()
    if reason:
        pytest.skip(reason)
    result = generate_online(_scenario(60), tmp_path, groups=3, final_switch=True)
    # The daemon tails forever; stop it softly after the logs the generator wrote.
    config = json.loads(Path(result.config).read_text())
    config["source"][0]["debug"] = {"stop-log-switches": len(result.logs)}
    Path(result.config).write_text(json.dumps(config))
    rc = run_pipeline(result.config)
    assert rc == 0
    assert result.output.read_bytes() == result.expected.read_bytes()
