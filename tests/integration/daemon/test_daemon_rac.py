"""RAC in the offline daemon: several redo threads followed and merged; SIGKILL and restart.

The daemon finds the archived logs of every thread (``%t`` in the names), follows each
thread with its own reader and merges the records by SCN. The output must equal redogen's
expected output (commit order across threads), also after SIGKILLs that land mid-stream.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from daemon_proc import Daemon, wait_for
from fixture_configs import fast_offline_config, write_config

from replicator.redogen import workloads
from replicator.redogen.generate import generate


def _start(cfg: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _generate(tmp_path: Path, threads: int, seed: int, mb: int):
    sc = workloads.oltp(seed=seed, target_bytes=mb << 20, sessions=12)
    sc.threads, sc.migrate, sc.idle_threads = threads, 0.1, 1 if threads >= 3 else 0
    sc.log_archive_format = "arch%t_%s_%r.dbf"
    sc.log_blocks = 2048
    result = generate(sc, tmp_path / "gen")
    assert len({log.thread for log in result.logs}) == threads
    cfg = fast_offline_config(result)
    cfg.setdefault("state", {})["interval-mb"] = 1  # frequent RAC restart points (per-thread positions)
    return result, write_config(tmp_path, cfg, "offline.json")


def _finish(cfg: Path, output: Path, expected: bytes) -> str:
    """Run the daemon until its output has the expected size (and 0.3 s more, so anything
    written beyond it shows), then SIGTERM it once it is READY; returns its stderr."""
    daemon = Daemon(cfg, cfg.parent)
    try:
        daemon.wait_ready()
        reached = wait_for(lambda: output.exists() and output.stat().st_size >= len(expected), 120)
        if reached:
            time.sleep(0.3)
    finally:
        code, err = daemon.stop()
    assert code == 0, err[-2000:]
    size = output.stat().st_size if output.exists() else 0
    assert reached, f"the daemon stalled at {size} of {len(expected)} bytes of output; its log:\n{err[-3000:]}"
    return err


def test_offline_daemon_merges_threads(tmp_path: Path) -> None:
    result, cfg = _generate(tmp_path, 3, seed=5, mb=1)
    err = _finish(cfg, result.output, result.expected.read_bytes())
    assert "RAC: 3 redo threads" in err
    assert result.output.read_bytes() == result.expected.read_bytes()


def test_restart_with_an_idle_thread_between_logs(tmp_path: Path) -> None:
    """A restart point where the idle instance had read its last log to the end: that thread
    restarts at the next sequence, which does not exist yet. The restart point's lwn-scn (the
    finished log's next SCN) must bound it, or it holds every commit of the others forever."""
    result, _ = _generate(tmp_path, 3, seed=23, mb=4)
    expected = result.expected.read_bytes()
    cfg = fast_offline_config(result)
    cfg.setdefault("state", {})["interval-mb"] = 1
    transactions = expected.count(b'"op":"begin"')
    cfg["source"][0]["debug"] = {"stop-transactions": transactions * 2 // 3}  # a soft stop two thirds in
    stop_cfg = write_config(tmp_path, cfg, "stop.json")
    first = Daemon(stop_cfg, tmp_path)
    assert wait_for(lambda: first.proc.poll() is not None, 120), "the soft stop did not end the run"
    code, err = first.stop()
    assert code == 0, err[-2000:]
    assert 0 < result.output.stat().st_size < len(expected), "the soft stop must leave commits to do"
    del cfg["source"][0]["debug"]
    err = _finish(write_config(tmp_path, cfg, "offline.json"), result.output, expected)
    assert re.search(r"RAC: 3 redo threads, .*thread 3 from sequence 2 offset 0\b", err), (
        "the restart point did not hold the idle thread between logs (the case this test is about)"
    )
    assert result.output.read_bytes() == expected


@pytest.mark.slow
@pytest.mark.parametrize("threads", [2, 3])
def test_sigkill_mid_stream_loses_and_duplicates_nothing(tmp_path: Path, threads: int) -> None:
    rng = random.Random(threads)
    result, cfg = _generate(tmp_path, threads, seed=20 + threads, mb=12)
    expected = result.expected.read_bytes()
    output = result.output
    landed = 0
    resumed = 0  # restarts from a RAC restart point (a thread resumed inside a log)
    kills = 0
    # Six kills; up to four more while fewer than two restarts resumed inside a log (on a loaded
    # machine a kill can land before its run wrote a restart point), unless the stream is done.
    while kills < 6 or (kills < 10 and resumed < 2):
        if output.exists() and output.stat().st_size >= len(expected):
            break
        kills += 1
        # Kill once this run has written 0.15-0.7 MB past where the previous one stopped (the
        # native engine writes a poll interval's worth, a few hundred KB, past the target before
        # the kill arrives: six larger steps reached the end of the 7 MB stream too often) (a
        # restart first cuts the output back to its confirmed position, then replays).
        before = output.stat().st_size if output.exists() else 0
        target = before + rng.randint(150_000, 700_000)
        proc = _start(cfg)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (not output.exists() or output.stat().st_size < target):
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate(timeout=30)
        assert "Traceback" not in err, err[-2000:]
        resumed += bool(re.search(r"RAC: .* offset [1-9]", err))
        size = output.stat().st_size if output.exists() else 0
        if before < size < len(expected):
            landed += 1  # the kill hit while messages were being written
    print(f"RAC crash test, {threads} threads: {landed} of {kills} kills landed mid-stream, {resumed} resumed")
    assert landed >= 4, f"only {landed} kills landed mid-stream"
    _finish(cfg, output, expected)
    points = [json.loads(p.read_text()) for p in (tmp_path / "gen" / "checkpoint").glob("TEST-chkpt-*.json")]
    assert sum(1 for p in points if len(p.get("threads", [])) == threads) >= 3
    assert resumed >= 2, f"only {resumed} restarts used a per-thread restart point"
    lines, want = output.read_bytes().splitlines(), expected.splitlines()
    assert len(lines) == len(want), f"{len(lines) - len(want)} extra lines"
    assert lines == want


def _wait_settled(output: Path, timeout: float, quiet: float = 3.0) -> None:
    """Wait until ``output`` is not empty and has not grown for ``quiet`` seconds, or ``timeout`` passed."""
    last, stable_since, deadline = -1, time.monotonic(), time.monotonic() + timeout
    while time.monotonic() < deadline:
        size = output.stat().st_size if output.exists() else 0
        if size != last:
            last, stable_since = size, time.monotonic()
        elif size and time.monotonic() - stable_since > quiet:
            return
        time.sleep(0.05)


def test_lagging_thread_holds_the_merge(tmp_path: Path) -> None:
    """Thread 1's later archives are not there yet: nothing that could follow them is emitted."""
    import shutil

    sc = workloads.oltp(seed=9, target_bytes=1 << 20, sessions=8)
    sc.threads, sc.log_archive_format, sc.log_blocks = 2, "arch%t_%s_%r.dbf", 600
    result = generate(sc, tmp_path / "gen")
    archive = tmp_path / "archive"
    archive.mkdir()
    held = sorted((log for log in result.logs if log.thread == 1), key=lambda log: log.sequence)[1:]
    assert held, "thread 1 needs more than one log"
    for log in result.logs:
        if log not in held:
            shutil.copy(log.path, archive / log.path.name)
    cfg = write_config(tmp_path, fast_offline_config(result, archive), "offline.json")
    expected = result.expected.read_bytes()
    output = result.output
    proc = _start(cfg)
    try:
        _wait_settled(output, 60)  # every file there was read: check what came out
        partial = output.read_bytes()
        assert 0 < len(partial) < len(expected)
        assert expected.startswith(partial), "a commit was emitted before an earlier one of the held thread"
        for log in held:  # the lagging instance's logs arrive, each whole (as ARCH renames its file)
            shutil.copy(log.path, archive / f".{log.path.name}.part")
            os.replace(archive / f".{log.path.name}.part", archive / log.path.name)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and output.stat().st_size < len(expected):
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert output.read_bytes() == expected, err[-2000:]


@pytest.mark.parametrize("heartbeat", [1.0, 0.0])
def test_idle_instance_heartbeats_release_the_live_merge(tmp_path: Path, heartbeat: float) -> None:
    """Online groups left current (a live database), one instance idle. With heartbeat LWNs
    (bounding its SCNs) the daemon emits every commit below the idle thread's last heartbeat,
    in order; without them the idle thread holds every commit of the others."""
    from replicator.redogen.online import generate_online

    sc = workloads.oltp(seed=4, target_bytes=1 << 20, sessions=8, rate=50.0, preload=10, tables=4)
    sc.threads, sc.idle_threads, sc.heartbeat_s, sc.log_blocks = 3, 1, heartbeat, 1200
    result = generate_online(sc, tmp_path, groups=3)
    assert (result.stats["heartbeats"] > 3) == bool(heartbeat)
    expected = result.expected.read_bytes()
    cfg = json.loads(result.config.read_text())
    cfg["source"][0].update({"arch-read-sleep-us": 50_000, "redo-read-sleep-us": 20_000})
    cfg["target"][0]["writer"]["poll-interval-us"] = 20_000
    path = write_config(tmp_path, cfg, "offline.json")
    output = result.output
    proc = _start(path)
    try:
        _wait_settled(output, 60 if heartbeat else 4)  # when nothing may come out, a bounded 4 s look
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]
    got = output.read_bytes() if output.exists() else b""
    print(f"live RAC, idle instance, heartbeat {heartbeat}s: {len(got)} of {len(expected)} bytes emitted")
    assert expected.startswith(got)
    if heartbeat:
        assert len(got) > len(expected) // 2
    else:
        assert got == b"", "a commit came out while the idle thread could still deliver an earlier SCN"
