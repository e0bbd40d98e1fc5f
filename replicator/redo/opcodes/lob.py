"""LOB change vectors (redo-format.md §5.7–§5.9, §11.2): page data, SecureFile KDLI, LOB index keys.

Three kinds of vectors carry LOB values:

* **page data**: 19.1 (direct-path page write, BasicFile) and 26.6 (block image, SecureFile);
* **SecureFile metadata**: 26.2 KDLI redo paired with a 5.1 (page fills, extent maps,
  list pages of a large LOB);
* **BasicFile LOB index**: 10.2 / 10.8 / 10.18 leaf changes of the LOB index segment, whose
  keys give the page order of a LOB.

The decoders here only read what LOB assembly needs (:mod:`replicator.txn.lobs`); they do
not check the dictionary. Multi-byte numbers inside KDLI sub-records follow the redo file's
byte order, except the LOB index keys, which are big-endian as Oracle stores index keys.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

from replicator.redo.vectors import ChangeVector

LOB_ID_SIZE: Final = 10
TRACKED_PREFIX: Final = b"\x00\x00\x00\x01"  # OLR tracks only LOB ids that start like this
NO_PAGE: Final = -1

# KDLI common opcodes (§11.2) and sub-record codes.
KDLI_OP_BIMG: Final = 6
KDLI_INFO, KDLI_LOAD_DATA, KDLI_FILL, KDLI_LMAP, KDLI_LMAPX = 1, 4, 6, 7, 8
KDLI_SUPLOG, KDLI_FPLOAD, KDLI_LOAD_LHB, KDLI_ALMAP, KDLI_LOAD_ITREE, KDLI_IMAP = 9, 11, 12, 13, 15, 16
LIST_SET: Final = frozenset({KDLI_LMAP, KDLI_LOAD_ITREE})  # replace the extent list of a list page
LIST_APPEND: Final = frozenset({KDLI_IMAP, KDLI_ALMAP})  # add entries at a start index

_BE16 = struct.Struct(">H")
_BE32 = struct.Struct(">I")


@dataclass(slots=True)
class LobPage:
    """One page of LOB data as a 19.1 or 26.6 vector carries it."""

    lob_id: bytes
    dba: int
    data_obj: int
    xid: int  # 0 when the vector does not say (19.1)
    page_no: int  # position in a BasicFile LOB (19.1), NO_PAGE for SecureFile
    data: bytes


def _xid(endian: str, raw: bytes, at: int) -> int:
    usn, slot, sqn = struct.unpack_from(endian + "HHI", raw, at)
    return (usn << 48) | (slot << 32) | sqn


def direct_page(cv: ChangeVector) -> LobPage | None:
    """19.1: f1 +0 dataObj, +4 LOB id, +24 page number, page data from +36 (§5.8)."""
    f1 = cv.field(1)
    if len(f1) < 36:
        return None
    data_obj = struct.unpack_from(cv.endian + "I", f1, 0)[0]
    page_no = struct.unpack_from(cv.endian + "I", f1, 24)[0]
    return LobPage(bytes(f1[4:14]), cv.dba, data_obj, 0, page_no, bytes(f1[36:]))


def bimg_page(cv: ChangeVector) -> LobPage | None:
    """26.6: f1 KDLI common, f2/f3 sub-records (FPLOAD, LOAD_DATA), f4 the page when BIMG, f5 SUPLOG (§5.9).

    Returns None when the vector is not a block image or misses the fields OLR requires.
    """
    if cv.field_count < 3 or cv.flen(1) < 12 or cv.flen(2) < 32:
        return None
    e = cv.endian
    common = cv.field(1)
    dba = struct.unpack_from(e + "I", common, 8)[0]
    data_obj = struct.unpack_from(e + "I", cv.field(2), 24)[0]
    xid = 0
    lob_id = b""
    last = cv.field_count
    for i in (2, 3, last if last >= 5 else 0):
        if not i:
            continue
        sub = cv.field(i)
        code = sub[0] if sub else 0
        if code == KDLI_FPLOAD and len(sub) >= 28:
            xid = _xid(e, sub, 16)
        elif code == KDLI_SUPLOG and len(sub) >= 24:
            xid = _xid(e, sub, 4)
        elif code in (KDLI_LOAD_DATA, KDLI_LOAD_LHB, KDLI_LOAD_ITREE) and len(sub) >= 22:
            lob_id = bytes(sub[12:22])
        elif code == KDLI_INFO and len(sub) >= 11:
            lob_id = bytes(sub[1:11])
    if common[0] != KDLI_OP_BIMG or cv.field_count < 4 or not lob_id:
        return None
    return LobPage(lob_id, dba, data_obj, xid, NO_PAGE, bytes(cv.field(4)))


@dataclass(slots=True)
class KdliRedo:
    """What a 26.2 (SecureFile LOB redo) says: which LOB, which block, and one action."""

    lob_id: bytes
    dba: int
    code: int = 0  # the sub-record that decides the action (FILL, LMAP, ALMAP...)
    fill_offset: int = 0
    payload: bytes = b""  # FILL data, or the raw LMAP/ALMAP/IMAP sub-record
    chain: tuple[int, ...] = ()  # LOAD_LHB: up to 4 list-page DBAs following ``dba``


def kdli_redo(cv: ChangeVector) -> KdliRedo | None:
    """26.2: f1 KTB, f2 KDLI common (+8 DBA), f3 and optional f4 sub-records (§5.7)."""
    if cv.field_count < 3 or cv.flen(2) < 12:
        return None
    e = cv.endian
    out = KdliRedo(b"", struct.unpack_from(e + "I", cv.field(2), 8)[0])
    for i in range(3, min(cv.field_count, 4) + 1):
        sub = cv.field(i)
        if not sub:
            continue
        code = sub[0]
        if code == KDLI_INFO and len(sub) >= 17:
            out.lob_id = bytes(sub[1:11])
        elif code in (KDLI_LOAD_DATA, KDLI_LOAD_ITREE) and len(sub) >= 40:
            out.lob_id = bytes(sub[12:22])
            if code == KDLI_LOAD_ITREE:
                out.code, out.payload = code, bytes(sub)
        elif code == KDLI_LOAD_LHB and len(sub) >= 112:
            out.lob_id = bytes(sub[12:22])
            out.chain = struct.unpack_from(e + "4I", sub, 64)
        elif code == KDLI_FILL and len(sub) >= 8:
            offset, size = struct.unpack_from(e + "H", sub, 2)[0], struct.unpack_from(e + "H", sub, 6)[0]
            out.code, out.fill_offset, out.payload = code, offset, bytes(sub[8 : 8 + size])
        elif (code in (KDLI_LMAP, KDLI_LMAPX, KDLI_IMAP) and len(sub) >= 8) or (code == KDLI_ALMAP and len(sub) >= 12):
            out.code, out.payload = code, bytes(sub)
    return out if out.lob_id else None


@dataclass(slots=True)
class IndexEntry:
    """A BasicFile LOB index change: pages of one LOB from ``page_no`` on, or its size."""

    lob_id: bytes
    page_no: int
    dbas: tuple[int, ...]  # page DBAs in order (0 = none)
    size: tuple[int, int] | None = None  # (whole pages, rest bytes) from a 10.18 of page 0


def _key(key: bytes, at: int = 0) -> tuple[bytes, int] | None:
    """``0A`` + LOB id + ``04`` + BE32 page number (§11.2)."""
    if len(key) < at + 16 or key[at] != 0x0A or key[at + 11] != 0x04:
        return None
    return bytes(key[at + 1 : at + 11]), _BE32.unpack_from(key, at + 12)[0]


def _dbas(data: bytes, first: int) -> tuple[int, ...]:
    return tuple(_BE32.unpack_from(data, j)[0] for j in range(first, len(data) - 3, 4))


def index_entry(undo: ChangeVector, redo: ChangeVector) -> IndexEntry | None:
    """The LOB index facts of a (5.1, 10.x) pair, None when it is not a LOB key (§11.2).

    10.2 insert: f3 key, f4 key data (page DBAs; page 0 keeps a 16-byte header first).
    10.8 init leaf: a single 50-byte row ``01 01`` + 32-byte data + key. 10.18: key data
    in f3, key from the paired 5.1 (10.22 undo, f5), header +4 pages, +8 rest bytes.
    """
    op = redo.opcode
    if op == 0x0A02:
        found = _key(redo.field(3)) if redo.flen(3) == 16 else None
        if found is None:
            return None
        lob_id, page_no = found
        data = redo.field(4)
        return IndexEntry(lob_id, page_no, _dbas(data, 16 if page_no == 0 else 0))
    if op == 0x0A08:
        rows = redo.flen(3) // 2 - 1  # f3 is the row directory with or without the KTB in f1
        key = redo.field(4)
        if rows != 1 or len(key) != 50 or key[0] != 1 or key[1] != 1:
            return None
        found = _key(key, 34)
        if found is None:
            return None
        lob_id, page_no = found
        return IndexEntry(lob_id, page_no, _dbas(key[2:34], 16 if page_no == 0 else 0))
    if op == 0x0A12:
        found = _key(undo.field(5)) if undo.flen(5) == 16 else None
        data = redo.field(3)
        if found is None or len(data) < 10:
            return None
        lob_id, page_no = found
        size = (_BE32.unpack_from(data, 4)[0], _BE16.unpack_from(data, 8)[0])
        return IndexEntry(lob_id, page_no, _dbas(data, 16 if page_no == 0 else 0), size)
    return None
