"""Fixtures of the remote redo source tests: a throwaway SSH server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sshd_harness import SshServer


@pytest.fixture
def ssh_server(tmp_path: Path) -> Iterator[SshServer]:
    """A started loopback SSH server (sshd, or asyncssh's server where sshd cannot start)."""
    try:
        import asyncssh  # noqa: F401
    except ImportError:
        pytest.skip("asyncssh is not installed: pip install -e '.[test]'")
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
