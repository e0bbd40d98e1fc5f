"""``reader.redo-source``: where the reader finds redo files (this replicator's extension).

Absent, or ``"type": "local"``, the redo files are read from this machine as
OpenLogReplicator reads them. ``"sftp"`` reads them from the database host over SSH;
``"asm"`` reads them from an ASM disk group through a database session
(``DBMS_DISKGROUP``). The keys of the other types are ignored, like the reader's keys of
the other reader types.
"""

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from replicator.config.fields import (
    OlrModel,
    bad_value,
    check_path_mapping,
    empty_list,
    in_range,
    mapping_pairs,
    max_len,
    olr_error,
    without,
)
from replicator.ops.cores import default_connections

REDO_SOURCE_TYPES = ("local", "sftp", "asm")
SFTP_KEYS = (
    "host",
    "port",
    "key-file",
    "key-passphrase",
    "known-hosts",
    "accept-unknown-host-key",
    "read-requests",
    "read-size-kb",
    "connect-timeout-ms",
    "reconnect-tries",
    "reconnect-delay-ms",
    "reconnect-max-delay-ms",
    "connections",
    "window-kb",
)
ASM_KEYS = ("server", "password", "privilege", "parallelism")
COMMON_KEYS = ("user", "path-mapping")
ASM_PRIVILEGES = ("sysasm", "sysdba", "none")


class RedoSourceConfig(OlrModel):
    """``reader.redo-source``: local files (default), SFTP over SSH, or ASM through the database.

    Secrets (``key-passphrase``, ``password``) are never logged nor shown in messages.
    """

    STRICT_KEYS: ClassVar[bool] = True

    type: Annotated[str, max_len(256)] = "local"
    host: Annotated[str | None, max_len(1024)] = None
    port: Annotated[int, in_range(1, 65535)] = 22
    user: Annotated[str | None, max_len(128)] = None
    key_file: Annotated[str | None, max_len(4096)] = None
    key_passphrase: Annotated[str | None, max_len(1024)] = Field(default=None, repr=False)
    known_hosts: Annotated[str, max_len(4096)] = "~/.ssh/known_hosts"
    accept_unknown_host_key: Annotated[int, in_range(0, 1)] = 0
    read_requests: Annotated[int, in_range(1, 64)] = 8
    read_size_kb: Annotated[int, in_range(32, 65536)] = 2048
    connect_timeout_ms: Annotated[int, in_range(100, 600000)] = 10000
    reconnect_tries: Annotated[int, in_range(0, 1000000)] = 10
    reconnect_delay_ms: Annotated[int, in_range(1, 600000)] = 200
    reconnect_max_delay_ms: Annotated[int, in_range(1, 3600000)] = 5000
    connections: Annotated[int | None, in_range(0, 16)] = None  # None: default_connections()
    window_kb: Annotated[int, in_range(256, 262144)] = 4096
    server: Annotated[str | None, max_len(4096)] = None
    password: Annotated[str | None, max_len(128)] = Field(default=None, repr=False)
    privilege: Annotated[str, max_len(16)] = "sysasm"
    parallelism: Annotated[int, in_range(1, 16)] = 4
    path_mapping: list[Annotated[str, max_len(2048)]] = Field(default_factory=empty_list)

    @classmethod
    def prune(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Drop the keys of the other source types."""
        kind = data.get("type", "local")
        if kind == "sftp":
            return without(data, *ASM_KEYS)
        if kind == "asm":
            return without(data, *SFTP_KEYS)
        return without(data, *SFTP_KEYS, *ASM_KEYS, *COMMON_KEYS)

    @model_validator(mode="after")
    def _consistency(self) -> "RedoSourceConfig":
        if self.type not in REDO_SOURCE_TYPES:
            raise bad_value("type", self.type, 'one of {"local", "sftp", "asm"}')
        required = {"sftp": ("host", "user", "key_file"), "asm": ("server", "user", "password")}.get(self.type, ())
        for name in required:
            if getattr(self, name) is None:
                raise olr_error("not_found", field=name.replace("_", "-"))
        if self.privilege not in ASM_PRIVILEGES:
            raise bad_value("privilege", self.privilege, 'one of {"sysasm", "sysdba", "none"}')
        if self.reconnect_max_delay_ms < self.reconnect_delay_ms:
            raise bad_value(
                "reconnect-max-delay-ms",
                self.reconnect_max_delay_ms,
                f'at least "reconnect-delay-ms" ({self.reconnect_delay_ms})',
            )
        check_path_mapping(self.path_mapping)
        return self

    @property
    def reader_connections(self) -> int:
        """``connections`` as given, else :func:`default_connections`."""
        return default_connections() if self.connections is None else self.connections

    @property
    def path_mapping_pairs(self) -> list[tuple[str, str]]:
        """``path-mapping`` as (database path prefix, source path prefix) pairs, first match wins."""
        return mapping_pairs(self.path_mapping)

    def describe(self) -> str:
        """One line naming the source without any secret (for logs and check-config)."""
        if self.type == "sftp":
            return f"sftp://{self.user}@{self.host}:{self.port}"
        if self.type == "asm":
            return f"asm {self.user}@{self.server} as {self.privilege}, {self.parallelism} sessions"
        return "local files"


def explain_redo_source(cfg: RedoSourceConfig) -> list[str]:
    """What ``check-config`` says about a valid config's remote redo source (nothing for local).

    Takes the loaded section (``config.source[0].reader.redo_source``): loading the file here
    would make this module, which the config model imports, import the loader in turn.
    """
    if cfg.type == "sftp":
        return [
            f"reader.redo-source: {cfg.describe()} with key {cfg.key_file}, host key checked against "
            + ("nothing (accept-unknown-host-key 1)" if cfg.accept_unknown_host_key else cfg.known_hosts)
            + f"; {cfg.read_requests} reads of {cfg.read_size_kb} KB in flight, SSH window {cfg.window_kb} KB"
            + (
                f" per connection, {cfg.reader_connections} connection(s) (reader processes) per archived log"
                if cfg.reader_connections
                else " in this process"
            )
            + "; after a dropped connection "
            f"{cfg.reconnect_tries} reconnection tries, {cfg.reconnect_delay_ms} ms doubling to "
            f"{cfg.reconnect_max_delay_ms} ms"
            + (f"; {len(cfg.path_mapping_pairs)} path mapping(s)" if cfg.path_mapping else "")
        ]
    if cfg.type == "asm":
        return [
            f"reader.redo-source: {cfg.describe()}, reading DBMS_DISKGROUP pieces under 32 KB"
            + (f"; {len(cfg.path_mapping_pairs)} path mapping(s)" if cfg.path_mapping else "")
        ]
    return []
