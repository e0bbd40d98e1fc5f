"""The native record loop (blocks, framing, LWNs, dispatch in C) against the python engine.

Batch runs of the native engine read files through :class:`replicator.native._dispatch.RecordLoop`;
these tests break blocks and records in ways the checks catch (checksums on) and compare the
coded errors, run the daemon's record path (framed LWNs through ``Parser.native_records``),
and a transaction that swaps to disk (the pool's own append path beside the inline one).
"""

from __future__ import annotations

import json
import struct
from functools import reduce
from operator import xor
from pathlib import Path

import pytest
from native_diff import assert_same, config_of

from replicator.native import wiring
from replicator.redogen import generate, workloads


def _fix_checksum(block: bytearray) -> None:
    """Make the XOR of the block's 16-bit words zero again (checksum at +14)."""
    words = memoryview(bytes(block)).cast("H")
    rest = reduce(xor, words, 0) ^ words[7]
    block[14:16] = struct.pack("=H", rest)


def _mixed(tmp_path: Path) -> tuple[dict, Path, int]:
    sc = workloads.mixed(seed=5, events=20, wide=False, big=False)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    cfg = config_of(result)
    return cfg, Path(cfg["source"][0]["reader"]["redo-log"][0]), sc.block_size


def _block_mutants(bs: int) -> dict[str, callable]:
    def crc(b: bytearray) -> None:
        b[100] ^= 0x10

    def number(b: bytearray) -> None:
        b[4] ^= 0x01
        _fix_checksum(b)

    def newer(b: bytearray) -> None:
        seq = struct.unpack_from("<I", b, 8)[0]
        struct.pack_into("<I", b, 8, seq + 1)
        _fix_checksum(b)

    def older(b: bytearray) -> None:
        seq = struct.unpack_from("<I", b, 8)[0]
        struct.pack_into("<I", b, 8, seq - 1)
        _fix_checksum(b)

    def empty(b: bytearray) -> None:
        b[0] = b[1] = 0

    def record_size(b: bytearray) -> None:
        size = struct.unpack_from("<I", b, 16)[0]
        struct.pack_into("<I", b, 16, size | 2)  # not a multiple of 4: 40008
        _fix_checksum(b)

    def not_lwn(b: bytearray) -> None:
        b[20] &= ~0x04  # the LWN header record loses its LWN bit: 40008
        _fix_checksum(b)

    return {
        "crc": crc,
        "number": number,
        "newer": newer,
        "older": older,
        "empty": empty,
        "record-size": record_size,
        "not-lwn": not_lwn,
    }


@pytest.mark.parametrize("how", sorted(_block_mutants(512)))
def test_block_and_framing_errors(how: str, tmp_path: Path) -> None:
    """A broken block or record header stops both engines with the same coded error."""
    cfg, path, bs = _mixed(tmp_path)
    data = bytearray(path.read_bytes())
    assert struct.unpack_from("<I", data, 2 * bs + 4)[0] == 2, "little-endian test data expected"
    block = bytearray(data[2 * bs : 3 * bs])  # block 2 starts the first LWN
    _block_mutants(bs)[how](block)
    data[2 * bs : 3 * bs] = block
    path.write_bytes(bytes(data))
    py = assert_same(cfg, tmp_path)
    assert py["error"] is not None and "RedoLogError" in py["error"]


def test_daemon_record_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LWNs framed by python (the daemon's reader) go through RecordDispatcher.dispatch_records."""
    monkeypatch.setattr(wiring, "run_file", None)  # the batch pipeline then reads as the daemon does
    calls = []
    real = wiring.attach_dispatch

    def spy(parser):
        real(parser)
        inner = parser.native_records
        parser.native_records = lambda p, records: (calls.append(len(records)), inner(p, records))
        return None

    monkeypatch.setattr(wiring, "attach_dispatch", spy)
    result = generate(workloads.oltp(seed=4, target_bytes=512 << 10), tmp_path / "gen", with_expected=False)
    assert assert_same(config_of(result), tmp_path)["messages"]
    assert calls


def test_swapped_transaction(tmp_path: Path) -> None:
    """A transaction that swaps to disk: the pool's append path beside the inline one."""
    sc = workloads.huge_transaction(rows=1500, row_bytes=3000)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    cfg = config_of(result)
    swap = tmp_path / "swap"
    swap.mkdir()
    cfg["memory"] = {"min-mb": 32, "max-mb": 40, "swap-mb": 2, "swap-path": str(swap)}
    py = assert_same(json.loads(json.dumps(cfg)), tmp_path)
    assert py["messages"], py["error"]
