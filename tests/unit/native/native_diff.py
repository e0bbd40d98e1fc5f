"""Run one batch config through both engines and compare everything they output."""

from __future__ import annotations

import json
import logging
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from replicator.events import Message
from replicator.runner.batch import build_job, run_job


class CollectSink:
    """Keeps every message's bytes and position."""

    def __init__(self) -> None:
        self.messages: list[tuple[object, ...]] = []
        self.batches: list[int] = []  # the size of every write: where the pipeline drained

    def write(self, batch: list[Message]) -> None:
        # Key, headers, tombstone mark, topic and table name too: the other formats set them.
        self.messages.extend(
            (
                m.data,
                m.scn,
                m.idx,
                m.xid,
                m.seq,
                m.checkpoint,
                m.tag,
                m.headers,
                m.tombstone,
                m.topic,
                None if m.table is None else (m.table.owner, m.table.name),
            )
            for m in batch
        )
        self.batches.append(len(batch))

    def write_runs(self, batch: list[Any]) -> None:
        """Pipeline.native_runs: native MessageRuns among the Messages, checked as the
        sequence of Messages they stand for (indexing and iteration agree)."""
        flat: list[Message] = []
        for item in batch:
            if type(item) is Message:
                flat.append(item)
                continue
            run = list(item)
            assert len(run) == len(item) and [m.data for m in run] == [item[i].data for i in range(len(item))]
            assert item.body_bytes == sum(len(m.data) for m in run)
            assert item.data == b"".join(m.data + b"\n" for m in run)
            flat.extend(run)
        self.write(flat)

    def flush(self) -> None:
        pass


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{getattr(record, 'olr_code', 0)} {record.getMessage()}")


# Native runs of assert_same: one thread, then stage 2 in one and in two decode workers.
WORKER_COUNTS = (0, 1, 2)


def run_engine(cfg: dict[str, Any], work: Path, engine: str, workers: int = 0) -> dict[str, Any]:
    """Run ``cfg`` with ``engine`` on a private copy of its state folder; return what came out.

    ``workers``: the native engine's decode worker threads (--decode-workers).
    """
    from replicator.native import set_decode_workers

    cfg = json.loads(json.dumps(cfg))
    state = Path(cfg["state"]["path"])
    if workers:
        engine_dir = f"{engine}-w{workers}"
    else:
        engine_dir = engine
    mine = work / f"state-{engine_dir}"
    shutil.rmtree(mine, ignore_errors=True)
    shutil.copytree(state, mine)
    cfg["state"]["path"] = str(mine)
    memory = cfg.get("memory", {})
    if memory.get("swap-path"):  # a run may leave swap files of open transactions behind
        swap = work / f"swap-{engine_dir}"
        shutil.rmtree(swap, ignore_errors=True)
        swap.mkdir()
        memory["swap-path"] = str(swap)
    path = work / f"config-{engine_dir}.json"
    path.write_text(json.dumps(cfg))
    handler = _Lines()
    # At the package's logger, not the root: a CLI run earlier in the process turns its
    # propagation off (log.configure_logging), and the comparison would then see no line at all.
    root = logging.getLogger("replicator")
    root.addHandler(handler)
    sink = CollectSink()
    error = None
    set_decode_workers(workers)
    try:
        stats = run_job(build_job(str(path)), sink=sink, engine=engine)
        counts = (stats.transactions, stats.rows, stats.messages)
    except Exception as exc:  # the same error must come out of both engines
        error, counts = f"{type(exc).__name__}: {exc}", None
    finally:
        set_decode_workers(None)
        root.removeHandler(handler)
    return {"messages": sink.messages, "counts": counts, "error": error, "log": handler.lines, "batches": sink.batches}


def assert_same(cfg: dict[str, Any], work: Path, mask: bytes | None = None) -> dict[str, Any]:
    """Both engines give the same messages, counts, errors and log lines; returns python's.

    ``mask``: a regex whose matches are blanked first (a wall-clock field of a format).
    """
    py = run_engine(cfg, work, "python")
    for workers in WORKER_COUNTS:  # the native engine in one thread, and with decode workers
        nat = run_engine(cfg, work, "native", workers)
        if mask is not None:
            pattern = re.compile(mask)
            for run in (py, nat):
                run["messages"] = [(pattern.sub(b"", m[0]), *m[1:]) for m in run["messages"]]
        for i, (a, b) in enumerate(zip(py["messages"], nat["messages"])):
            assert a == b, f"message {i} differs ({workers} decode workers):\npython {a}\nnative {b}"
        assert len(py["messages"]) == len(nat["messages"]), f"{workers} decode workers"
        assert py["counts"] == nat["counts"], f"{workers} decode workers"
        assert py["error"] == nat["error"], f"{workers} decode workers"
        assert py["log"] == nat["log"], f"{workers} decode workers"
        assert py["batches"] == nat["batches"], f"{workers} decode workers"
    return py


def config_of(result: Any, fmt: dict[str, Any] | None = None, flags: int | None = None) -> dict[str, Any]:
    """A generated scenario's batch config, with another format section or source flags."""
    cfg = json.loads(Path(result.config).read_text())
    source = cfg["source"][0]
    if fmt is not None:
        source["format"] = fmt
    if flags is not None:
        source["flags"] = flags
    return cfg


ROOT = Path(__file__).resolve().parents[3]
SHARED = ROOT.parent / "shared"


def shared_fixture(name: str) -> Path:
    """A real redo fixture of ../shared (the test skips, saying so, when it is absent)."""
    path = SHARED / "fixtures" / "redo" / name
    if not path.is_dir():
        pytest.skip(f"shared test data not found: {path} (place the shared/ folder beside the repository)")
    return path


def free23_config(work: Path) -> dict[str, Any]:
    """The batch config of the real Oracle 23 fixture, output under ``work``."""
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_configs import free23_batch_config

    return free23_batch_config(shared_fixture("free23-basic"), work)


def random_workload(rng: Any, seed: int, oltp_bytes: int) -> Any:
    """An odd seed's ``mixed`` or an even seed's ``oltp`` workload, on a version ``rng`` picks."""
    from replicator.redogen import workloads

    if seed % 2:
        return workloads.mixed(seed=seed, events=40, version=rng.choice(("19", "23", "12.1")))
    return workloads.oltp(seed=seed, target_bytes=oltp_bytes, version=rng.choice(("19", "23", "11.2")))
