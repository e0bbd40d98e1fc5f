"""Turn a LOB locator into the LOB's bytes, from what the transaction logged (redo-format.md §11.1).

The locator in the row tells where the value is:

* bit 0x04 of +5 clear: a BasicFile LOB, pages in LOB-index order;
* otherwise an in-row header at +20 (BE16 body size, BE16 flg2), then by flg2
  0x0400: a page count, rest bytes and DBAs (missing DBAs come from the LOB index);
  0x0100: a small value at +36;
  else a 1–4 byte length (flg3) and either the data itself (0x0800, in-row), SecureFile
  extents (0x4000 with flg3 style 0x20) or a list page (style 0x40), or BasicFile extents.

The rules and the cases OpenLogReplicator reports follow its builder: an unusable locator is
warning 60003 (with a location number), a LOB whose pages are not all in the transaction is
left out of the output silently, a length that does not add up is warning 60007.
"""

from __future__ import annotations

import struct
from typing import Final

from replicator import log
from replicator.txn.lobs import LobPages, Orphans, TxnLobs
from replicator.txn.pool import MemoryPool
from replicator.values.lob import LobValue

_BE16: Final = struct.Struct(">H")
_BE32: Final = struct.Struct(">I")


class _Missing(Exception):
    """The value cannot be built from this transaction (OLR prints nothing, no warning)."""


class _Bad(Exception):
    """An inconsistent locator: OLR warning 60003 with this location number."""

    def __init__(self, location: int):
        super().__init__(location)
        self.location = location


class LobReader:
    """Assembles the LOB values of one committed transaction.

    ``inline_only`` reads only what a locator holds itself (in-row data): before images.
    """

    def __init__(
        self, pool: MemoryPool, lobs: TxnLobs | None, orphans: Orphans | None, xid: int, inline_only: bool = False
    ):
        self.pool = pool
        self.lobs = lobs
        self.orphans = orphans
        self.xid = xid
        self.inline_only = inline_only

    def value(self, locator: bytes) -> LobValue:
        """The LobValue for a locator; ``complete`` is False when it cannot be assembled."""
        locator = bytes(locator)
        try:
            return LobValue(self._assemble(locator), locator)
        except _Missing:
            return LobValue(b"", locator, complete=False)
        except _Bad as bad:
            log.warning(
                60003, f"incorrect LOB for xid: {_xid(self.xid)}, data: {locator.hex(' ')}, location: {bad.location}"
            )
            return LobValue(b"", locator, complete=False)

    # ------------------------------------------------------------------ helpers
    def _lob(self, lob_id: bytes) -> LobPages:
        if self.inline_only:
            raise _Missing
        if self.orphans is not None and self.lobs is not None and len(self.orphans):
            self.orphans.claim(lob_id, self.pool, self.lobs)
        found = self.lobs.lobs.get(lob_id) if self.lobs is not None else None
        if found is None:
            raise _Missing
        return found

    def _page(self, lob: LobPages, dba: int, first_only: bool = False) -> list[bytes]:
        assert self.lobs is not None
        refs = lob.fragments(dba)
        if not refs:
            raise _Missing
        if first_only:
            refs = refs[:1]
        return [self.lobs.read(self.pool, ref) for ref in refs]

    # ------------------------------------------------------------------ the locator
    def _assemble(self, loc: bytes) -> bytes:
        size = len(loc)
        if size < 20:
            raise _Bad(1)
        lob_id = loc[10:20]
        if not loc[5] & 0x04:
            return self._basicfile(self._lob_or_empty(lob_id))
        if size < 23:
            raise _Bad(3)
        body = _BE16.unpack_from(loc, 20)[0]
        if size != body + 20:
            raise _Bad(4)
        flg2 = _BE16.unpack_from(loc, 22)[0]
        if flg2 & 0x0400:
            return self._in_index(loc, lob_id)
        if flg2 & 0x0100:
            return self._in_value(loc, body)
        return self._sized(loc, lob_id, body, flg2)

    def _lob_or_empty(self, lob_id: bytes) -> LobPages | None:
        if self.inline_only:
            raise _Missing  # a before image: only in-row data is known
        try:
            return self._lob(lob_id)
        except _Missing:
            return None  # OLR: no LOB index for it, an empty value is printed

    def _basicfile(self, lob: LobPages | None) -> bytes:
        """Out-of-row BasicFile value: pages in index order, the last one cut to the rest size."""
        if lob is None:
            return b""
        out: list[bytes] = []
        expected = 0
        for page_no in sorted(lob.index):
            if page_no != expected:
                log.warning(60003, f"incorrect LOB for xid: {_xid(self.xid)}, location: 2")
                expected = page_no
            data = b"".join(self._page(lob, lob.index[page_no]))
            out.append(data[: lob.size_rest if page_no == lob.size_pages else lob.page_size])
            expected += 1
        return b"".join(out)

    def _in_index(self, loc: bytes, lob_id: bytes) -> bytes:
        """flg2 0x0400: page count, rest bytes and page DBAs in the locator (then the index)."""
        size = len(loc)
        if size < 36:
            raise _Bad(5)
        pages, rest = _BE32.unpack_from(loc, 24)[0], _BE16.unpack_from(loc, 28)[0]
        lob = self._lob(lob_id)
        total = pages * lob.page_size + rest
        if total == 0:
            return b""
        out: list[bytes] = []
        at = 36
        for j in range(pages + (1 if rest else 0)):
            if at < size:
                if size < at + 4:
                    raise _Bad(6)
                dba = _BE32.unpack_from(loc, at)[0]
            else:
                dba = lob.index.get(j, -1)
                if dba < 0:
                    log.warning(60004, f"can't find page {j} for xid: {_xid(self.xid)}, LOB: {lob_id.hex()}")
                    break
            for data in self._page(lob, dba):
                out.append(data if j < pages else data[:rest])
            at += 4
        return self._checked(out, total, lob_id, loc)

    @staticmethod
    def _in_value(loc: bytes, body: int) -> bytes:
        """flg2 0x0100: a small value at +36, its size at +28 between two zero words."""
        if body < 16:
            raise _Bad(7)
        if len(loc) < 34:
            raise _Bad(8)
        zero1, chunk, zero2 = (
            _BE32.unpack_from(loc, 24)[0],
            _BE16.unpack_from(loc, 28)[0],
            _BE32.unpack_from(loc, 30)[0],
        )
        if zero1 or zero2 or chunk + 16 != body:
            raise _Bad(9)
        if chunk and len(loc) < chunk + 36:
            raise _Bad(10)
        return loc[36 : 36 + chunk]

    def _sized(self, loc: bytes, lob_id: bytes, body: int, flg2: int) -> bytes:
        """The usual form: a 1–4 byte length, then inline data, extents or a list page."""
        size = len(loc)
        if body < 10:
            raise _Bad(11)
        flg3, flg4 = loc[26], loc[27]
        width = flg3 & 0x03
        if size < (30, 30, 32, 32)[width]:
            raise _Bad(12 + width)
        total = int.from_bytes(loc[28 : 29 + width], "big")
        at = 29 + width
        skip = flg4 & 0x0F
        if skip > 1:
            raise _Bad(17)
        at += 1 + skip
        if total == 0:
            return b""
        if flg2 & 0x0800:  # in-row data
            if at + total < size:
                raise _Bad(18)
            return loc[at : at + total]
        if flg2 & 0x4000:  # SecureFile out of row
            lob = self._lob(lob_id)
            style = flg3 & 0xF0
            if style == 0x20:
                return self._checked(self._extents(loc, at, lob, 0x20, 19), total, lob_id, loc)
            if style == 0x40:
                if at + 4 != size:
                    raise _Bad(20)
                return self._checked(self._list(lob, _BE32.unpack_from(loc, at)[0]), total, lob_id, loc)
            raise _Bad(22)
        if at + 1 >= size:
            raise _Bad(23)
        lob = self._lob(lob_id)
        return self._checked(self._extents(loc, at, lob, 0, 24), total, lob_id, loc)

    def _extents(self, loc: bytes, at: int, lob: LobPages, style: int, bad: int) -> list[bytes]:
        """A count byte (+1), then extents: flg5, BE32 first DBA, a 1-byte or BE16 page count."""
        size = len(loc)
        count = loc[at] + 1
        at += 1
        out: list[bytes] = []
        for _ in range(count):
            if (at + 1 >= size) if style else (at + 5 >= size):
                raise _Bad(bad)
            flg5 = loc[at]
            dba = _BE32.unpack_from(loc, at + 1)[0]
            at += 5
            wide = flg5 & 0x20 if style else (flg5 & 0xF0) == 0x20
            if not style and flg5 & 0xF0 not in (0x00, 0x20):
                raise _Bad(27)
            if wide:
                if not style and at + 1 >= size:
                    raise _Bad(26)
                pages = _BE16.unpack_from(loc, at)[0]
                at += 2
            else:
                pages = loc[at]
                at += 1
            for _ in range(pages):
                if style:
                    out.extend(self._page(lob, dba))
                else:
                    try:
                        out.extend(self._page(lob, dba, first_only=True))
                    except _Missing:
                        log.warning(
                            60005,
                            f"missing LOB data (new in-value) for xid: {_xid(self.xid)}, "
                            f"LOB: {loc[10:20].hex()}, page: {dba}",
                        )
                        log.warning(60006, f"dump LOB: {loc[10:20].hex()} data: {loc.hex(' ')}")
                        raise
                dba += 1
        return out

    def _list(self, lob: LobPages, list_dba: int) -> list[bytes]:
        """Style 0x40: follow the chain of list pages, each listing (page count, first DBA)."""
        assert self.lobs is not None
        out: list[bytes] = []
        seen: set[int] = set()
        while list_dba and list_dba not in seen:
            seen.add(list_dba)
            page = self.lobs.lists.get(list_dba)
            if page is None:
                raise _Bad(21)
            for pages, dba in page.extents:
                for n in range(pages):
                    out.extend(self._page(lob, dba + n, first_only=True))
            list_dba = page.next
        return out

    def _checked(self, parts: list[bytes], total: int, lob_id: bytes, loc: bytes) -> bytes:
        """Join the parts; the locator's length must be exactly what they add up to (60007)."""
        data = b"".join(parts)
        if total != len(data):
            log.warning(60007, f"incorrect LOB sum xid: {_xid(self.xid)} left: {total - len(data)}")
            log.warning(60006, f"dump LOB: {lob_id.hex()} data: {loc.hex(' ')}")
            raise _Missing
        return data


def _xid(xid: int) -> str:
    return f"{xid >> 48}.{(xid >> 32) & 0xFFFF}.{xid & 0xFFFFFFFF}"
