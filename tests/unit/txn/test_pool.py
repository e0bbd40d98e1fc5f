"""The transaction memory pool: chunking, swap to disk and back, truncation, exhaustion."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicator.errors import RuntimeFailure
from replicator.txn.pool import CHUNK, MemoryPool, swap_name


def _fill(pool: MemoryPool, xid: int, n: int, byte: int) -> bytes:
    clog = pool.log_for(xid)
    data = bytes([byte]) * (CHUNK // 2 + 1)  # two entries never share a chunk
    for _ in range(n):
        pool.append(clog, data)
    return data


def test_swap_out_and_back(tmp_path: Path) -> None:
    pool = MemoryPool(max_mb=64, swap_mb=8, swap_path=str(tmp_path))
    a = _fill(pool, 1, 10, 0xAA)
    b = _fill(pool, 2, 10, 0xBB)
    assert pool.in_memory <= 8 and pool.swapped > 0
    assert (tmp_path / swap_name(1)).exists()
    assert b"".join(bytes(c) for c in pool.read(pool.log_for(1))) == a * 10
    assert b"".join(bytes(c) for c in pool.read(pool.log_for(2))) == b * 10
    pool.discard(1)
    pool.discard(2)
    assert not list(tmp_path.glob("*.swap")) and pool.in_memory == 0 and pool.swapped == 0


def test_exhaustion_without_swap_is_a_clear_error() -> None:
    pool = MemoryPool(max_mb=4, swap_mb=0)
    with pytest.raises(RuntimeFailure) as e:
        _fill(pool, 1, 10, 1)
    assert e.value.code == 10016 and "max-mb" in e.value.message


def test_truncate_drops_tail(tmp_path: Path) -> None:
    pool = MemoryPool(max_mb=64, swap_mb=0)
    clog = pool.log_for(7)
    pool.append(clog, b"abc")
    pos = pool.append(clog, b"def")
    pool.truncate(clog, *pos)
    assert b"".join(bytes(c) for c in pool.read(clog)) == b"abc"


def test_stale_swap_files_removed(tmp_path: Path) -> None:
    (tmp_path / "0x0001.002.00000003.swap").write_bytes(b"x")
    MemoryPool(swap_mb=16, swap_path=str(tmp_path)).remove_stale_swap_files()
    assert not list(tmp_path.glob("*.swap"))
