"""Plain counters the hot loop bumps; :class:`replicator.ops.metrics.Metrics` publishes them.

The parser loop must not pay for Prometheus (a lock and a label lookup per call), so it
only adds to ints and dict entries here. Every field is *cumulative* since the tally was
made; :meth:`Metrics.publish <replicator.ops.metrics.Metrics.publish>` turns them into counter
increments by remembering what it already published. Nothing is ever reset, so a scrape
never sees a counter go backwards and a publish can run at any time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from replicator.events import DdlChange, RowChange, Transaction

# RowChange.op -> the `type` label OLR uses for dml_ops.
OP_TYPES = {"c": "insert", "u": "update", "d": "delete"}
DDL_TYPES = ("alter", "create", "drop", "purge", "truncate", "other")
TAG_NAMES = ("none", "filter", "sys", "all")

# A dml_ops key: (type, filter, owner, table); owner/table are "" unless tag-names asks.
DmlKey = tuple[str, str, str, str]


def ddl_type(sql: str) -> str:
    """The ``ddl_ops`` type of a statement: its first keyword, or ``other``."""
    word = sql.lstrip().split(None, 1)[0].lower() if sql.strip() else ""
    return word if word in DDL_TYPES else "other"


@dataclass
class Tally:
    """Cumulative counters of one run, updated without locks by the thread that parses.

    ``tag_names`` is ``metrics.tag-names``: with ``filter`` the owner and table of user
    tables are kept per DML key, with ``sys`` those of SYS dictionary tables, with ``all``
    both (olr-interfaces.md §7). Readers of the fields (the publisher) tolerate a value
    being one update behind; ints and dict entries are replaced atomically in CPython.
    """

    tag_names: str = "none"
    bytes_read: int = 0
    bytes_parsed: int = 0
    checkpoints_out: int = 0
    checkpoints_skip: int = 0
    rows: int = 0
    dml: dict[DmlKey, int] = field(default_factory=dict)
    ddl: dict[str, int] = field(default_factory=dict)
    transactions: dict[tuple[str, str], int] = field(default_factory=dict)  # (type, filter)
    log_switches: dict[str, int] = field(default_factory=dict)  # online|archived
    log_switch_lag: dict[str, float] = field(default_factory=dict)  # seconds, last switch
    redo_time: float = 0.0  # epoch seconds of the redo of the LWN just read
    scn: int = 0  # SCN of the LWN just read
    sequence: int = 0
    # RAC: thread -> (sequence, SCN, redo time in epoch seconds) of its last LWN analysed
    threads: dict[int, tuple[int, int, float]] = field(default_factory=dict)

    def _names(self, change: RowChange) -> tuple[str, str]:
        table = change.table
        if self.tag_names == "none" or table is None:
            return "", ""
        wanted = ("sys", "all") if table.system else ("filter", "all")
        return (table.owner, table.name) if self.tag_names in wanted else ("", "")

    def transaction(self, txn: Transaction) -> None:
        """Count one committed transaction that was output, with its rows and DDL."""
        for change in txn.changes:
            self.change(change)
        self.count_transaction("commit", "out")

    def change(self, change: RowChange | DdlChange) -> None:
        """Count one output row or DDL (streamed transactions are counted change by change)."""
        if isinstance(change, RowChange):
            owner, table = self._names(change)
            key = (OP_TYPES.get(change.op, change.op), "out", owner, table)
            self.dml[key] = self.dml.get(key, 0) + 1
            self.rows += 1
        else:
            kind = ddl_type(change.sql)
            self.ddl[kind] = self.ddl.get(kind, 0) + 1

    def count_transaction(self, kind: str, filter_: str) -> None:
        """Count a transaction end: kind commit|rollback, filter out|partial|skip."""
        key = (kind, filter_)
        self.transactions[key] = self.transactions.get(key, 0) + 1

    def row_skipped(self, op: str, change: RowChange | None = None) -> None:
        """Count a DML row dropped by a filter ``condition`` (``filter=skip``)."""
        owner, table = self._names(change) if change is not None else ("", "")
        key = (OP_TYPES.get(op, op), "skip", owner, table)
        self.dml[key] = self.dml.get(key, 0) + 1

    def lwns_read(self, size: int, scn: int, sequence: int, redo_time: float, checkpoints: int = 1) -> None:
        """Count LWNs read and parsed: ``size`` bytes, the last one's SCN, sequence and redo time."""
        self.bytes_read += size
        self.bytes_parsed += size
        self.scn, self.sequence, self.redo_time = scn, sequence, redo_time
        self.checkpoints_out += checkpoints

    def log_switch(self, kind: str, lag_seconds: float) -> None:
        """Count a redo log switch (``online`` or ``archived``) and its processing lag."""
        self.log_switches[kind] = self.log_switches.get(kind, 0) + 1
        self.log_switch_lag[kind] = lag_seconds
