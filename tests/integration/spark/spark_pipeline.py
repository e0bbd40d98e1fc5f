"""Helpers of the Spark tests: scenario -> replicator -> Kafka, the job as a process, lake checks.

The lake is read back with delta-rs (no Spark session needed in the test process), as any
Delta reader would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spark_values import actual, expected, same

# Everything the job needs: commit SCN in every message (scn-type 8) and commit time
# (timestamp-type 8), column types (schema 1), ROWIDs, per-transaction numbering.
FORMAT = {"type": "json", "scn-type": 8, "timestamp-type": 8, "schema": 1, "rid": 1, "message": 2, "xid": 1}
REPO = Path(__file__).resolve().parents[3]


@dataclass
class Case:
    """A generated scenario with its expected final tables."""

    out: Path
    config: Path
    expected_json: Path
    tables: dict[str, list[dict[str, Any]]]  # OWNER.TABLE -> committed rows (scenario values)
    types: dict[str, dict[str, str]]  # OWNER.TABLE -> column -> SQL type
    keys: dict[str, list[str]] = field(default_factory=dict)
    rowid_tables: list[str] = field(default_factory=list)  # no supplemental logging: updates lack the key

    def rowid_args(self) -> list[str]:
        """``--rowid-table`` options for the tables whose updates carry no key values."""
        return [a for t in self.rowid_tables for a in ("--rowid-table", t)]


def make_case(
    out: Path,
    *,
    events: int = 400,
    seed: int = 11,
    fmt: dict[str, Any] | None = None,
    wide: bool = True,
    big: bool = True,
) -> Case:
    """Generate the ``mixed`` workload (every column type, 4 sessions, rollbacks, savepoints)."""
    from replicator.redogen.final_state import FinalState
    from replicator.redogen.generate import generate
    from replicator.redogen.workloads import mixed

    sc = mixed(seed=seed, events=events, wide=wide, big=big)
    sc.format = dict(fmt or FORMAT)
    state = FinalState(sc)
    sc.timeline = state.watch(sc.timeline)
    result = generate(sc, out)
    assert result.expected is not None
    names = [t.full_name for t in sc.tables]
    return Case(
        out,
        result.config,
        result.expected,
        {n: state.rows(n) for n in names},
        {t.full_name: {c.name: c.type for c in t.columns} for t in sc.tables},
        {t.full_name: list(t.primary_key) for t in sc.tables},
        [t.full_name for t in sc.tables if t.supplemental == "none"],
    )


def kafka_config(case: Case, bootstrap: str, topic: str) -> Path:
    """The case's replicator config with a kafka writer (keyed by primary key)."""
    doc = json.loads(case.config.read_text())
    doc["target"][0]["writer"] = {
        "type": "kafka",
        "topic": topic,
        "key-by-pk": 1,
        "properties": {"bootstrap.servers": bootstrap},
    }
    path = case.out / "kafka.json"
    path.write_text(json.dumps(doc))
    return path


def produce(case: Case, bootstrap: str, topic: str) -> str:
    """Put the replicator's output for the case on ``topic``; returns how."""
    try:
        import replicator.writers.kafka  # noqa: F401
    except ImportError:
        return _produce_expected(case, bootstrap, topic)
    # A fresh state directory each time: a second run must replay everything (duplicates).
    cfg = kafka_config(case, bootstrap, topic)
    doc = json.loads(cfg.read_text())
    state = case.out / f"state-{time.monotonic_ns()}"
    state.mkdir()
    for f in Path(doc["state"]["path"]).glob("*-chkpt-*.json"):
        (state / f.name).write_bytes(f.read_bytes())
    doc["state"]["path"] = str(state)
    cfg.write_text(json.dumps(doc))
    proc = subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg), "--progress", "off"],
        cwd=case.out,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return "replicator run (kafka writer)"


def _produce_expected(case: Case, bootstrap: str, topic: str) -> str:
    from confluent_kafka import Producer

    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for line in case.expected_json.read_bytes().splitlines():
        doc = json.loads(line)
        el = doc["payload"][0]
        image = el.get("before") if el.get("op") == "d" else el.get("after")
        key = None
        schema = el.get("schema") or {}
        cols = case.keys.get(f"{schema.get('owner')}.{schema.get('table')}")
        if image and cols:
            key = ",".join(f'"{c}":{json.dumps(image[c])}' for c in cols if c in image).encode()
        p.produce(topic, value=line, key=key)
    p.flush(30)
    return "expected output produced directly"


def job_command(lake: Path, config: Path, *extra: str, master: str = "local[2]") -> list[str]:
    """``replicator spark run`` as a subprocess (local[2] unless ``master``)."""
    return [
        sys.executable,
        "-m",
        "replicator",
        "spark",
        "run",
        "--lake",
        str(lake),
        "-f",
        str(config),
        "--master",
        master,
        *extra,
    ]


class Where:
    """Runs the job on local[2] (on the test session's SparkSession, no JVM start) or on a
    standalone cluster (as a process: one SparkContext per process)."""

    def __init__(self, cluster: Any, spark: Any = None):
        self.cluster, self.spark = cluster, spark

    def __repr__(self) -> str:
        return "cluster" if self.cluster else "local"

    def command(self, lake: Path, config: Path, *extra: str) -> list[str]:
        """The job's command line (with the cluster's master and driver settings)."""
        if self.cluster is None:
            return job_command(lake, config, *extra)
        conf = [a for k, v in self.cluster.conf().items() for a in ("--conf", f"{k}={v}")]
        return job_command(lake, config, *extra, *conf, master=self.cluster.url)

    def drain(self, cmd: list[str], error: str | None = None) -> str:
        """Run ``cmd`` to its end; its log. With ``error`` it must fail with that error code."""
        if self.cluster is not None:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_env(), check=False)
            if error:
                assert proc.returncode != 0 and f"ERROR {error}" in proc.stderr, proc.stderr[-3000:]
            else:
                assert proc.returncode == 0, proc.stderr[-4000:]
            return proc.stderr
        import logging

        from replicator.errors import ReplicatorError

        lines: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
        logger = logging.getLogger("replicator.spark")
        logger.addHandler(handler)
        old = logger.level
        logger.setLevel(logging.INFO)
        try:
            run_in_process(self.spark, cmd)
            assert error is None, f"the job should have failed with {error}"
        except ReplicatorError as exc:
            if error is None or exc.code != int(error):
                raise
        finally:
            logger.removeHandler(handler)
            logger.setLevel(old)
        return "\n".join(lines)


def run_in_process(spark: Any, cmd: list[str]) -> None:
    """Run the job of ``cmd`` (a :func:`job_command`) on an existing session: no JVM start."""
    import argparse

    from replicator.spark.cli import add_job_arguments, options_from
    from replicator.spark.job import run_job as run

    parser = argparse.ArgumentParser()
    add_job_arguments(parser)
    args = parser.parse_args(cmd[cmd.index("run") + 1 :])
    assert run(options_from(args), spark=spark, pending_timeout=args.pending_timeout) == 0  # type: ignore[arg-type]


def run_job(cmd: list[str], timeout: float = 240) -> str:
    """Run the job to its end; returns its log."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_env(), check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc.stderr


def kill_at(cmd: list[str], boundary: str, timeout: float = 240) -> None:
    """Run the job with the test hook that SIGKILLs its driver right after a commit (``boundary``:
    ``changes|tombstones|table|state:N``, the N-th such commit of the run); wait for that death."""
    from replicator.spark.apply import CRASH_ENV

    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**_env(), CRASH_ENV: boundary},
        start_new_session=True,
    )
    try:
        _, err = proc.communicate(timeout=timeout)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the JVM child too, if it outlived the driver
        except ProcessLookupError:
            pass
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL, f"the job was not killed at {boundary}: {err[-3000:]}"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    return env


def manifest(lake: Path) -> dict[str, Any] | None:
    """The job state after the last committed batch (``batch``, ``tables``...), or None before it."""
    from replicator.spark.lakestore import DeltaLake

    st = DeltaLake(str(lake)).load_state()
    if st.batch < 0:
        return None
    return {**json.loads(st.to_json()), "pending": st.pending_rows}


def lake_rows(lake: Path, table: str) -> list[dict[str, Any]]:
    """Current rows of a table (with metadata columns, no tombstones), read with delta-rs."""
    from replicator.spark.reader import read_rows_arrow

    return read_rows_arrow(str(lake), table)


def assert_tables_equal(lake: Path, case: Case) -> int:
    """Every current-state table equals the scenario's final table, row for row; returns rows."""
    total = 0
    for table, want_rows in case.tables.items():
        types = case.types[table]
        got_rows = lake_rows(lake, table)
        key = case.keys[table]

        def canon(row: dict[str, Any], conv: Any, types: dict[str, str] = types) -> dict[str, Any]:
            return {c: conv(types[c], row.get(c)) for c in types}

        want = {tuple(str(r[k]) for k in key): canon(r, expected) for r in want_rows}
        got = {tuple(str(actual(types[k], r[k])) for k in key): canon(r, actual) for r in got_rows}
        assert len(got_rows) == len(got), f"{table}: duplicate keys in the lake"
        assert sorted(want) == sorted(got), (
            f"{table}: keys differ: missing {sorted(set(want) - set(got))[:5]}, "
            f"extra {sorted(set(got) - set(want))[:5]}"
        )
        for k, w in want.items():
            g = got[k]
            bad = [c for c in types if not same(types[c], w[c], g[c])]
            assert not bad, f"{table} key {k}: " + "; ".join(f"{c}: want {w[c]!r} got {g[c]!r}" for c in bad[:4])
        total += len(want)
    return total


def positions(lake: Path, table: str) -> dict[str, tuple[int, int, int, int]]:
    """Canonical key -> stored position of every row and tombstone of a table."""
    from replicator.spark.lake_read import LakeReader
    from replicator.spark.layout import canonical

    reader = LakeReader(str(lake))
    rows, tombs = reader.current_rows(table, with_metadata=True), reader.tombstones(table)
    assert rows is not None
    keys = canonical([rows[k] for k in reader.key_columns(table)]).to_pylist()
    out = {k: (r["_commit_scn"], r["_c_scn"], r["_c_idx"], r["_elem"]) for k, r in zip(keys, rows.to_pylist())}
    for r in tombs.to_pylist() if tombs is not None else []:
        out[r["_key"]] = (r["_commit_scn"], r["_c_scn"], r["_c_idx"], r["_elem"])
    return out
