"""The snapshot manifest: everything one committed batch left behind, in one JSON file.

The parquet store commits a batch by making ``<lake>/tables`` point at a new snapshot
directory holding ``manifest.json`` (this structure) and one symlink per table bucket.
Because the manifest travels with the snapshot, table data, table schemas, the buffer of
incomplete transactions and the batch id all change in the same atomic step.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replicator.spark.tableschema import TableSchema

FORMAT_VERSION = 1


@dataclass(slots=True)
class TableEntry:
    """A table in a snapshot: its schema and the data version of each bucket."""

    schema: TableSchema
    buckets: dict[int, str] = field(default_factory=dict)  # bucket -> version directory name


@dataclass(slots=True)
class Manifest:
    """State after the last committed batch (an empty one before the first batch)."""

    batch: int = -1
    query_id: str = ""
    snapshot: str = ""
    buckets: int = 0  # hash buckets per table; fixed when the lake is created
    tables: dict[str, TableEntry] = field(default_factory=dict)
    pending: str | None = None  # version directory of buffered incomplete transactions
    changelog_staging: str | None = None  # change log files still to be moved into place
    applied_scn: int = 0  # highest commit SCN applied
    applied_ts: float | None = None  # its commit time (epoch seconds) when known

    def to_json(self) -> str:
        """Serialized form."""
        doc: dict[str, Any] = {
            "format": FORMAT_VERSION, "batch": self.batch, "query_id": self.query_id, "snapshot": self.snapshot,
            "buckets": self.buckets, "pending": self.pending, "changelog_staging": self.changelog_staging,
            "applied_scn": self.applied_scn, "applied_ts": self.applied_ts,
            "tables": {name: {"schema": e.schema.to_dict(), "buckets": {str(b): v for b, v in e.buckets.items()}}
                       for name, e in sorted(self.tables.items())},
        }
        return json.dumps(doc, indent=1, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        """Parse; raises ValueError on an unknown format version."""
        doc = json.loads(text)
        if doc.get("format") != FORMAT_VERSION:
            raise ValueError(f"manifest format {doc.get('format')} is not {FORMAT_VERSION}")
        tables = {name: TableEntry(TableSchema.from_dict(t["schema"]), {int(b): v for b, v in t["buckets"].items()})
                  for name, t in doc["tables"].items()}
        return cls(batch=doc["batch"], query_id=doc["query_id"], snapshot=doc["snapshot"], buckets=doc["buckets"],
                   tables=tables, pending=doc["pending"], changelog_staging=doc["changelog_staging"],
                   applied_scn=doc["applied_scn"], applied_ts=doc["applied_ts"])

    def versions(self) -> set[str]:
        """Every data version this snapshot references (for garbage collection)."""
        out = {v for e in self.tables.values() for v in e.buckets.values()}
        if self.pending:
            out.add(self.pending)
        return out


def write_atomic(path: Path, text: str) -> None:
    """Write a file so readers see the old or the new content, never a part: temp, fsync, rename."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def swap_symlink(link: Path, target: str) -> None:
    """Point ``link`` at ``target`` atomically (rename of a new link over the old one)."""
    tmp = link.with_name(f".{link.name}.tmp{os.getpid()}")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(target, tmp)
    os.replace(tmp, link)
    fd = os.open(link.parent, os.O_RDONLY)
    try:  # make the rename durable before anything depends on it
        os.fsync(fd)
    finally:
        os.close(fd)
