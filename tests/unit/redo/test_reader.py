"""Headers, block checks, record framing and vectors on the real fixtures and on damaged copies."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from replicator.errors import RedoLogError
from replicator.redo.header import parse_headers, version_string
from replicator.redo.reader import archive_format_regex, list_batch_files, read_lwns, sequence_from_name
from replicator.tools.dump import dump_file

SEQ15 = "arch1_15_1224959854.dbf"
SEQ16 = "arch1_16_1224959854.dbf"
ORA19_FILE = "o1_mf_1_117_mflqx1vl_.arc"


def test_free23_headers(free23: Path) -> None:
    h = parse_headers((free23 / SEQ15).read_bytes())
    assert (h.endian, h.block_size, h.sequence, h.nab, h.thread) == ("<", 512, 15, 598, 1)
    assert h.version == "23.6.0" and h.db_name == "FREE"
    assert (h.first_scn, h.next_scn) == (0x229606, 0x229A45)
    assert h.activation == 1496992686 and h.resetlogs == 1224959854
    assert h.vector_header_size == 32


def test_ora19_headers(ora19: Path) -> None:
    h = parse_headers((ora19 / ORA19_FILE).read_bytes())
    assert (h.sequence, h.version, h.db_name, h.block_size) == (117, "19.0.0", "FST", 512)


@pytest.mark.parametrize(
    "name,lwns,records,vectors",
    [
        (SEQ15, 524, 1154, 764),
        (SEQ16, 2, 7, 12),
    ],
)
def test_dump_counts_free23(free23: Path, name: str, lwns: int, records: int, vectors: int) -> None:
    counts = dump_file(str(free23 / name), io.StringIO())
    assert (counts.lwns, counts.records, counts.vectors) == (lwns, records, vectors)


def test_dump_counts_ora19(ora19: Path) -> None:
    out = io.StringIO()
    counts = dump_file(str(ora19 / ORA19_FILE), out)
    assert (counts.lwns, counts.records, counts.vectors) == (6, 284, 314)
    assert "CHANGE 26.6" in out.getvalue()


def test_dump_shows_the_insert(free23: Path) -> None:
    out = io.StringIO()
    dump_file(str(free23 / SEQ15), out)
    text = out.getvalue()
    assert "begin xid 0x000a.00c.0000023c" in text
    assert "kdo op 2 bdba 0x0600000e slot 0 fb 0x2c cc 2" in text
    assert "login username=OLR_TEST" in text


def test_archive_format() -> None:
    assert sequence_from_name("arch1_15_1224959854.dbf", archive_format_regex("arch%t_%s_%r.dbf")) == 15
    assert sequence_from_name("o1_mf_1_117_mflqx1vl_.arc", archive_format_regex("o1_mf_%t_%s_%h_.arc")) == 117
    assert sequence_from_name("other.dbf", archive_format_regex("arch%t_%s_%r.dbf")) == 0


def test_batch_listing_orders_by_sequence(free23: Path, tmp_path: Path) -> None:
    for name in (SEQ16, SEQ15):
        shutil.copy(free23 / name, tmp_path / name)
    files = list_batch_files([str(tmp_path)], "arch%t_%s_%r.dbf")
    assert [f.sequence for f in files] == [15, 16]


def test_version_strings() -> None:
    assert version_string(0x0B200400) == "11.2.0.4"
    assert version_string(0x13000000) == "19.0.0"


def _damaged(src: Path, tmp_path: Path, mutate) -> str:
    data = bytearray(src.read_bytes())
    mutate(data)
    out = tmp_path / src.name
    out.write_bytes(bytes(data))
    return str(out)


def test_flipped_byte_names_file_and_block(free23: Path, tmp_path: Path) -> None:
    def flip(d: bytearray) -> None:
        d[300 * 512 + 100] ^= 0x40

    path = _damaged(free23 / SEQ15, tmp_path, flip)
    with pytest.raises(RedoLogError) as e:
        list(read_lwns(path))
    assert e.value.code == 40006 and "block 300" in e.value.message and SEQ15 in e.value.message


def test_truncated_file(free23: Path, tmp_path: Path) -> None:
    path = _damaged(free23 / SEQ15, tmp_path, lambda d: d.__delitem__(slice(400 * 512, None)))
    with pytest.raises(RedoLogError) as e:
        list(read_lwns(path))
    assert e.value.code == 40007


def test_not_a_redo_file(tmp_path: Path) -> None:
    p = tmp_path / "x.dbf"
    p.write_bytes(b"hello" * 300)
    with pytest.raises(RedoLogError) as e:
        list(read_lwns(str(p)))
    assert e.value.code == 40005
