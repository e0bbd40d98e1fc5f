"""Bounded memory for open transactions: fixed-size chunks, swapped to disk under pressure.

Mirrors OpenLogReplicator's ``memory`` settings (olr-interfaces.md §6): transaction data
lives in chunks of up to 1 MiB; when the bytes held reach ``swap-mb``, the chunks of the
longest-inactive transactions (all but their last chunk) are written to
``<swap-path>/0xUUUU.SSS.QQQQQQQQ.swap`` and read back at commit. A run of several PDBs keys
a transaction's log by container and XID (:func:`pool_key`), as two PDBs' local undo may give
one XID to two open transactions; its swap files are then ``0xUUUU.SSS.QQQQQQQQ.cN.swap``. Without swap, running
out of ``max-mb`` is a clear error (10016), never the OOM killer.

Unlike OpenLogReplicator, usage is counted in bytes held rather than whole chunks, so a
hundred thousand small open transactions do not each cost a megabyte.
"""

from __future__ import annotations

import glob
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from replicator import log
from replicator.errors import RuntimeFailure

CHUNK = 1024 * 1024


XID_MASK: int = (1 << 64) - 1  # the XID part of a pool key
LOB_LOG: int = 1 << 64  # key bit of a transaction's second chunk log, holding its LOB pages
CON_SHIFT: int = 65  # a key's CON_ID starts here (runs of several containers only)


def pool_key(con_id: int, xid: int, containers: bool) -> int:
    """The pool key of a transaction: its XID, with its CON_ID above when ``containers``.

    A run of several PDBs keys by both (two PDBs' local undo may hand one XID to two open
    transactions at once); every other run keys by the XID alone, as OpenLogReplicator does.
    """
    return con_id << CON_SHIFT | xid if containers else xid


def swap_name(key: int) -> str:
    """OLR's swap file name for a pool key (``.lob.swap`` for its LOB page log).

    A key carrying a CON_ID (several containers) adds ``.c<CON_ID>`` after the XID.
    """
    lob = ".lob" if key & LOB_LOG else ""
    con = key >> CON_SHIFT
    xid = key & XID_MASK
    where = f".c{con}" if con else ""
    return f"0x{xid >> 48:04x}.{(xid >> 32) & 0xFFFF:03x}.{xid & 0xFFFFFFFF:08x}{where}{lob}.swap"


@dataclass(slots=True)
class ChunkLog:
    """The chunks of one transaction: in memory (bytearray) or swapped (file offset)."""

    key: int  # its key in MemoryPool.logs: the XID, or CON_ID and XID (pool_key)
    chunks: list[bytearray | int] = field(default_factory=list)  # int = offset in the swap file
    swap_path: str | None = None
    swap_size: int = 0

    @property
    def tail(self) -> bytearray | None:
        last = self.chunks[-1] if self.chunks else None
        return last if isinstance(last, bytearray) else None


class MemoryPool:
    """Counts chunks against ``max-mb`` and swaps the coldest transactions past ``swap-mb``."""

    def __init__(self, max_mb: int = 2048, swap_mb: int = 1536, swap_path: str = ".", min_mb: int = 32):
        self.max_bytes = max(1, max_mb) * CHUNK
        self.swap_bytes = swap_mb * CHUNK
        self.swap_path = swap_path
        self.min_chunks = min_mb
        self.used = 0  # bytes of transaction data held in memory
        self.peak_bytes = 0
        self.swapped = 0  # chunks on disk
        self.swap_writes_mb = 0.0  # MB moved to and from disk, in fractions of a chunk
        self.swap_reads_mb = 0.0
        self.free_chunks: list[bytearray] = []
        self.logs: OrderedDict[int, ChunkLog] = OrderedDict()  # by pool_key, least recently touched first
        # Called before swapping or failing for memory: the native stage 2 hands its finished
        # jobs over and releases their detached chunks first (replicator/native/_stage2.pyx).
        self.pressure: Callable[[], None] | None = None

    @property
    def in_memory(self) -> int:
        """MB of transaction data held in memory (rounded up)."""
        return -(-self.used // CHUNK)

    @property
    def peak(self) -> int:
        """Highest :attr:`in_memory` seen."""
        return -(-self.peak_bytes // CHUNK)

    def remove_stale_swap_files(self) -> None:
        """Delete swap files left by an earlier run (WARN 10067)."""
        if not self.swap_bytes:
            return
        for path in glob.glob(os.path.join(self.swap_path, "0x*.swap")):
            log.warning(10067, f"deleting old swap file {path}")
            os.unlink(path)

    def log_for(self, key: int) -> ChunkLog:
        """The chunk log of a transaction (by :func:`pool_key`), marked as the most recently active."""
        clog = self.logs.get(key)
        if clog is None:
            clog = self.logs[key] = ChunkLog(key)
        else:
            self.logs.move_to_end(key)
        return clog

    def append(self, clog: ChunkLog, data: bytes) -> tuple[int, int]:
        """Append ``data`` to a transaction; returns (chunk index, offset) where it starts."""
        self._reserve(len(data))
        tail = clog.tail
        if tail is None or (len(tail) + len(data) > CHUNK and len(tail) > 0):
            tail = self.free_chunks.pop() if self.free_chunks else bytearray()
            clog.chunks.append(tail)
        pos = (len(clog.chunks) - 1, len(tail))
        tail += data
        self.used += len(data)
        self.peak_bytes = max(self.peak_bytes, self.used)
        return pos

    def truncate(self, clog: ChunkLog, chunk: int, offset: int) -> None:
        """Drop everything from (chunk, offset) on (partial rollback of the last change)."""
        while len(clog.chunks) > chunk + 1:
            last = clog.chunks.pop()
            if isinstance(last, bytearray):
                self._release(last)
            else:
                self.swapped -= 1
        tail = clog.chunks[chunk]
        if isinstance(tail, bytearray):
            self.used -= len(tail) - offset
            del tail[offset:]

    def read(self, clog: ChunkLog) -> Iterator[bytes | bytearray]:
        """Yield the transaction's chunks in order, reading swapped ones back."""
        f = open(clog.swap_path, "rb") if clog.swap_path else None
        try:
            for chunk in clog.chunks:
                if isinstance(chunk, int):
                    assert f is not None
                    f.seek(chunk)
                    size = int.from_bytes(f.read(4), "little")
                    self.swap_reads_mb += size / CHUNK
                    yield f.read(size)
                else:
                    yield chunk
        finally:
            if f is not None:
                f.close()

    def read_at(self, clog: ChunkLog, chunk: int, offset: int, size: int) -> bytes:
        """``size`` bytes at (chunk, offset) of a log, reading a swapped chunk from disk."""
        held = clog.chunks[chunk]
        if isinstance(held, bytearray):
            return bytes(held[offset : offset + size])
        assert clog.swap_path is not None
        with open(clog.swap_path, "rb") as f:
            f.seek(held + 4 + offset)  # a swapped chunk is stored as u32 length + bytes
            self.swap_reads_mb += size / CHUNK
            return f.read(size)

    def discard(self, key: int) -> None:
        """Release a transaction's chunks (and its LOB pages) and delete its swap files."""
        if not key & LOB_LOG and key | LOB_LOG in self.logs:
            self.discard(key | LOB_LOG)
        clog = self.logs.pop(key, None)
        if clog is None:
            return
        for chunk in clog.chunks:
            if isinstance(chunk, bytearray):
                self._release(chunk)
            else:
                self.swapped -= 1
        if clog.swap_path:
            try:
                os.unlink(clog.swap_path)
            except FileNotFoundError:
                pass

    def detach(self, clog: ChunkLog) -> list[bytearray]:
        """Hand a committed transaction's in-memory chunks to a reader in another thread.

        The chunks leave the pool's logs (no swap-out rewrites them, :meth:`discard` no longer
        finds them) but stay counted in ``used`` until :meth:`release_detached`; swapped
        chunks must have been read already (their file is deleted here).
        """
        self.logs.pop(clog.key, None)
        held = [c for c in clog.chunks if isinstance(c, bytearray)]
        self.swapped -= len(clog.chunks) - len(held)
        if clog.swap_path:
            try:
                os.unlink(clog.swap_path)
            except FileNotFoundError:
                pass
        clog.chunks = []
        clog.swap_path = None
        return held

    def release_detached(self, held: list[bytearray]) -> None:
        """Release chunks :meth:`detach` handed out, once their reader is done."""
        for chunk in held:
            self._release(chunk)

    # ---------------------------------------------------------------- internals
    def _reserve(self, need: int) -> None:
        if self.pressure is not None and (
            (self.swap_bytes and self.used + need > self.swap_bytes) or self.used + need > self.max_bytes
        ):
            self.pressure()
        if self.swap_bytes and self.used + need > self.swap_bytes:
            self._swap_out()
        if self.used + need > self.max_bytes:
            raise RuntimeFailure(
                f"out of transaction memory: {self.in_memory} MB in use reached memory.max-mb "
                f"{self.max_bytes // CHUNK}" + ("" if self.swap_bytes else "; set memory.swap-mb to swap to disk"),
                10016,
            )

    def _release(self, chunk: bytearray) -> None:
        self.used -= len(chunk)
        if len(self.free_chunks) < self.min_chunks:
            chunk.clear()
            self.free_chunks.append(chunk)

    def _swap_out(self) -> None:
        """Move chunks of the coldest transactions to disk until below ``swap-mb``."""
        target = self.swap_bytes - max(CHUNK, self.swap_bytes // 8)
        for clog in list(self.logs.values()):
            if self.used <= target:
                return
            for i, chunk in enumerate(clog.chunks[:-1]):  # the last chunk stays in memory
                if not isinstance(chunk, bytearray):
                    continue
                if clog.swap_path is None:
                    clog.swap_path = os.path.join(self.swap_path, swap_name(clog.key))
                with open(clog.swap_path, "ab") as f:
                    offset = f.tell()
                    f.write(len(chunk).to_bytes(4, "little"))
                    f.write(chunk)
                clog.chunks[i] = offset
                self.used -= len(chunk)
                self.swapped += 1
                self.swap_writes_mb += len(chunk) / CHUNK
                if self.used <= target:
                    return
