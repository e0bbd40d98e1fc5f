"""The open-transaction buffer of a run of several PDBs: keyed by (CON_ID, USN, slot), with a
memory pool keyed by CON_ID and XID, so one XID open in two containers at once (local undo) is
two transactions kept apart, in memory and swapped; one container's run keys the pool by XID."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicator.txn.buffer import TransactionBuffer
from replicator.txn.lobs import TxnLobs
from replicator.txn.pool import CHUNK, LOB_LOG, MemoryPool, swap_name

XID = (5 << 48) | (3 << 32) | 1200


def test_one_container_run_keeps_the_same_xid_per_container_apart_without_a_check() -> None:
    buffer = TransactionBuffer()  # one container (OLR's): other containers never reach it
    first = buffer.begin(3, XID, 100, 0, 1, 0)
    assert buffer.get(3, XID) is first
    assert buffer.get(4, (5 << 48) | (3 << 32) | 1201) is not first  # same slot, other XID


def test_the_same_slot_with_other_sequences_in_two_containers_is_fine() -> None:
    buffer = TransactionBuffer()
    buffer.containers = (3, 4)
    a = buffer.begin(3, XID, 100, 0, 1, 0)
    b = buffer.begin(4, XID + 1, 101, 0, 1, 0)  # local undo: same USN and slot, other SQN
    assert a is not b and buffer.get(3, XID) is a and buffer.get(4, XID + 1) is b


def test_one_container_run_keys_the_pool_by_xid_and_names_swap_files_as_olr(tmp_path: Path) -> None:
    buffer = TransactionBuffer(MemoryPool(max_mb=64, swap_mb=1, swap_path=str(tmp_path)))
    txn = buffer.begin(3, XID, 100, 0, 1, 0)
    assert txn.key == XID and list(buffer.pool.logs) == [XID]
    for _ in range(3):
        buffer.pool.append(txn.clog, b"a" * (CHUNK - 16))
    assert [p.name for p in tmp_path.iterdir()] == ["0x0005.003.000004b0.swap"] == [swap_name(XID)]
    buffer.release(buffer.end(3, XID))  # type: ignore[arg-type]
    assert not buffer.pool.logs and not list(tmp_path.iterdir())


@pytest.mark.parametrize("second", ["begin", "change"])
@pytest.mark.parametrize("swap", [False, True])
def test_one_xid_open_in_two_containers_is_two_transactions(tmp_path: Path, second: str, swap: bool) -> None:
    """Two PDBs' local undo giving one XID to two open transactions: two chunk logs (and LOB
    logs), each change with its own transaction, swapped to files of their own and read back."""
    pool = MemoryPool(max_mb=64, swap_mb=1 if swap else 0, swap_path=str(tmp_path))
    buffer = TransactionBuffer(pool)
    buffer.containers = (3, 4)
    a = buffer.begin(3, XID, 100, 0, 1, 0)
    b = buffer.begin(4, XID, 101, 0, 1, 0) if second == "begin" else buffer.get(4, XID)
    assert b is not None and a is not b and a.xid == b.xid == XID
    assert a.key == 3 << 65 | XID and b.key == 4 << 65 | XID and a.clog is not b.clog
    assert buffer.get(3, XID) is a and buffer.get(4, XID) is b
    lobs_a, lobs_b = TxnLobs(pool, a.xid, a.key), TxnLobs(pool, b.xid, b.key)
    assert lobs_a.clog is not lobs_b.clog and lobs_a.clog.key == a.key | LOB_LOG
    piece = CHUNK - 16
    for i in range(3):
        pool.append(a.clog, b"a" * piece)
        pool.append(b.clog, b"b" * piece)
        pool.append(lobs_a.clog, bytes([i]) * piece)
        pool.append(lobs_b.clog, bytes([i + 10]) * piece)
    names = sorted(p.name for p in tmp_path.iterdir())
    if swap:
        assert pool.swapped and names == [
            "0x0005.003.000004b0.c3.lob.swap",
            "0x0005.003.000004b0.c3.swap",
            "0x0005.003.000004b0.c4.lob.swap",
            "0x0005.003.000004b0.c4.swap",
        ]
    else:
        assert not names
    assert b"".join(pool.read(a.clog)) == b"a" * piece * 3
    assert b"".join(pool.read(b.clog)) == b"b" * piece * 3
    assert b"".join(pool.read(lobs_b.clog)) == bytes([10]) * piece + bytes([11]) * piece + bytes([12]) * piece
    ended = buffer.end(3, XID)
    assert ended is a
    buffer.release(a)  # the other PDB's transaction keeps its chunks and files
    assert list(pool.logs) == [b.key, b.key | LOB_LOG]
    assert sorted(p.name for p in tmp_path.iterdir()) == [n for n in names if ".c4." in n]
    assert b"".join(pool.read(b.clog)) == b"b" * piece * 3
    buffer.release(buffer.end(4, XID))  # type: ignore[arg-type]
    assert not pool.logs and not list(tmp_path.iterdir()) and pool.used == 0
