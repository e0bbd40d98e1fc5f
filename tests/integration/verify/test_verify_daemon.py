"""The daemon, its restarts and its stream clients under ``replicator verify`` and the checkpoint
digests: a transaction dropped at a restart is found at its positions; the digests a restarted
daemon sends are the uninterrupted run's; ``replicator client --verify`` passes a clean stream,
its capture verifies, and it stops with a coded error when a restart skips changes."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from verify_fixtures import check, generated, positions, reported

from replicator.formats.olr_digest import StreamVerifier
from replicator.redogen.generate import GenerationResult

DIGESTS = {"flags": 0x1000}
DIGEST_FORMAT = {"checkpoint-digests": 1}


@pytest.fixture(scope="module")
def redo(tmp_path_factory: pytest.TempPathFactory) -> GenerationResult:
    result = generated(tmp_path_factory.mktemp("verify-daemon"), seed=23, size=2_000_000, log_blocks=1024)
    assert len(result.logs) >= 4
    return result


def _daemon_config(
    redo: GenerationResult,
    work: Path,
    writer: dict[str, Any],
    *,
    logs: int = 0,
    digests: bool = False,
    debug: dict[str, Any] | None = None,
) -> Path:
    """The offline daemon's config over ``redo`` with its own state directory in ``work`` and
    its own archive directory, holding the first ``logs`` archived logs (0: all): the daemon
    follows the redo as the database archives it."""
    archive = work / "archive"
    archive.mkdir(exist_ok=True)
    for log in redo.logs[: logs or len(redo.logs)]:
        if not (archive / log.path.name).exists():
            shutil.copy(log.path, archive)
    doc = redo.offline_config(archive)  # before the copy: it points the schema checkpoint at the archive
    state = work / "state"
    if not state.exists():
        shutil.copytree(redo.checkpoint.parent, state)
    doc["state"]["path"] = str(state)
    source = doc["source"][0]
    source.update({"arch-read-sleep-us": 50_000, "arch-read-tries": 1_000_000, "debug": debug or {}})
    if digests:
        source.update(DIGESTS)
        source["format"].update(DIGEST_FORMAT)
    doc["target"][0]["writer"] = {"poll-interval-us": 20_000, **writer}
    path = work / "daemon.json"
    path.write_text(json.dumps(doc))
    return path


def _file_writer(work: Path) -> dict[str, Any]:
    return {"type": "file", "output": str(work / "output.json"), "new-line": 1, "append": 1}


def _soft_stop_run(config: Path) -> None:
    """A daemon run that stops by itself (debug.stop-transactions or stop-log-switches)."""
    proc = subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(config)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def _run_until(config: Path, done: Callable[[], bool], timeout: float = 120, stop: int = signal.SIGTERM) -> str:
    """A daemon run stopped with ``stop`` (a soft stop: SIGTERM) once ``done()`` holds; its stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + timeout
        while not done() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert done(), "the daemon did not get there in time"
    finally:
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == (0 if stop == signal.SIGTERM else -stop), err[-3000:]
    return err


def _size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def _uninterrupted(redo: GenerationResult, work: Path) -> bytes:
    """The output of one daemon run over the whole redo, with checkpoint digests."""
    work.mkdir()
    _soft_stop_run(
        _daemon_config(redo, work, _file_writer(work), digests=True, debug={"stop-log-switches": len(redo.logs)})
    )
    return (work / "output.json").read_bytes()


def test_a_transaction_dropped_at_a_restart_is_found(redo: GenerationResult, tmp_path: Path) -> None:
    output = tmp_path / "output.json"
    config = _daemon_config(redo, tmp_path, _file_writer(tmp_path), logs=2, debug={"stop-log-switches": 2})
    _soft_stop_run(config)
    # The checkpoint is cut: it still confirms the last transaction, which the output loses.
    lines = output.read_bytes().splitlines(keepends=True)
    begin = max(n for n, line in enumerate(lines) if b'"op":"begin"' in line)
    dropped, kept = lines[begin:], b"".join(lines[:begin])
    output.write_bytes(kept)
    position = tmp_path / "state" / "TEST-chkpt.json"
    doc = json.loads(position.read_text())
    assert doc["output"] == [str(output), len(b"".join(lines))]
    doc["output"][1] = len(kept)
    position.write_text(json.dumps(doc))
    total = len(redo.expected.read_bytes()) - len(b"".join(dropped))
    _run_until(_daemon_config(redo, tmp_path, _file_writer(tmp_path)), lambda: _size(output) >= total)
    report = check(tmp_path / "daemon.json")
    assert report.result.counts == {"missing": len(dropped), "duplicated": 0, "differs": 0, "extra": 0}
    assert reported(report, "missing") == positions(dropped)
    assert report.result.differing_transactions == 1 and "confirmed position" in report.bounds


def test_a_restarted_daemon_repeats_the_checkpoint_digests(redo: GenerationResult, tmp_path: Path) -> None:
    expected = _uninterrupted(redo, tmp_path / "whole")
    cut = tmp_path / "cut"
    cut.mkdir()
    for logs in (1, 2, 3):  # the daemon stops after each log and starts again when the next one is archived
        _soft_stop_run(
            _daemon_config(redo, cut, _file_writer(cut), logs=logs, digests=True, debug={"stop-log-switches": 1})
        )
    output = cut / "output.json"
    _run_until(_daemon_config(redo, cut, _file_writer(cut), digests=True), lambda: _size(output) >= len(expected))
    assert output.read_bytes() == expected
    verifier = StreamVerifier()
    for line in expected.splitlines():
        verifier.take(line)
    assert verifier.checked > 100 and verifier.replayed == 0
    assert check(cut / "daemon.json").ok


@pytest.mark.slow
def test_checkpoint_digests_survive_sigkills(tmp_path: Path) -> None:
    """SIGKILLs land anywhere, so restarts begin inside LWNs: the segments must still be re-rendered whole."""
    import random

    from crash_kills import assert_all_mid_stream, kill_mid_stream, run_to_end

    redo = generated(tmp_path / "gen", seed=25, size=6_000_000, log_blocks=2048)
    expected = _uninterrupted(redo, tmp_path / "whole")
    work = tmp_path / "killed"
    work.mkdir()
    config = _daemon_config(redo, work, {**_file_writer(work), "write-buffer-flush-size": 64 * 1024}, digests=True)
    output = work / "output.json"
    rng = random.Random(7)
    kills = [kill_mid_stream(config, lambda: _size(output), len(expected), rng) for _ in range(3)]
    run_to_end(config, lambda: _size(output), len(expected))
    assert_all_mid_stream(kills)
    assert output.read_bytes() == expected
    assert check(config).ok


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _client(kind: str, uri: str, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    with open(out, "wb") as sink:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "replicator",
                "client",
                kind,
                uri,
                "TEST",
                "--start",
                "now",
                "--verify",
                "--confirm-every",
                "50",
                "--confirm-interval",
                "0.2",
                "--timeout",
                "3",
                *extra,
            ],
            stdout=sink,
            stderr=subprocess.PIPE,
        )


@pytest.mark.parametrize("kind", ["network", "zeromq"])
def test_a_client_verifies_the_stream_and_its_capture_verifies(
    redo: GenerationResult, tmp_path: Path, kind: str
) -> None:
    port = _free_port()
    uri = f"127.0.0.1:{port}" if kind == "network" else f"tcp://127.0.0.1:{port}"
    config = _daemon_config(redo, tmp_path, {"type": kind, "uri": uri}, digests=True)
    out = tmp_path / "client.out"
    client = _client(kind, uri, out, "--reconnect", "--idle-exit", "3")  # started before the daemon listens
    try:
        _run_until(config, lambda: client.poll() is not None, timeout=180)
        _, err = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(10)
    assert client.returncode == 0, err.decode()[-3000:]
    report = check(config, "--sink", f"capture:{out}")
    assert report.ok, report.text()
    assert report.result.redo_changes == len(redo.expected.read_bytes().splitlines())
    assert report.sink.checkpoints > 100


def test_a_client_stops_when_a_restart_skips_changes(redo: GenerationResult, tmp_path: Path) -> None:
    # A later position of the same stream, from a run of its own (positions do not depend on the writer).
    ahead = tmp_path / "ahead"
    ahead.mkdir()
    _soft_stop_run(
        _daemon_config(redo, ahead, _file_writer(ahead), logs=2, digests=True, debug={"stop-log-switches": 2})
    )
    later = json.loads((ahead / "state" / "TEST-chkpt.json").read_text())
    port = _free_port()
    uri = f"127.0.0.1:{port}"
    work = tmp_path / "stream"
    work.mkdir()
    out = tmp_path / "client.out"
    client = _client("network", uri, out, "--reconnect", "--idle-exit", "30")
    try:
        _soft_stop_run(
            _daemon_config(
                redo, work, {"type": "network", "uri": uri}, logs=1, digests=True, debug={"stop-log-switches": 1}
            )
        )
        position = work / "state" / "TEST-chkpt.json"
        doc = json.loads(position.read_text())
        doc.update({k: later[k] for k in ("scn", "idx", "pos")})  # the checkpoint claims one more log
        position.write_text(json.dumps(doc))
        # A small queue: the writer stops holding the stream back for the client's position (which the
        # restart skipped) once it is full, instead of after 30 s. Killed at the end: its client is gone.
        _run_until(
            _daemon_config(redo, work, {"type": "network", "uri": uri, "queue-size": 64}, digests=True),
            lambda: client.poll() is not None,
            stop=signal.SIGKILL,
        )
        _, err = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait(10)
    text = err.decode()
    assert client.returncode == 1, text[-3000:]
    assert "ERROR 10403" in text or "ERROR 10404" in text, text[-3000:]
