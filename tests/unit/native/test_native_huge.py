"""Huge transactions through the native engine: streamed chunk by chunk, in memory or swapped.

A transaction above ``Parser.stream_bytes`` is rendered by the native engine in bounded
memory (JsonCommitter._stream). Both engines must give the same messages, handed to the
writer in the same batches. Small memory settings keep the cases cheap: a 32 MB pool
streams above 4 MB; shrinking the pool's chunk size and the stream threshold makes every
workload's transactions streamed, swapped and split across many chunks (row pieces of
one row in different chunks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from native_diff import assert_same, config_of

from replicator.native import wiring
from replicator.redo import parser as parser_module
from replicator.redogen import generate, workloads
from replicator.txn import pool as pool_module
from replicator.txn.pool import MemoryPool


def _swaps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the pool's swap-outs (the swap files are gone after the run)."""
    calls: list[int] = []
    original = MemoryPool._swap_out

    def counted(self: MemoryPool) -> None:
        calls.append(1)
        original(self)

    monkeypatch.setattr(MemoryPool, "_swap_out", counted)
    return calls


def _memory(cfg: dict[str, Any], tmp_path: Path, max_mb: int, swap_mb: int) -> dict[str, Any]:
    cfg["memory"] = {"min-mb": 32, "max-mb": max_mb, "swap-mb": swap_mb}
    if swap_mb:
        swap = tmp_path / "swap"
        swap.mkdir(exist_ok=True)
        cfg["memory"]["swap-path"] = str(swap)
    return cfg


@pytest.mark.parametrize("swap_mb", [0, 1], ids=["memory", "swapped"])
def test_huge_transaction_streamed(swap_mb: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One 5 MB transaction with a 32 MB pool (streamed above 4 MB), held or swapped."""
    swaps = _swaps(monkeypatch)
    result = generate(workloads.huge_transaction(rows=4000, row_bytes=1000), tmp_path / "gen", with_expected=False)
    cfg = _memory(config_of(result), tmp_path, 32, swap_mb)
    py = assert_same(cfg, tmp_path)
    assert py["counts"] is not None and py["counts"][1] == 4400
    assert len(py["batches"]) > 1  # drained in the middle of the transaction
    committer = wiring.last_committer
    assert committer is not None and committer.native_transactions == 1 and committer.python_transactions == 0
    assert bool(swaps) == bool(swap_mb)


SMALL = {
    "oltp": lambda: workloads.oltp(seed=5, target_bytes=1 << 20),
    "mixed": lambda: workloads.mixed(seed=3),
    "huge-transaction": lambda: workloads.huge_transaction(rows=2000),
    "wide-rows": lambda: workloads.wide_rows(columns=400, rows=10),
    "big-values": lambda: workloads.big_values(size=8000, rows=5),
}


@pytest.mark.parametrize("name", sorted(SMALL))
@pytest.mark.parametrize(
    "message,flags",
    [(0, None), (2 | 4, None), (8 | 16, None), (0, 0x2)],
    ids=["plain", "num-nobegin", "nocommit-offset", "schemaless"],
)
def test_every_transaction_streamed_and_swapped(
    name: str, message: int, flags: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """8 KB pool chunks, a 4 KB stream threshold and swapping past 8 KB: row groups span
    chunks, swapped chunks are read back, transactions without output rows are streamed."""
    monkeypatch.setattr(pool_module, "CHUNK", 8 << 10)
    monkeypatch.setattr(parser_module, "STREAM_BYTES", 4 << 10)
    swaps = _swaps(monkeypatch)
    result = generate(SMALL[name](), tmp_path / "gen", with_expected=False)
    fmt = {"type": "json", "scn": 1, "timestamp": 7, "timestamp-metadata": 7, "xid": 1, "message": message}
    cfg = _memory(config_of(result, fmt, flags), tmp_path, 4096, 1)
    py = assert_same(cfg, tmp_path)
    assert py["error"] is not None or py["messages"]
    assert swaps or flags  # schemaless: big values stay LOB locators (no LOB pages stored), below the swap mark
    if name in ("oltp", "huge-transaction", "wide-rows"):
        assert wiring.last_committer is not None and wiring.last_committer.native_transactions > 0


@pytest.mark.parametrize("chunk", [2000, 3001])
def test_row_pieces_across_chunks(chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows of 600 columns (several pieces each) in chunks smaller than a row: an open row
    group is carried from chunk to chunk (carry_group) and still renders natively."""
    monkeypatch.setattr(pool_module, "CHUNK", chunk)
    monkeypatch.setattr(parser_module, "STREAM_BYTES", 1 << 10)
    result = generate(workloads.wide_rows(columns=600, rows=12), tmp_path / "gen", with_expected=False)
    py = assert_same(_memory(config_of(result), tmp_path, 4096, 1), tmp_path)
    assert py["messages"]
    committer = wiring.last_committer
    assert committer is not None and committer.native_transactions == 12 and committer.python_transactions == 0
