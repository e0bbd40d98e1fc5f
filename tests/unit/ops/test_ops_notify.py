"""sd_notify over a fake NOTIFY_SOCKET: a datagram socket bound by the test."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from ops_helpers import free23_config

from replicator.ops.notify import Notifier, socket_address, watchdog_interval, watchdog_usec


def _receive_all(sock: socket.socket, until: float, last: str = "") -> list[dict[str, str]]:
    """Messages received before ``until`` (monotonic) or up to one holding ``last``, as dicts."""
    messages: list[dict[str, str]] = []
    while time.monotonic() < until and not (last and messages and last in messages[-1]):
        sock.settimeout(max(until - time.monotonic(), 0.01))
        try:
            data = sock.recv(4096)
        except TimeoutError:
            break
        messages.append(dict(line.split("=", 1) for line in data.decode().splitlines()))
    return messages


@pytest.fixture
def fake_systemd(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    path = str(tmp_path / "notify.sock")
    sock.bind(path)
    yield sock, path
    sock.close()


def test_no_status_after_stopping(fake_systemd: tuple[socket.socket, str]) -> None:
    """Once STOPPING=1 is sent, a periodic status ("replicating ...") would contradict it: not sent."""
    sock, path = fake_systemd
    n = Notifier(env={"NOTIFY_SOCKET": path})
    assert n.status("replicating: sequence 5") and n.stopping("stopping: draining the writer")
    assert not n.status("replicating: sequence 6")
    n.send(X_TEST_END=1)
    got = _receive_all(sock, time.monotonic() + 5, last="X_TEST_END")
    n.close()
    assert [m.get("STATUS") for m in got] == ["replicating: sequence 5", "stopping: draining the writer", None]


def test_ready_status_watchdog_stopping(fake_systemd: tuple[socket.socket, str]) -> None:
    sock, path = fake_systemd
    n = Notifier(env={"NOTIFY_SOCKET": path})
    assert n.enabled
    assert n.ready("up") and n.status("working\non it") and n.watchdog() and n.stopping()
    got = _receive_all(sock, time.monotonic() + 5, last="STOPPING")
    n.close()
    assert got[0] == {"READY": "1", "MAINPID": str(os.getpid()), "STATUS": "up"}
    assert got[1] == {"STATUS": "working on it"}  # a newline would start a new assignment
    assert got[2] == {"WATCHDOG": "1"} and got[3] == {"STOPPING": "1"}


def test_abstract_socket_name() -> None:
    name = f"replicator-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(b"\0" + name.encode())
    try:
        assert Notifier(env={"NOTIFY_SOCKET": "@" + name}).ready()
        assert _receive_all(sock, time.monotonic() + 5, last="READY")[0]["READY"] == "1"
    finally:
        sock.close()


def test_without_socket_everything_is_a_no_op() -> None:
    n = Notifier(env={})
    assert not n.enabled and not n.ready() and not n.watchdog() and not n.maybe_watchdog()
    assert socket_address("vsock:2:1") is None


def test_unreachable_socket_is_not_fatal(tmp_path: Path) -> None:
    n = Notifier(env={"NOTIFY_SOCKET": str(tmp_path / "absent.sock")})
    assert n.enabled and not n.ready() and not n.status("x")


def test_watchdog_interval_rules() -> None:
    assert watchdog_interval({"WATCHDOG_USEC": "4000000"}) == 2.0  # half the timeout
    assert watchdog_usec({"WATCHDOG_USEC": "0"}) is None and watchdog_usec({}) is None
    assert watchdog_usec({"WATCHDOG_USEC": "10", "WATCHDOG_PID": "1"}, pid=2) is None  # not ours
    assert watchdog_usec({"WATCHDOG_USEC": "10", "WATCHDOG_PID": "2"}, pid=2) == 10


def test_maybe_watchdog_pings_at_half_the_timeout(fake_systemd: tuple[socket.socket, str]) -> None:
    sock, path = fake_systemd
    n = Notifier(env={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"})
    assert n.maybe_watchdog()  # first call: due at once
    assert not n.maybe_watchdog()  # 0.1 s not over yet
    time.sleep(0.12)
    assert n.maybe_watchdog()
    assert len(_receive_all(sock, time.monotonic() + 0.5)) == 2


def test_replicator_run_under_fake_notify_socket(
    free23: Path, tmp_path: Path, fake_systemd: tuple[socket.socket, str]
) -> None:
    """``replicator run`` as systemd would start it: READY, STATUS, WATCHDOG, then STOPPING."""
    sock, path = fake_systemd
    cfg = free23_config(free23, tmp_path)
    env = {**os.environ, "NOTIFY_SOCKET": path, "WATCHDOG_USEC": "200000"}
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg), "--read-limit", "0.4"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        messages = _receive_all(sock, time.monotonic() + 20, last="STOPPING")
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    keys = [k for m in messages for k in m]
    assert keys.index("READY") < keys.index("STOPPING")
    assert keys.count("WATCHDOG") >= 2 and "STATUS" in keys
    assert any("SCN" in m.get("STATUS", "") for m in messages)
    assert messages[-1]["STOPPING"] == "1" and messages[-1]["STATUS"].startswith("finished")
    assert {m.get("MAINPID") for m in messages if "READY" in m} == {str(proc.pid)}
