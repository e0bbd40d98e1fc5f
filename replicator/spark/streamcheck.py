"""The job's continuous check of the producer's checkpoint digests (format.checkpoint-digests).

With the option on (``--olr-config`` whose format has ``checkpoint-digests: 1``), the
executors digest every change and keep every checkpoint's payload element as they parse the
messages (:mod:`.parse`, with formats.olr_digest); the driver hands each batch's events, in
stream order, to the same :class:`~replicator.formats.olr_digest.StreamVerifier` that
``replicator client --verify`` uses, before the batch commits anything. A checkpoint whose
counts and digests (in total and per table) differ from what the job received since the
previous one stops the job with error 20101 instead of committing a wrong table.

Stream order is the order of one Kafka partition: on a topic of several partitions the
messages of a segment spread over them with no order between them, so the check is off
there (a warning says so, and the batch metrics' ``stream_check`` tells).
Events buffered from the batch before (the rest of their transaction had not arrived) come
again with their offsets: what the check took already (offset at or below the partition's
last one) is not taken twice. After a restart of the job the first checkpoint synchronises.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from replicator.formats.olr_digest import (
    KIND_DDL,
    KIND_ROW,
    KIND_TXN,
    MASK64,
    Change,
    ChangeId,
    StreamVerifier,
)
from replicator.spark.tableschema import split_table_name

log = logging.getLogger("replicator.spark")
STREAM_CHECK_FAILED = 20101  # errors.CATALOGUE
_KINDS = {"begin": KIND_TXN, "commit": KIND_TXN, "dml": KIND_ROW, "ddl": KIND_DDL}
_COLUMNS = ("kind", "tbl", "c_scn", "c_idx", "elem", "xid", "digest", "check", "k_partition", "k_offset")


class StreamCheck:
    """Checkpoint digests checked batch by batch (one per query, on the driver)."""

    def __init__(self) -> None:
        self.verifier = StreamVerifier()
        self._done: dict[int, int] = {}  # partition -> highest offset taken
        self.partitions: set[int] = set()
        self.state = "on"  # on | off: N partitions

    def take(self, events: Any) -> int:
        """The batch's projected events (Arrow); the checkpoints verified. Raises
        formats.olr_digest.StreamCheckFailed on a segment that does not match."""
        if self.state != "on" or not events.num_rows:
            return 0
        ev = events.select(list(_COLUMNS)).to_pydict()
        parts, offsets = ev["k_partition"], ev["k_offset"]
        self.partitions.update(p for p in parts if p is not None)
        if len(self.partitions) > 1:
            self.state = f"off: {len(self.partitions)} partitions"
            log.warning(
                "checkpoint digests are not checked: the topic has %d partitions, stream order is kept only "
                "within one (a single-partition topic lets the job check them)",
                len(self.partitions),
            )
            return 0
        order = sorted(
            range(len(parts)),
            key=lambda i: (parts[i] or 0, offsets[i] if offsets[i] is not None else -1, ev["elem"][i] or 0),
        )
        before = self.verifier.checked
        done = dict(self._done)
        for i in order:
            part, offset = parts[i] or 0, offsets[i]
            if offset is not None and offset <= self._done.get(part, -1):
                continue  # taken with an earlier batch (a pending event)
            if offset is not None and offset > done.get(part, -1):
                done[part] = offset
            kind = ev["kind"][i]
            if kind == "chkpt" and ev["check"][i] is not None:
                self.verifier.checkpoint(json.loads(ev["check"][i]), ev["c_scn"][i], ev["c_idx"][i])
            elif kind in _KINDS and ev["digest"][i] is not None:
                owner, table = ("", "") if kind in ("begin", "commit") else split_table_name(ev["tbl"][i] or "")
                cid = ChangeId(int(ev["c_scn"][i]), int(ev["c_idx"][i]), int(ev["elem"][i] or 0), ev["xid"][i] or "")
                self.verifier.change(Change(cid, owner, table, _KINDS[kind], ev["digest"][i] & MASK64))
        self._done = done
        return self.verifier.checked - before
