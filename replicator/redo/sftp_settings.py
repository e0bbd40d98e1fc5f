"""The settings of an SFTP redo source, without importing asyncssh or the config models.

:class:`SftpSettings` is what the source, its reader processes and the early start of
those processes (:mod:`replicator.redo.sftp_early`) share; :func:`settings_from_config`
makes it from the validated ``reader.redo-source`` section, :func:`settings_from_raw` from
the section as it stands in the config file (before validation: used only to start the
reader processes early, whose settings are compared with the validated ones later).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from types import SimpleNamespace
from typing import Any

from replicator.ops.cores import MAX_DEFAULT_CONNECTIONS, default_connections  # noqa: F401 - re-exported


@dataclass
class SftpSettings:
    """The ``redo-source`` keys of type sftp (see docs/configuration.md)."""

    host: str
    user: str
    key_file: str
    port: int = 22
    key_passphrase: str | None = field(default=None, repr=False)
    known_hosts: str = "~/.ssh/known_hosts"
    accept_unknown_host_key: bool = False
    read_requests: int = 8
    read_size: int = 2 << 20
    connect_timeout: float = 10.0
    reconnect_tries: int = 10
    reconnect_delay: float = 0.2
    reconnect_max_delay: float = 5.0
    path_mapping: list[tuple[str, str]] = field(default_factory=list)
    connections: int = 1
    # The SSH channel window (asyncssh's default: 2 MB). A window beyond the link's
    # bandwidth x round trip only costs the *server*: when this side is the slower one,
    # OpenSSH holds the whole window in a buffer it keeps moving and zeroing (measured on
    # loopback: sshd CPU per MB 0.09-0.12 s/100 MB at 4 MB, 0.14-0.19 at 8, 0.17-0.71 at 16).
    window: int = 4 << 20

    def to_json(self) -> dict[str, Any]:
        """The settings as JSON values (handed to a reader process through its stdin, never argv)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SftpSettings:
        """The inverse of :meth:`to_json`."""
        data = dict(data)
        data["path_mapping"] = [(a, b) for a, b in data.get("path_mapping", [])]
        return cls(**data)


def settings_from_config(cfg: Any) -> SftpSettings:
    """From a validated ``reader.redo-source`` section (:class:`replicator.config.redosource.RedoSourceConfig`)."""
    return SftpSettings(
        host=cfg.host,
        user=cfg.user,
        key_file=cfg.key_file,
        port=cfg.port,
        key_passphrase=cfg.key_passphrase,
        known_hosts=cfg.known_hosts,
        accept_unknown_host_key=bool(cfg.accept_unknown_host_key),
        read_requests=cfg.read_requests,
        read_size=cfg.read_size_kb * 1024,
        connect_timeout=cfg.connect_timeout_ms / 1000,
        reconnect_tries=cfg.reconnect_tries,
        reconnect_delay=cfg.reconnect_delay_ms / 1000,
        reconnect_max_delay=cfg.reconnect_max_delay_ms / 1000,
        path_mapping=cfg.path_mapping_pairs,
        connections=cfg.reader_connections,
        window=cfg.window_kb * 1024,
    )


# The section's keys as validated attributes, with the defaults of RedoSourceConfig (a
# default changed there and not here only costs the early start: the settings differ, and
# the processes are started again with the validated ones).
_RAW_KEYS: dict[str, tuple[str, Any]] = {
    "host": ("host", None),
    "user": ("user", None),
    "key-file": ("key_file", None),
    "port": ("port", 22),
    "key-passphrase": ("key_passphrase", None),
    "known-hosts": ("known_hosts", "~/.ssh/known_hosts"),
    "accept-unknown-host-key": ("accept_unknown_host_key", 0),
    "read-requests": ("read_requests", 8),
    "read-size-kb": ("read_size_kb", 2048),
    "connect-timeout-ms": ("connect_timeout_ms", 10000),
    "reconnect-tries": ("reconnect_tries", 10),
    "reconnect-delay-ms": ("reconnect_delay_ms", 200),
    "reconnect-max-delay-ms": ("reconnect_max_delay_ms", 5000),
    "window-kb": ("window_kb", 4096),
}


def settings_from_raw(section: Any) -> SftpSettings | None:
    """Best-effort settings from an unvalidated ``redo-source`` section; None unless it plainly is sftp."""
    if not isinstance(section, dict) or section.get("type") != "sftp":
        return None
    values: dict[str, Any] = {}
    for key, (name, default) in _RAW_KEYS.items():
        value = section.get(key, default)
        if default is None or isinstance(default, str):
            if not isinstance(value, str) and not (name == "key_passphrase" and value is None):
                return None
        elif not isinstance(value, int) or isinstance(value, bool):
            return None
        values[name] = value
    mapping = section.get("path-mapping", [])
    connections = section.get("connections")
    if (
        not isinstance(mapping, list)
        or len(mapping) % 2
        or not all(isinstance(p, str) for p in mapping)
        or not (connections is None or (isinstance(connections, int) and not isinstance(connections, bool)))
    ):
        return None
    values["path_mapping_pairs"] = list(zip(mapping[0::2], mapping[1::2]))
    values["reader_connections"] = default_connections() if connections is None else connections
    return settings_from_config(SimpleNamespace(**values))
