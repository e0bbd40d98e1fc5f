"""Options of the Spark job, and what it knows about the producer's ``format`` section.

The job reads values whose encoding depends on the replicator's ``format`` options
(timestamp units, whether ``scn`` already is the commit SCN...). The simplest way to tell
it is ``--olr-config OpenLogReplicator.json``: the format, the Kafka topic and brokers,
the table ``key`` rules and the schema checkpoint (primary keys) all come from there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replicator.errors import ConfigError
from replicator.spark.pkeys import primary_keys_from_state

BINARY_MODES = ("bytes", "base64", "base64-url-safe", "hex")


def check_binary_mode(mode: str) -> str:
    """A Debezium ``binary.handling.mode`` name (ConfigError if unknown)."""
    if mode not in BINARY_MODES:
        raise ConfigError(f"binary handling mode must be one of {', '.join(BINARY_MODES)}, not {mode!r}", 30002)
    return mode


@dataclass(slots=True)
class FormatHints:
    """The producer's ``format`` options the job needs (OLR defaults are 0)."""

    scn_type: int = 0
    timestamp: int = 0
    timestamp_tz: int = 0
    timestamp_type: int = 0
    timestamp_metadata: int = 0
    message: int = 0
    binary_handling_mode: str = "bytes"  # Debezium bytes: bytes (base64), base64, base64-url-safe, hex
    checkpoint_digests: int = 0  # 1: checkpoint messages carry digests the job checks (replicator.spark.streamcheck)

    @classmethod
    def from_format(cls, fmt: dict[str, Any]) -> FormatHints:
        """From an OLR ``format`` section (``type: debezium`` presets applied first)."""
        values: dict[str, Any] = {}
        if fmt.get("type") == "debezium":  # olr-interfaces.md §2.8 preset
            values.update({"scn_type": 14, "timestamp_metadata": 2, "timestamp_type": 14, "message": 2})
        for key, value in fmt.items():
            name = key.replace("-", "_").replace(".", "_")
            if name == "binary_handling_mode":
                values[name] = check_binary_mode(str(value))
            elif name in cls.__slots__:  # type: ignore[attr-defined]
                values[name] = int(value)
        return cls(**values)

    @property
    def scn_is_commit(self) -> bool:
        """``scn`` carries the commit SCN (scn-type bit 1)."""
        return bool(self.scn_type & 1)

    @property
    def tm_is_commit(self) -> bool:
        """``tm`` carries the commit time (timestamp-type bit 1)."""
        return bool(self.timestamp_type & 1)

    def to_json(self) -> str:
        """Compact JSON, to ship the hints to Python workers."""
        return json.dumps({k: getattr(self, k) for k in self.__slots__})  # type: ignore[attr-defined]


@dataclass(slots=True)
class JobOptions:
    """Everything ``replicator spark run`` is configured with."""

    lake: str
    bootstrap_servers: str = ""
    topic: str = ""  # one topic or several, comma-separated
    topic_pattern: str = ""  # or a regular expression of topic names (subscribePattern)
    checkpoint: str = ""  # Spark checkpoint; default <lake>/_checkpoint
    source: str = "auto"  # auto | kafka (native jar) | python (confluent-kafka data source)
    store: str = "auto"  # auto | delta-rs | spark-delta
    starting_offsets: str = "earliest"
    # Records per micro-batch: large batches spread the per-batch costs (the trigger's planning, one
    # commit per table) over more rows; a bound keeps a catch-up's batches in the driver's memory.
    max_offsets_per_trigger: int = 200_000  # 0 = no limit
    trigger_seconds: float = 1.0
    available_now: bool = False  # process what is in the topic, then stop
    until_idle: float = 0.0  # stop after this many seconds without input (0 = run forever)
    atomic: bool = True  # apply whole transactions only (needs begin/commit messages)
    keys: dict[str, list[str]] = field(default_factory=dict)  # OWNER.TABLE -> key columns
    rowid_tables: list[str] = field(default_factory=list)  # force ROWID keys for these tables
    key_rules: list[tuple[str, str, list[str]]] = field(default_factory=list)  # OLR filter `key` rules
    checkpoint_keys: dict[str, list[str]] = field(default_factory=dict)  # from the schema checkpoint
    hints: FormatHints = field(default_factory=FormatHints)
    kafka_properties: dict[str, str] = field(default_factory=dict)
    storage_options: dict[str, str] = field(default_factory=dict)  # delta-rs object store options
    unbounded_number: str = "string"  # NUMBER without precision: string | decimal | double
    app_name: str = "replicator-spark"
    mode: str = "copy-on-write"  # of new tables: copy-on-write | merge-on-read (:mod:`replicator.spark.mor`)
    buckets: int = 8  # _bucket partitions of a new current-state table (fixed when it is created)
    fold_partitions: int = 0  # Spark tasks of the fold (0: twice the default parallelism)
    whole_below_mb: float = 64.0  # a table whose stored files total less folds as one group (0: by bucket)
    compact_every: int = 0  # batches between two compactions of the touched tables (0: never)
    vacuum_every: int = 0  # batches between two vacuums (0: never)
    tombstone_retention_scn: int = 0  # tombstones older than applied SCN minus this are dropped by vacuum (0: kept)

    def __post_init__(self) -> None:
        if not self.checkpoint:
            self.checkpoint = str(Path(self.lake) / "_checkpoint")
        if self.source not in ("auto", "kafka", "python"):
            raise ConfigError(f"--source must be auto, kafka or python, not {self.source!r}", 30002)
        if self.store not in ("auto", "delta-rs", "spark-delta"):
            raise ConfigError(f"--store must be auto, delta-rs or spark-delta, not {self.store!r}", 30002)
        if self.unbounded_number not in ("string", "decimal", "double"):
            raise ConfigError("--unbounded-number must be string, decimal or double", 30002)
        if self.mode not in ("copy-on-write", "merge-on-read"):
            raise ConfigError(f"--mode must be copy-on-write or merge-on-read, not {self.mode!r}", 30002)
        if not 1 <= self.buckets <= 4096:
            raise ConfigError(f"--buckets must be 1..4096, not {self.buckets}", 30002)

    def require_kafka(self) -> None:
        """Fail clearly when the topic or the brokers are unknown."""
        if not (self.topic or self.topic_pattern) or not self.bootstrap_servers:
            raise ConfigError(
                "the Kafka topic and brokers are unknown: pass --topic and --bootstrap-servers, "
                "or --olr-config with a kafka writer",
                30002,
            )


def topics_pattern(topic: str, per_table: str) -> str:
    """A regular expression matching the writer's main topic and every per-table topic."""
    import re

    parts = re.split(r"(\{owner\}|\{table\})", per_table)
    body = "".join(
        "[A-Za-z0-9._-]+" if p in ("{owner}", "{table}") else re.escape(re.sub(r"[^A-Za-z0-9._-]", "_", p))
        for p in parts
    )
    return f"{re.escape(topic)}|{body}" if topic else body


def _read_olr_config(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The replicator config's document and its first source (ConfigError 30001)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        return doc, doc["source"][0]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise ConfigError(f"{path}: cannot read source[0] of the replicator config: {exc}", 30001) from None


def olr_format_hints(path: str) -> FormatHints:
    """The format hints the job takes from a replicator config (``--olr-config``)."""
    return FormatHints.from_format(_read_olr_config(path)[1].get("format", {}))


def apply_olr_config(opts: JobOptions, path: str) -> None:
    """Take format hints, topic, brokers, key rules and primary keys from an OLR config file."""
    doc, source = _read_olr_config(path)
    opts.hints = FormatHints.from_format(source.get("format", {}))
    for rule in source.get("filter", {}).get("table", []):
        if rule.get("key"):
            sep = source.get("filter", {}).get("separator", ",")
            opts.key_rules.append((rule["owner"], rule["table"], [c.strip() for c in rule["key"].split(sep)]))
    writer = (doc.get("target") or [{}])[0].get("writer", {})
    if writer.get("type") == "kafka":
        opts.topic = opts.topic or writer.get("topic", "")
        if writer.get("topic-per-table") and not opts.topic_pattern:
            opts.topic_pattern = topics_pattern(opts.topic, writer["topic-per-table"])
        opts.bootstrap_servers = opts.bootstrap_servers or writer.get("properties", {}).get("bootstrap.servers", "")
    state = doc.get("state", {}).get("path", "checkpoint")
    state_dir = Path(state) if Path(state).is_absolute() else Path(path).resolve().parent / state
    opts.checkpoint_keys.update(primary_keys_from_state(state_dir, source.get("name", "")))
