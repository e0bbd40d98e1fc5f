"""Multitenant redo end to end: the generated CDB (tests/scenarios/olr-check/multitenant-pdbs.yaml,
three PDBs and CDB$ROOT, PDB2 plugged with DBID != CON_UID, the same OBJ# in two PDBs) read by
`replicator run` one container per run (as OpenLogReplicator 1.9) and all containers in one run
(``source.containers``), in both engines.

Never silent: every change vector of a container the run does not replicate is counted and
logged (60041), the same in both engines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from replicator import native
from replicator.errors import ConfigError
from replicator.redogen.generate import GenerationResult, generate
from replicator.redogen.scenario import Scenario

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "olr-check" / "multitenant-pdbs.yaml"
ENGINES = ["python", pytest.param("native", marks=pytest.mark.skipif(not native.available(), reason="not built"))]
SUMMARY = re.compile(
    r"60041 change vectors skipped, of containers the run does not replicate \(.* replicated\): (.*)$", re.M
)


def _run(config: Path, engine: str) -> int:
    from replicator.cli import main

    return main(["run", "-f", str(config), "--progress", "off", "--engine", engine])


def _all_containers(case: GenerationResult) -> Path:
    """The first container's config with every other container in ``source.containers``."""
    cfg = case.all_containers_config()
    cfg["target"][0]["writer"]["output"] = str(case.out_dir / "output-all.json")
    path = case.out_dir / "OpenLogReplicator-all.json"
    path.write_text(json.dumps(cfg))
    return path


@pytest.fixture
def case(tmp_path: Path) -> GenerationResult:
    return generate(Scenario.from_file(SCENARIO), tmp_path / "case")


@pytest.mark.parametrize("engine", ENGINES)
def test_each_container_alone_is_the_reference_output_and_skips_are_counted(
    case: GenerationResult, engine: str, capsys: pytest.CaptureFixture[str]
) -> None:
    summaries = []
    for c in case.containers:
        assert _run(c.config, engine) == 0
        assert c.expected is not None and c.output.read_bytes() == c.expected.read_bytes(), c.name
        err = capsys.readouterr().err
        others = sorted({o.name for o in case.containers} - {c.name})
        firsts = re.findall(r"60041 change vectors of container CON_ID (\d+) skipped", err)
        assert len(firsts) == len(others) == len(set(firsts))  # once per other container
        summaries.append(SUMMARY.findall(err))
    # PDB1's run skips CDB$ROOT's 5, PDB2's 23 and PDB3's 12 vectors (both engines count alike)
    assert summaries[0] == ["CON_ID 1: 5, CON_ID 4: 23, CON_ID 5: 12"]
    assert all(len(s) == 1 for s in summaries)


@pytest.mark.parametrize("engine", ENGINES)
def test_all_containers_in_one_run(case: GenerationResult, engine: str, capsys: pytest.CaptureFixture[str]) -> None:
    """One pass over the redo, each change routed to its PDB's dictionary (PDB1 and PDB2 both
    number their tables from OBJ# 72726), each message with its PDB's name as `db`."""
    config = _all_containers(case)
    assert _run(config, engine) == 0
    got = (case.out_dir / "output-all.json").read_bytes()
    assert got == (case.out_dir / "expected-all.json").read_bytes()
    dbs = {json.loads(line)["db"] for line in got.splitlines()}
    assert dbs == {"PDB1", "PDB2", "PDB3", "CDB$ROOT"}
    assert "60041" not in capsys.readouterr().err  # every container of the redo is replicated
    # each PDB's schema checkpoints are written to its own folder, at the run's positions
    for c in case.containers:
        written = sorted(c.checkpoint.parent.glob("TEST-chkpt-*.json"))
        assert len(written) > 1
        last = json.loads(written[-1].read_text())
        assert last["con-name"] == c.name


def test_all_containers_but_one_counts_that_one(case: GenerationResult, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = json.loads(_all_containers(case).read_text())
    cfg["source"][0]["containers"] = cfg["source"][0]["containers"][:2]  # PDB2, PDB3; not CDB$ROOT
    cfg["source"][0]["filter"]["table"] = [{"owner": o, "table": ".*"} for o in ("APP", "HR")]
    path = case.out_dir / "OpenLogReplicator-3.json"
    path.write_text(json.dumps(cfg))
    assert _run(path, "python") == 0
    err = capsys.readouterr().err
    assert SUMMARY.findall(err) == ["CON_ID 1: 5"]
    got = [json.loads(line)["db"] for line in (case.out_dir / "output-all.json").read_text().splitlines()]
    assert "CDB$ROOT" not in got and {"PDB1", "PDB2", "PDB3"} == set(got)


def test_a_container_given_twice_is_refused(case: GenerationResult, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = json.loads(_all_containers(case).read_text())
    cfg["source"][0]["containers"].append(cfg["source"][0]["containers"][0])
    path = case.out_dir / "OpenLogReplicator-twice.json"
    path.write_text(json.dumps(cfg))
    assert _run(path, "python") != 0
    assert "30161" in capsys.readouterr().err


def test_containers_need_the_batch_or_offline_reader(
    case: GenerationResult, capsys: pytest.CaptureFixture[str]
) -> None:
    """The online reader with several containers is refused (the offline daemon runs them:
    tests/integration/daemon/test_daemon_containers.py)."""
    cfg = json.loads(_all_containers(case).read_text())
    cfg["source"][0]["reader"] = {"type": "online", "user": "u", "password": "p", "server": "//h/s"}
    path = case.out_dir / "OpenLogReplicator-online.json"
    path.write_text(json.dumps(cfg))
    assert _run(path, "python") != 0
    assert "batch and offline readers only" in capsys.readouterr().err


TWO_OPEN = """
name: TEST
version: '19'
format: {type: json, scn: 1, xid: 1, db: 3}
containers:
- {name: PDB1, con-id: 3}
- {name: PDB2, con-id: 4}
tables:
- {owner: APP, name: T, container: PDB1, primary-key: [ID], columns: [ID NUMBER NOT NULL]}
- {owner: APP, name: T, container: PDB2, primary-key: [ID], columns: [ID NUMBER NOT NULL]}
timeline:
- {s: 1, insert: PDB1/T, xid: 5.3.1200, values: {ID: 1}}
- {s: 2, insert: PDB2/T, xid: 5.3.1200, values: {ID: 2}}
- {commit: 1}
- {commit: 2}
"""


ROWS = 300  # rows of ~3.9 KB per transaction: 1.1 MiB, more than one pool chunk each


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("engine", ENGINES)
def test_one_xid_open_in_two_containers_is_two_transactions_in_a_run_of_both(
    tmp_path: Path, engine: str, swap: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two PDBs' local undo giving one XID to two transactions open at once: a run of both
    containers keys the memory pool by CON_ID and XID, so each is replicated with its own PDB,
    as one run per container writes it (and with the pool swapping both to disk)."""
    source = tmp_path / "two.yaml"
    text = TWO_OPEN
    if swap:  # rows large enough for each transaction to fill more than one 1 MiB chunk
        text = text.replace("columns: [ID NUMBER NOT NULL]", "columns: [ID NUMBER NOT NULL, V VARCHAR2(4000)]")
        big = "".join(
            f"- {{s: {s}, insert: PDB{s}/T, xid: 5.3.1200, values: {{ID: {10 * i + s}, V: {'abcdefghij'[i % 10] * 3900}}}}}\n"
            for i in range(1, ROWS)
            for s in (1, 2)
        )
        text = text.replace("- {commit: 1}", big + "- {commit: 1}")
    source.write_text(text)
    case = generate(Scenario.from_file(source), tmp_path / "case")
    for c in case.containers:  # one container per run: each transaction alone, as OLR
        assert _run(c.config, engine) == 0
        assert c.expected is not None and c.output.read_bytes() == c.expected.read_bytes()
    cfg = case.all_containers_config()
    cfg["target"][0]["writer"]["output"] = str(tmp_path / "both.json")
    swapped: list[str] = []
    if swap:
        cfg["memory"] = {"min-mb": 32, "max-mb": 32, "swap-mb": 1, "swap-path": str(tmp_path / "swap")}
        (tmp_path / "swap").mkdir()
        from replicator.txn import pool

        def named(key: int, name: Callable[[int], str] = pool.swap_name) -> str:
            swapped.append(name(key))
            return swapped[-1]

        monkeypatch.setattr(pool, "swap_name", named)
    path = tmp_path / "both-config.json"
    path.write_text(json.dumps(cfg))
    assert _run(path, engine) == 0
    got = (tmp_path / "both.json").read_bytes()
    assert got == (case.out_dir / "expected-all.json").read_bytes()
    messages = [json.loads(line) for line in got.splitlines()]
    rows: dict[str, list[int]] = {"PDB1": [], "PDB2": []}
    for m in messages:
        rows[m["db"]] += [p["after"]["ID"] for p in m["payload"] if p["op"] == "c"]
    assert {m["xid"] for m in messages} == {"5.3.1200"}
    assert rows["PDB1"][0] == 1 and rows["PDB2"][0] == 2 and len(rows["PDB1"]) == len(rows["PDB2"])
    if swap:  # both transactions swapped, each to its own file, all deleted at commit
        assert len(rows["PDB1"]) == ROWS and not list((tmp_path / "swap").iterdir())
        assert set(swapped) == {"0x0005.003.000004b0.c3.swap", "0x0005.003.000004b0.c4.swap"}


def test_the_generator_refuses_containers_before_12_1(tmp_path: Path) -> None:
    source = tmp_path / "old.yaml"
    source.write_text(TWO_OPEN.replace("version: '19'", "version: '11.2'"))
    with pytest.raises(ConfigError, match="12.1"):
        Scenario.from_file(source)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_rac_cdb_each_container_alone_and_all_in_one_run(tmp_path: Path, engine: str) -> None:
    """Two redo threads (PDB2's first transaction on instance 2): merged by SCN, then routed by
    CON_ID; every PDB's schema checkpoint is written at the end of the run in its own folder."""
    text = SCENARIO.read_text().replace("version: '19'", "version: '19'\nthreads: 2")
    text = text.replace(
        "{s: 2, insert: PDB2/ORDERS, xid: 5.3.1201,", "{s: 2, t: 2, insert: PDB2/ORDERS, xid: 5.3.1201,"
    )
    assert "t: 2" in text
    source = tmp_path / "rac.yaml"
    source.write_text(text)
    case = generate(Scenario.from_file(source), tmp_path / "case")
    assert len({log.path.name.split("_")[0] for log in case.logs}) == 2  # arch1_*, arch2_*
    for c in case.containers:
        assert _run(c.config, engine) == 0
        assert c.expected is not None and c.output.read_bytes() == c.expected.read_bytes(), c.name
    for c in case.containers:  # the single runs' files out of the way
        for path in c.checkpoint.parent.iterdir():
            if path != c.checkpoint:
                path.unlink()
    assert _run(_all_containers(case), engine) == 0
    assert (case.out_dir / "output-all.json").read_bytes() == (case.out_dir / "expected-all.json").read_bytes()
    for c in case.containers:
        assert len(list(c.checkpoint.parent.glob("TEST-chkpt-*.json"))) == 2, c.name


LOBS = """
name: TEST
version: '19'
format: {type: json, scn: 1, xid: 1, db: 3}
containers:
- {name: PDB1, con-id: 3}
- {name: PDB2, con-id: 4, con-uid: 0x1C2D3E4F, dbid: 0x5A6B7C8D}
tables:
- {owner: APP, name: T, container: PDB1, primary-key: [ID], columns: [ID NUMBER NOT NULL, NAME VARCHAR2(20)]}
- {owner: APP, name: D, container: PDB2, primary-key: [ID], columns: [ID NUMBER NOT NULL, DOC CLOB]}
timeline:
- {s: 1, insert: PDB1/T, values: {ID: 1, NAME: a}}
- {s: 2, insert: PDB2/D, values: {ID: 1, DOC: small text}}
- {s: 2, insert: PDB2/D, values: {ID: 2, DOC: {prefix: x, repeat: abcdefgh, length: 24000}}}
- {s: 1, insert: PDB1/T, values: {ID: 2, NAME: b}}
- {commit: 2}
- {commit: 1}
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_lob_columns_in_one_pdb_of_a_run_of_several(tmp_path: Path, engine: str) -> None:
    """The LOB maps follow the container of each record (PDB2's CLOB, in line and out of line)."""
    source = tmp_path / "lobs.yaml"
    source.write_text(LOBS)
    case = generate(Scenario.from_file(source), tmp_path / "case")
    for c in case.containers:
        assert _run(c.config, engine) == 0
        assert c.expected is not None and c.output.read_bytes() == c.expected.read_bytes(), c.name
        for path in c.checkpoint.parent.iterdir():
            if path != c.checkpoint:
                path.unlink()
    assert _run(_all_containers(case), engine) == 0
    got = (case.out_dir / "output-all.json").read_bytes()
    assert got == (case.out_dir / "expected-all.json").read_bytes() and b"abcdefgh" * 100 in got


def test_check_config_lists_every_container_s_tables(
    case: GenerationResult, capsys: pytest.CaptureFixture[str]
) -> None:
    from replicator.cli import main

    assert main(["check-config", "-f", str(_all_containers(case))]) == 0
    out = capsys.readouterr()
    text = out.out + out.err
    assert "5 table(s) replicated from 4 containers: CDB$ROOT/C##OPS.AUDIT_LOG, PDB1/APP.ORDERS" in text


def test_containers_are_not_for_schemaless_runs(case: GenerationResult, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = json.loads(_all_containers(case).read_text())
    cfg["source"][0]["flags"] = 2
    path = case.out_dir / "OpenLogReplicator-schemaless.json"
    path.write_text(json.dumps(cfg))
    assert _run(path, "python") != 0
    assert "not in schemaless mode" in capsys.readouterr().err


DDL_SCENARIO = SCENARIO.with_name("multitenant-ddl.yaml")


@pytest.mark.parametrize("engine", ENGINES)
def test_ddl_in_each_pdb_follows_its_own_dictionary_and_checkpoints(tmp_path: Path, engine: str) -> None:
    """ADD COLUMN in PDB2 and RENAME COLUMN in PDB1, on tables of the same OBJ#: each PDB's
    dictionary tracker applies its own DDL; each PDB's folder gets a full schema checkpoint after
    it, so a rerun from a later start-scn reads the new definitions of every PDB."""
    case = generate(Scenario.from_file(DDL_SCENARIO), tmp_path / "case")
    for c in case.containers:
        assert _run(c.config, engine) == 0
        assert c.expected is not None and c.output.read_bytes() == c.expected.read_bytes(), c.name
        for path in c.checkpoint.parent.iterdir():
            if path != c.checkpoint:
                path.unlink()
    config = _all_containers(case)
    assert _run(config, engine) == 0
    expected = (case.out_dir / "expected-all.json").read_bytes()
    assert (case.out_dir / "output-all.json").read_bytes() == expected
    assert b'"EMAIL":"e@x"' in expected and b'"LABEL":"dd"' in expected
    # A rerun from the SCN of the last commit before the log switch: the DDL of PDB2 is behind it,
    # and only the PDB2 folder's later checkpoint knows EMAIL.
    lines = expected.splitlines()
    later = [json.loads(line) for line in lines if b'"EMAIL":"e@x"' in line][0]["c_scn"]
    start = max(json.loads(line)["c_scn"] for line in lines if json.loads(line)["c_scn"] < later)
    cfg = json.loads(config.read_text())
    cfg["source"][0]["reader"]["start-scn"] = start
    cfg["target"][0]["writer"]["output"] = str(case.out_dir / "output-rerun.json")
    rerun = case.out_dir / "OpenLogReplicator-rerun.json"
    rerun.write_text(json.dumps(cfg))
    assert _run(rerun, engine) == 0
    got = (case.out_dir / "output-rerun.json").read_bytes().splitlines()
    assert 0 < len(got) < len(lines) and got == lines[-len(got) :]  # the transactions committed after it
    assert any(b'"EMAIL":"e@x"' in line for line in got) and any(b'"LABEL":"dd"' in line for line in got)
