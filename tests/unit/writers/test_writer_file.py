"""The file writer: stdout, patterns, rotation, new lines, append rules, buffering, confirmations."""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path

import pytest
from writer_helpers import Confirmed, file_config, msg

from replicator.errors import ReplicatorError
from replicator.events import Message
from replicator.writers.file import FileWriter


def run(writer: FileWriter, *batches: list[Message], close: bool = True) -> None:
    writer.connect()
    for batch in batches:
        writer.write(batch)
    if close:
        writer.close()


def test_stdout_default(confirmed: Confirmed) -> None:
    out = io.BytesIO()
    writer = FileWriter(file_config(), confirmed, stdout=out)
    run(writer, [msg(b'{"a":1}', 5, 0), msg(b'{"b":2}', 5, 1)])
    assert out.getvalue() == b'{"a":1}\n{"b":2}\n'
    assert confirmed == [(5, 0), (5, 1)]


@pytest.mark.parametrize(("new_line", "tail"), [(0, b""), (1, b"\n"), (2, b"\r\n")])
def test_new_line(tmp_path: Path, confirmed: Confirmed, new_line: int, tail: bytes) -> None:
    path = tmp_path / "out.json"
    run(FileWriter(file_config(output=str(path), **{"new-line": new_line}), confirmed), [msg(b"x"), msg(b"y")])
    assert path.read_bytes() == b"x" + tail + b"y" + tail


def test_fixed_name_appends_with_mode_0600(tmp_path: Path, confirmed: Confirmed) -> None:
    path = tmp_path / "out.json"
    path.write_bytes(b"old\n")
    path.chmod(0o644)
    run(FileWriter(file_config(output=str(path)), confirmed), [msg(b"new")])
    assert path.read_bytes() == b"old\nnew\n"
    fresh = tmp_path / "fresh.json"
    run(FileWriter(file_config(output=str(fresh)), confirmed), [msg(b"a")])
    assert stat.S_IMODE(fresh.stat().st_mode) & 0o077 == 0


def test_relative_output_uses_dot_directory(
    tmp_path: Path, confirmed: Confirmed, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    writer = FileWriter(file_config(output="rel.json"), confirmed)
    run(writer, [msg(b"a")])
    assert writer.current_path == "./rel.json" and (tmp_path / "rel.json").read_bytes() == b"a\n"


def test_num_rotation(tmp_path: Path, confirmed: Confirmed) -> None:
    cfg = file_config(output=str(tmp_path / "o-%3i.json"), **{"max-file-size": 10})
    run(FileWriter(cfg, confirmed), [msg(b"aaaa"), msg(b"bbbb"), msg(b"cccc"), msg(b"d")])
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["o-000.json", "o-001.json"]
    assert (tmp_path / "o-000.json").read_bytes() == b"aaaa\nbbbb\n"
    assert (tmp_path / "o-001.json").read_bytes() == b"cccc\nd\n"
    assert len(confirmed) == 4


def test_num_message_larger_than_limit_warns(
    tmp_path: Path, confirmed: Confirmed, caplog: pytest.LogCaptureFixture
) -> None:
    cfg = file_config(output=str(tmp_path / "o-%i.json"), **{"max-file-size": 3})
    with caplog.at_level("WARNING", logger="replicator"):
        run(FileWriter(cfg, confirmed), [msg(b"toolong")])
    assert any(getattr(r, "olr_code", 0) == 60029 for r in caplog.records)
    # As in OLR the counter moves before the first file is opened.
    assert [p.name for p in tmp_path.iterdir()] == ["o-1.json"]


@pytest.mark.parametrize(("append", "expected"), [(1, "o-7.json"), (0, "o-8.json")])
def test_num_scan_existing(tmp_path: Path, confirmed: Confirmed, append: int, expected: str) -> None:
    for name in ("o-3.json", "o-7.json", "o-x.json", "other.json", "o-2.txt"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "o-9.json").mkdir()
    writer = FileWriter(
        file_config(output=str(tmp_path / "o-%i.json"), append=append, **{"max-file-size": 100}), confirmed
    )
    run(writer, [msg(b"m")])
    assert writer.current_path.endswith(expected)


def test_num_missing_directory(tmp_path: Path, confirmed: Confirmed) -> None:
    writer = FileWriter(file_config(output=str(tmp_path / "no" / "o-%i.json"), **{"max-file-size": 10}), confirmed)
    with pytest.raises(ReplicatorError) as info:
        run(writer)
    assert info.value.code == 10012


def test_existing_file_with_append_0(tmp_path: Path, confirmed: Confirmed) -> None:
    (tmp_path / "o-5.json").write_bytes(b"")
    writer = FileWriter(file_config(output=str(tmp_path / "o-%s.json"), append=0), confirmed)
    with pytest.raises(ReplicatorError) as info:
        run(writer, [msg(b"a", seq=5)])
    assert info.value.code == 10003
    assert confirmed == []


def test_sequence_files(tmp_path: Path, confirmed: Confirmed) -> None:
    cfg = file_config(output=str(tmp_path / "redo-%s.json"))
    run(FileWriter(cfg, confirmed), [msg(b"a", seq=15), msg(b"b", seq=15), msg(b"c", seq=16)])
    assert (tmp_path / "redo-15.json").read_bytes() == b"a\nb\n"
    assert (tmp_path / "redo-16.json").read_bytes() == b"c\n"


def test_timestamp_rotation(tmp_path: Path, confirmed: Confirmed, caplog: pytest.LogCaptureFixture) -> None:
    now = [1_700_000_000.0]
    cfg = file_config(output=str(tmp_path / "t-%t.json"), **{"max-file-size": 4, "timestamp-format": "%s"})
    writer = FileWriter(cfg, confirmed, clock=lambda: now[0])
    with caplog.at_level("WARNING", logger="replicator"):
        run(writer, [msg(b"aa"), msg(b"bb")], close=False)  # same second: cannot rotate
        now[0] += 1
        run(writer, [msg(b"cc")])
    warnings = [r for r in caplog.records if getattr(r, "olr_code", 0) == 60030]
    assert len(warnings) == 1
    assert (tmp_path / "t-1700000000.json").read_bytes() == b"aa\nbb\n"
    assert (tmp_path / "t-1700000001.json").read_bytes() == b"cc\n"


def test_buffering_and_flush(tmp_path: Path, confirmed: Confirmed) -> None:
    path = tmp_path / "out.json"
    writer = FileWriter(file_config(output=str(path)), confirmed)

    writer.connect()
    writer.write([msg(b"abc", 1, 0)])
    assert path.read_bytes() == b""  # buffered, yet already confirmed (OLR semantics)
    assert confirmed == [(1, 0)]
    writer.flush()
    assert path.read_bytes() == b"abc\n"
    writer.close()


def test_flush_size_zero_writes_through(tmp_path: Path, confirmed: Confirmed) -> None:
    path = tmp_path / "out.json"
    writer = FileWriter(file_config(output=str(path), **{"write-buffer-flush-size": 0}), confirmed)
    run(writer, [msg(b"abc")], close=False)
    assert path.read_bytes() == b"abc\n"
    writer.close()


def test_large_message_bypasses_buffer(tmp_path: Path, confirmed: Confirmed) -> None:
    path = tmp_path / "out.json"
    big = b"x" * (1024 * 1024 + 10)
    run(FileWriter(file_config(output=str(path)), confirmed), [msg(b"s"), msg(big)])
    assert path.read_bytes() == b"s\n" + big + b"\n"


def test_written_bytes_are_handed_to_writeback_in_steps(
    tmp_path: Path, confirmed: Confirmed, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every WRITE_BEHIND bytes on disk, the kernel is asked to write them out (the ranges
    follow each other and cover what was written; the final fsync waits for the rest only)."""
    import replicator.writers.file as file_writer

    ranges: list[tuple[int, int]] = []
    monkeypatch.setattr(file_writer, "WRITE_BEHIND", 100)
    monkeypatch.setattr(file_writer, "start_writeback", lambda fd, offset, length: ranges.append((offset, length)))
    path = tmp_path / "out.json"
    path.write_bytes(b"old\n")  # appended to: the steps start at the file's size
    writer = FileWriter(file_config(output=str(path), **{"write-buffer-flush-size": 0}), confirmed)
    run(writer, *([msg(b"x" * 59)] for _ in range(5)))
    assert path.stat().st_size == 4 + 5 * 60
    assert ranges == [(4, 120), (124, 120)]  # 60 bytes a write: a step after every second one


def test_writeback_hint_on_a_real_file(tmp_path: Path) -> None:
    """The hint itself (sync_file_range where the C library has it) never fails a write."""
    from replicator.fsutil import start_writeback

    path = tmp_path / "data"
    with open(path, "wb") as f:
        f.write(b"y" * 65536)
        f.flush()
        start_writeback(f.fileno(), 0, 65536)
        start_writeback(f.fileno(), 65536, 0)
    assert path.stat().st_size == 65536


@pytest.mark.parametrize("show", [False, True])
def test_checkpoint_messages(confirmed: Confirmed, show: bool) -> None:
    out = io.BytesIO()
    writer = FileWriter(file_config(), confirmed, stdout=out, show_checkpoints=show)
    run(writer, [msg(b"dml", 1, 0), msg(b"chk", 2, 0, checkpoint=True), msg(b"dml2", 2, 1)])
    assert confirmed == [(1, 0), (2, 0), (2, 1)]
    assert out.getvalue() == (b"dml\nchk\ndml2\n" if show else b"dml\ndml2\n")


def test_reopen_existing_counts_size(tmp_path: Path, confirmed: Confirmed) -> None:
    path = tmp_path / "o-%i.json"
    (tmp_path / "o-0.json").write_bytes(b"12345678\n")
    writer = FileWriter(file_config(output=str(path), **{"max-file-size": 12}), confirmed)
    run(writer, [msg(b"ab"), msg(b"cd")])
    # 9 existing bytes + 3 fit; the next message goes to a new number.
    assert (tmp_path / "o-0.json").read_bytes() == b"12345678\nab\n"
    assert (tmp_path / "o-1.json").read_bytes() == b"cd\n"
    assert os.path.getsize(tmp_path / "o-1.json") == 3


def test_dev_null_output(confirmed: Confirmed) -> None:
    """A device as the output (/dev/null for a dry run): written and closed without fsync
    (which a device refuses), and no output position a restart would check against its size."""
    writer = FileWriter(file_config(output=os.devnull, append=1), confirmed)
    run(writer, [msg(b'{"a":1}', 5, 0)], close=False)
    writer.flush()
    writer.sync()
    assert writer.output_position() is None
    writer.close()
    assert confirmed == [(5, 0)]
