"""The simulated database: runs a scenario timeline and writes its redo.

:class:`RedoGenerator` keeps the table contents, row locks, open transactions and their
savepoints. Each DML becomes undo/redo pairs (:mod:`.dml`) written as records
(:mod:`.emit`) to the redo stream (:mod:`.writer`). Alongside, it records what
OpenLogReplicator should output for every committed transaction (:class:`~replicator.redogen.txnstate.ExpectedRow`),
derived from the very bytes it wrote, never from a parser.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replicator import events as ev
from replicator.errors import ConfigError
from replicator.redogen.coltypes import ColumnType, encode_value, make_column, parse_type
from replicator.redogen.ddl import DDL_OPS, Catalog
from replicator.redogen.emit import Emitter, TxnRedo
from replicator.redogen.encode import can_encode
from replicator.redogen.ids import Xid
from replicator.redogen.lobvalues import LobData
from replicator.redogen.rows import TableState
from replicator.redogen.scenario import Event, Scenario, SessionSpec
from replicator.redogen.txnstate import Txn
from replicator.redogen.undo import UndoSpace
from replicator.redogen.writer import ArchivedLog, RedoStream, SinkFactory
from replicator.values.charset import CHARSET_IDS

if TYPE_CHECKING:
    from replicator.redogen.dmlops import DmlOps


@dataclass(slots=True)
class Generated:
    """What a run produced: the log files and the committed transactions in commit order."""

    logs: list[ArchivedLog]
    committed: list[Txn]
    tables: list[TableState]
    stats: dict[str, int]
    catalog: Any = None  # ddl.Catalog: the dictionary rows (its `initial` ones go into the checkpoint)
    catalogs: dict[str, Any] = field(default_factory=dict)  # multitenant: each container's Catalog


class RedoGenerator:
    """Runs a :class:`Scenario` into redo files in ``out_dir``."""

    def __init__(self, sc: Scenario, out_dir: Path, *, keep_expected: bool = True, sink: SinkFactory | None = None):
        from replicator.redogen import dmlops

        self.sc = sc
        self.keep = keep_expected
        self.charsets = (_charset_id(sc.nls_charset), _charset_id(sc.nls_ncharset))
        v23 = sc.compat >= 0x17000000
        undo_afn, undo_rfile, data_rfile = (23, 0, 24) if v23 else (4, 4, 7)
        sc.check_containers()  # the version may have been set after loading
        self.tables = self._build_tables(data_rfile)
        con_uid = (0x5295F656 if sc.is_cdb else 0) if sc.compat >= 0x0C100000 else 0
        if sc.containers:
            con_uid = sc.containers[0].effective_con_uid
        self.cluster = None
        if sc.threads > 1:  # RAC: one redo thread per instance (cluster.py)
            from replicator.redogen.cluster import ClusterStream

            self.cluster = ClusterStream(sc, out_dir, con_uid, sink)
        self.stream = self.cluster or RedoStream(sc, out_dir, con_uid, sink)
        self.undo = UndoSpace(undo_rfile, undo_afn)
        # Multitenant: each container's own undo (local undo). Their slot sequences start apart,
        # so XIDs differ across containers unless a scenario gives the same ``xid`` in two
        # (possible in Oracle; OLR 1.9 stalls on it: its swap memory is keyed by XID alone).
        self.undos = {
            c.con_id: UndoSpace(undo_rfile, undo_afn, sqn_base=0x230 + 0x10000 * i) for i, c in enumerate(sc.containers)
        }
        self.emit = Emitter(sc, self.stream, self.undo, data_rfile)
        self.emit.undos = self.undos
        self.sessions = {s.id: s for s in sc.sessions}
        self.txns: dict[int, Txn] = {}
        self.pending_savepoints: dict[int, dict[str, int]] = {}
        self.committed: list[Txn] = []
        self.column_format = int(sc.format.get("column", 0))
        # Committed transactions with row changes and their rows (what the output holds: open
        # transactions at the end and rolled-back changes are not in it), rollbacks, events.
        self.stats = {"transactions": 0, "rollbacks": 0, "rows": 0, "events": 0}
        self.ops = dmlops.DmlOps(self)
        self._clock = float(sc.start_epoch)
        self._tz = self._db_tz_minutes()
        self._encoded: dict[tuple, bytes | None] = {}
        # The SYS dictionary rows; DDL operations. Multitenant: one dictionary per container.
        self.catalogs = {c.name: Catalog(ContainerView(self, c.name)) for c in sc.containers}
        self.catalog = next(iter(self.catalogs.values())) if self.catalogs else Catalog(self)
        self._preload()

    # -- setup ---------------------------------------------------------------------------
    def _build_tables(self, rfile: int) -> list[TableState]:
        sc = self.sc
        out: list[TableState] = []
        next_obj = 72726
        next_in: dict[str, int] = {}  # multitenant: OBJ# numbering per container
        span = 0x3F0000 // max(1, len(sc.tables))
        limit = 4096 if sc.compat >= 0x17000000 else 1000
        for i, spec in enumerate(sc.tables):
            if not spec.columns or len(spec.columns) > limit:
                raise ConfigError(f"table {spec.full_name}: 1..{limit} columns expected")
            names = [c.name for c in spec.columns]
            if len(set(names)) != len(names):
                raise ConfigError(f"table {spec.full_name}: duplicate column names")
            missing = set(spec.primary_key) - set(names)
            if missing:
                raise ConfigError(f"table {spec.full_name}: primary key columns {sorted(missing)} do not exist")
            container = sc.container_of(spec)
            if container is not None:
                spec.container = container.name
                next_obj = next_in.get(container.name, 72726)
            if not spec.obj:
                spec.obj = next_obj
            spec.data_obj = spec.data_obj or spec.obj
            next_obj = max(next_obj, spec.obj) + 2  # leave room for the primary key index object
            if container is not None:
                next_in[container.name] = next_obj
            ctypes: list[ColumnType] = []
            cols: list[ev.Column] = []
            for n, c in enumerate(spec.columns):
                ct = parse_type(c.type)
                if ct.type_code == ev.TYPE_BOOLEAN and sc.compat < 0x17000000:
                    raise ConfigError(f"{spec.full_name}.{c.name}: BOOLEAN needs a 23 database")
                key = c.name in spec.primary_key
                if key:
                    c.nullable = False
                ctypes.append(ct)
                cols.append(
                    make_column(c.name, ct, nullable=c.nullable, segcol=n + 1, key=key, charset_ids=self.charsets)
                )
            table = ev.Table(
                obj=spec.obj,
                data_obj=spec.data_obj,
                owner=spec.owner,
                name=spec.name,
                columns=cols,
                key_columns=tuple(names.index(k) for k in spec.primary_key),
                charset=sc.nls_charset,
                ncharset=sc.nls_ncharset,
            )
            out.append(TableState(spec, ctypes, table, rfile, 0x100 + i * span, sc.db_block_size - 200))
        return out

    def _preload(self) -> None:
        """The scenario's ``preload`` rows: in their blocks before the first redo record, no redo."""
        for item in self.sc.preload:
            ts = self.table(item.get("table"))
            values = self.encode_row(ts, item.get("values") or {})
            if any(isinstance(v, LobData) for v in values):
                values = self.ops.lobs.preload(ts, values)  # in-row locators, no redo
            key = ts.row_key(values)
            if key in ts.rows:
                raise ConfigError(f"{ts.spec.full_name}: duplicate primary key {key} in preload")
            ts.rows[key] = ts.place(values)

    def table(self, name: str | None) -> TableState:
        """A table by NAME or OWNER.NAME; in a multitenant scenario also ``PDB/NAME`` (two
        containers may hold tables of the same name)."""
        container = ""
        if name and "/" in name and self.sc.containers:
            container, name = name.split("/", 1)
        for t in self.tables:
            if name in (t.spec.name, t.spec.full_name) and container in ("", t.spec.container):
                return t
        raise ConfigError(f"scenario has no table {name!r}" + (f" in {container}" if container else ""))

    def tables_of(self, container: str) -> list[TableState]:
        """The tables of one container (all of them in a scenario without containers)."""
        return [t for t in self.tables if not self.sc.containers or t.spec.container == container]

    def undo_of(self, tx: TxnRedo) -> UndoSpace:
        """The undo space a transaction's slot belongs to (its container's, or the database's)."""
        return self.undos.get(tx.con_id, self.undo)

    def session(self, sid: int) -> SessionSpec:
        """Session attributes (defaults derived from the id)."""
        s = self.sessions.get(sid)
        if s is None:
            owner = self.tables[0].spec.owner if self.tables else "SYSTEM"
            s = self.sessions[sid] = SessionSpec(sid, owner, (30 + sid) & 0xFFFF, 7919 * sid % 65000 + 1, 30000 + sid)
        return s

    def encode_row(
        self, ts: TableState, values: dict[str, object], base: list[bytes | None] | None = None
    ) -> list[bytes | None]:
        """Column values of a row (missing columns NULL, or kept from ``base``)."""
        index = ts.column_index
        out: list[bytes | None] = list(base) if base is not None else [None] * len(index)
        cache = self._encoded
        for name, value in values.items():
            i = index.get(name)
            if i is None:
                raise ConfigError(f"table {ts.spec.full_name} has no column {name!r}")
            ctype = ts.ctypes[i]
            try:  # workloads repeat values; encoding is the generator's hottest path
                out[i] = cache[(ctype, type(value), value)]
            except (KeyError, TypeError):
                out[i] = encode_value(ctype, value, self.charsets, self._tz)
                if len(cache) > 200_000:
                    cache.clear()
                try:
                    cache[(ctype, type(value), value)] = out[i]
                except TypeError:
                    pass
        for i, c in enumerate(ts.spec.columns):
            if out[i] is None and not c.nullable:
                raise ConfigError(f"{ts.spec.full_name}.{c.name} cannot be NULL")
        return out

    def _db_tz_minutes(self) -> int:
        text = self.sc.db_timezone
        sign = -1 if text.startswith("-") else 1
        hh, mm = text.lstrip("+-").split(":")
        return sign * (int(hh) * 60 + int(mm))

    # -- transactions ----------------------------------------------------------------------
    def txn(self, sid: int, xid: str | None = None, ts: TableState | None = None, in_container: str = "") -> Txn:
        """The session's open transaction, started on first use (with ``xid`` when given).

        In a multitenant scenario the transaction belongs to the container of ``ts``, the
        table its first change is on (or ``in_container``: a DDL's recursive transaction);
        Oracle refuses a change in another container while one is open (ORA-65023), and so
        does this."""
        container = self.sc.container_of(ts.spec) if ts is not None else None
        if container is None and in_container:
            container = next(c for c in self.sc.containers if c.name == in_container)
        t = self.txns.get(sid)
        if t is None:
            s = self.session(sid)
            con_id = container.con_id if container is not None else -1
            undo = self.undos.get(con_id, self.undo)
            if xid:
                usn, slot, sqn = (int(x, 16) if x.lower().startswith("0x") else int(x) for x in xid.split("."))
                chosen = undo.claim(Xid(usn, slot, sqn))
            else:
                chosen = undo.begin()
            redo = TxnRedo(chosen, s, user_id=136 + sid)
            if container is not None:
                redo.con_id, redo.con_uid, redo.container = con_id, container.effective_con_uid, container.name
            t = Txn(redo)
            t.savepoints.update(self.pending_savepoints.pop(sid, {}))
            self.txns[sid] = t
        elif container is not None and t.redo.con_id != container.con_id:
            what = ts.spec.full_name if ts is not None else "the dictionary"
            raise ConfigError(
                f"session {sid}: a transaction open in {t.redo.container} cannot change {what} "
                f"of {container.name} (ORA-65023)"
            )
        return t

    def run(self, close: bool = True) -> Generated:
        """Play the whole timeline; returns the logs and the committed transactions.

        With ``close`` false the last log is left current (flushed, not switched).
        """
        limit = self.sc.max_redo_bytes
        for event in self.sc.timeline:
            self.step(event)
            if limit and self.stream.bytes_written >= limit:
                break
        # Transactions still open stay open: their redo ends without a 5.4, as in a live database.
        if self.cluster is not None:
            self.stats["thread_moves"] = self.cluster.moves
            self.stats["heartbeats"] = self.cluster.heartbeats
        if close:
            logs = self.stream.close()
        else:
            self.stream.flush_lwn()
            logs = self.stream.logs
        return Generated(logs, self.committed, self.tables, self.stats, self.catalog, self.catalogs)

    def step(self, e: Event) -> None:
        """Apply one timeline event."""
        self.stats["events"] += 1
        if e.wait:
            self._clock += e.wait
            self.emit.epoch = int(self._clock)
        if self.cluster is not None:
            self.cluster.select(e, self.session(e.session).thread, e.session in self.txns)
        catalog = self.catalog
        if e.op in DDL_OPS and self.sc.containers:
            # A DDL on an existing table, in that table's container (its dictionary, its redo).
            if e.op in ("create_table", "add_partition", "drop_partition", "exchange_partition"):
                raise ConfigError(f"{e.op}: not generated in a multitenant scenario (DDL on existing tables only)")
            name = self.table(e.table).spec.container
            catalog = self.catalogs[name]
        handler = getattr(catalog if e.op in DDL_OPS else self.ops, e.op)
        handler(e)


class ContainerView:
    """What a container's :class:`~replicator.redogen.ddl.Catalog` sees of the engine: the
    scenario, the character sets and only that container's tables (its own OBJ# space)."""

    def __init__(self, engine: RedoGenerator, container: str):
        self.sc = engine.sc
        self.charsets = engine.charsets
        self.container = container
        self.tables = _ContainerTables(engine, engine.tables_of(container))
        if any(t.spec.partitions for t in self.tables):
            raise ConfigError(f"{container}: partitioned tables are not generated in a multitenant scenario")
        self.encode_row = engine.encode_row
        self._engine = engine

    # A DDL's recursive transaction (Catalog): the engine's, in this container.
    @property
    def emit(self) -> Emitter:
        return self._engine.emit

    @property
    def ops(self) -> DmlOps:
        return self._engine.ops

    @property
    def txns(self) -> dict[int, Txn]:
        return self._engine.txns

    def table(self, name: str | None) -> TableState:
        """A table of this container by NAME, OWNER.NAME or PDB/NAME."""
        return self._engine.table(name if name and "/" in name else f"{self.container}/{name}")

    def txn(self, sid: int, xid: str | None = None) -> Txn:
        return self._engine.txn(sid, xid, in_container=self.container)


class _ContainerTables(list):  # type: ignore[type-arg]
    """A container's tables; a DDL's new version of one replaces it in the engine's list too."""

    def __init__(self, engine: RedoGenerator, tables: list[TableState]):
        super().__init__(tables)
        self._all = engine.tables

    def __setitem__(self, index: Any, value: Any) -> None:
        self._all[self._all.index(self[index])] = value
        super().__setitem__(index, value)

    def remove(self, value: Any) -> None:
        self._all.remove(value)
        super().remove(value)


def _charset_id(name: str) -> int:
    """The id of a character set redogen can write text in (error 10042 otherwise)."""
    cid = CHARSET_IDS.get(name.upper())
    if cid is None or not can_encode(cid):
        raise ConfigError(f"character set {name!r} is not supported by redogen", 10042)
    return cid
