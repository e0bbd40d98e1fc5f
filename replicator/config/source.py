"""``source[0]`` and its ``reader``, ``debug`` and ``filter`` sections (olr-interfaces.md §1.2–1.6, §9)."""

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from replicator.config.dialect import DialectKey, dialect_keys
from replicator.config.fields import (
    U64,
    Before,
    OlrModel,
    OptU32,
    OptU64,
    bad_value,
    check_path_mapping,
    empty_list,
    in_range,
    int_or,
    mapping_pairs,
    max_len,
    olr_error,
    olr_message,
    string_checker,
    without,
)
from replicator.config.filter import FilterConfig
from replicator.config.format import FormatConfig
from replicator.config.redosource import RedoSourceConfig
from replicator.flags import DISABLE_CHECKS_JSON_TAGS, FLAG_CHECKPOINT, FLAG_DIRECT_DISABLE, FLAG_SCHEMALESS
from replicator.log import parse_timezone

READER_TYPES = ("online", "offline", "batch")


def _timezone(field: str) -> Before:
    """A ``±HH:MM`` (or alias) string, stored as seconds east of UTC."""
    as_string = string_checker(256)

    def check(value: object) -> int:
        text = as_string(value)
        offset = parse_timezone(text)
        if offset is None:
            raise olr_message(30001, f'bad JSON, invalid "{field}" value: {text}, expected value: {{"+/-HH:MM"}}')
        return offset

    return Before(check)


class ReaderConfig(OlrModel):
    """``reader``: where redo comes from and where replication starts (§1.3, §8).

    The three ``*-timezone`` keys are stored as offsets in seconds east of UTC.
    """

    STRICT_KEYS: ClassVar[bool] = True

    type: Annotated[str, max_len(256)]
    user: Annotated[str | None, max_len(128)] = None
    password: Annotated[str | None, max_len(128)] = Field(default=None, repr=False)
    server: Annotated[str | None, max_len(4096)] = None
    disable_checks: Annotated[int, in_range(0, 15)] = 0
    start_scn: OptU64 = None
    start_seq: OptU32 = None
    start_time_rel: U64 = 0
    start_time: Annotated[str | None, max_len(256)] = None
    redo_copy_path: Annotated[str | None, max_len(2048)] = None
    db_timezone: Annotated[int | None, _timezone("db-timezone")] = None
    host_timezone: Annotated[int | None, _timezone("host-timezone")] = None
    log_timezone: Annotated[int | None, _timezone("log-timezone")] = None
    redo_log: list[Annotated[str, max_len(2048)]] = Field(default_factory=empty_list)
    path_mapping: list[Annotated[str, max_len(2048)]] = Field(default_factory=empty_list)
    log_archive_format: Annotated[str | None, max_len(4000)] = None
    redo_source: RedoSourceConfig = Field(default_factory=RedoSourceConfig)

    @classmethod
    def prune(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Drop keys the chosen reader type never reads."""
        kind = data.get("type")
        if kind != "online":
            data = without(data, "user", "password", "server")
        if kind != "batch":
            data = without(data, "redo-log")
        if kind == "batch":  # path mapping is not applied to the batch list (§8.4)
            data = without(data, "path-mapping")
        return data

    @model_validator(mode="after")
    def _consistency(self) -> "ReaderConfig":
        given = self.model_fields_set
        if "start_time_rel" in given and self.start_scn is not None:
            raise bad_value("start-time-rel", self.start_time_rel, f'unset when "start-scn" is set ({self.start_scn})')
        if self.start_time is not None:
            if self.start_scn is not None:
                raise bad_value("start-time", self.start_time, f'unset when "start-scn" is set ({self.start_scn})')
            if self.start_time_rel > 0:
                raise bad_value(
                    "start-time", self.start_time, f'unset when "start-time-rel" is set ({self.start_time_rel})'
                )
        if self.type not in READER_TYPES:
            raise bad_value("type", self.type, 'one of {"online", "offline", "batch"}')
        if self.type == "online":
            for name in ("user", "password", "server"):
                if getattr(self, name) is None:
                    raise olr_error("not_found", field=name)
        if self.type == "batch" and "redo_log" not in given:
            raise olr_error("not_found", field="redo-log")
        check_path_mapping(self.path_mapping)
        return self

    @property
    def path_mapping_pairs(self) -> list[tuple[str, str]]:
        """``path-mapping`` as (from, to) prefix pairs, first match wins."""
        return mapping_pairs(self.path_mapping)

    @property
    def json_key_checks(self) -> bool:
        """False when ``disable-checks`` bit 8 relaxes JSON key validation."""
        return not self.disable_checks & DISABLE_CHECKS_JSON_TAGS

    def timezone_offset(self, which: str) -> int | None:
        """Seconds east of UTC of the ``db``, ``host`` or ``log`` time zone; None if not set."""
        value: int | None = getattr(self, f"{which}_timezone")
        return value


class DebugConfig(OlrModel):
    """``debug``: stop the process softly after some events (§1.5)."""

    stop_log_switches: U64 = 0
    stop_checkpoints: U64 = 0
    stop_transactions: U64 = 0
    owner: Annotated[str | None, max_len(128)] = None
    table: Annotated[str | None, max_len(128)] = None

    @model_validator(mode="after")
    def _pair(self) -> "DebugConfig":
        if self.owner is not None or self.table is not None:
            for name in ("owner", "table"):
                if getattr(self, name) is None:
                    raise olr_error("not_found", field=name)
        return self


class ContainerConfig(OlrModel):
    """An element of ``source.containers`` (ours, not OpenLogReplicator's): one more PDB of the
    CDB replicated by the same run, given by the state folder holding its schema checkpoint
    (``<name>-chkpt-<scn>.json``, chosen by ``reader.start-scn`` as the first container's is;
    its ``con-id`` and ``con-name`` say which PDB it is). The run's schema checkpoints of that
    PDB are written there too."""

    STRICT_KEYS: ClassVar[bool] = True

    state_path: Annotated[str, max_len(2048)]


class SourceConfig(OlrModel):
    """``source[0]``: the database, its reader, output format, filter and timing knobs."""

    STRICT_KEYS: ClassVar[bool] = True
    # 1.9 accepts and ignores them since memory/state moved to the top level (§1.1 [v1.9.0]);
    # a 2.0 config refuses them (replicator.config.dialect).
    EXTRA_KEYS: ClassVar[frozenset[str]] = frozenset({"memory", "state"})
    DIALECT_KEYS: ClassVar[dict[str, DialectKey]] = dialect_keys("source[0]")

    alias: Annotated[str, max_len(256)]
    name: Annotated[str, max_len(256)]
    reader: ReaderConfig
    flags: Annotated[int, in_range(0, 524287)] = 0
    debug: DebugConfig = Field(default_factory=DebugConfig)
    transaction_max_mb: U64 = 0
    format: FormatConfig
    redo_read_sleep_us: U64 = 50000
    arch_read_sleep_us: U64 = 10000000
    arch_read_tries: Annotated[int, in_range(1, 1000000000, "one of: {1 .. 1000000000}", uint=True)] = 10
    redo_verify_delay_us: U64 = 0
    refresh_interval_us: U64 = 10000000
    arch: Annotated[str | None, max_len(256)] = None
    filter: FilterConfig = Field(default_factory=FilterConfig)
    # Ours: more PDBs replicated in the same pass over the redo (docs/configuration.md, multitenant).
    containers: list[ContainerConfig] = Field(default_factory=empty_list)

    @classmethod
    def prune(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Drop what OLR ignores: ``arch`` off-line, filter tables and debug table when schemaless."""
        reader = data.get("reader")
        if not (isinstance(reader, dict) and reader.get("type") == "online"):
            data = without(data, "arch")
        if int_or(data.get("flags"), 0) & FLAG_SCHEMALESS:
            if isinstance(data.get("filter"), dict):
                data = {**data, "filter": without(data["filter"], "table")}
            if isinstance(data.get("debug"), dict):
                data = {**data, "debug": without(data["debug"], "owner", "table")}
        return data

    @model_validator(mode="after")
    def _cross_checks(self) -> "SourceConfig":
        if "column" in self.format.explicit_keys and self.format.column != 0 and self.flags & FLAG_SCHEMALESS:
            raise bad_value(
                "column",
                self.format.column,
                f"not used when flags has set schemaless mode (flags: {self.flags})",
                "format.column",
            )
        if self.format.checkpoint_digests and (
            self.format.type not in ("json", "debezium") or not self.flags & FLAG_CHECKPOINT
        ):
            raise bad_value(
                "checkpoint-digests",
                self.format.checkpoint_digests,
                f"0 unless the format is json (or debezium) and flags has 0x1000 set (checkpoint "
                f"messages; format {self.format.type!r}, flags {self.flags})",
                "format.checkpoint-digests",
            )
        if self.containers and self.reader.type == "online":  # untested without a database: refused for now
            raise bad_value(
                "containers",
                self.reader.type,
                "several containers in one run are read by the batch and offline readers only "
                "(reader.type batch or offline) yet",
                "containers",
            )
        if self.containers and self.flags & FLAG_SCHEMALESS:
            raise bad_value(
                "containers", self.flags, "a dictionary per container: not in schemaless mode", "containers"
            )
        if self.arch is not None and self.arch not in ("path", "online", "online-keep"):
            raise bad_value("arch", self.arch, 'one of {"path", "online", "online-keep"}')
        if "redo_verify_delay_us" not in self.model_fields_set and self.flags & FLAG_DIRECT_DISABLE:
            self.redo_verify_delay_us = 500000
        return self

    @property
    def schemaless(self) -> bool:
        """True with source flag 0x2."""
        return bool(self.flags & FLAG_SCHEMALESS)

    @property
    def owners(self) -> set[str]:
        """The owner patterns recorded in the checkpoint ``users`` set (filter + debug)."""
        users = {rule.owner for rule in self.filter.table}
        if self.debug.owner is not None:
            users.add(self.debug.owner)
        return users
