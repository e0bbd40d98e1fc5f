"""The lake's view of one source table: columns, key, and schema changes.

A :class:`TableSchema` lives in the job state (:mod:`.state`). Columns are merged from the
``schema.columns`` lists messages carry (new names are appended) and changed by DDL
(:mod:`.ddl`). Current-state rows also hold metadata columns, named with a leading
underscore (Oracle names cannot start with one unless quoted):

``_rowid`` (the identity of a table keyed by ROWID; other tables are identified by their
typed key columns), ``_commit_scn``, ``_c_scn``, ``_c_idx``, ``_elem`` (together the
position that orders changes), ``_op`` (last change), ``_xid``, ``_commit_ts``, and the
partition column ``_bucket`` (:mod:`.layout`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Final

POSITION: Final = ("_commit_scn", "_c_scn", "_c_idx", "_elem")
ROWID: Final = "_rowid"  # the key column of a table keyed by ROWID
BUCKET: Final = "_bucket"  # the partition column of current-state and tombstone tables
METADATA: Final[tuple[tuple[str, str], ...]] = (
    ("_commit_scn", "bigint"),
    ("_c_scn", "bigint"),
    ("_c_idx", "bigint"),
    ("_elem", "int"),
    ("_op", "string"),
    ("_xid", "string"),
    ("_commit_ts", "timestamp"),
)


def table_name(owner: str | None, table: Any) -> str:
    """A source table as the job names it: ``OWNER.TABLE`` (the table alone without an owner)."""
    return f"{owner}.{table}" if owner else str(table)


def split_table_name(name: str) -> tuple[str, str]:
    """(owner, table) of a name of :func:`table_name` (the first dot separates them)."""
    owner, dot, table = name.partition(".")
    return (owner, table) if dot else ("", name)


@dataclass(slots=True)
class TableSchema:
    """Columns (OLR column specs), key columns (None = ROWID) and schema history of a table."""

    name: str
    columns: list[dict[str, Any]] = field(default_factory=list)
    key: list[str] | None = None
    key_origin: str = ""
    typed: bool = True  # False when columns are only known from value names (format.schema 0): text
    truncated_at: list[int] | None = None  # position of the last TRUNCATE: older changes never apply
    ddl_at: list[int] | None = None  # position of the last DDL applied: replayed DDL and older column lists skip
    version: int = 0  # bumped on every change, so a batch knows the layout of stored files
    buckets: int = 0  # _bucket partitions of the current-state table (set when it is created)
    mode: str = ""  # copy-on-write | merge-on-read (set when it is created)

    @property
    def merge_on_read(self) -> bool:
        """True when batches append records that readers and compaction merge (:mod:`.mor`)."""
        return self.mode == "merge-on-read"

    @property
    def key_names(self) -> list[str]:
        """The columns that identify a stored row: the key columns, or ``_rowid``."""
        return list(self.key) if self.key is not None else [ROWID]

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> TableSchema:
        """From the state JSON."""
        return cls(**doc)

    def to_dict(self) -> dict[str, Any]:
        """For the state JSON."""
        return asdict(self)

    def copy(self) -> TableSchema:
        """An independent copy (the batch edits a copy, the state keeps the old one)."""
        return TableSchema.from_dict({**self.to_dict(), "columns": [dict(c) for c in self.columns]})

    @property
    def names(self) -> list[str]:
        """Column names in order."""
        return [c["name"] for c in self.columns]

    def merge_columns(self, specs: list[dict[str, Any]]) -> list[str]:
        """Append columns not known yet (types of known ones never change). Returns added names."""
        known = set(self.names)
        added: list[str] = []
        for spec in specs:
            if spec["name"] not in known:
                self.columns.append(dict(spec))
                known.add(spec["name"])
                added.append(spec["name"])
        if added:
            self.version += 1
        return added

    def drop(self, name: str) -> bool:
        """Remove a column; False when it is unknown."""
        before = len(self.columns)
        self.columns = [c for c in self.columns if c["name"] != name]
        if len(self.columns) != before:
            self.version += 1
            return True
        return False

    def rename(self, old: str, new: str) -> bool:
        """Rename a column; False when it is unknown."""
        for c in self.columns:
            if c["name"] == old:
                c["name"] = new
                self.version += 1
                return True
        return False
