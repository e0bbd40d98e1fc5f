"""ASM redo source: READ calls below 32 KB (63/31/7 blocks), block 0 built from the attributes.

No database is involved here: these tests check the arithmetic only. Reading through a
real ASM instance is tests/integration/remote/test_asm_source.py (REPLICATOR_ORACLE_DSN).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replicator.redo.asm import RAW_LIMIT, AsmHandle, blocks_per_call, file_header_block, plan_calls
from replicator.redo.header import parse_headers
from replicator.redogen import workloads
from replicator.redogen.generate import generate


@pytest.mark.parametrize("bs,blocks", [(512, 63), (1024, 31), (4096, 7)])
def test_blocks_per_call_stay_under_32k(bs: int, blocks: int) -> None:
    assert blocks_per_call(bs) == blocks
    assert blocks * bs < RAW_LIMIT and (blocks + 1) * bs >= RAW_LIMIT - 1


@pytest.mark.parametrize("bs", [512, 1024, 4096])
@pytest.mark.parametrize("offset,length", [(0, 8192), (2 * 4096, 1 << 20), (123 * 4096 + 17, 40000), (4096, 1)])
def test_plan_covers_the_range_once(bs: int, offset: int, length: int) -> None:
    last = 5000
    calls = plan_calls(offset, length, bs, last)
    covered = [b for first, count in calls for b in range(first, first + count)]
    want_first = max(1, offset // bs)
    want_end = min(last + 1, -(-(offset + length) // bs))
    assert covered == list(range(want_first, want_end))  # contiguous, in order, nothing twice
    assert all(0 < count * bs < 32 * 1024 for _, count in calls)
    assert all(first >= 1 for first, _ in calls)  # block 0 is never asked of ASM


def test_plan_stops_at_the_last_block() -> None:
    assert plan_calls(100 * 512, 1 << 20, 512, 120) == [(100, 21)]
    assert plan_calls(0, 0, 512, 120) == []


def test_unsupported_block_size() -> None:
    with pytest.raises(Exception) as exc:
        blocks_per_call(2048)
    assert getattr(exc.value, "code", 0) == 10221


@pytest.fixture(scope="module")
def redo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("asm")
    return generate(workloads.mixed(2, 40, version="19"), out).logs[0].path


def test_built_block0_parses_like_the_real_one(redo_file: Path) -> None:
    data = redo_file.read_bytes()
    real = parse_headers(data[:8192], "real")
    bs = real.block_size
    built = file_header_block(bs, real.blocks, data[bs : 2 * bs]) + data[bs : 2 * bs]
    assert parse_headers(built, "built") == real


class _LocalBlocks(AsmHandle):
    """AsmHandle whose READ calls are served from a local file's blocks 1.. (arithmetic only)."""

    def __init__(self, path: Path):
        self.data = path.read_bytes()
        header = parse_headers(self.data[:8192])
        self.path = self.name = str(path)
        self.block_size, self.blocks = header.block_size, len(self.data) // header.block_size - 1
        self._block0 = None
        self.calls: list[tuple[int, int]] = []

    def _call(self, block: int, count: int) -> bytes:
        assert block >= 1 and count * self.block_size < 32 * 1024
        self.calls.append((block, count))
        return self.data[block * self.block_size : (block + count) * self.block_size]

    def read(self, offset: int, length: int) -> bytes:  # the pool is not needed to check assembly
        import concurrent.futures

        class _Src:
            _pool = concurrent.futures.ThreadPoolExecutor(3)

        self.src = _Src()  # type: ignore[assignment]
        return super().read(offset, length)


@pytest.mark.parametrize("offset,length", [(0, 8192), (0, 1 << 20), (1024, 70000), (3 * 512 + 5, 999), (512, 512)])
def test_handle_assembles_ranges(redo_file: Path, offset: int, length: int) -> None:
    handle = _LocalBlocks(redo_file)
    data = handle.data
    got = handle.read(offset, length)
    if offset == 0:  # block 0 is built (only its header fields are set): it parses as the real one
        assert parse_headers(got[:8192]) == parse_headers(data[:8192])
    if offset < 512:
        assert got[512 - offset :] == data[512 : offset + length]
    else:
        assert got == data[offset : offset + length]
    assert handle.size() == len(data)
