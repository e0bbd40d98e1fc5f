"""`replicator redogen` entry point and the workload library (no pipeline needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from redocheck import check_file

from replicator.redogen import workloads
from replicator.redogen.commands import parse_size, redogen_main
from replicator.redogen.generator import RedoGenerator


def test_parse_size() -> None:
    assert parse_size("512") == 512 and parse_size("64k") == 65536 and parse_size("10MB") == 10 << 20
    assert parse_size("1.5GiB") == 3 << 29


def test_redogen_workload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = redogen_main(
        [
            "oltp",
            "-o",
            str(tmp_path),
            "--size",
            "200k",
            "--seed",
            "4",
            "--db-version",
            "23",
            "--block-size",
            "1024",
            "--format",
            '{"type":"json","rid":1}',
        ]
    )
    assert rc == 0
    cfg = json.loads((tmp_path / "OpenLogReplicator.json").read_text())
    src = cfg["source"][0]
    assert src["reader"]["type"] == "batch" and src["format"] == {"type": "json", "rid": 1}
    assert src["reader"]["start-scn"] == 2266634
    chk = json.loads((tmp_path / "checkpoint" / "TEST-chkpt-2266634.json").read_text())
    assert chk["con-id"] == 3 and {r["name"] for r in chk["sys-obj"] if r["type"] == 2} >= {"T00", "T09"}
    assert all(
        k in chk
        for k in (
            "sys-col",
            "sys-cdef",
            "sys-ccol",
            "sys-user",
            "sys-tab",
            "sys-ts",
            "sys-deferredstg",
            "sys-ecol",
            "sys-lob",
            "xdb-ttset",
            "incarnations",
        )
    )
    for path in (tmp_path / "redo").iterdir():
        assert check_file(path).block_size == 1024
    assert (tmp_path / "expected.json").stat().st_size > 0
    assert "redo log(s)" in capsys.readouterr().out


def test_redogen_scenario_file(tmp_path: Path) -> None:
    doc = {
        "tables": [{"owner": "A", "name": "T", "primary-key": ["ID"], "columns": ["ID NUMBER", "V DATE"]}],
        "timeline": [{"insert": "T", "values": {"ID": 1, "V": "2020-01-01"}}, {"commit": 1}],
    }
    (tmp_path / "s.json").write_text(json.dumps(doc))
    assert redogen_main([str(tmp_path / "s.json"), "-o", str(tmp_path / "out"), "--db-version", "12.2"]) == 0
    assert b'"V":"1577836800"' in (tmp_path / "out" / "expected.json").read_bytes()


def test_redogen_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert redogen_main(["no-such-thing", "-o", str(tmp_path)]) == 1
    assert "ERROR 30002" in capsys.readouterr().err


def test_workload_mix_is_realistic(tmp_path: Path) -> None:
    sc = workloads.oltp(seed=11, target_bytes=1_500_000, preload=40)
    events = []
    engine = RedoGenerator(sc, tmp_path, keep_expected=False)
    for e in sc.timeline:
        engine.step(e)
        events.append(e.op)
        if engine.stream.bytes_written >= sc.max_redo_bytes:
            break
    events = events[events.index("update") :]  # after the preload
    dml = [o for o in events if o in ("insert", "update", "delete", "insert_many")]
    share = {k: dml.count(k) / len(dml) for k in ("insert", "update", "delete")}
    assert 0.55 < share["update"] < 0.8 and 0.05 < share["delete"] < 0.15
    ends = [o for o in events if o in ("commit", "rollback")]
    assert 0.03 < ends.count("rollback") / len(ends) < 0.2
    assert len(sc.tables) == 10 and all(5 <= len(t.columns) <= 60 for t in sc.tables)
    engine.stream.close()


def test_workloads_are_deterministic(tmp_path: Path) -> None:
    a = [(e.op, e.session, e.table) for _, e in zip(range(300), workloads.oltp(seed=5).timeline)]
    b = [(e.op, e.session, e.table) for _, e in zip(range(300), workloads.oltp(seed=5).timeline)]
    assert a == b
