"""File writer restarts and failures (issue 15, faults 2, 3 and 7).

* The checkpointed (file, size) is restored exactly: bytes past it are cut, ``%i``/``%s``
  files numbered after it are removed, and rotation happens where an uninterrupted run
  would have rotated.
* An output shorter than the checkpoint (power loss, deleted file) stops with 10100.
* A checkpoint naming a file outside the configured output warns 60100.
* A failed write (full disk) leaves the file ending with a whole message.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from writer_helpers import Confirmed, file_config, msg

from replicator.errors import RuntimeFailure
from replicator.writers.file import FileWriter


def _lines(n: int, start: int = 0) -> list[bytes]:
    return [f'{{"n":{i:04d}}}'.encode() for i in range(start, start + n)]


def _write(writer: FileWriter, data: list[bytes]) -> None:
    writer.write([msg(d, 1, i) for i, d in enumerate(data)])


def _uninterrupted(tmp_path: Path, data: list[bytes], **keys) -> dict[str, bytes]:
    out = tmp_path / "clean"
    out.mkdir()
    w = FileWriter(file_config(output=str(out / "o-%i.json"), **keys), Confirmed())
    w.connect()
    _write(w, data)
    w.close()
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


@pytest.mark.parametrize("crash_after", [3, 7, 12])
def test_num_rotation_is_exact_after_a_crash(tmp_path: Path, crash_after: int) -> None:
    """Files written after the checkpoint are removed; the replay rotates at the same points."""
    data = _lines(20)
    keys = {"max-file-size": 50, "append": 1}
    expected = _uninterrupted(tmp_path, data, **keys)
    out = tmp_path / "crash"
    out.mkdir()
    w = FileWriter(file_config(output=str(out / "o-%i.json"), **keys), Confirmed())
    w.connect()
    _write(w, data[:crash_after])
    w.flush()
    checkpoint = w.output_position()
    _write(w, data[crash_after : crash_after + 6])  # written, never checkpointed: the crash comes now
    w.flush()
    assert checkpoint is not None
    restarted = FileWriter(file_config(output=str(out / "o-%i.json"), **keys), Confirmed())
    restarted.resume_at = checkpoint
    restarted.connect()
    _write(restarted, data[crash_after:])
    restarted.close()
    assert {p.name: p.read_bytes() for p in sorted(out.iterdir())} == expected


def test_sequence_files_after_the_checkpoint_are_removed(tmp_path: Path) -> None:
    cfg = file_config(output=str(tmp_path / "s-%s.json"), append=1)
    w = FileWriter(cfg, Confirmed())
    w.connect()
    w.write([msg(b"a", seq=5), msg(b"b", seq=6)])
    w.flush()
    checkpoint = w.output_position()
    w.write([msg(b"c", seq=6), msg(b"d", seq=7)])
    w.close()
    restarted = FileWriter(cfg, Confirmed())
    restarted.resume_at = checkpoint
    restarted.connect()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s-5.json", "s-6.json"]
    assert (tmp_path / "s-6.json").read_bytes() == b"b\n"


@pytest.mark.parametrize("damage", ["short", "missing"])
def test_output_shorter_than_the_checkpoint_stops(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "out.json"
    path.write_bytes(b"".join(line + b"\n" for line in _lines(10)))
    size = path.stat().st_size
    if damage == "short":
        path.write_bytes(path.read_bytes()[: size - 15])  # as after a power loss: the tail never reached the disk
    else:
        path.unlink()
    w = FileWriter(file_config(output=str(path)), Confirmed())
    w.resume_at = (str(path), size)
    with pytest.raises(RuntimeFailure) as e:
        w.connect()
    assert e.value.code == 10100 and str(path) in e.value.message


def test_checkpoint_of_another_output_warns(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    old = tmp_path / "old.json"
    old.write_bytes(b"x\n")
    w = FileWriter(file_config(output=str(tmp_path / "new.json")), Confirmed())
    w.resume_at = (str(old), 2)
    w.connect()
    assert "60100" in caplog.text and old.read_bytes() == b"x\n"


def test_existing_output_lists_what_would_be_appended_to(tmp_path: Path) -> None:
    (tmp_path / "o-0.json").write_bytes(b"x\n")
    (tmp_path / "o-1.json").write_bytes(b"y\n")
    w = FileWriter(file_config(output=str(tmp_path / "o-%i.json"), append=1, **{"max-file-size": 10}), Confirmed())
    assert [Path(p).name for p in w.existing_output()] == ["o-0.json", "o-1.json"]
    assert FileWriter(file_config(output=str(tmp_path / "none.json")), Confirmed()).existing_output() == []


def test_disk_full_leaves_only_whole_messages(tmp_path: Path) -> None:
    """A write that fails part way (RLIMIT_FSIZE stands in for a full disk) is cut back."""
    out = tmp_path / "out.json"
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from writer_helpers import Confirmed, file_config, msg
        from replicator.errors import RuntimeFailure
        from replicator.writers.file import FileWriter
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))
        w = FileWriter(file_config(output={str(out)!r}, **{{"write-buffer-flush-size": 0}}), Confirmed())
        w.connect()
        try:
            for i in range(200):
                w.write([msg(b'{{"row":%d,"pad":"%s"}}' % (i, b"x" * 37), 1, i)])
        except RuntimeFailure as e:
            print(e.code)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "10007", proc.stderr
    data = out.read_bytes()
    assert 0 < len(data) <= 1000 and data.endswith(b"\n")
    assert all(line.startswith(b'{"row":') and line.endswith(b'"}') for line in data.splitlines())
