"""Warnings about a config that exposes the change stream (``check-config``, writer start-up).

A network or zeromq writer serves every row change of the database to whoever connects:
listening beyond loopback without ``auth-token`` is worth a warning, not an error (a
firewall or a private network may make it safe). The writers warn again when they bind.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from replicator.config.writer import zeromq_endpoint

EXPOSURE_CODE = 60104


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (``127.0.0.0/8``, ``::1``)."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name, "*" or an interface: assume it is reachable from outside


def listen_host(writer: Any) -> str | None:
    """The host a network or zeromq writer binds, or None for other writers / non-TCP endpoints."""
    if writer.type == "network":
        return str(writer.host)
    if writer.type == "zeromq":
        scheme, host, _ = zeromq_endpoint(str(writer.uri))
        return None if scheme == "ipc" else host  # ipc:// is local
    return None


def exposure_warnings(config: Any) -> list[str]:
    """One line per writer that listens beyond loopback without authentication."""
    lines = []
    for target in config.target:
        writer = target.writer
        host = listen_host(writer)
        if host is None or is_loopback(host) or getattr(writer, "auth_token", None):
            continue
        fix = "set writer.auth-token" + (" and tls-cert" if writer.type == "network" else ", and use a tunnel")
        lines.append(
            f"WARN {EXPOSURE_CODE} target {target.alias}: the {writer.type} writer listens on {host}, "
            f"beyond loopback, without authentication: anyone who reaches it reads every change ({fix})"
        )
    return lines
