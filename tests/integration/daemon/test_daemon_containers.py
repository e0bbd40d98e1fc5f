"""The offline daemon replicating several PDBs in one pass (``source.containers``).

The generated CDB of tests/scenarios/olr-check/multitenant-pdbs.yaml (three PDBs and CDB$ROOT,
the same OBJ# in two PDBs, the same undo slot in two PDBs, two archived logs) read by the
offline daemon with every container listed, in both engines: the output is the batch run's
``expected-all.json``, every PDB's state folder gets schema checkpoints at the same SCNs, and a
stop (after the first log, or SIGTERM while tailing) and a restart write the rest, neither
losing nor repeating a message of any PDB (also with DDL in two PDBs, multitenant-ddl.yaml, and
with pruning). A restart whose point (chosen in ``state.path``) another PDB's folder lacks is
error 10123. Also: a RAC CDB, a live filter reload, the online reader still refused.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from daemon_proc import Daemon, wait_for

from replicator import native
from replicator.redogen.generate import GenerationResult, generate
from replicator.redogen.scenario import Scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "olr-check"
SCENARIO = SCENARIOS / "multitenant-pdbs.yaml"
# ADD COLUMN in PDB2 in the first log, RENAME COLUMN in PDB1 in the second (tables of one OBJ#)
DDL_SCENARIO = SCENARIOS / "multitenant-ddl.yaml"
BOTH = [SCENARIO, DDL_SCENARIO]
ENGINES = ["python", pytest.param("native", marks=pytest.mark.skipif(not native.available(), reason="not built"))]
START_SCN = 2266634  # the generated checkpoints' SCN


def _setup(tmp_path: Path, scenario: Path | Scenario = SCENARIO) -> tuple[GenerationResult, Path, dict[str, Path]]:
    """The case, a config of the offline daemon over every container (each with a state folder
    of its own under tmp_path, the archives in tmp_path/arch) and those folders by name."""
    sc = scenario if isinstance(scenario, Scenario) else Scenario.from_file(scenario)
    case = generate(sc, tmp_path / "case")
    arch = tmp_path / "arch"
    arch.mkdir()
    case.offline_config(arch)  # (sets the first checkpoint's log-archive-dest)
    states = {}
    for c in case.containers:
        states[c.name] = tmp_path / f"state-{c.name}"
        shutil.copytree(c.checkpoint.parent, states[c.name])
    cfg: dict[str, Any] = case.all_containers_config(states)
    reader = cfg["source"][0]["reader"]
    reader["type"] = "offline"
    del reader["redo-log"]
    cfg["source"][0]["arch-read-sleep-us"] = 20000
    cfg["source"][0]["arch-read-tries"] = 100000
    cfg["target"][0]["writer"]["output"] = str(tmp_path / "output.json")
    cfg["target"][0]["writer"]["poll-interval-us"] = 20000
    path = tmp_path / "daemon.json"
    path.write_text(json.dumps(cfg))
    return case, path, states


def _copy_logs(case: GenerationResult, arch: Path, n: int) -> None:
    """The first ``n`` logs of each redo thread."""
    for log in case.logs:
        if log.sequence <= n:
            shutil.copy(log.path, arch / log.path.name)


def _with_stop(config: Path, switches: int) -> Path:
    cfg = json.loads(config.read_text())
    cfg["source"][0]["debug"] = {"stop-log-switches": switches}
    path = config.with_name(f"daemon-stop{switches}.json")
    path.write_text(json.dumps(cfg))
    return path


def _run(config: Path, engine: str, workers: int = 0) -> subprocess.CompletedProcess[str]:
    """``replicator run`` with ``engine`` (native: with ``workers`` stage-2 decode workers)."""
    return subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(config)],
        env=dict(os.environ, REPLICATOR_ENGINE=engine, REPLICATOR_DECODE_WORKERS=str(workers)),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _scns(state: Path) -> list[int]:
    return sorted(int(p.stem.rsplit("-", 1)[1]) for p in state.glob("TEST-chkpt-*.json"))


def _has_column(state: Path, scn: int, name: str) -> bool:
    """Whether the schema of checkpoint ``scn`` in ``state`` (or of the one it refers to) has a column ``name``."""
    doc = json.loads((state / f"TEST-chkpt-{scn}.json").read_text())
    if "schema-ref-scn" in doc:
        doc = json.loads((state / f"TEST-chkpt-{doc['schema-ref-scn']}.json").read_text())
    return any(c["name"] == name for c in doc["sys-col"])


@pytest.mark.parametrize("engine", ENGINES)
def test_daemon_replicates_every_container(tmp_path: Path, engine: str) -> None:
    case, config, states = _setup(tmp_path)
    _copy_logs(case, tmp_path / "arch", 2)
    proc = _run(_with_stop(config, 2), engine)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "60041" not in proc.stderr
    got = (tmp_path / "output.json").read_bytes()
    assert got == (case.out_dir / "expected-all.json").read_bytes()
    assert {json.loads(line)["db"] for line in got.splitlines()} == {"PDB1", "PDB2", "PDB3", "CDB$ROOT"}
    first = _scns(states[case.containers[0].name])
    assert len(first) > 1
    for c in case.containers:  # every folder: its own PDB's checkpoints, at the first folder's SCNs
        assert _scns(states[c.name]) == first, c.name
        last = json.loads((states[c.name] / f"TEST-chkpt-{first[-1]}.json").read_text())
        assert last["con-name"] == c.name


@pytest.mark.parametrize("scenario", BOTH, ids=lambda p: p.stem)
def test_both_engines_write_the_same_state(tmp_path: Path, scenario: Path) -> None:
    """The python engine, the native one with 0 and 1 stage-2 decode workers: the same output and
    the same files in every folder."""
    if not native.available():
        pytest.skip("not built")
    runs = {}
    for engine, workers in (("python", 0), ("native", 0), ("native", 1)):
        work = tmp_path / f"{engine}{workers}"
        work.mkdir()
        case, config, states = _setup(work, scenario)
        _copy_logs(case, work / "arch", 2)
        proc = _run(_with_stop(config, 2), engine, workers)
        assert proc.returncode == 0, proc.stderr[-3000:]
        here = str(work).encode()
        runs[f"{engine}{workers}"] = (
            (work / "output.json").read_bytes(),
            {
                f"{name}/{p.name}": p.read_bytes().replace(here, b"WORK")
                for name, state in states.items()
                for p in sorted(state.iterdir())
            },
        )
    py_out, py_state = runs["python0"]
    assert py_out == (case.out_dir / "expected-all.json").read_bytes()
    for run in ("native0", "native1"):
        out, state = runs[run]
        assert out == py_out, run
        assert sorted(state) == sorted(py_state), run
        for name, data in py_state.items():
            assert state[name] == data, f"{run}: state file {name} differs"


@pytest.mark.parametrize("prune", [False, True], ids=["default", "pruned"])
@pytest.mark.parametrize("scenario", BOTH, ids=lambda p: p.stem)
@pytest.mark.parametrize("engine", ENGINES)
def test_stop_and_restart_loses_and_repeats_nothing(tmp_path: Path, engine: str, scenario: Path, prune: bool) -> None:
    """A stop after the first log (its final checkpoint in every folder), then a restart with
    the second log there too: the output is the one uninterrupted run's. With DDL (ADD COLUMN
    in PDB2 before the stop, RENAME COLUMN in PDB1 after it), the restart loads each PDB's own
    changed dictionary from its folder. ``pruned``: a checkpoint at every LWN, one kept (and
    what a restart needs): every folder keeps the same files, the restart point among them."""
    case, config, states = _setup(tmp_path, scenario)
    if prune:
        cfg = json.loads(config.read_text())
        cfg["state"].update({"interval-s": 0, "keep-checkpoints": 1})
        config.write_text(json.dumps(cfg))
    arch, output = tmp_path / "arch", tmp_path / "output.json"
    expected = (case.out_dir / "expected-all.json").read_bytes()
    _copy_logs(case, arch, 1)
    proc = _run(_with_stop(config, 1), engine)
    assert proc.returncode == 0, proc.stderr[-3000:]
    part = output.read_bytes()
    assert part and len(part) < len(expected) and expected.startswith(part)
    first = _scns(states[case.containers[0].name])
    assert len(first) > 1
    for c in case.containers:  # (pruned: and each folder's full-schema files its kept ones refer to)
        assert set(_scns(states[c.name])) >= set(first) if prune else _scns(states[c.name]) == first, c.name
    assert (states[case.containers[0].name] / "TEST-chkpt.json").exists()
    if scenario == DDL_SCENARIO:  # the ADD COLUMN is in PDB2's dictionary, in PDB2's only
        assert _has_column(states["PDB2"], first[-1], "EMAIL")
        assert not _has_column(states["PDB1"], first[-1], "EMAIL")

    _copy_logs(case, arch, 2)
    daemon = Daemon(config, tmp_path, env={"REPLICATOR_ENGINE": engine})
    try:
        daemon.wait_ready()
        assert wait_for(lambda: len(output.read_bytes()) >= len(expected), 60), daemon.log()[-3000:]
    finally:
        rc, err = daemon.stop()
    assert rc == 0, err[-3000:]
    assert "Traceback" not in err
    assert output.read_bytes() == expected
    last = _scns(states[case.containers[0].name])
    assert last[-1] > first[-1]
    for c in case.containers:  # the restart went on writing every folder's checkpoints
        assert set(_scns(states[c.name])) >= set(last) if prune else _scns(states[c.name]) == last, c.name


def test_restart_point_missing_in_another_container(tmp_path: Path) -> None:
    case, config, states = _setup(tmp_path)
    _copy_logs(case, tmp_path / "arch", 1)
    proc = _run(_with_stop(config, 1), "python")
    assert proc.returncode == 0, proc.stderr[-3000:]
    check = subprocess.run(
        [sys.executable, "-m", "replicator", "check-config", "-f", str(config)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr
    assert "and at that SCN in the folders of the 3 other container(s)" in check.stdout + check.stderr
    pdb2 = states["PDB2"]
    for scn in _scns(pdb2):
        if scn != START_SCN:
            (pdb2 / f"TEST-chkpt-{scn}.json").unlink()
    proc = _run(_with_stop(config, 1), "python")
    assert proc.returncode != 0
    assert "10123" in proc.stderr and "Traceback" not in proc.stderr
    assert str(pdb2) in proc.stderr
    check = subprocess.run(
        [sys.executable, "-m", "replicator", "check-config", "-f", str(config)], capture_output=True, text=True
    )
    assert check.returncode != 0 and "schema checkpoint: ERROR 10123" in check.stdout + check.stderr


def test_online_reader_with_containers_is_refused(tmp_path: Path) -> None:
    _, config, _ = _setup(tmp_path)
    cfg = json.loads(config.read_text())
    cfg["source"][0]["reader"] = {"type": "online", "user": "u", "password": "p", "server": "//h/s"}
    config.write_text(json.dumps(cfg))
    proc = _run(config, "python")
    assert proc.returncode != 0
    assert "batch and offline readers only" in proc.stderr and "Traceback" not in proc.stderr


def test_filter_reload_applies_to_every_container(tmp_path: Path) -> None:
    """A changed filter.table reloaded live is checked against every PDB's owners (HR is PDB3's,
    C##OPS CDB$ROOT's: not refused with 20007) and rebuilds every PDB's table map."""
    case, config, _ = _setup(tmp_path)
    output = tmp_path / "output.json"
    _copy_logs(case, tmp_path / "arch", 1)
    daemon = Daemon(config, tmp_path)
    try:
        daemon.wait_ready()
        assert wait_for(lambda: output.exists() and output.stat().st_size > 0, 60), daemon.log()[-3000:]
        cfg = json.loads(config.read_text())
        rules = cfg["source"][0]["filter"]["table"]
        cfg["source"][0]["filter"]["table"] = [
            {**r, "table": "ORDERS"} if r["owner"] == "APP" else r for r in rules
        ]  # PDB2's APP.CUSTOMERS no more
        config.write_text(json.dumps(cfg))
        later = time.time() + 2  # a visibly newer mtime
        os.utime(config, (later, later))
        daemon.wait_log("config reloaded")
        assert daemon.proc.poll() is None
    finally:
        rc, err = daemon.stop()
    assert rc == 0, err[-3000:]
    assert "config reload rejected" not in err
    lines = err.splitlines()
    end = max(i for i, line in enumerate(lines) if "config reloaded: table filter updated" in line)
    found: set[str] = set()
    for line in reversed(lines[:end]):  # the tables the reload lists, just before it says so
        m = re.search(r"- found: (\S+)", line)
        if m is None:
            break
        found.add(m[1])
    assert found == {"APP.ORDERS", "HR.STAFF", "C##OPS.AUDIT_LOG"}, lines[end - 8 : end + 1]


@pytest.mark.parametrize("engine", ENGINES)
def test_rac_cdb_in_the_daemon(tmp_path: Path, engine: str) -> None:
    """Two redo threads (PDB2's first transaction on instance 2), merged by SCN, then routed by
    CON_ID; every folder gets its RAC restart points (each thread's position) at the same SCNs."""
    text = SCENARIO.read_text().replace("version: '19'", "version: '19'\nthreads: 2")
    text = text.replace(
        "{s: 2, insert: PDB2/ORDERS, xid: 5.3.1201,", "{s: 2, t: 2, insert: PDB2/ORDERS, xid: 5.3.1201,"
    )
    assert "t: 2" in text
    source = tmp_path / "rac.yaml"
    source.write_text(text)
    case, config, states = _setup(tmp_path, Scenario.from_file(source))
    assert len({log.thread for log in case.logs}) == 2
    _copy_logs(case, tmp_path / "arch", 2)
    proc = _run(_with_stop(config, len(case.logs)), engine)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "RAC: 2 redo threads" in proc.stderr
    assert (tmp_path / "output.json").read_bytes() == (case.out_dir / "expected-all.json").read_bytes()
    first = _scns(states[case.containers[0].name])
    assert len(first) > 1
    for c in case.containers:
        assert _scns(states[c.name]) == first, c.name
        last = json.loads((states[c.name] / f"TEST-chkpt-{first[-1]}.json").read_text())
        assert last["con-name"] == c.name and len(last["threads"]) == 2


@pytest.mark.parametrize("engine", ENGINES)
def test_sigterm_while_tailing_and_restart(tmp_path: Path, engine: str) -> None:
    """SIGTERM while the daemon waits for the next log (whatever it had written by then), the
    log arrives, a restart: the output is the uninterrupted run's, each folder written on."""
    case, config, states = _setup(tmp_path, DDL_SCENARIO)
    arch, output = tmp_path / "arch", tmp_path / "output.json"
    expected = (case.out_dir / "expected-all.json").read_bytes()
    _copy_logs(case, arch, 1)
    env = {"REPLICATOR_ENGINE": engine}
    daemon = Daemon(config, tmp_path, env=env)
    try:
        daemon.wait_ready()
        assert wait_for(lambda: output.exists() and output.stat().st_size > 0, 60), daemon.log()[-3000:]
    finally:
        rc, err = daemon.stop()
    assert rc == 0, err[-3000:]
    assert expected.startswith(output.read_bytes())
    first = _scns(states["PDB1"])
    assert _scns(states["PDB2"]) == first

    _copy_logs(case, arch, 2)
    daemon = Daemon(config, tmp_path, env=env)
    try:
        daemon.wait_ready()
        assert wait_for(lambda: len(output.read_bytes()) >= len(expected), 60), daemon.log()[-3000:]
    finally:
        rc, err = daemon.stop()
    assert rc == 0, err[-3000:]
    assert output.read_bytes() == expected
    assert _scns(states["PDB2"]) == _scns(states["PDB1"]) and _scns(states["PDB1"])[-1] > first[-1]


@pytest.mark.parametrize("start", ["scn:0", f"scn:{START_SCN}"])
def test_stream_client_gets_every_container(tmp_path: Path, start: str) -> None:
    """The network writer: a client's START (at the configured SCN, or scn:0: the engine is
    rebuilt with each PDB's checkpoint of the SCN chosen in state.path) streams every PDB's messages."""
    from kafka_broker import free_port

    case, config, _ = _setup(tmp_path)
    _copy_logs(case, tmp_path / "arch", 2)
    cfg = json.loads(config.read_text())
    port = free_port()
    cfg["target"][0]["writer"] = {"type": "network", "uri": f"127.0.0.1:{port}"}
    config.write_text(json.dumps(cfg))
    expected = (case.out_dir / "expected-all.json").read_text().splitlines()
    daemon = Daemon(config, tmp_path)
    try:
        daemon.wait_log("waiting for a client")
        client = subprocess.run(
            [
                sys.executable,
                "-m",
                "replicator",
                "client",
                "network",
                f"127.0.0.1:{port}",
                "TEST",
                "--start",
                start,
                "--count",
                str(len(expected)),
                "--confirm-every",
                "1",
                "--timeout",
                "30",
            ],
            capture_output=True,
            text=True,
            timeout=90,
        )
    finally:
        rc, err = daemon.stop()
    assert client.returncode == 0, client.stderr[-3000:] + err[-3000:]
    assert rc == 0, err[-3000:]
    assert [line for line in client.stdout.splitlines() if line.startswith("{")] == expected
    # scn:0 rebuilds the engine for that START (each PDB's checkpoint at the SCN chosen in
    # state.path); the configured SCN keeps the engine built at start
    assert ("client START: replicating from scn 0" in err) == (start == "scn:0")
