"""The end-of-log checkpoint message after a restart confirmed at its log's last LWN checkpoint.

Both checkpoints follow the same LWN; the end-of-log one used to take the same stream position,
so a restart confirmed at the LWN's checkpoint dropped it as already sent (a checkpoint message,
and with checkpoint digests its segment's figures, lost). It now sorts right after it.
"""

from __future__ import annotations

from replicator.events import Checkpoint
from replicator.formats.base import FormatOptions
from replicator.formats.olr_json import OlrJsonFormat
from replicator.redo.parser import Parser, ParserOptions
from replicator.runner.daemon_engine import CHECKPOINT_RANK, DaemonEngine


def _engine(restart: tuple[int, int, int, int]) -> DaemonEngine:
    parser = Parser(ParserOptions(tables={}, flags=0x1000), lambda t: None)
    engine = DaemonEngine(
        parser,
        OlrJsonFormat(FormatOptions(flags=0x1000)),
        None,
        None,  # type: ignore[arg-type]
        restart_pos=restart,
    )
    engine.handoffs.limit = 1 << 30  # keep everything pending (no writer task in this test)
    return engine


def test_the_end_of_log_checkpoint_follows_its_lwn_checkpoint() -> None:
    lwn, end = Checkpoint(500, 0, 7, 9216, False, 1, 16), Checkpoint(500, 0, 7, 9216, True, 1, 16)
    uninterrupted = _engine((0, 0, 0, 0))
    uninterrupted._on_checkpoint(lwn)
    uninterrupted._on_checkpoint(end)
    first, second = uninterrupted.handoffs.positions
    assert first < second and first == (7, 16 * 512, CHECKPOINT_RANK, 0)
    restarted = _engine(first)  # confirmed up to the LWN's checkpoint
    restarted._on_checkpoint(lwn)
    restarted._on_checkpoint(end)
    assert restarted.handoffs.positions == [second] and b'"redo":true' in restarted.handoffs.pending[0].data
    done = _engine(second)  # confirmed up to the log's: nothing of the LWN again
    done._on_checkpoint(lwn)
    done._on_checkpoint(end)
    assert done.handoffs.positions == []
