"""Fixtures of the verify integration tests; importable helpers live in ``verify_fixtures``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # verify_fixtures.py

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "remote"))  # sshd_harness.py
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))  # crash_kills.py


@pytest.fixture
def ssh_server(tmp_path: Path) -> Iterator[object]:
    """A loopback SSH server for the SFTP redo source (as tests/integration/remote starts it)."""
    try:
        import asyncssh  # noqa: F401
    except ImportError:
        pytest.skip("asyncssh is not installed: pip install -e '.[test]'")
    from sshd_harness import SshServer

    server = SshServer(tmp_path / "ssh")
    try:
        server.start()
    except (OSError, RuntimeError) as exc:
        if server.kind != "sshd":
            pytest.skip(f"no SSH server could be started on 127.0.0.1: {exc}")
        server.kind = "asyncssh"  # sshd failed: asyncssh's own SFTP server instead
        server.start()
    try:
        yield server
    finally:
        server.stop()
