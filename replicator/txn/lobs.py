"""LOB pages and page order held for one open transaction (redo-format.md §11.2).

A LOB value is assembled only at commit, from what the transaction logged before:

* page data (19.1, 26.6, 26.2 FILL) keyed by (LOB id, DBA, offset in the page); the bytes
  live in the :class:`~replicator.txn.pool.MemoryPool` (a second chunk log per transaction),
  so ``memory.max-mb`` and swapping apply to LOBs as to row changes;
* the BasicFile page order (LOB index keys: page number -> DBA, and the size from page 0);
* SecureFile list pages (LMAP/ALMAP/IMAP extent lists and their LHB chain).

:class:`Orphans` keeps pages whose transaction is not known yet (a 19.1 carries no XID); they
join a transaction when its LOB index entry, or a row naming the LOB, shows up.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import NamedTuple

from replicator import log
from replicator.redo.opcodes.lob import NO_PAGE
from replicator.txn.pool import LOB_LOG, ChunkLog, MemoryPool


class PageRef(NamedTuple):
    """Where one page (or page fragment) is stored in the pool."""

    chunk: int
    offset: int
    size: int


@dataclass(slots=True)
class LobPages:
    """Everything logged about one LOB id (OLR's LobData)."""

    pages: dict[int, dict[int, PageRef]] = field(default_factory=dict)  # DBA -> offset in page -> data
    index: dict[int, int] = field(default_factory=dict)  # page number -> DBA (BasicFile)
    page_size: int = 0
    size_pages: int = 0
    size_rest: int = 0

    def fragments(self, dba: int) -> list[PageRef]:
        """The data of one page, fragments in offset order (empty when not logged)."""
        found = self.pages.get(dba)
        return [found[k] for k in sorted(found)] if found else []


@dataclass(slots=True)
class ListPage:
    """A SecureFile list page: the next list page and (page count, first DBA) extents."""

    next: int = 0
    extents: list[tuple[int, int]] = field(default_factory=list)


class TxnLobs:
    """The LOB state of one transaction; created on its first LOB vector."""

    __slots__ = ("bytes", "clog", "lists", "lobs", "xid")

    def __init__(self, pool: MemoryPool, xid: int, key: int | None = None):
        self.xid = xid
        # The LOB page log's key: the transaction's pool key (its XID unless several PDBs) + LOB_LOG.
        self.clog: ChunkLog = pool.log_for((xid if key is None else key) | LOB_LOG)
        self.lobs: dict[bytes, LobPages] = {}
        self.lists: dict[int, ListPage] = {}
        self.bytes = 0

    def lob(self, lob_id: bytes) -> LobPages:
        """The entry of ``lob_id``, created empty."""
        found = self.lobs.get(lob_id)
        if found is None:
            found = self.lobs[lob_id] = LobPages()
        return found

    def add_page(
        self, pool: MemoryPool, lob_id: bytes, dba: int, offset: int, page_no: int, page_size: int, data: bytes
    ) -> None:
        """Store page data; a page logged again replaces the older image."""
        lob = self.lob(lob_id)
        chunk, pos = pool.append(self.clog, data)
        lob.pages.setdefault(dba, {})[offset] = PageRef(chunk, pos, len(data))
        self.bytes += len(data)
        if page_size:
            if lob.page_size and lob.page_size != page_size:
                log.warning(
                    50003, f"inconsistent page size of LOB {lob_id.hex()}: {page_size}, already set to {lob.page_size}"
                )
            else:
                lob.page_size = page_size
        if page_no != NO_PAGE:
            lob.index.setdefault(page_no, dba)

    def set_pages(self, lob_id: bytes, first_page: int, dbas: tuple[int, ...]) -> None:
        """BasicFile LOB index: DBAs of consecutive pages from ``first_page`` (0 = no page)."""
        lob = self.lob(lob_id)
        for n, dba in enumerate(dbas):
            if dba:
                lob.index.setdefault(first_page + n, dba)

    def set_size(self, lob_id: bytes, pages: int, rest: int) -> None:
        """BasicFile LOB size from its page-0 index entry."""
        lob = self.lob(lob_id)
        lob.size_pages, lob.size_rest = pages, rest

    def chain(self, dba: int, nxt: int) -> None:
        """LOAD_LHB: list page ``nxt`` follows ``dba``."""
        self.lists.setdefault(dba, ListPage()).next = nxt

    def set_list(self, dba: int, raw: bytes, endian: str) -> None:
        """LMAP (or LOAD_ITREE): +4 u32 count, 8-byte extents from +8, each +2 u16 pages, +4 u32 DBA."""
        page = self.lists.setdefault(dba, ListPage())
        page.extents = _extents(raw, endian, 4, 8)

    def append_list(self, dba: int, raw: bytes, endian: str) -> None:
        """ALMAP/IMAP: +4 u32 count, +8 u32 start index, extents from +12 replace those from there."""
        if len(raw) < 12:
            return
        start = struct.unpack_from(endian + "I", raw, 8)[0]
        page = self.lists.setdefault(dba, ListPage())
        head = page.extents[:start] + [(0, 0)] * (start - len(page.extents))
        page.extents = head + _extents(raw, endian, 4, 12)

    def read(self, pool: MemoryPool, ref: PageRef) -> bytes:
        """The stored bytes of one page."""
        return pool.read_at(self.clog, ref.chunk, ref.offset, ref.size)


def _extents(raw: bytes, endian: str, count_at: int, first: int) -> list[tuple[int, int]]:
    if len(raw) < first:
        return []
    count = struct.unpack_from(endian + "I", raw, count_at)[0]
    count = min(count, (len(raw) - first) // 8)
    out = []
    for i in range(count):
        pages, dba = struct.unpack_from(endian + "HI", raw, first + i * 8 + 2)
        out.append((pages, dba))
    return out


@dataclass(slots=True)
class _Orphan:
    dba: int
    page_no: int
    page_size: int
    data: bytes


class Orphans:
    """Pages of LOBs whose transaction is not known yet, keyed by LOB id (kept in memory)."""

    def __init__(self) -> None:
        self._by_lob: dict[bytes, dict[int, _Orphan]] = {}
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._by_lob)

    def add(self, lob_id: bytes, dba: int, page_no: int, page_size: int, data: bytes) -> None:
        """Keep a page until its LOB id is claimed."""
        pages = self._by_lob.setdefault(lob_id, {})
        old = pages.get(dba)
        if old is not None:
            self.bytes -= len(old.data)
        pages[dba] = _Orphan(dba, page_no, page_size, data)
        self.bytes += len(data)

    def claim(self, lob_id: bytes, pool: MemoryPool, lobs: TxnLobs) -> None:
        """Move the orphaned pages of ``lob_id`` into a transaction."""
        pages = self._by_lob.pop(lob_id, None)
        if not pages:
            return
        for page in pages.values():
            self.bytes -= len(page.data)
            lobs.add_page(pool, lob_id, page.dba, 0, page.page_no, page.page_size, page.data)
