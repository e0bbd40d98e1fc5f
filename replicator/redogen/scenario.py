"""The scenario model: a database, its tables, and a timeline of sessions doing DML.

A :class:`Scenario` is plain data. Build it in Python or load it from JSON/YAML with
:meth:`Scenario.from_file` (keys may be spelled ``start-scn`` or ``start_scn``)::

    name: TEST
    version: "19"
    tables:
      - {owner: APP, name: T1, primary-key: [ID],
         columns: ["ID NUMBER NOT NULL", "NAME VARCHAR2(40)"]}
    timeline:
      - {op: insert, session: 1, table: T1, values: {ID: 1, NAME: a}}
      - {op: commit, session: 1}

Timeline operations: ``insert``, ``update`` (``key`` finds the row, ``values`` sets),
``delete``, ``insert_many`` / ``delete_many`` (``rows``), ``commit``, ``rollback``,
``savepoint`` / ``rollback_to`` (``name``), ``switch`` (log switch) and ``sleep``.
``wait`` on any event advances the clock (seconds) before it happens. ``preload`` lists rows the
tables hold before the redo starts (``{table: T1, values: {...}}``): no redo is written for them
(a LOB value must fit in its row's locator: up to 3964 bytes, not DISABLE STORAGE IN ROW).

DDL (:mod:`replicator.redogen.ddl`): ``create_table`` (``definition``: a table),
``drop_table``, ``add_column`` (``column: "EMAIL VARCHAR2(200)"``), ``drop_column`` /
``set_unused_column`` (``column``), ``rename_column`` (``column``, ``to``), ``modify_column``
(``column: "NAME VARCHAR2(400)"``, same type), ``truncate`` and
``add_partition`` (``partition: {name: P4}``), ``drop_partition`` (``partition: P1``) and
``exchange_partition`` (``partition: P1``, ``with-table: TX``). A partitioned table lists
``partitions`` (``[{name: P1}, ...]``); DML names the partition it goes to as ``TABLE:PARTITION``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from replicator.errors import ConfigError

# compatVsn per release, as block 1 +20 carries it (redo-format.md §1.4).
VERSIONS: Final[dict[str, int]] = {
    "11.2": 0x0B200400,
    "12.1": 0x0C100200,
    "12.2": 0x0C200100,
    "18": 0x12030000,
    "19": 0x13000000,
    "21": 0x15000000,
    "23": 0x17060000,
}
_ALIASES: Final = {"11g": "11.2", "12c": "12.1", "18c": "18", "19c": "19", "21c": "21", "23ai": "23", "23c": "23"}
OPS: Final = (
    "insert",
    "update",
    "delete",
    "insert_many",
    "delete_many",
    "commit",
    "rollback",
    "savepoint",
    "rollback_to",
    "switch",
    "sleep",
    "create_table",
    "drop_table",
    "add_column",
    "drop_column",
    "set_unused_column",
    "rename_column",
    "modify_column",
    "truncate",
    "add_partition",
    "drop_partition",
    "exchange_partition",
)
SUPPLEMENTAL: Final = ("none", "pk", "all")


@dataclass(slots=True)
class ColumnSpec:
    """One column: SQL type text (``VARCHAR2(20)``...) and nullability."""

    name: str
    type: str
    nullable: bool = True


@dataclass(slots=True)
class TableSpec:
    """A heap table. ``obj``/``data_obj`` of 0 are assigned by the generator."""

    owner: str
    name: str
    columns: list[ColumnSpec]
    primary_key: list[str] = field(default_factory=list)
    supplemental: str = "all"  # table-level supplemental logging: none | pk | all
    obj: int = 0
    data_obj: int = 0
    ts: int = 6  # tablespace number (USERS)
    # Partitions ({name, obj}; obj 0 = assigned): DML goes to "TABLE:PARTITION".
    partitions: list[dict[str, Any]] = field(default_factory=list)
    container: str = ""  # multitenant: the PDB holding the table ("" = the scenario's first container)

    @property
    def full_name(self) -> str:
        """OWNER.NAME"""
        return f"{self.owner}.{self.name}"


@dataclass(slots=True)
class ContainerSpec:
    """A pluggable database of a multitenant scenario (``containers:``).

    ``con_id`` is what every change vector of its transactions carries (12.1+ header +24);
    ``con_uid`` is in its records' headers (+16) and its 5.2 begin vectors' PDB field. A PDB
    created in place has DBID = CON_UID; one unplugged and plugged back (or cloned) keeps
    its descriptor's DBID and gets a new CON_UID, so ``dbid`` may differ (reference issue #333).
    Object numbers are per container: each PDB numbers its tables from 72726, as a fresh PDB
    does, so the same OBJ# names different tables in different containers.
    """

    name: str
    con_id: int
    con_uid: int = 0  # 0: derived from con_id
    dbid: int = 0  # 0: equal to con_uid (a PDB created in place)

    @property
    def effective_con_uid(self) -> int:
        """CON_UID of the container (given, or a fixed function of CON_ID)."""
        return self.con_uid or (0x5295F656 + 0x1010101 * (self.con_id - 3)) & 0xFFFFFFFF

    @property
    def effective_dbid(self) -> int:
        """DBID of the container: its CON_UID unless it was plugged in with another."""
        return self.dbid or self.effective_con_uid


@dataclass(slots=True)
class SessionSpec:
    """Attributes a session writes into 5.20 (login user name, session and serial numbers)."""

    id: int
    user: str = ""
    sid: int = 0
    serial: int = 0
    audit_sid: int = 0
    thread: int = 0  # RAC: the instance (redo thread) the session is connected to; 0 = by session id


@dataclass(slots=True)
class Event:
    """One step of the timeline, done by ``session``."""

    op: str
    session: int = 1
    table: str | None = None
    values: dict[str, Any] | None = None
    key: dict[str, Any] | None = None
    rows: list[dict[str, Any]] | None = None
    name: str | None = None
    wait: float = 0.0
    xid: str | None = None  # "usn.slot.sqn" for the transaction this event starts (default: allocated)
    definition: dict[str, Any] | None = None  # create_table: the new table
    column: str | None = None  # add_column: "NAME TYPE [NOT NULL]"; drop/rename: the column name
    to: str | None = None  # rename_column: the new name
    partition: Any = None  # add/drop/exchange_partition: {name: P4} or the name
    with_table: str | None = None  # exchange_partition: the non-partitioned table swapped in
    thread: int | None = None  # RAC: the instance (redo thread) running the statement (shorthand ``t``)


@dataclass(slots=True)
class Scenario:
    """Everything the generator needs. Defaults mimic the Oracle Free 23 fixture."""

    tables: list[TableSpec] = field(default_factory=list)
    timeline: Iterable[Event] = field(default_factory=list)
    name: str = "TEST"  # OLR source name: file prefix of the checkpoints
    database: str = "FREE"  # DB_NAME in the redo header (checkpoint `context`)
    version: str = "23"
    block_size: int = 512
    dbid: int = 0x593AA8AE
    resetlogs: int = 0  # RESETLOGS_ID (redo time); 0 = a day before start_time
    resetlogs_scn: int = 0  # 0 = start_scn - 200000
    activation: int = 0x593A4BAE
    start_scn: int = 2266634
    start_time: Any = "2026-03-07T01:44:38Z"
    thread: int = 1
    first_sequence: int = 1
    con_id: int = -1  # -1: 3 for a 12.1+ CDB (the 23 default), 0 otherwise
    con_name: str = ""  # PDB name ("" = FREEPDB1 for a CDB, the database name otherwise)
    cdb: bool | None = None  # None: CDB for 23, non-CDB otherwise
    log_archive_format: str = "arch%t_%s_%r.dbf"
    log_blocks: int = 20480  # online log size in blocks; a log switch happens when it is full
    lwn_max_blocks: int = 256  # start a new LWN once the pending one is this big
    group_commits: int = 1  # commits per LWN (log writer group commit)
    db_block_size: int = 8192  # table data block size, decides row chaining
    nls_charset: str = "AL32UTF8"
    nls_ncharset: str = "AL16UTF16"
    db_timezone: str = "+00:00"
    format: dict[str, Any] = field(
        default_factory=lambda: {"type": "json", "scn": 1, "timestamp": 7, "timestamp-metadata": 7, "xid": 1}
    )
    flags: int = 0  # OLR source.flags
    # XDB.XDB$TTSET row (default token set) in the checkpoint; None: only with flags 0x10000.
    xdb_ttset: bool | None = None
    sessions: list[SessionSpec] = field(default_factory=list)
    # Rows the tables already hold when the redo starts (``{table: T or T:PARTITION, values: {...}}``,
    # a SQL script's setup DML): placed in their blocks without redo, so OLR prints none of them.
    preload: list[dict[str, Any]] = field(default_factory=list)
    seed: int = 0
    max_redo_bytes: int = 0  # stop reading the timeline once this much redo is written (0 = no limit)
    # RAC (:mod:`replicator.redogen.cluster`): redo threads sharing one SCN clock. A statement
    # runs on its event's ``thread``, else on its session's; a transaction may move between them.
    threads: int = 1
    idle_threads: int = 0  # the last N threads get no session by default (they only write a heartbeat)
    migrate: float = 0.0  # chance that a statement of an open transaction runs on another instance
    # A new SCN for every record, not for every LWN: SCNs then do not depend on how records are
    # grouped into LWNs or threads (None: on with threads > 1).
    scn_per_record: bool | None = None
    # RAC: a thread's LGWR writes its pending LWN once the clock moved on, and a thread idle this
    # many seconds writes a heartbeat LWN at the current SCN (no SCN used) -- so a live reader's
    # merge is not held forever by a quiet instance. 0: never.
    heartbeat_s: float = 3.0
    # Multitenant (CDB with several PDBs): the containers; a table names its own, a
    # transaction belongs to the container of the tables it changes (one only, as in Oracle).
    # Each container has its own undo (local undo, 12.2+), so two containers may have a
    # transaction with the same XID open at once. Empty: one container (con_id/con_name).
    containers: list[ContainerSpec] = field(default_factory=list)

    # ----------------------------------------------------------------------------------
    @property
    def compat(self) -> int:
        """compatVsn of the chosen version."""
        key = _ALIASES.get(str(self.version).lower(), str(self.version))
        if key in VERSIONS:
            return VERSIONS[key]
        try:
            parts = [int(p) for p in key.split(".")] + [0, 0]
        except ValueError:
            raise ConfigError(f"unknown database version {self.version!r}") from None
        if parts[0] >= 18:
            return parts[0] << 24 | parts[1] << 16 | parts[2] << 8
        return parts[0] << 24 | parts[1] << 20 | parts[2] << 16

    @property
    def is_cdb(self) -> bool:
        """Multitenant container (PDB CON_ID in vectors)."""
        if self.containers:
            return True
        return self.cdb if self.cdb is not None else self.compat >= 0x17000000

    @property
    def effective_con_id(self) -> int:
        """CON_ID stamped on change vectors (of the first container when there are several)."""
        if self.containers:
            return self.containers[0].con_id
        if self.con_id >= 0:
            return self.con_id
        return 3 if self.is_cdb and self.compat >= 0x0C100000 else 0

    @property
    def effective_con_name(self) -> str:
        """Container name (the `db` of OLR output; the first container's when there are several)."""
        if self.containers:
            return self.containers[0].name
        return self.con_name or ("FREEPDB1" if self.is_cdb else self.database)

    def container_of(self, table: TableSpec) -> ContainerSpec | None:
        """The container holding ``table`` (None in a scenario without ``containers``)."""
        if not self.containers:
            return None
        name = table.container or self.containers[0].name
        for c in self.containers:
            if c.name == name:
                return c
        raise ConfigError(f"table {table.full_name}: no container {name!r} in the scenario")

    @property
    def start_epoch(self) -> int:
        """start_time as epoch seconds (UTC)."""
        if isinstance(self.start_time, (int, float)):
            return int(self.start_time)
        value = (
            self.start_time
            if isinstance(self.start_time, datetime)
            else datetime.fromisoformat(str(self.start_time).replace("Z", "+00:00"))
        )
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return int(value.timestamp())

    @property
    def effective_resetlogs(self) -> int:
        """RESETLOGS_ID: given, or the redo time of a day before start_time."""
        from replicator.redogen.ids import redo_time

        return self.resetlogs or redo_time(self.start_epoch - 86400)

    @property
    def effective_resetlogs_scn(self) -> int:
        """SCN of the last RESETLOGS."""
        return self.resetlogs_scn or max(1, self.start_scn - 200000)

    def table(self, name: str) -> TableSpec:
        """Find a table by NAME or OWNER.NAME."""
        for t in self.tables:
            if name in (t.name, t.full_name):
                return t
        raise ConfigError(f"scenario has no table {name!r}")

    # ----------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Scenario:
        """Build from a decoded JSON/YAML document."""
        doc = _norm_keys(doc)
        known = {f.name for f in fields(cls)}
        extra = set(doc) - known
        if extra:
            raise ConfigError(f"unknown scenario keys: {sorted(extra)}")
        doc["tables"] = [table_spec(t) for t in doc.get("tables", [])]
        doc["sessions"] = [SessionSpec(**_norm_keys(s)) for s in doc.get("sessions", [])]
        doc["timeline"] = [_event(e) for e in doc.get("timeline", [])]
        doc["containers"] = [ContainerSpec(**_norm_keys(c)) for c in doc.get("containers", [])]
        sc = cls(**doc)
        sc.check_containers()
        return sc

    def check_containers(self) -> None:
        """Refuse containers the redo cannot carry (before 12.1) or that repeat an id or name."""
        if not self.containers:
            return
        if self.compat < 0x0C100000:
            raise ConfigError(f"containers need a 12.1+ database (CON_ID in change vectors), not {self.version}")
        for key in ("name", "con_id"):
            values = [getattr(c, key) for c in self.containers]
            if len(set(values)) != len(values):
                raise ConfigError(f"containers: duplicate {key} in {values}")
        if any(not 1 <= c.con_id <= 0x7FFF for c in self.containers):
            raise ConfigError("containers: CON_ID is 1 (CDB$ROOT) or a PDB's 3..32767")

    @classmethod
    def from_file(cls, path: str | Path) -> Scenario:
        """Load a ``.json`` or ``.yaml``/``.yml`` scenario file."""
        text = Path(path).read_text(encoding="utf-8")
        if str(path).endswith((".yaml", ".yml")):
            import yaml

            doc = yaml.safe_load(text)
        else:
            doc = json.loads(text)
        if not isinstance(doc, dict):
            raise ConfigError(f"{path}: a scenario must be a mapping")
        return cls.from_dict(doc)


def _norm_keys(doc: dict[str, Any]) -> dict[str, Any]:
    """``start-scn`` -> ``start_scn`` at this level (column names inside values are kept)."""
    return {str(k).replace("-", "_"): v for k, v in doc.items()}


def column_spec(spec: Any) -> ColumnSpec:
    """A column of a scenario (or DDL event): ``"NAME TYPE [NOT NULL]"`` or a mapping of ColumnSpec's fields."""
    if isinstance(spec, str):  # "NAME TYPE [NOT NULL]"
        words = spec.split(None, 1)
        if len(words) != 2:
            raise ConfigError(f"column {spec!r}: expected 'NAME TYPE [NOT NULL]'")
        text = words[1].strip()
        nullable = not text.upper().endswith("NOT NULL")
        if not nullable:
            text = text[: -len("NOT NULL")].strip()
        return ColumnSpec(words[0], text, nullable)
    return ColumnSpec(**_norm_keys(spec))


def table_spec(spec: dict[str, Any]) -> TableSpec:
    """A table of a scenario (or a CREATE TABLE event) from its mapping, checked."""
    spec = _norm_keys(spec)
    spec["columns"] = [column_spec(c) for c in spec.get("columns", [])]
    spec["partitions"] = [
        {"name": str(p["name"]), "obj": int(p.get("obj", 0))} if isinstance(p, dict) else {"name": str(p), "obj": 0}
        for p in spec.get("partitions", [])
    ]
    if spec.get("supplemental", "all") not in SUPPLEMENTAL:
        raise ConfigError(f"table {spec.get('name')}: supplemental must be one of {SUPPLEMENTAL}")
    return TableSpec(**spec)


def _event(spec: dict[str, Any]) -> Event:
    spec = _norm_keys(spec)
    if "op" not in spec:  # shorthand: {insert: T1, ...}, {savepoint: sp1}, {commit: 2}
        ops = [k for k in spec if k in OPS]
        if len(ops) != 1:
            raise ConfigError(f"timeline event {spec!r}: give exactly one operation")
        op = ops[0]
        arg = spec.pop(op)
        if op in ("savepoint", "rollback_to"):
            spec["name"] = arg
        elif op in ("commit", "rollback") and isinstance(arg, int):
            spec["session"] = arg
        elif op == "sleep":
            spec["wait"] = float(arg)
        elif op == "create_table" and isinstance(arg, dict):
            spec["definition"] = arg
        elif arg is not None and op not in ("switch",):
            spec["table"] = arg
        spec["op"] = op
    if spec["op"] not in OPS:
        raise ConfigError(f"unknown timeline operation {spec['op']!r}")
    if "s" in spec:
        spec["session"] = spec.pop("s")
    if "t" in spec:
        spec["thread"] = spec.pop("t")
    return Event(**spec)
