"""Typed interface of the run framing and positions module (replicator/native/_runframes.pyx).

Checked against the built module by stubtest (tests/unit/test_gates.py, with
tests/unit/stubtest_allowlist.txt).
"""

from typing import Any

from replicator.native._core import MessageRun

FRAME_LENGTH_PREFIXED: int
FRAME_ZMTP: int

def run_frames(r: MessageRun, lo: int, hi: int, kind: int) -> bytes:
    """Messages [lo, hi) of ``r``, each framed for the wire ``kind`` (FRAME_*), as one bytes."""

def run_slice_bytes(r: MessageRun, lo: int, hi: int) -> int:
    """Body bytes of messages [lo, hi) of ``r``."""

def run_idx(r: MessageRun, i: int) -> int:
    """idx of message ``i`` of ``r``."""

def run_bisect(r: MessageRun, idx: int, lo: int, hi: int) -> int:
    """The first message in [lo, hi) whose idx is above ``idx`` (hi when none)."""

def make_run(messages: list[Any]) -> MessageRun:
    """A MessageRun of ``messages`` (one SCN, growing idx): for benchmarks and tests."""
