"""The job's own state after each batch: table schemas, applied SCN, buffered events.

Kept in the lake as a one-row Delta table (``<lake>/_replicator/state``), replaced by
every batch in one commit that carries the batch's application transaction. It is the
last commit of a batch: a batch whose state commit is there is done, and a batch replayed
after a crash reads the state the batch before it left (the commits it had made are skipped
by their own application transactions). The events kept for the next batch (the rest of
their transaction has not arrived) are Arrow IPC files the executors wrote; the state names them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from replicator.spark.tableschema import TableSchema

FORMAT_VERSION = 3


@dataclass(slots=True)
class JobState:
    """State after the last committed batch (an empty one before the first batch)."""

    batch: int = -1
    query_id: str = ""
    applied_scn: int = 0  # highest commit SCN applied
    applied_ts: float | None = None  # its commit time (epoch seconds) when known
    tables: dict[str, TableSchema] = field(default_factory=dict)
    pending_files: list[str] = field(default_factory=list)  # under <lake>/_replicator/pending
    pending_rows: int = 0  # events in those files
    pending_scns: tuple[int, int] | None = None  # their lowest and highest commit SCN

    def to_json(self) -> str:
        """The state as the lake keeps it."""
        return json.dumps(
            {
                "format": FORMAT_VERSION,
                "batch": self.batch,
                "query_id": self.query_id,
                "applied_scn": self.applied_scn,
                "applied_ts": self.applied_ts,
                "tables": {n: s.to_dict() for n, s in sorted(self.tables.items())},
                "pending_files": self.pending_files,
                "pending_rows": self.pending_rows,
                "pending_scns": list(self.pending_scns) if self.pending_scns else None,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> JobState:
        """Parse; ValueError on an unknown format version."""
        doc = json.loads(text)
        if doc.get("format") != FORMAT_VERSION:
            raise ValueError(f"state format {doc.get('format')} is not {FORMAT_VERSION}")
        scns = doc.get("pending_scns")
        return cls(
            batch=doc["batch"],
            query_id=doc["query_id"],
            applied_scn=doc["applied_scn"],
            applied_ts=doc["applied_ts"],
            tables={n: TableSchema.from_dict(t) for n, t in doc["tables"].items()},
            pending_files=list(doc.get("pending_files") or []),
            pending_rows=int(doc.get("pending_rows") or 0),
            pending_scns=(int(scns[0]), int(scns[1])) if scns else None,
        )
