"""LOB assembly (redo-format.md §11): locator forms, page stores, the pool, the real 19c fixture."""

from __future__ import annotations

import hashlib
import logging
import struct
from pathlib import Path

import pytest

from replicator.events import Column, Table, TableLob
from replicator.redo.opcodes import lob as L
from replicator.redo.parser import Parser, ParserOptions
from replicator.redo.reader import read_lwns
from replicator.redo.vectors import ChangeVector
from replicator.redogen.vectors import Dialect
from replicator.txn.lobassembly import LobReader
from replicator.txn.lobs import Orphans, TxnLobs
from replicator.txn.pool import LOB_LOG, MemoryPool, swap_name
from replicator.values.lob import LobValue, unavailable

LOB_ID = bytes.fromhex("00000001000000aabbcc")


def _locator(body: bytes, flags: int = 0x0C) -> bytes:
    """Header (+0..+19) and BE16 body size, as 19c writes an in-row locator."""
    return (
        bytes.fromhex("00700001")
        + bytes([2, flags])
        + bytes.fromhex("00800001")
        + LOB_ID
        + struct.pack(">H", len(body) + 2)
        + body
    )


def _inline(data: bytes) -> bytes:
    width = 0 if len(data) < 256 else 1
    size = len(data).to_bytes(width + 1, "big")
    tail = bytes([width, 0]) + size + b"\x01" + data
    return _locator(struct.pack(">HH", 0x4890, len(tail)) + tail)


def _extents(total: int, extents: list[tuple[int, int]]) -> bytes:
    body = bytes([0x22, 0]) + total.to_bytes(3, "big") + b"\x01" + bytes([len(extents) - 1])
    for dba, count in extents:
        body += (
            (bytes([0x22]) + struct.pack(">IH", dba, count))
            if count > 255
            else (bytes([0x02]) + struct.pack(">IB", dba, count))
        )
    return _locator(struct.pack(">HH", 0x4090, len(body)) + body)


def test_inline_empty_and_value_forms() -> None:
    reader = LobReader(MemoryPool(), None, None, 1)
    assert reader.value(_inline(b"hello")) == LobValue(b"hello", _inline(b"hello"))
    assert bytes(reader.value(_inline(b"x" * 300))) == b"x" * 300
    empty = reader.value(bytes.fromhex("00700001020c0080000100000001000000bc9bcb000a4890000400000000"))
    assert bytes(empty) == b"" and empty and empty.complete  # EMPTY_CLOB() is not NULL
    value_form = _locator(struct.pack(">HIHIH", 0x0100, 0, 3, 0, 0) + b"abc")
    assert bytes(reader.value(value_form)) == b"abc"


def test_bad_locator_warns_60003(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="replicator")
    value = LobReader(MemoryPool(), None, None, 1).value(b"\x00" * 10)
    assert unavailable(value)
    assert "60003" in caplog.text or any(getattr(r, "olr_code", 0) == 60003 for r in caplog.records)


def test_securefile_extents_from_pool_pages() -> None:
    pool = MemoryPool()
    lobs = TxnLobs(pool, 0x0005_0001_00000001)
    pages = [bytes([65 + n]) * 8060 for n in range(3)] + [b"z" * 100]
    for n, page in enumerate(pages[:2]):
        lobs.add_page(pool, LOB_ID, 0x100 + n, 0, L.NO_PAGE, 8132, page)
    for n, page in enumerate(pages[2:]):
        lobs.add_page(pool, LOB_ID, 0x200 + n, 0, L.NO_PAGE, 8132, page)
    loc = _extents(sum(map(len, pages)), [(0x100, 2), (0x200, 2)])
    value = LobReader(pool, lobs, Orphans(), lobs.xid).value(loc)
    assert value.complete and bytes(value) == b"".join(pages)
    assert pool.used >= sum(map(len, pages))  # LOB bytes are counted in the pool
    pool.discard(lobs.xid)
    assert pool.used == 0 and swap_name(lobs.xid | LOB_LOG).endswith(".lob.swap")


def test_missing_page_is_left_out_and_wrong_sum_warns(caplog: pytest.LogCaptureFixture) -> None:
    pool = MemoryPool()
    lobs = TxnLobs(pool, 7)
    lobs.add_page(pool, LOB_ID, 0x100, 0, L.NO_PAGE, 8132, b"a" * 10)
    reader = LobReader(pool, lobs, Orphans(), 7)
    assert unavailable(reader.value(_extents(20, [(0x100, 2)])))  # page 0x101 not logged: no warning
    caplog.set_level(logging.WARNING, logger="replicator")
    assert unavailable(reader.value(_extents(11, [(0x100, 1)])))
    assert "sum" in caplog.text


def test_list_page_and_fill() -> None:
    pool = MemoryPool()
    lobs = TxnLobs(pool, 9)
    lmap = bytes([L.KDLI_LMAP, 0, 0, 0]) + struct.pack("<I", 1) + struct.pack("<BBHI", 0, 0, 2, 0x300)
    lobs.set_list(0x50, lmap, "<")
    lobs.add_page(pool, LOB_ID, 0x300, 0, L.NO_PAGE, 0, b"first")
    lobs.add_page(pool, LOB_ID, 0x301, 0, L.NO_PAGE, 0, b"second")
    body = bytes([0x42, 0]) + (11).to_bytes(3, "big") + b"\x01" + struct.pack(">I", 0x50)
    loc = _locator(struct.pack(">HH", 0x4090, len(body)) + body)
    assert bytes(LobReader(pool, lobs, Orphans(), 9).value(loc)) == b"firstsecond"


def test_basicfile_index_and_orphans() -> None:
    pool = MemoryPool()
    orphans = Orphans()
    orphans.add(LOB_ID, 0x400, 0, 8132, b"p" * 8132)
    orphans.add(LOB_ID, 0x401, 1, 8132, b"q" * 8132)
    lobs = TxnLobs(pool, 3)
    orphans.claim(LOB_ID, pool, lobs)
    lobs.set_pages(LOB_ID, 0, (0x400, 0x401))
    lobs.set_size(LOB_ID, 1, 100)
    basic = _locator(b"", flags=0x08)[:20]  # bit 0x04 clear: BasicFile, page order from the index
    value = LobReader(pool, lobs, orphans, 3).value(basic)
    assert bytes(value) == b"p" * 8132 + b"q" * 100 and not len(orphans)


def test_index_entry_decodes_a_lob_key() -> None:
    d = Dialect(0x13000000, 0)
    key = b"\x0a" + LOB_ID + b"\x04" + struct.pack(">I", 0)
    data = b"\0" * 16 + struct.pack(">II", 0x400, 0x401)
    raw = d.vector(10, 2, 1, 7, 0x500, 1, 1, 0, 99, [b"\0" * 24, b"\0" * 8, key, data])
    entry = L.index_entry(ChangeVector(raw, 0, 32, "<"), ChangeVector(raw, 0, 32, "<"))
    assert entry is not None and entry.lob_id == LOB_ID and entry.dbas == (0x400, 0x401)


# ---------------------------------------------------------------------- the real 19c file
ORA19_FILE = "o1_mf_1_117_mflqx1vl_.arc"


def _parse(ora19: Path, options: ParserOptions) -> tuple[list, Parser]:
    out: list = []
    parser = Parser(options, out.append)
    headers: list = []
    for i, lwn in enumerate(read_lwns(str(ora19 / ORA19_FILE), header_out=headers)):
        if i == 0:
            parser.start_file(headers[0])
        parser.process_lwn(lwn)
    return out, parser


def _igor_test() -> Table:
    """IGOR.TEST as far as the fixture tells (its dictionary has no COL$): column 6 is the BLOB."""
    cols = [
        Column("ID", 2, 22, -1, -1, 0, 0, False, 1, key=True),
        Column("FIRST_NAME", 1, 100, -1, -1, 1, 873, True, 2),
        Column("LAST_NAME", 1, 100, -1, -1, 1, 873, True, 3),
        Column("HIRED", 12, 7, -1, -1, 0, 0, True, 4),
        Column("SALARY", 2, 22, -1, -1, 0, 0, True, 5),
        Column("DOC", 113, 4000, -1, -1, 0, 0, True, 6, 0x80),
    ]
    # SYS_LOB0000078233C00006$$ is OBJ# 78234 in the fixture's partial dictionary.
    return Table(78233, 78233, "IGOR", "TEST", cols, (0,), lobs=(TableLob(5, {78234: 8132}, (78235,)),))


def test_ora19_schemaless_lob_vectors_are_quiet(ora19: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="replicator")
    txns, parser = _parse(ora19, ParserOptions(tables={}, schemaless=True, flags=2))
    assert not caplog.records and parser.stats.unknown_opcodes == {}
    assert not parser.lobs.enabled  # no dictionary: OLR keeps no LOB page either
    inserts = [c for t in txns for c in t.changes if c.obj == 78233 and c.op == "c"]
    assert [type(c.after[5]) for c in inserts] == [bytes, bytes]  # the raw locator, as OLR prints it


def test_ora19_lob_writes_assemble(ora19: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="replicator")
    txns, parser = _parse(ora19, ParserOptions(tables={78233: _igor_test()}))
    assert not caplog.records
    docs = [c.after[5] for t in txns for c in t.changes if c.op == "c"]
    assert [len(d) for d in docs] == [1694997, 150999]  # the locators' lengths, all 230 pages
    for doc in docs:
        assert isinstance(doc, LobValue) and doc.complete
        assert doc.startswith(b"%PDF-1.7") and doc.rstrip().endswith(b"%%EOF")
    assert hashlib.md5(docs[1]).hexdigest() == "e2e50d4a234ef6d6fa17422859994e2b"
    deleted = [c.before[5] for t in txns for c in t.changes if c.op == "d"]
    assert all(unavailable(v) for v in deleted)  # old out-of-row values are not in this redo
    assert parser.pool.used == 0 and not len(parser.lobs.orphans)


def test_ora19_lob_pages_count_against_max_mb(ora19: Path) -> None:
    from replicator.errors import RuntimeFailure

    parser = Parser(ParserOptions(tables={78233: _igor_test()}), lambda t: None, pool=MemoryPool(max_mb=1, swap_mb=0))
    headers: list = []
    with pytest.raises(RuntimeFailure) as failure:
        for i, lwn in enumerate(read_lwns(str(ora19 / ORA19_FILE), header_out=headers)):
            if i == 0:
                parser.start_file(headers[0])
            parser.process_lwn(lwn)
    assert failure.value.code == 10016


def test_lob_pages_swap_to_disk_and_back(tmp_path: Path) -> None:
    pool = MemoryPool(max_mb=64, swap_mb=2, swap_path=str(tmp_path))
    lobs = TxnLobs(pool, 0x0001_0002_00000003)
    pages = [bytes([n % 251]) * 8060 for n in range(600)]  # ~4.6 MB: more than swap-mb
    extents = []
    for n, page in enumerate(pages):
        if n % 255 == 0:
            extents.append((0x1000 + n, 0))
        lobs.add_page(pool, LOB_ID, 0x1000 + n, 0, L.NO_PAGE, 8132, page)
        extents[-1] = (extents[-1][0], extents[-1][1] + 1)
    assert pool.swapped and list(tmp_path.glob("*.lob.swap"))
    value = LobReader(pool, lobs, Orphans(), lobs.xid).value(_extents(sum(map(len, pages)), extents))
    assert value.complete and bytes(value) == b"".join(pages)
    pool.discard(lobs.xid)
    assert not list(tmp_path.glob("*.swap"))
