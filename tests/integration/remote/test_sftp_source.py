"""Redo read over SFTP from a real SSH server on 127.0.0.1: same output as the local read.

The configs name the redo files by "database" paths (``/oradata/...``) that exist only
on the server side of ``redo-source.path-mapping``, so every byte really goes through
the SSH session.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sshd_harness import SshServer

from replicator.redo.online import wait_until
from replicator.redogen import workloads
from replicator.redogen.demo import demo_scenario
from replicator.redogen.generate import generate
from replicator.redogen.online import OnlineRun

DB_PREFIX = "/oradata/ORCL/"


def _run(cfg_path: Path, *extra: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg_path), "--progress", "off", *extra],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _sftp_config(result, server: SshServer, name: str, **source: object) -> tuple[Path, Path]:
    """A copy of the generated batch config reading its redo over SFTP through a path mapping."""
    cfg = json.loads(result.config.read_text())
    reader = cfg["source"][0]["reader"]
    redo_dir = str(result.config.parent / "redo") + "/"
    reader["redo-log"] = [DB_PREFIX + "redo/"]  # the directory, listed over SFTP
    reader["redo-source"] = server.source_config(**{"path-mapping": [DB_PREFIX + "redo/", redo_dir], **source})
    output = result.config.parent / f"{name}.json"
    cfg["target"][0]["writer"]["output"] = str(output)
    path = result.config.parent / f"{name}-config.json"
    path.write_text(json.dumps(cfg))
    return path, output


@pytest.mark.parametrize("workload", ["demo", "oltp"])
def test_batch_over_sftp_equals_local(tmp_path: Path, ssh_server: SshServer, workload: str) -> None:
    sc = demo_scenario() if workload == "demo" else workloads.oltp(seed=3, target_bytes=6 << 20)
    result = generate(sc, tmp_path / workload)
    local = _run(result.config)
    assert local.returncode == 0, local.stderr[-2000:]
    cfg_path, output = _sftp_config(result, ssh_server, "sftp-output", **{"read-size-kb": 256, "read-requests": 4})
    remote = _run(cfg_path)
    assert remote.returncode == 0, remote.stderr[-2000:]
    assert "Traceback" not in remote.stderr
    assert output.read_bytes() == result.output.read_bytes() == result.expected.read_bytes()
    assert output.stat().st_size > 0
    assert ssh_server.log.read_text().count("error") == 0 or ssh_server.kind == "asyncssh"


def test_bench_compare_local(tmp_path: Path, ssh_server: SshServer) -> None:
    # The remote vs local benchmark: every row, cold and warm, with MB/s, CPU-s and ratios.
    result = generate(workloads.oltp(seed=5, target_bytes=4 << 20), tmp_path / "bench")
    cfg_path, _ = _sftp_config(result, ssh_server, "bench", **{"read-size-kb": 256, "connections": 1})
    out = subprocess.run(
        [sys.executable, "-m", "replicator", "bench", "-f", str(cfg_path), "--compare-local", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    rows = {line[:17].strip(): line[17:] for line in out.stdout.splitlines()}
    for name in ("read local", "read remote", "run local", "run remote", "run remote warm"):
        assert rows[name].split()[1:] == ["MB/s", rows[name].split()[2], "CPU-s"], out.stdout
    assert "reader start" in rows and "run warm remote/local" in out.stdout, out.stdout
    # Whole processes, local and remote interleaved: seconds, the ratio, the CPU split.
    for name in ("whole local", "whole remote"):
        assert rows[name].split()[1:3] == ["MB/s", "median,"] and "interleaved" in rows[name], out.stdout
    assert "whole remote/local" in out.stdout and "reader processes" in rows["whole CPU-s"], out.stdout
    assert "hand-off wait" in rows, out.stdout


@pytest.mark.parametrize("connections", [0, 2])
def test_server_killed_mid_stream(tmp_path: Path, ssh_server: SshServer, connections: int) -> None:
    """SIGKILL of sshd and its sessions while a batch run reads: reconnect, nothing lost or doubled.

    With ``connections`` 0 the replicator's own session reads; with 2 its reader processes
    do (their reads ahead are bounded: the kill lands while most of the file is unread).
    """
    result = generate(workloads.oltp(seed=5, target_bytes=12 << 20), tmp_path / "oltp")
    cfg_path, output = _sftp_config(
        result,
        ssh_server,
        "sftp-output",
        **{
            "read-size-kb": 64,
            "read-requests": 2,
            "reconnect-delay-ms": 100,
            "reconnect-max-delay-ms": 400,
            "reconnect-tries": 50,
            "connections": connections,
        },
    )
    expected = result.expected.read_bytes()
    proc = subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg_path), "--progress", "off", "--read-limit", "1.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Mid-stream: some output written, the run still reading (sessions open on the server).
        assert wait_until(lambda: output.exists() and output.stat().st_size > 0, 120, 0.05), "no output before the kill"
        written = output.stat().st_size
        assert proc.poll() is None and written < len(expected) // 3, "the run was too far on before the kill"
        assert ssh_server.sessions() > 0
        assert ssh_server.kill() >= ssh_server.min_kill  # the listener and at least one session
        time.sleep(1.0)  # the client retries against a closed port meanwhile
        ssh_server.start()
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    assert "60210" in err and "60211" in err, err[-3000:]
    assert output.read_bytes() == expected


def _reader_processes(pid: int) -> list[int]:
    """The SFTP reader processes the replicator ``pid`` started (from /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and b"replicator.redo.sftp_worker" in cmd:
            out.append(int(entry.name))
    return out


def test_reader_process_killed_mid_stream(tmp_path: Path, ssh_server: SshServer) -> None:
    """SIGKILL of a reader process mid-file: another one resumes at the same byte (60350/60351)."""
    result = generate(workloads.oltp(seed=6, target_bytes=12 << 20), tmp_path / "oltp")
    cfg_path, output = _sftp_config(
        result, ssh_server, "sftp-output", **{"read-size-kb": 64, "read-requests": 2, "connections": 2}
    )
    expected = result.expected.read_bytes()
    proc = subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg_path), "--progress", "off", "--read-limit", "1.5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: output.exists() and output.stat().st_size > 0, 120, 0.05), "no output before the kill"
        readers = _reader_processes(proc.pid)
        assert proc.poll() is None and output.stat().st_size < len(expected) // 3, "the run was too far on"
        assert len(readers) == 2, readers
        os.kill(readers[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    assert "60350" in err and "60351" in err and "Traceback" not in err, err[-3000:]
    assert output.read_bytes() == expected


def test_tail_online_ring_over_sftp(tmp_path: Path, ssh_server: SshServer) -> None:
    """The offline daemon follows redogen's live ring of online groups over SFTP, through a kill."""
    sc = workloads.oltp(seed=7, target_bytes=2 << 20)
    sc.log_blocks = 1024  # 512 KB logs: several switches and group reuse with 2 groups
    gen = OnlineRun(sc, tmp_path, groups=3, rate_mb_s=0.5)
    cfg_path = tmp_path / "OpenLogReplicator.json"
    cfg = json.loads(cfg_path.read_text())
    src = cfg["source"][0]
    src["redo-read-sleep-us"] = 20_000
    src["arch-read-sleep-us"] = 100_000
    src["arch-read-tries"] = 600
    src["reader"]["redo-source"] = ssh_server.source_config(
        **{"reconnect-delay-ms": 100, "reconnect-max-delay-ms": 400, "reconnect-tries": 50}
    )
    cfg["target"][0]["writer"]["poll-interval-us"] = 50_000
    cfg_path.write_text(json.dumps(cfg))
    output = tmp_path / "output.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert wait_until(lambda: output.exists() and output.stat().st_size > 0, 120, 0.05), "nothing tailed"
        assert gen.thread.is_alive(), "the ring was complete before the kill"
        assert ssh_server.kill() >= ssh_server.min_kill
        time.sleep(1.0)
        ssh_server.start()
        expected = gen.finish(180).expected.read_bytes()
        assert wait_until(lambda: output.exists() and output.stat().st_size >= len(expected), 180, 0.05)
        time.sleep(0.5)
    finally:
        proc.send_signal(15)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-3000:]
    assert "60210" in err and "60211" in err, err[-3000:]
    assert output.read_bytes() == expected


def test_unknown_host_key_refused(tmp_path: Path, ssh_server: SshServer) -> None:
    result = generate(demo_scenario(), tmp_path / "demo")
    other = tmp_path / "other_known_hosts"
    other.write_text(
        f"[127.0.0.1]:{ssh_server.port} ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"
    )
    cfg_path, _ = _sftp_config(result, ssh_server, "refused", **{"known-hosts": str(other)})
    run = _run(cfg_path, timeout=60)
    assert run.returncode != 0
    assert "ERROR 10211" in run.stderr and "Traceback" not in run.stderr, run.stderr[-2000:]
    missing = tmp_path / "no_such_known_hosts"
    cfg_path, _ = _sftp_config(result, ssh_server, "missing", **{"known-hosts": str(missing)})
    run = _run(cfg_path, timeout=60)
    assert "ERROR 30140" in run.stderr, run.stderr[-2000:]
