"""Header blocks 0 and 1 are checksummed, and NAB agrees with block 0 and the file (issue 15, fault 1).

One flipped bit in block 1's NAB (byte 668 of the free23 sequence 15 file) used to make
``replicator run`` exit 0 with none of the 3 expected lines.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest
from fixture_configs import free23_batch_config, write_config

from replicator.errors import RedoLogError
from replicator.redo.header import block_checksum_ok, parse_headers
from replicator.redo.reader import read_lwns

SEQ15 = "arch1_15_1224959854.dbf"
BS = 512


def _copy(free23: Path, tmp_path: Path, mutate) -> Path:
    data = bytearray((free23 / SEQ15).read_bytes())
    mutate(data)
    out = tmp_path / SEQ15
    out.write_bytes(bytes(data))
    return out


def _reseal(data: bytearray, block: int) -> None:
    """Fix a block's checksum after an edit (the XOR of its 16-bit words back to 0)."""
    view = data[block * BS : (block + 1) * BS]
    x = 0
    for (w,) in struct.iter_unpack("<H", view):
        x ^= w
    old = struct.unpack_from("<H", data, block * BS + 14)[0]
    struct.pack_into("<H", data, block * BS + 14, old ^ x)
    assert block_checksum_ok(data[block * BS : (block + 1) * BS])


def _block1_u32(free23: Path, tmp_path: Path, offset: int, value: int) -> Path:
    """A copy whose block 1 holds ``value`` at ``offset`` with a checksum made good again."""

    def edit(d: bytearray) -> None:
        struct.pack_into("<I", d, BS + offset, value)
        _reseal(d, 1)

    return _copy(free23, tmp_path, edit)


@pytest.mark.parametrize("bit", [0x02, 0x04, 0x10, 0x40])
def test_flipped_nab_bit_is_a_checksum_error(free23: Path, tmp_path: Path, bit: int) -> None:
    def flip(d: bytearray) -> None:
        d[668] ^= bit

    path = _copy(free23, tmp_path, flip)
    with pytest.raises(RedoLogError) as e:
        list(read_lwns(str(path)))
    assert e.value.code == 40006 and "block 1" in e.value.message


def test_block0_checksum(free23: Path, tmp_path: Path) -> None:
    def flip(d: bytearray) -> None:
        d[100] ^= 0x01  # unused byte of block 0

    path = _copy(free23, tmp_path, flip)
    with pytest.raises(RedoLogError) as e:
        parse_headers(path.read_bytes()[:8192], str(path))
    assert e.value.code == 40006 and "block 0" in e.value.message
    # disable-checks bit 4 turns the header checksums off too
    assert parse_headers(path.read_bytes()[:8192], str(path), verify_checksum=False).sequence == 15


def test_nab_beyond_the_blocks_of_block0(free23: Path, tmp_path: Path) -> None:
    path = _block1_u32(free23, tmp_path, 156, 599)  # NAB; block 0 announces 597 + 1 blocks
    with pytest.raises(RedoLogError) as e:
        list(read_lwns(str(path)))
    assert e.value.code == 40002 and "NAB 599" in e.value.message


def test_nab_before_redo_that_is_still_there(free23: Path, tmp_path: Path) -> None:
    """A resealed NAB that ends the log early (the checksum cannot see it) is still caught."""
    path = _block1_u32(free23, tmp_path, 156, 582)  # NAB: the 0x10 flip, checksum made good again
    with pytest.raises(RedoLogError) as e:
        list(read_lwns(str(path)))
    assert e.value.code == 40002 and "block 582" in e.value.message


def test_block1_number_and_block_size(free23: Path, tmp_path: Path) -> None:
    with pytest.raises(RedoLogError) as e:
        parse_headers(_block1_u32(free23, tmp_path, 4, 7).read_bytes()[:8192])  # block number
    assert e.value.code == 40002
    with pytest.raises(RedoLogError) as e:
        parse_headers(_block1_u32(free23, tmp_path, 44, 1024).read_bytes()[:8192])  # block size
    assert e.value.code == 40001


def test_run_with_a_flipped_nab_bit_exits_non_zero(free23: Path, tmp_path: Path) -> None:
    """The reviewer's case end to end: ``run`` must not exit 0 with missing output."""

    def flip(d: bytearray) -> None:
        d[668] ^= 0x10

    damaged = _copy(free23, tmp_path, flip)
    cfg = free23_batch_config(free23, tmp_path)
    cfg["source"][0]["reader"]["redo-log"] = [str(damaged), str(free23 / "arch1_16_1224959854.dbf")]
    path = write_config(tmp_path, cfg)
    proc = subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0
    assert "ERROR 40006" in proc.stderr and "Traceback" not in proc.stderr
