"""The batch record loop's read-ahead (wiring.run_file): a reader thread reads and checks the
next buffers of blocks (check_chunk, the GIL released) while the loop frames the current one.

Small buffers (many per file) make the read-ahead matter: the output equals the python
engine's; a bad block or a short read in a later buffer stops the run with the error the
loop gave before, after the buffers before it were analysed; the reader thread ends with
the file, with an error and when the loop fails.
"""

from __future__ import annotations

import struct
import threading
from pathlib import Path
from typing import Any

import pytest
from native_diff import assert_same, config_of

from replicator.errors import RedoLogError
from replicator.native import available, dispatch, framing, wiring
from replicator.redo.source import LocalHandle, RedoSource
from replicator.redogen import generate, workloads

pytestmark = pytest.mark.skipif(not available(), reason="the native extension is not built")

CHUNK = 16 << 10  # 32 blocks of 512 bytes a buffer


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "replicator-read-ahead"]


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RedoSource, "batch_chunk", CHUNK)


@pytest.fixture
def fed(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every feed of the batch record loop: its first block, whether the reader checked it,
    the LWNs analysed before it and the error it raised."""
    calls: list[dict[str, Any]] = []
    real = dispatch()

    class Loop:
        def __init__(self, *args: Any) -> None:
            self.loop = real.RecordLoop(*args)

        @property
        def lwns(self) -> int:
            return self.loop.lwns

        def feed(self, buf: bytes, block: int, count: int, checked: bool = False) -> None:
            call = {"block": block, "count": count, "checked": checked, "lwns": self.loop.lwns, "error": None}
            calls.append(call)
            try:
                self.loop.feed(buf, block, count, checked)
            except RedoLogError as e:
                call["error"] = e
                raise

        def finish(self) -> None:
            self.loop.finish()

    proxy = _Dispatch(real, Loop)
    monkeypatch.setattr(wiring, "dispatch", lambda: proxy)
    return calls


class _Dispatch:
    """The native dispatch module with another RecordLoop."""

    def __init__(self, real: Any, loop: Any) -> None:
        self._real = real
        self.RecordLoop = loop

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _oltp(tmp_path: Path) -> tuple[dict[str, Any], Path, int]:
    sc = workloads.oltp(seed=5, target_bytes=384 << 10)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    cfg = config_of(result)
    return cfg, Path(cfg["source"][0]["reader"]["redo-log"][0]), sc.block_size


def _fix_checksum(block: bytearray) -> None:
    words = struct.unpack(f"<{len(block) // 2}H", bytes(block))
    rest = 0
    for i, w in enumerate(words):
        if i != 7:
            rest ^= w
    block[14:16] = struct.pack("<H", rest)


def _consecutive(calls: list[dict[str, Any]]) -> None:
    for a, b in zip(calls, calls[1:]):
        assert b["block"] == a["block"] + a["count"]


def test_read_ahead_output_equals_python(tmp_path: Path, fed: list[dict[str, Any]]) -> None:
    cfg, _, bs = _oltp(tmp_path)
    py = assert_same(cfg, tmp_path)
    assert py["messages"] and py["error"] is None
    per_run = [c for c in fed if c["block"] == 2]
    assert len(per_run) == 3 and len(fed) >= 3 * 10  # three native runs, ten buffers or more each
    assert all(c["checked"] and c["error"] is None for c in fed)  # checked by the reader only
    assert all(c["count"] * bs <= CHUNK for c in fed)
    assert not _readers()


@pytest.mark.parametrize("how", ["crc", "number", "empty"])
def test_bad_block_in_a_later_buffer(tmp_path: Path, fed: list[dict[str, Any]], how: str) -> None:
    """The error of a block in the 6th buffer: after the five before it, as the loop raised it."""
    cfg, path, bs = _oltp(tmp_path)
    data = bytearray(path.read_bytes())
    per = CHUNK // bs
    bad = 2 + 5 * per + 7
    block = bytearray(data[bad * bs : (bad + 1) * bs])
    if how == "crc":
        block[100] ^= 0x10
    elif how == "number":
        block[4] ^= 0x01
        _fix_checksum(block)
    else:
        block[0] = block[1] = 0
    data[bad * bs : (bad + 1) * bs] = block
    path.write_bytes(bytes(data))
    py = assert_same(cfg, tmp_path)
    assert py["error"] is not None and f"block {bad} " in py["error"]
    code = 40006 if how == "crc" else 40002
    runs = [i for i, c in enumerate(fed) if c["block"] == 2]
    assert len(runs) == 3
    for start, end in zip(runs, [*runs[1:], len(fed)]):
        calls = fed[start:end]
        _consecutive(calls)
        assert [c["checked"] for c in calls] == [True] * 5 + [False]  # then nothing more was fed
        assert all(c["error"] is None for c in calls[:5])
        assert calls[-1]["lwns"] > 0  # the LWNs before the bad block were analysed first
        error = calls[-1]["error"]
        assert isinstance(error, RedoLogError) and error.code == code and f"block {bad} " in error.message
    assert not _readers()


def test_short_read_in_a_later_buffer(
    tmp_path: Path, fed: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file ends early while it is read (a short read in the 4th buffer): 40007 after the
    three buffers before it, the reader's error in its place."""
    cfg, _, bs = _oltp(tmp_path)
    real = LocalHandle.stream

    def short(self: LocalHandle, offset: int, end: int, chunk: int) -> Any:
        for n, piece in enumerate(real(self, offset, end, chunk)):
            if n == 3:
                yield piece[: len(piece) // 2]
                return
            yield piece

    monkeypatch.setattr(LocalHandle, "stream", short)
    py = assert_same(cfg, tmp_path)
    assert py["error"] is not None and "short read at block" in py["error"]
    runs = [i for i, c in enumerate(fed) if c["block"] == 2]
    assert len(runs) == 3
    for start, end in zip(runs, [*runs[1:], len(fed)]):
        calls = fed[start:end]
        _consecutive(calls)
        assert len(calls) == 3 and all(c["checked"] and c["error"] is None for c in calls)
    assert not _readers()


def test_the_reader_ends_when_the_loop_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error of the loop (here a parser's, in the 3rd buffer) stops the reader; its file is closed."""
    cfg, _, _ = _oltp(tmp_path)
    real = dispatch()
    closed: list[str] = []
    real_close = LocalHandle.close

    def close(self: LocalHandle) -> None:
        closed.append(threading.current_thread().name)
        real_close(self)

    class Loop:
        def __init__(self, *args: Any) -> None:
            self.loop = real.RecordLoop(*args)
            self.n = 0

        def feed(self, *args: Any) -> None:
            self.n += 1
            if self.n == 3:
                raise RuntimeError("the parser failed")
            self.loop.feed(*args)

    proxy = _Dispatch(real, Loop)
    monkeypatch.setattr(wiring, "dispatch", lambda: proxy)
    monkeypatch.setattr(LocalHandle, "close", close)
    from native_diff import run_engine

    result = run_engine(cfg, tmp_path, "native")
    assert result["error"] == "RuntimeError: the parser failed"
    assert "replicator-read-ahead" in closed  # the file the reader read, closed in its thread
    assert not _readers()


def test_daemon_reader_checks_archived_buffers(tmp_path: Path) -> None:
    """The daemon's reader thread checks an archived log's buffers (RedoFollower.chunk_check):
    every buffer arrives checked but the one with the bad block, which the loop checks again."""
    from replicator.redo.online import Blocks, FollowSettings, LogLocator, RedoFollower

    sc = workloads.oltp(seed=5, target_bytes=384 << 10)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    path = result.logs[0].path
    bs = sc.block_size
    data = bytearray(path.read_bytes())
    bad = 2 + 5 * (CHUNK // bs) + 7
    data[bad * bs + 100] ^= 0x10
    path.write_bytes(bytes(data))
    locator = LogLocator([], [str(path.parent)], sc.log_archive_format)
    stop = threading.Event()
    follower = RedoFollower(locator, FollowSettings(archived_only=True), stop)
    follower.chunk_check = framing().check_chunk
    got: list[Blocks] = []
    for _, blocks in follower.follow(result.logs[0].sequence, 0, raw=True):
        assert isinstance(blocks, Blocks)
        got.append(blocks)
        if len(got) == 8:
            break
    assert [b.checked for b in got] == [True] * 5 + [False, True, True]
    assert got[5].first_block <= bad < got[5].first_block + got[5].count
    with pytest.raises(RedoLogError) as e:
        dispatch().RecordLoop(None, _header(path), str(path), True, got[5].first_block).feed(
            got[5].data, got[5].first_block, got[5].count, got[5].checked
        )
    assert e.value.code == 40006 and f"block {bad} " in e.value.message


def _header(path: Path) -> Any:
    from replicator.redo.header import parse_headers

    return parse_headers(path.read_bytes()[:8192], str(path))


def test_truncated_second_log(tmp_path: Path) -> None:
    """A run over several logs whose second one was cut short: the first log's output, then
    40007, as the python engine (the reader's error where the second log's first buffer was)."""
    sc = workloads.oltp(seed=5, target_bytes=384 << 10)
    sc.log_blocks = 256
    result = generate(sc, tmp_path / "gen", with_expected=False)
    assert len(result.logs) > 2
    path = result.logs[1].path
    path.write_bytes(path.read_bytes()[: 100 * sc.block_size])
    py = assert_same(config_of(result), tmp_path)
    assert py["error"] is not None and "truncated" in py["error"] and py["messages"]
    assert not _readers()
