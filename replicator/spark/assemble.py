"""Whole transactions only, in commit order: which events of a batch may be applied.

The replicator writes a transaction as begin, its row messages and commit, with
consecutive ``c_idx``. On a topic with several partitions those messages can land in
different partitions and so in different micro-batches. A transaction is *complete*
when its begin and commit are here and so are the ``c_idx_commit - c_idx_begin - 1``
messages between them (FULL mode messages and Debezium events are complete by
themselves).

Complete transactions are applied only when they commit before every incomplete one
(the *watermark*): rows of one key stay in one partition, in order, so holding back
later transactions is what keeps changes of a key in commit order. Everything not
applied is kept for the next batch (the *pending* buffer, part of the job state).

An incomplete transaction that commits at or below the highest SCN already applied is
checked against the change log: when that transaction was applied, the group is the
leftover of a producer replay and is dropped at once. Other incomplete groups below the
applied SCN are dropped after ``pending_timeout`` seconds, so nothing blocks for ever.

Runs on the driver over the batch's events as one Arrow table (a Python pass over a few
columns, then Arrow filters).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

BODY = frozenset({"begin", "commit", "dml", "ddl"})
SORT = [("commit_scn", "ascending"), ("c_scn", "ascending"), ("c_idx", "ascending"), ("elem", "ascending")]


@dataclass(slots=True)
class Decision:
    """What the driver decided about a batch's transactions, applied to any part of its events
    (the executors apply it to the events they hold)."""

    watermark: int | None  # events committing at or after it wait (None: nothing blocks)
    dropped: list[str]  # "commit_scn:xid" of the transactions dropped (replay leftovers, expired)
    now: datetime  # the batch's time: first-seen time of events kept for the next batch
    replayed: list[str] = field(default_factory=list)  # "table:commit_scn:c_scn:c_idx:elem" logged before

    def split(self, events: Any) -> tuple[Any, Any]:
        """(ready dml/ddl events in position order, events kept for the next batch or None)."""
        ready, held = self.masks(events)
        return events.filter(ready).sort_by(SORT), None if held is None else self.held(events, held)

    def masks(self, events: Any) -> tuple[Any, Any]:
        """(the ready dml/ddl events, the events kept for the next batch or None) as boolean masks
        of ``events`` (the executors take the rows they need with them, without copying the
        whole batch's images)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        kind = events["kind"]
        keep = (
            pa.array([True] * events.num_rows, pa.bool_())
            if not self.dropped
            else pc.invert(
                pc.is_in(
                    pc.binary_join_element_wise(
                        pc.cast(events["commit_scn"], pa.string()), pc.fill_null(events["xid"], ""), ":"
                    ),
                    pa.array(self.dropped, pa.string()),
                )
            )
        )
        keep = pc.fill_null(keep, True)
        if self.replayed:
            pos = [pc.cast(events[c], pa.string()) for c in ("commit_scn", "c_scn", "c_idx", "elem")]
            ident = pc.binary_join_element_wise(pc.fill_null(events["tbl"], ""), *pos, ":")
            keep = pc.and_(keep, pc.fill_null(pc.invert(pc.is_in(ident, pa.array(self.replayed, pa.string()))), True))
        early = (
            pa.array([True] * events.num_rows, pa.bool_())
            if self.watermark is None
            else pc.fill_null(pc.less(events["commit_scn"], self.watermark), False)
        )
        rows = pc.is_in(kind, pa.array(["dml", "ddl"]))
        ready = pc.and_(pc.and_(rows, early), keep)
        if self.watermark is None:
            return ready, None
        return ready, pc.and_(pc.and_(pc.is_in(kind, pa.array(sorted(BODY))), pc.invert(early)), keep)

    def held(self, events: Any, held: Any) -> Any:
        """The events kept for the next batch (``held``: their mask), first-seen time set."""
        import pyarrow as pa
        import pyarrow.compute as pc

        pending = events.filter(held)
        seen_col = pc.fill_null(pending["seen"], pa.scalar(self.now, pending.schema.field("seen").type))
        return pending.set_column(pending.schema.get_field_index("seen"), "seen", seen_col)


@dataclass(slots=True)
class Assembly:
    """The split of a batch and the counts the metrics report."""

    ready: Any  # pyarrow Table: dml/ddl events to apply now, in position order
    pending: Any  # pyarrow Table: events kept for the next batch (None when nothing waits)
    decision: Decision  # what made the split (the executors apply it to the events they hold)
    watermark: int | None = None  # commit SCN of the oldest blocking incomplete transaction
    incomplete: int = 0
    dropped: int = 0
    dropped_replays: int = 0  # of ``dropped``: leftovers of transactions the change log holds
    messages: int = 0
    max_seen_scn: int = 0
    error: str | None = None
    blocking: list[tuple[int, str | None]] = field(default_factory=list)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def assemble(
    events: Any,
    *,
    atomic: bool,
    applied_scn: int,
    pending_timeout: float,
    was_applied: Callable[[set[tuple[int, str | None]]], set[tuple[int, str | None]]],
) -> Assembly:
    """Decide which transactions to apply now, keep, or drop."""

    import pyarrow as pa

    now = datetime.now(UTC)
    now_us = (now - _EPOCH) // timedelta(microseconds=1)
    d = events.select(["kind", "fmt", "commit_scn", "xid", "c_idx", "elem", "full", "error"]).to_pydict()
    # First-seen times as UTC microseconds: a datetime per held-back event cost ~5 us each (a
    # batch after one that held most of its events back spent a second on them).
    d["seen"] = events["seen"].cast(pa.int64()).to_pylist()
    asm = Assembly(None, None, Decision(None, [], now))  # the decision is made below
    txns: dict[tuple[int, str | None], list[Any]] = {}  # [begin idx, commit idx, row idxs, whole, oldest seen (us)]
    for kind, fmt, scn, xid, idx, elem, full, seen, error in zip(
        d["kind"], d["fmt"], d["commit_scn"], d["xid"], d["c_idx"], d["elem"], d["full"], d["seen"], d["error"]
    ):
        if seen is None and not elem:
            asm.messages += 1
        if kind == "error":
            asm.error = asm.error or error
            continue
        if scn is not None and scn > asm.max_seen_scn:
            asm.max_seen_scn = scn
        if kind not in BODY:
            continue
        t = txns.get((scn, xid))
        if t is None:
            t = txns[(scn, xid)] = [None, None, set(), False, now_us if seen is None else seen]
        if kind == "begin":
            t[0] = idx if t[0] is None else min(t[0], idx)
        elif kind == "commit":
            t[1] = idx if t[1] is None else max(t[1], idx)
        else:
            t[2].add(idx)
            t[3] = t[3] or bool(full) or fmt != "olr"
        if seen is not None and seen < t[4]:
            t[4] = seen
    incomplete = {
        k: t
        for k, t in txns.items()
        if atomic and not t[3] and not (t[0] is not None and t[1] is not None and len(t[2]) == t[1] - t[0] - 1)
    }
    asm.incomplete = len(incomplete)
    old = {k for k in incomplete if k[0] is not None and k[0] <= applied_scn}
    replays = was_applied(old) if old else set()
    oldest = now_us - int(pending_timeout * 1_000_000)
    expired = {k for k in old - replays if incomplete[k][4] < oldest}
    dropped = replays | expired
    asm.dropped, asm.dropped_replays = len(dropped), len(replays)
    asm.blocking = sorted((k for k in incomplete if k not in dropped), key=lambda k: (k[0] or 0, k[1] or ""))
    asm.watermark = min((k[0] for k in asm.blocking if k[0] is not None), default=None)

    asm.decision = Decision(asm.watermark, sorted(f"{s}:{x or ''}" for s, x in dropped), now)
    asm.ready, asm.pending = asm.decision.split(events)
    return asm
