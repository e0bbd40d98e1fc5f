"""Multitenant redo in both engines: one container per run, the other containers' vectors
counted and logged (60041) alike, messages and log lines byte-identical; a run of several
containers (source.containers) is the python engine's, and the native one refuses it (30160)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from native_diff import assert_same, run_engine

from replicator.redogen import Scenario, generate

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "olr-check" / "multitenant-pdbs.yaml"


@pytest.mark.parametrize("version", ["12.1", "19", "23"])
def test_every_container_of_a_cdb_alone_in_both_engines(tmp_path: Path, version: str) -> None:
    sc = Scenario.from_file(SCENARIO)
    sc.version = version
    case = generate(sc, tmp_path / "case")
    for c in case.containers:
        cfg = json.loads(c.config.read_text())
        py = assert_same(cfg, tmp_path / c.name)
        skipped = [line for line in py["log"] if line.startswith("60041 ")]
        assert len(skipped) == len(case.containers)  # one per other container, and the counts
        assert "skipped, of containers the run does not replicate" in skipped[-1]


def test_several_containers_are_refused_by_the_native_engine(tmp_path: Path) -> None:
    case = generate(Scenario.from_file(SCENARIO), tmp_path / "case")
    cfg = json.loads(case.config.read_text())
    cfg["source"][0]["containers"] = [{"state-path": str(c.checkpoint.parent)} for c in case.containers[1:]]
    cfg["source"][0]["filter"]["table"] = [{"owner": o, "table": ".*"} for o in ("APP", "HR", "C##OPS")]
    nat = run_engine(cfg, tmp_path, "native")
    assert nat["error"] is not None and "30160" in nat["error"] and "--engine python" in nat["error"]
    py = run_engine(cfg, tmp_path, "python")
    assert py["error"] is None and py["messages"]
    assert (case.out_dir / "expected-all.json").read_bytes() == b"".join(m[0] + b"\n" for m in py["messages"])
