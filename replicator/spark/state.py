"""The job's own state after each batch: table schemas, applied SCN, buffered events.

Kept in the lake as a one-row Delta table (``<lake>/_replicator/state``), replaced by
every batch in one commit that carries the batch's application transaction. It is the
last commit of a batch: a batch whose state commit is there is done, and a batch replayed
after a crash reads the state the batch before it left (tables it had already merged are
skipped by their own application transactions).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any

from replicator.spark.tableschema import TableSchema

FORMAT_VERSION = 2


@dataclass(slots=True)
class JobState:
    """State after the last committed batch (an empty one before the first batch)."""

    batch: int = -1
    query_id: str = ""
    applied_scn: int = 0  # highest commit SCN applied
    applied_ts: float | None = None  # its commit time (epoch seconds) when known
    tables: dict[str, TableSchema] = field(default_factory=dict)
    pending: Any = None  # pyarrow Table of buffered events (None = nothing buffered)

    def to_json(self) -> str:
        """The state without the buffered events."""
        return json.dumps({"format": FORMAT_VERSION, "batch": self.batch, "query_id": self.query_id,
                           "applied_scn": self.applied_scn, "applied_ts": self.applied_ts,
                           "tables": {n: s.to_dict() for n, s in sorted(self.tables.items())}}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, pending: Any = None) -> JobState:
        """Parse; ValueError on an unknown format version."""
        doc = json.loads(text)
        if doc.get("format") != FORMAT_VERSION:
            raise ValueError(f"state format {doc.get('format')} is not {FORMAT_VERSION}")
        return cls(batch=doc["batch"], query_id=doc["query_id"], applied_scn=doc["applied_scn"],
                   applied_ts=doc["applied_ts"],
                   tables={n: TableSchema.from_dict(t) for n, t in doc["tables"].items()}, pending=pending)

    @property
    def pending_rows(self) -> int:
        """Buffered events."""
        return 0 if self.pending is None else self.pending.num_rows


def to_ipc(table: Any) -> bytes:
    """A pyarrow Table as Arrow IPC stream bytes."""
    import pyarrow as pa

    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def from_ipc(data: bytes) -> Any:
    """The inverse of :func:`to_ipc`."""
    import pyarrow as pa

    return pa.ipc.open_stream(data).read_all()
