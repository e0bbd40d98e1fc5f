"""The daemon's engine with native MessageRuns (a writer that confirms runs whole).

A run is one queue entry, one position (its first message's) and one confirmation entry;
the confirmed position, its (c_scn, idx) and the counts must be exactly those the same
messages give one by one, whether the writer confirms each run whole or message by
message, and a restart position inside a run must drop exactly the messages up to it.
"""

from __future__ import annotations

from typing import Any

import pytest
from native_diff import config_of
from test_native_runs import RunSink, _run

from replicator.events import Message, Transaction
from replicator.redo.parser import Parser, ParserOptions
from replicator.redogen import generate, workloads
from replicator.runner.daemon_engine import Confirmations, DaemonEngine


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """Real MessageRuns of a small OLTP stream (the native committer's, as the daemon gets them)."""
    gen = generate(workloads.oltp(seed=7, target_bytes=1 << 19), tmp_path_factory.mktemp("gen"), with_expected=False)
    sink = RunSink()
    _run(config_of(gen), tmp_path_factory.mktemp("work"), "native", {"type": "discard"}, sink=sink)
    found = [item for item in sink.items if type(item) is not Message and len(item) > 2]
    assert len(found) > 20
    return found[:40]


def _positions(runs: list[Any]) -> list[tuple[int, int, int, int]]:
    """A position per run (the first message's): transactions in stream order."""
    return [(1, 512 * (k + 1), 3, 0) for k in range(len(runs))]


def _one_by_one(runs: list[Any]) -> tuple[Confirmations, list[Message]]:
    """The reference: every message of ``runs`` sent as a Message with its own position."""
    conf = Confirmations()
    messages, positions = [], []
    for run, (seq, lwn, rank, index) in zip(runs, _positions(runs)):
        for k, m in enumerate(run):
            messages.append(m)
            positions.append((seq, lwn, rank, index + k))
    conf.sent(messages, positions)
    return conf, messages


def test_whole_run_confirmations_equal_per_message(runs: list[Any]) -> None:
    conf = Confirmations()
    conf.sent(runs, _positions(runs))
    ref, messages = _one_by_one(runs)
    assert conf.pending == ref.pending == len(messages)
    for run in runs:
        conf.confirm(run.scn, run.last_idx)  # Writer.confirm_run
        ref.confirm(run.scn, run.last_idx)
        assert conf.snapshot() == ref.snapshot()
    assert conf.pending == 0 and conf.count == len(messages)


def test_confirmations_inside_runs_equal_per_message(runs: list[Any]) -> None:
    """A writer confirming message by message (not writes_runs_whole) still gets exact positions."""
    conf = Confirmations()
    conf.sent(runs, _positions(runs))
    ref, messages = _one_by_one(runs)
    for m in messages:
        conf.confirm(m.scn, m.idx)
        ref.confirm(m.scn, m.idx)
        assert conf.snapshot() == ref.snapshot()
    assert conf.pending == 0


def _engine(restart_pos: tuple[int, int, int, int], run_type: Any) -> DaemonEngine:
    engine = DaemonEngine(
        Parser(ParserOptions(tables={}), lambda t: None),
        None,
        RunSink(),
        None,  # type: ignore[arg-type]
        restart_pos=restart_pos,
    )
    engine.handoffs.run_type = run_type
    engine.handoffs.limit = 1 << 30  # keep everything pending (no writer task in this test)
    return engine


@pytest.mark.parametrize("cut", [None, 0, 1, -2, -1])
def test_stamp_restart_inside_a_run(runs: list[Any], cut: int | None) -> None:
    """Restart positions before, inside, at the end of and past a run: the messages after it only."""
    run = runs[3]
    txn = Transaction(run.xid, run.scn, 0, run.scn, 0, commit_pos=(2, 4096, 5))
    restart = (0, 0, 0, 0) if cut is None else (2, 4096, 5, cut % len(run))
    engine = _engine(restart, type(run))
    assert engine.handoffs.take(txn, run, 0) == len(run)
    ref = _engine(restart, None)  # message by message
    assert ref.handoffs.take(txn, list(run), 0) == len(run)
    assert engine.state.skipped == ref.state.skipped
    assert engine.handoffs.pending_n == ref.handoffs.pending_n == len(ref.handoffs.pending)
    if cut is None:
        assert engine.handoffs.pending == [run] and engine.handoffs.positions == [(2, 4096, 5, 0)]
    else:
        assert engine.handoffs.pending == ref.handoffs.pending and engine.handoffs.positions == ref.handoffs.positions
    conf, expected = Confirmations(), Confirmations()
    conf.sent(engine.handoffs.pending, engine.handoffs.positions)
    expected.sent(ref.handoffs.pending, ref.handoffs.positions)
    if ref.handoffs.pending:
        conf.confirm(run.scn, run.last_idx)
        expected.confirm(run.scn, run.last_idx)
    assert conf.snapshot() == expected.snapshot()
