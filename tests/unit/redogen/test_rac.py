"""RAC: the same transactions spread over 2-4 redo threads replicate exactly as in one thread.

redogen runs one seeded timeline twice: into one redo thread, and into N threads (sessions
dealt over the instances, statements of open transactions moved to another instance at
random so transactions span threads, the last thread idle with N >= 3). Record SCNs depend
only on the timeline (``scn_per_record``), so the output -- commit SCNs, times, XIDs,
values -- must be byte-identical, and equal to redogen's expected output. The one exception
is ``c_idx``: OLR numbers messages from the last checkpoint at the same SCN, and checkpoints
follow LWNs, whose boundaries differ from thread to thread (docs/rac.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from redocheck import check_file
from redogen_helpers import run_pipeline

from replicator.redo.header import parse_headers
from replicator.redogen import Scenario, generate, workloads

_C_IDX = re.compile(rb'"c_idx":\d+,')


def _single(sc: Scenario) -> Scenario:
    sc.threads, sc.scn_per_record = 1, True
    return sc


def _rac(sc: Scenario, threads: int, seed: int) -> Scenario:
    sc.threads, sc.migrate, sc.idle_threads = threads, 0.15, 1 if threads >= 3 else 0
    sc.log_archive_format = "arch%t_%s_%r.dbf"
    sc.log_blocks = 400 + 150 * (seed % 3)  # small logs: every thread switches, each at its own time
    return sc


def _replicate(sc: Scenario, out: Path) -> tuple[bytes, list]:
    result = generate(sc, out)
    if sc.migrate:
        assert result.stats["thread_moves"] > 0, "no transaction spans threads"
    for log in result.logs:
        check_file(log.path)
    assert run_pipeline(result.config) == 0
    got = result.output.read_bytes()
    assert result.expected is not None and got == result.expected.read_bytes()
    return got, result.logs


@pytest.mark.parametrize(
    ("seed", "threads", "version"), [(1, 2, "19"), (2, 3, "23"), (3, 4, "12.2"), (4, 2, "11.2"), (5, 3, "19")]
)
def test_rac_output_equals_single_thread(tmp_path: Path, seed: int, threads: int, version: str) -> None:
    one, _ = _replicate(_single(workloads.mixed(seed, events=160, version=version, wide=False)), tmp_path / "one")
    many, logs = _replicate(
        _rac(workloads.mixed(seed, events=160, version=version, wide=False), threads, seed), tmp_path / "rac"
    )
    assert one.count(b'"op":"commit"') >= 10
    assert _C_IDX.sub(b"", many) == _C_IDX.sub(b"", one)
    by_thread: dict[int, list[int]] = {}
    for log in logs:
        head = parse_headers(log.path.read_bytes()[:8192], str(log.path))
        assert head.thread == log.thread and f"arch{log.thread}_" in log.path.name
        by_thread.setdefault(log.thread, []).append(log.sequence)
    assert sorted(by_thread) == list(range(1, threads + 1))
    busy = [t for t in by_thread if len(by_thread[t]) > 1]
    assert busy, "no thread switched logs"


def test_cross_thread_transaction_comes_out_once_in_commit_order(tmp_path: Path) -> None:
    sc = Scenario.from_dict(
        {
            "threads": 2,
            "version": "19",
            "tables": [
                {"owner": "APP", "name": "T", "primary-key": ["ID"], "columns": ["ID NUMBER NOT NULL", "V NUMBER"]}
            ],
            "timeline": [
                {"insert": "T", "s": 1, "t": 1, "values": {"ID": 1, "V": 1}},  # begun on instance 1
                {"insert": "T", "s": 2, "t": 2, "values": {"ID": 2, "V": 2}},
                {"insert": "T", "s": 1, "t": 2, "values": {"ID": 3, "V": 3}},  # ... continued on instance 2
                {"commit": 2},
                {"commit": 1, "t": 2},  # ... and committed there
                {"insert": "T", "s": 3, "t": 1, "values": {"ID": 4, "V": 4}},
                {"commit": 3},
            ],
        }
    )
    result = generate(sc, tmp_path)
    assert run_pipeline(result.config) == 0
    out = result.output.read_text()
    assert out.encode() == result.expected.read_bytes()  # type: ignore[union-attr]
    ids = [line.split('"ID":')[1].split(",")[0] for line in out.splitlines() if '"ID":' in line]
    assert ids == ["2", "1", "3", "4"]


def _ddl_cross_node(threads: int) -> Scenario:
    """rac-ddl-cross-node.rac.sql: DDL on node 1, DML using the new column on node 2."""
    return Scenario.from_dict(
        {
            "threads": threads,
            "scn-per-record": True,
            "version": "23",
            "tables": [
                {
                    "owner": "OLR_TEST",
                    "name": "TEST_RAC_DDL",
                    "primary-key": ["ID"],
                    "columns": ["ID NUMBER NOT NULL", "NAME VARCHAR2(100)", "VAL NUMBER"],
                }
            ],
            "timeline": [
                {"insert": "TEST_RAC_DDL", "s": 1, "t": 1, "values": {"ID": 1, "NAME": "Alice", "VAL": 100}},
                {"insert": "TEST_RAC_DDL", "s": 1, "values": {"ID": 2, "NAME": "Bob", "VAL": 200}},
                {"commit": 1},
                {"add_column": "TEST_RAC_DDL", "s": 1, "column": "EMAIL VARCHAR2(200)"},
                {
                    "insert": "TEST_RAC_DDL",
                    "s": 2,
                    "t": min(2, threads),
                    "values": {"ID": 3, "NAME": "Charlie", "VAL": 300, "EMAIL": "charlie@test.com"},
                },
                {"update": "TEST_RAC_DDL", "s": 2, "key": {"ID": 1}, "values": {"EMAIL": "alice@test.com"}},
                {"commit": 2},
                {"update": "TEST_RAC_DDL", "s": 1, "key": {"ID": 2}, "values": {"VAL": 250, "EMAIL": "bob@test.com"}},
                {"delete": "TEST_RAC_DDL", "s": 1, "key": {"ID": 1}},
                {"commit": 1},
            ],
        }
    )


def test_ddl_on_one_node_applies_to_dml_of_the_other(tmp_path: Path) -> None:
    one, _ = _replicate(_ddl_cross_node(1), tmp_path / "one")
    many, _ = _replicate(_ddl_cross_node(2), tmp_path / "rac")
    assert _C_IDX.sub(b"", many) == _C_IDX.sub(b"", one)
    assert b'"EMAIL":"charlie@test.com"' in many and b'"EMAIL":"bob@test.com"' in many


def test_online_rings_per_thread_read_by_the_offline_daemon(tmp_path: Path) -> None:
    import json

    from replicator.redogen.online import generate_online

    sc = _rac(workloads.mixed(7, events=120, version="19", wide=False), 2, 0)
    sc.log_blocks = 300
    result = generate_online(sc, tmp_path, groups=2, final_switch=True)
    doc = json.loads(result.checkpoint.read_text())
    groups = [Path(g["path"][0]).name for g in doc["online-redo"]]
    assert groups == ["redo_t1_g1.log", "redo_t1_g2.log", "redo_t2_g3.log", "redo_t2_g4.log"]
    per_thread = {t: [log.sequence for log in result.logs if log.thread == t] for t in (1, 2)}
    assert all(len(seqs) > 2 for seqs in per_thread.values()), per_thread  # each ring was reused
    config = json.loads(result.config.read_text())
    config["source"][0]["debug"] = {"stop-log-switches": len(result.logs)}
    result.config.write_text(json.dumps(config))
    assert run_pipeline(result.config) == 0
    assert result.output.read_bytes() == result.expected.read_bytes()


def test_redogen_threads_option_and_dump_show_the_thread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from replicator.cli import main

    assert main(["redogen", "mixed", "-o", str(tmp_path), "--threads", "3", "--param", "events=40"]) == 0
    printed = capsys.readouterr().out
    assert "thread 3 seq 1" in printed
    files = sorted((tmp_path / "redo").iterdir())
    assert {parse_headers(f.read_bytes()[:8192]).thread for f in files} == {1, 2, 3}
    assert main(["dump", str(files[-1])]) == 0
    assert " thread 3, sequence " in capsys.readouterr().out


def test_batch_run_writes_a_restart_point_per_thread(tmp_path: Path) -> None:
    """A RAC batch run ends with OLR's checkpoint file plus "threads": each thread's position,
    held back to the first LWN holding an SCN at or above the begin of a transaction still open."""
    import json

    sc = Scenario.from_dict(
        {
            "threads": 2,
            "version": "19",
            "tables": [
                {"owner": "APP", "name": "T", "primary-key": ["ID"], "columns": ["ID NUMBER NOT NULL", "V NUMBER"]}
            ],
            "timeline": [
                {"insert": "T", "s": 1, "t": 1, "values": {"ID": 1, "V": 1}},
                {"commit": 1},
                {"insert": "T", "s": 2, "t": 2, "values": {"ID": 2, "V": 2}, "wait": 1},  # left open
                {"insert": "T", "s": 1, "t": 1, "values": {"ID": 3, "V": 3}, "wait": 1},
                {"commit": 1},
            ],
        }
    )
    result = generate(sc, tmp_path)
    assert run_pipeline(result.config) == 0
    points = sorted(result.checkpoint.parent.glob("TEST-chkpt-*.json"))
    assert len(points) == 2  # the one the run started from, and the run's restart point
    doc = json.loads(points[-1].read_text())
    threads = {t["thread"]: (t["seq"], t["offset"]) for t in doc["threads"]}
    # Thread 2: the LWN where the open transaction began (block 3, after the heartbeat LWN).
    assert threads[2] == (1, 3 * 512)
    # Thread 1: not before its LWNs whose records are all below that begin SCN (heartbeat, ID 1),
    # not past its LWN holding higher SCNs (ID 3's insert and commit, re-read, then dropped).
    assert (1, 3 * 512) < threads[1] < (2, 0)
    assert (doc["seq"], doc["offset"]) == threads[1]
