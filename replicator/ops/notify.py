"""systemd's notification protocol (sd_notify) without libsystemd.

Under ``Type=notify`` systemd passes a datagram socket in ``NOTIFY_SOCKET``: a file
system path, or an abstract socket name written with a leading ``@``. A message is
newline-separated ``KEY=VALUE`` lines. We send ``READY=1`` once the replicator is
running, ``STATUS=...`` as a one-line summary for ``systemctl status``,
``WATCHDOG=1`` while the main loop makes progress, and ``STOPPING=1`` at shutdown. After
``STOPPING=1`` the status line is the stopping one: a later :meth:`Notifier.status` (a
periodic report still running) is not sent, so ``systemctl status`` never says
"replicating" about a process that is shutting down.

Everything is a no-op when ``NOTIFY_SOCKET`` is unset, so callers never need to ask
whether they run under systemd. Send errors are swallowed after one warning: losing a
status line must never stop replication (systemd itself treats notifications as
best-effort).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from replicator import log

if TYPE_CHECKING:  # socket is imported when a message is sent (a run without systemd never does)
    import socket


def watchdog_usec(env: Mapping[str, str] | None = None, pid: int | None = None) -> int | None:
    """``WATCHDOG_USEC`` when it is meant for this process, else None.

    ``WATCHDOG_PID``, when set, must be our pid: a child started with the daemon's
    environment must not ping on its behalf (sd_watchdog_enabled's rule).
    """
    env = os.environ if env is None else env
    text = env.get("WATCHDOG_USEC", "")
    if not text.isdigit() or int(text) == 0:
        return None
    owner = env.get("WATCHDOG_PID", "")
    if owner and (not owner.isdigit() or int(owner) != (os.getpid() if pid is None else pid)):
        return None
    return int(text)


def watchdog_interval(env: Mapping[str, str] | None = None, pid: int | None = None) -> float | None:
    """Seconds between two ``WATCHDOG=1`` pings: half the timeout, as systemd advises."""
    usec = watchdog_usec(env, pid)
    return usec / 2e6 if usec else None


def socket_address(value: str) -> str | bytes | None:
    """The connectable address for a ``NOTIFY_SOCKET`` value (None when unusable)."""
    if value.startswith("@"):
        return b"\0" + value[1:].encode()  # Linux abstract namespace
    if value.startswith("/"):
        return value
    return None  # e.g. vsock:... addresses, not used for services on the host


class Notifier:
    """Sends sd_notify messages to ``address`` (default: ``$NOTIFY_SOCKET``).

    ``enabled`` is False when there is no socket; every method then returns False.
    The watchdog interval comes from ``WATCHDOG_USEC`` (see :func:`watchdog_interval`).
    """

    def __init__(self, address: str | None = None, *, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        raw = address if address is not None else env.get("NOTIFY_SOCKET", "")
        self._address = socket_address(raw) if raw else None
        self.interval = watchdog_interval(env)
        self._sock: socket.socket | None = None
        self._warned = False
        self._last_ping = 0.0
        self._stopping = False

    @property
    def enabled(self) -> bool:
        """True when a notification socket is configured."""
        return self._address is not None

    def send(self, **fields: str | int) -> bool:
        """Send one message of ``KEY=VALUE`` lines; True when it was delivered."""
        if self._address is None:
            return False
        text = "\n".join(f"{key}={_one_line(str(value))}" for key, value in fields.items())
        try:
            if self._sock is None:
                import socket

                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto(text.encode("utf-8", "replace"), self._address)
            return True
        except OSError as exc:
            if not self._warned:
                self._warned = True
                log.warning(10061, f"systemd notification failed: {exc.strerror or exc}")
            return False

    def ready(self, status: str | None = None) -> bool:
        """Tell systemd start-up is complete (``READY=1``), optionally with a status."""
        fields: dict[str, str | int] = {"READY": 1, "MAINPID": os.getpid()}
        if status is not None:
            fields["STATUS"] = status
        return self.send(**fields)

    def status(self, text: str) -> bool:
        """Set the free-form status line ``systemctl status`` shows (not after :meth:`stopping`)."""
        if self._stopping:
            return False
        return self.send(STATUS=text)

    def watchdog(self) -> bool:
        """Ping the watchdog (``WATCHDOG=1``) now."""
        self._last_ping = time.monotonic()
        return self.send(WATCHDOG=1)

    def maybe_watchdog(self) -> bool:
        """Ping when half the watchdog timeout has passed since the last ping.

        Call it from the loop whose progress the watchdog is meant to vouch for (not from
        a separate timer thread, which would keep pinging a stuck parser).
        """
        if self.interval is None or time.monotonic() - self._last_ping < self.interval:
            return False
        return self.watchdog()

    def stopping(self, status: str | None = None) -> bool:
        """Tell systemd a shutdown has begun (``STOPPING=1``)."""
        fields: dict[str, str | int] = {"STOPPING": 1}
        self._stopping = True
        if status is not None:
            fields["STATUS"] = status
        return self.send(**fields)

    def reloading(self) -> bool:
        """Announce a configuration reload (``RELOADING=1``; send :meth:`ready` after)."""
        return self.send(RELOADING=1, MONOTONIC_USEC=time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000)

    def close(self) -> None:
        """Release the socket (idempotent)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _one_line(text: str) -> str:
    # A newline would start a new KEY=VALUE assignment inside the message.
    return text.replace("\n", " ").replace("\r", " ")
