"""Blocks, checksums, LWN packing and file headers (§1–§3), checked by an independent reader."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from redocheck import check_file, parse_vectors

from replicator.redogen.blocks import Record, pack_lwn, seal, verify
from replicator.redogen.fileheader import LogHeader, file_header_block, redo_header_block


def test_seal_makes_every_block_fold_to_zero() -> None:
    rng = np.random.default_rng(1)
    buf = bytearray(rng.integers(0, 256, 8 * 512, dtype=np.uint8).tobytes())
    assert verify(buf, 512).size > 0
    seal(buf, 512)
    assert verify(buf, 512).size == 0
    # even/odd byte form of the rule (§2.2)
    block = np.frombuffer(bytes(buf[:512]), dtype=np.uint8)
    assert np.bitwise_xor.reduce(block[0::2]) == 0 and np.bitwise_xor.reduce(block[1::2]) == 0


def _records(sizes: list[int]) -> list[Record]:
    out = []
    for i, size in enumerate(sizes):
        body = bytes([(i % 255) + 1]) * (size - 24)
        out.append(Record(scn=1000 + i, subscn=1, body=body))
    return out


@given(st.lists(st.integers(7, 700).map(lambda n: n * 4), min_size=1, max_size=12), st.sampled_from([512, 1024, 4096]))
@settings(max_examples=200, deadline=None)
def test_pack_lwn_framing(sizes: list[int], bs: int) -> None:
    recs = _records(sizes)
    buf = pack_lwn(recs, bs, 2, 7, 0, 0x49261286)
    seal(buf, bs)
    assert verify(buf, bs).size == 0
    nblocks = len(buf) // bs
    # walk it like §3.2: every record found whole, in order, at its recorded place
    found, blk, off, carry = [], 0, 16, None
    while blk < nblocks:
        b = buf[blk * bs : (blk + 1) * bs]
        assert struct.unpack_from("<II", b, 4) == (2 + blk, 7)
        off = 16
        while off < bs:
            if carry is None:
                if off + 20 >= bs:
                    break
                size = struct.unpack_from("<I", b, off)[0]
                if size == 0:
                    break
                carry = [2 + blk, off, size, bytearray()]
            take = min(carry[2] - len(carry[3]), bs - off)
            carry[3] += b[off : off + take]
            off += take
            if len(carry[3]) == carry[2]:
                found.append(carry)
                carry = None
        blk += 1
    assert carry is None and len(found) == len(recs)
    lwn_len = struct.unpack_from("<I", buf, 16 + 28)[0]
    assert lwn_len == nblocks and buf[16 + 4] & 0x04
    for rec, (block, offset, size, data) in zip(recs, found):
        assert (rec.block, rec.offset, rec.size) == (block, offset, size)
        assert bytes(data[rec.header_size :]) == rec.body
        assert struct.unpack_from("<I", data, 8)[0] == rec.scn & 0xFFFFFFFF
    # the last block is not empty (an LWN covers exactly its blocks)
    assert any(buf[(nblocks - 1) * bs + 16 :])


def test_record_never_starts_in_last_20_bytes() -> None:
    recs = _records([100, 64])
    recs[0].body = b"\1" * (476 - 68)  # with its 68-byte LWN header it ends at 492: 20 bytes left
    buf = pack_lwn(recs, 512, 2, 1, 0, 0)
    assert recs[0].offset == 16 and recs[0].size == 476
    assert (recs[1].block, recs[1].offset) == (3, 16)
    assert struct.unpack_from("<H", buf, 12)[0] == 0x8010  # no boundary recorded at 492
    assert struct.unpack_from("<H", buf, 512 + 12)[0] == 0x8010


def test_file_header_matches_fixture(fixture23: Path) -> None:
    real = (fixture23 / "arch1_15_1224959854.dbf").read_bytes()
    assert file_header_block(512, 597, 0x17060000) == real[:512]


def test_redo_header_matches_fixture(fixture23: Path) -> None:
    real = (fixture23 / "arch1_15_1224959854.dbf").read_bytes()[512:1024]
    h = LogHeader(
        sequence=15,
        compat=0x17060000,
        dbid=0x593AA8AE,
        db_name="FREE",
        block_size=512,
        file_blocks=0x5000,
        activation=0x593A4BAE,
        resetlogs=0x4903676E,
        resetlogs_scn=0x1F75EE,
        thread=1,
        first_scn=0x229606,
        first_time=0x49261286,
        next_scn=0x229A45,
        next_time=0x49261288,
        nab=598,
        largest_lwn=13,
        file_number=2,
        prev_resetlogs=0x48E1961B,
    )
    ours = redo_header_block(h)
    assert verify(ours, 512).size == 0
    differ = [i for i in range(512) if ours[i] != real[i]]
    # only the checksum and the opaque thread-enable/redo-key area may differ
    assert all(i in (14, 15) or 432 <= i < 480 for i in differ), differ


@pytest.mark.parametrize("name", ["arch1_15_1224959854.dbf", "arch1_16_1224959854.dbf"])
def test_checker_accepts_the_real_fixture(fixture23: Path, name: str) -> None:
    checked = check_file(fixture23 / name)
    assert checked.compat == 0x17060000 and checked.records


def test_vector_table_alignment() -> None:
    from replicator.redogen.vectors import Dialect

    d = Dialect(0x13000000, 0)
    fields = [b"a", b"", b"abcde", b"x" * 8]
    vec = d.vector(11, 2, 1, 7, 0x01C0015E, 5, 1, 0, 99, fields)
    rec = b"\0" * 24 + vec
    (parsed,) = parse_vectors(rec, 24, 32)
    assert parsed.op == (11, 2) and parsed.fields == fields
    # table: (2 + 2n) rounded up so fields start 4-aligned; each field padded to 4
    assert len(vec) == 32 + ((2 + 2 * 4 + 2) & ~3) + 4 + 0 + 8 + 8
