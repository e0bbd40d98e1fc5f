"""A throwaway SSH server on 127.0.0.1 for the remote redo source tests.

OpenSSH's ``sshd`` (Debian's openssh-server) with its own host key, user key, config and
pid file in a temporary directory; nothing of the system's SSH setup is read or changed.
Where ``sshd`` cannot start (not installed, not root), asyncssh's own SFTP server runs in
a child process instead (``REPLICATOR_SFTP_SERVER=asyncssh`` forces it). Either one can be
killed (every process of it, by id) and started again on the same port.
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

SSHD = "/usr/sbin/sshd"
ASYNCSSH_SERVER = Path(__file__).with_name("asyncssh_sftp_server.py")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _descendants(pid: int) -> list[int]:
    """Every process whose parent chain leads to ``pid`` (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _keygen(path: Path) -> None:
    if shutil.which("ssh-keygen"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
        return
    import asyncssh

    key = asyncssh.generate_private_key("ssh-ed25519")
    key.write_private_key(str(path))
    key.write_public_key(str(path) + ".pub")
    path.chmod(0o600)


class SshServer:
    """Start, kill (mid-stream) and restart a loopback SSH server with throwaway keys."""

    def __init__(self, root: Path, kind: str | None = None):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.host_key = root / "host_ed25519"
        self.user_key = root / "user_ed25519"
        _keygen(self.host_key)
        _keygen(self.user_key)
        self.known_hosts = root / "known_hosts"
        self.port = _free_port()
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {self.host_key.with_suffix('.pub').read_text()}")
        self.user = getpass.getuser()
        self.kind = kind or os.environ.get("REPLICATOR_SFTP_SERVER") or ("sshd" if self._sshd_usable() else "asyncssh")
        self.pid = 0
        self.log = root / "server.log"
        self.starts = 0

    @staticmethod
    def _sshd_usable() -> bool:
        return os.path.exists(SSHD) and os.geteuid() == 0

    def start(self, timeout: float = 20.0) -> None:
        """Start (or start again) and wait until the port accepts connections."""
        if self.kind == "sshd":
            self._start_sshd()
        else:
            self._start_asyncssh()
        self.starts += 1
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                with socket.create_connection(("127.0.0.1", self.port), 0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"{self.kind} did not listen on 127.0.0.1:{self.port}: {self.log.read_text()[-2000:]}")

    def _start_sshd(self) -> None:
        pidfile = self.root / "sshd.pid"
        config = self.root / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {self.host_key}",
                    f"PidFile {pidfile}",
                    f"AuthorizedKeysFile {self.user_key}.pub",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "StrictModes no",
                    "UsePAM no",
                    "Subsystem sftp internal-sftp",
                    "LogLevel ERROR",
                    "MaxStartups 100",
                    "PermitRootLogin prohibit-password",
                    "",
                ]
            )
        )
        os.makedirs("/run/sshd", exist_ok=True)
        pidfile.unlink(missing_ok=True)
        subprocess.run([SSHD, "-f", str(config), "-E", str(self.log)], check=True)  # daemonizes
        end = time.monotonic() + 10
        while not pidfile.exists() and time.monotonic() < end:
            time.sleep(0.02)
        self.pid = int(pidfile.read_text())

    def _start_asyncssh(self) -> None:
        with open(self.log, "ab") as log:
            proc = subprocess.Popen(
                [sys.executable, str(ASYNCSSH_SERVER), str(self.port), str(self.host_key), f"{self.user_key}.pub"],
                stdout=log,
                stderr=log,
            )
        self.pid = proc.pid
        self._proc = proc

    @property
    def min_kill(self) -> int:
        """Processes a mid-stream kill must hit: sshd's listener and a session; asyncssh's one process."""
        return 2 if self.kind == "sshd" else 1

    def kill(self) -> int:
        """SIGKILL the server and every session process it forked; returns how many were killed."""
        if not self.pid:
            return 0
        victims = [self.pid, *_descendants(self.pid)]
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.kind == "asyncssh":
            self._proc.wait(10)
        self.pid = 0
        return len(victims)

    def sessions(self) -> int:
        """Session processes (sshd) or 1 if the asyncssh server runs."""
        if self.kind == "asyncssh":
            return 1 if self.pid and self._proc.poll() is None else 0
        return len(_descendants(self.pid)) if self.pid else 0

    def stop(self) -> None:
        """Kill everything; the directory is left to tmp_path's cleanup."""
        self.kill()

    def source_config(self, **extra: object) -> dict:
        """The ``reader.redo-source`` section that reaches this server."""
        return {
            "type": "sftp",
            "host": "127.0.0.1",
            "port": self.port,
            "user": self.user,
            "key-file": str(self.user_key),
            "known-hosts": str(self.known_hosts),
            **extra,
        }
