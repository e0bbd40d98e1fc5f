"""Multitenant redo in both engines: one container per run, the other containers' vectors
counted and logged (60041) alike, messages and log lines byte-identical; a run of several
containers (source.containers) alike: the native engine routes its records through the python
dispatch (by CON_ID) and renders the commits natively, byte-identical with 0, 1 and 2 decode workers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from native_diff import assert_same

from replicator.redogen import Scenario, generate

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "olr-check" / "multitenant-pdbs.yaml"


@pytest.mark.parametrize("version", ["12.1", "19", "23"])
def test_every_container_of_a_cdb_alone_in_both_engines(tmp_path: Path, version: str) -> None:
    sc = Scenario.from_file(SCENARIO)
    sc.version = version
    case = generate(sc, tmp_path / "case")
    for c in case.containers:
        py = assert_same(json.loads(c.config.read_text()), tmp_path / c.name)
        skipped = [line for line in py["log"] if line.startswith("60041 ")]
        assert len(skipped) == len(case.containers)  # one per other container, and the counts
        assert "skipped, of containers the run does not replicate" in skipped[-1]


@pytest.mark.parametrize("scenario", ["multitenant-pdbs", "multitenant-ddl"])
@pytest.mark.parametrize("fmt", [None, {"type": "debezium"}, {"type": "protobuf"}])
def test_several_containers_in_one_run_in_both_engines(
    tmp_path: Path, fmt: dict[str, str] | None, scenario: str
) -> None:
    case = generate(Scenario.from_file(SCENARIO.with_name(f"{scenario}.yaml")), tmp_path / "case")
    cfg = case.all_containers_config()
    if fmt is not None:
        cfg["source"][0]["format"] = fmt
    py = assert_same(cfg, tmp_path)
    assert py["error"] is None and py["messages"]
    if fmt is None:
        assert (case.out_dir / "expected-all.json").read_bytes() == b"".join(m[0] + b"\n" for m in py["messages"])


SAME_XID = """
name: TEST
version: '19'
format: {type: json, scn: 1, xid: 1, db: 3}
containers:
- {name: PDB1, con-id: 3}
- {name: PDB2, con-id: 4}
tables:
- {owner: APP, name: T, container: PDB1, primary-key: [ID], columns: [ID NUMBER NOT NULL, V VARCHAR2(4000)]}
- {owner: APP, name: T, container: PDB2, primary-key: [ID], columns: [ID NUMBER NOT NULL, V VARCHAR2(4000)]}
timeline:
"""


@pytest.mark.parametrize("swap", [False, True])
def test_one_xid_open_in_two_containers_in_both_engines(tmp_path: Path, swap: bool) -> None:
    """Two PDBs' local undo giving one XID to two open transactions: kept apart by the memory
    pool (keyed by CON_ID and XID), in both engines alike, also when both are swapped to disk."""
    rows = "".join(
        f"- {{s: {s}, insert: PDB{s}/T, xid: 5.3.1200, values: {{ID: {10 * i + s}, V: {'xyz'[i % 3] * 3900}}}}}\n"
        for i in range(300)  # ~1.1 MiB per transaction: more than one pool chunk
        for s in (1, 2)
    )
    source = tmp_path / "same.yaml"
    source.write_text(SAME_XID + rows + "- {commit: 1}\n- {commit: 2}\n")
    case = generate(Scenario.from_file(source), tmp_path / "case")
    cfg = case.all_containers_config()
    if swap:
        (tmp_path / "swap").mkdir()
        cfg["memory"] = {"min-mb": 32, "max-mb": 32, "swap-mb": 1, "swap-path": str(tmp_path / "swap")}
    py = assert_same(cfg, tmp_path)
    assert py["error"] is None
    assert (case.out_dir / "expected-all.json").read_bytes() == b"".join(m[0] + b"\n" for m in py["messages"])
    assert not swap or not list((tmp_path / "swap").iterdir())
