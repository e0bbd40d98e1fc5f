"""``replicator run`` as a child process that tests wait on by condition, never by time.

The child gets its own ``NOTIFY_SOCKET`` (an abstract datagram socket), so the test sees
what systemd would: ``READY=1`` once signal handlers exist and replication runs, then a
``STATUS=replicating: sequence S, SCN N, T transactions, M messages`` line once a second.
Its stderr goes to a file the test can search while it runs.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

_STATUS = re.compile(r"sequence (\d+), SCN (\d+), (\d+) transactions, (\d+) messages")


def catches_signal(pid: int, sig: int) -> bool:
    """True once process ``pid`` has a handler for ``sig`` (SigCgt of /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(mask & (1 << (sig - 1)))


def wait_for(predicate: Callable[[], object], timeout: float = 60.0, poll: float = 0.05) -> bool:
    """True as soon as ``predicate()`` holds; False when ``timeout`` seconds passed first."""
    end = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(poll)


class Daemon:
    """One ``replicator run -f CONFIG`` child with its notifications and log collected."""

    def __init__(self, config: Path, log_dir: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.messages: list[dict[str, str]] = []
        self._lock = threading.Lock()
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        name = f"replicator-test-{uuid.uuid4().hex}"
        self._sock.bind(b"\0" + name.encode())
        self._sock.settimeout(0.1)
        self._closed = threading.Event()
        self._reader = threading.Thread(target=self._receive, daemon=True)
        self._reader.start()
        self.log_path = log_dir / f"daemon-{uuid.uuid4().hex[:8]}.log"
        child_env = {**os.environ, **(env or {}), "NOTIFY_SOCKET": "@" + name}
        for key in ("WATCHDOG_USEC", "WATCHDOG_PID"):
            if env is None or key not in env:
                child_env.pop(key, None)
        with open(self.log_path, "wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "replicator", "run", "-f", str(config), *args],
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=child_env,
            )

    def _receive(self) -> None:
        while True:
            try:
                data = self._sock.recv(4096)
            except (TimeoutError, OSError):
                if self._closed.is_set():
                    return  # closed and nothing more queued (notifications sent before exit are kept)
                continue
            message = dict(line.split("=", 1) for line in data.decode().splitlines() if "=" in line)
            with self._lock:
                self.messages.append(message)

    # -- conditions ------------------------------------------------------------------------
    def has(self, key: str) -> bool:
        """True once a notification with ``key`` (READY, STOPPING...) arrived."""
        with self._lock:
            return any(key in m for m in self.messages)

    def status(self) -> tuple[int, int, int, int] | None:
        """The latest STATUS as (sequence, SCN, transactions, messages), None before the first."""
        with self._lock:
            texts = [m["STATUS"] for m in self.messages if "STATUS" in m]
        for text in reversed(texts):
            m = _STATUS.search(text)
            if m:
                return int(m[1]), int(m[2]), int(m[3]), int(m[4])
        return None

    def log(self) -> str:
        """Its stderr so far."""
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Wait for READY=1 (signal handlers installed, replication started); fail if it exits."""
        if not wait_for(lambda: self.has("READY") or self.proc.poll() is not None, timeout):
            raise AssertionError(f"no READY within {timeout} s: {self.log()[-2000:]}")
        if not self.has("READY"):
            raise AssertionError(f"exited with {self.proc.returncode} before READY: {self.log()[-2000:]}")

    def wait_status(self, predicate: Callable[[tuple[int, int, int, int]], bool], timeout: float = 60.0) -> None:
        """Wait for a STATUS (sequence, SCN, transactions, messages) that satisfies ``predicate``."""

        def ok() -> bool:
            st = self.status()
            return st is not None and predicate(st)

        if not wait_for(ok, timeout):
            raise AssertionError(f"no such STATUS within {timeout} s (last {self.status()}): {self.log()[-2000:]}")

    def wait_log(self, text: str, timeout: float = 60.0) -> None:
        """Wait until ``text`` appears in its stderr."""
        if not wait_for(lambda: text in self.log(), timeout):
            raise AssertionError(f"{text!r} not logged within {timeout} s: {self.log()[-2000:]}")

    # -- ending ----------------------------------------------------------------------------
    def signal(self, sig: int) -> None:
        """Send ``sig`` to the child."""
        os.kill(self.proc.pid, sig)

    def stop(self, timeout: float = 60.0) -> tuple[int, str]:
        """SIGTERM once it is READY (or has exited), wait; returns (exit code, stderr)."""
        try:
            if self.proc.poll() is None:
                self.wait_ready()
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout)
        finally:
            self.close()
        return self.proc.returncode, self.log()

    def kill(self) -> str:
        """SIGKILL and wait; returns stderr."""
        self.proc.kill()
        self.proc.wait(30)
        self.close()
        return self.log()

    def close(self) -> None:
        """Kill the child if still running and release the notification socket."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
        self._closed.set()
        self._reader.join(5)
        self._sock.close()
