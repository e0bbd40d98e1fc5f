"""Comparing the two sides, bucket by bucket (a bucket of each side in memory at a time).

Within a bucket the records of both sides are sorted by identity (c_scn, xid, c_idx, elem;
the redo's record first, then the sink's in the sink's order), so the changes of one
transaction are adjacent and each identity forms a group:

* redo only: **missing** -- unless the redo change lies beyond what the sink claims to hold
  (after its last message, or the confirmed position), then it is not verified yet;
* sink only: **extra** -- unless its c_scn is at or below the start (an older change than
  the redo read, not checked);
* more sink copies than redo ones: **duplicated**;
* a sink copy whose digest is not the redo's: **differs**.

Everything is counted; the first ``max_report`` differences are kept with their positions
for the report. Per table, both sides' counts and digest sums are added up (the sink's as
far as it was compared), and so are the transactions checked and those that differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from replicator.formats.olr_digest import MASK64
from replicator.verify.spool import Spool

MISSING, DUPLICATED, DIFFERS, EXTRA = "missing", "duplicated", "differs", "extra"


@dataclass(slots=True)
class Difference:
    """One change that differs: its identity (the xid as its key until the report looks the
    text up), table number, the redo's ordinal (None: not in the redo) and the sink's places."""

    kind: str
    c_scn: int
    c_idx: int
    elem: int
    xid_key: int
    table: int
    redo: int | None
    sink: list[int]


@dataclass
class Bounds:
    """What is compared: redo changes up to ``cut`` (an ordinal; None = all), sink changes
    above ``start`` (the first SCN of the redo read), both with c_scn at most ``to_scn``.

    ``ahead``: the sink holds changes past the redo read; then a sink change the redo does
    not hold that comes, in its part of the sink (``place >> part_shift``: a file series, a
    partition), after the last change the redo does hold, is not extra but not checked."""

    cut: int | None
    start: int
    to_scn: int | None = None
    kinds: frozenset[int] = frozenset({0, 1, 2})
    ahead: bool = False
    part_shift: int = 62


@dataclass
class Result:
    """The comparison's figures and the differences kept for the report."""

    counts: dict[str, int] = field(default_factory=lambda: {MISSING: 0, DUPLICATED: 0, DIFFERS: 0, EXTRA: 0})
    differences: list[Difference] = field(default_factory=list)
    redo_changes: int = 0  # compared
    sink_changes: int = 0  # compared
    not_claimed: int = 0  # redo changes beyond the sink's claim, not in the sink
    before_start: int = 0  # sink changes older than the redo read
    after_redo: int = 0  # sink changes past the redo read (Bounds.ahead)
    after_to: int = 0  # changes of either side with c_scn above --to-scn
    ambiguous: int = 0  # identities the redo itself holds more than once
    transactions: int = 0
    differing_transactions: int = 0
    redo_tables: dict[int, tuple[int, int]] = field(default_factory=dict)  # table -> (count, digest sum)
    # (c_scn, xid key) of reported transactions -> (redo count, redo digest sum, sink count, sink digest sum)
    transaction_tallies: dict[tuple[int, int], tuple[int, int, int, int]] = field(default_factory=dict)
    sink_tables: dict[int, tuple[int, int]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def _add_tables(self, into: dict[int, tuple[int, int]], tab: np.ndarray, dig: np.ndarray) -> None:
        if not len(tab):
            return
        ids, inverse = np.unique(tab, return_inverse=True)
        counts = np.bincount(inverse)
        sums = np.zeros(len(ids), np.uint64)
        np.add.at(sums, inverse, dig)
        for t, n, d in zip(ids.tolist(), counts.tolist(), sums.tolist()):
            n0, d0 = into.get(t, (0, 0))
            into[t] = (n0 + n, (d0 + d) & MASK64)


def _groups(a: np.ndarray) -> np.ndarray:
    """Start index of every identity group of the sorted records ``a``."""
    new = np.ones(len(a), bool)
    if len(a) > 1:
        new[1:] = (
            (a["scn"][1:] != a["scn"][:-1])
            | (a["xid"][1:] != a["xid"][:-1])
            | (a["idx"][1:] != a["idx"][:-1])
            | (a["elem"][1:] != a["elem"][:-1])
        )
    return np.flatnonzero(new)


def _transactions(heads: np.ndarray) -> int:
    """How many distinct (c_scn, xid) the sorted group heads have."""
    if not len(heads):
        return 0
    return 1 + int(((heads["scn"][1:] != heads["scn"][:-1]) | (heads["xid"][1:] != heads["xid"][:-1])).sum())


def _identities(a: np.ndarray) -> np.ndarray:
    """One 64-bit value per record standing for its identity (for membership tests only)."""
    return (
        (a["scn"] * np.uint64(0x9E3779B97F4A7C15))
        ^ a["xid"]
        ^ (a["idx"].astype(np.uint64) << np.uint64(20))
        ^ a["elem"].astype(np.uint64)
    )


def _transaction_tallies(
    a: np.ndarray,
    side: np.ndarray,
    starts: np.ndarray,
    sizes: np.ndarray,
    kept: np.ndarray,
    heads: np.ndarray,
    result: Result,
) -> None:
    """Both sides' count and digest sum of each transaction of ``heads`` (the reported
    differences), over the compared changes."""
    wanted = {(int(h["scn"]), int(h["xid"])) for h in heads}
    compared = np.repeat(kept, sizes)
    for scn, xid in sorted(wanted):
        if (scn, xid) in result.transaction_tallies:
            continue
        mine = compared & (a["scn"] == scn) & (a["xid"] == xid)
        tally = []
        for s in (0, 1):
            digests = a["dig"][mine & (side == s)]
            tally += [len(digests), int(digests.sum(dtype=np.uint64)) & MASK64]
        result.transaction_tallies[(scn, xid)] = tuple(tally)  # type: ignore[assignment]


def _last_matched(redo: Spool, sink: Spool, bounds: Bounds) -> dict[int, int]:
    """Per part of the sink, the last place of a change the redo holds."""
    last: dict[int, int] = {}
    shift = np.uint64(bounds.part_shift)
    for b in range(redo.buckets):
        r, s = redo.bucket(b), sink.bucket(b)
        held = s[np.isin(_identities(s), _identities(r))]
        if not len(held):
            continue
        parts = held["ord"] >> shift
        for part in np.unique(parts).tolist():
            top = int(held["ord"][parts == part].max())
            last[part] = max(top, last.get(part, top))
    return last


def compare(redo: Spool, sink: Spool, bounds: Bounds, max_report: int = 100) -> Result:
    """Compare every bucket of the two spools (both flushed)."""
    import time

    started = time.perf_counter()
    result = Result()
    last = _last_matched(redo, sink, bounds) if bounds.ahead else None
    for b in range(redo.buckets):
        _bucket(redo.bucket(b), sink.bucket(b), bounds, result, max_report, last)
    result.differences.sort(key=lambda d: (d.c_scn, d.c_idx, d.elem, d.xid_key))
    result.seconds = time.perf_counter() - started
    return result


def _bucket(
    r: np.ndarray, s: np.ndarray, bounds: Bounds, result: Result, max_report: int, last: dict[int, int] | None
) -> None:
    if len(bounds.kinds) < 3:
        r = r[np.isin(r["kind"], list(bounds.kinds))]
    if bounds.to_scn is not None:
        late_r, late_s = r["scn"] > bounds.to_scn, s["scn"] > bounds.to_scn
        result.after_to += int(late_r.sum() + late_s.sum())
        r, s = r[~late_r], s[~late_s]
    records = np.concatenate([r, s])
    if not len(records):
        return
    side = np.concatenate([np.zeros(len(r), np.uint8), np.ones(len(s), np.uint8)])
    del r, s
    order = np.lexsort((records["ord"], side, records["elem"], records["idx"], records["xid"], records["scn"]))
    a, side = records[order], side[order]
    del records, order
    starts = _groups(a)
    sizes = np.diff(np.append(starts, len(a)))
    in_redo = np.add.reduceat((side == 0).astype(np.int32), starts)
    in_sink = sizes - in_redo
    head = a[starts]  # the redo's record of the group when it has one (side 0 sorts first)
    beyond = (in_redo > 0) & (head["ord"] > bounds.cut) if bounds.cut is not None else np.zeros(len(starts), bool)
    before = (in_redo == 0) & (head["scn"] <= bounds.start)
    after = np.zeros(len(starts), bool)
    if last is not None:  # the sink is ahead: its changes after the last one the redo holds are not checked
        parts = head["ord"] >> np.uint64(bounds.part_shift)
        limit = np.array([last.get(p, -1) for p in parts.tolist()], np.int64)
        after = (in_redo == 0) & (head["ord"].astype(np.int64) > limit)
        before &= ~after
    # A sink copy whose digest is not the redo's (groups with one redo record).
    single = in_redo == 1
    altered = (side == 1) & np.repeat(single, sizes)
    altered &= a["dig"] != np.repeat(head["dig"], sizes)
    differs = single & (np.add.reduceat(altered.astype(np.int32), starts) > 0)
    del altered
    missing = (in_sink < in_redo) & ~beyond
    duplicated = (in_redo > 0) & (in_sink > in_redo)
    extra = (in_redo == 0) & ~before & ~after
    counts = result.counts
    counts[MISSING] += int((in_redo - in_sink)[missing].sum())
    counts[DUPLICATED] += int((in_sink - in_redo)[duplicated].sum())
    counts[DIFFERS] += int(differs.sum())
    counts[EXTRA] += int(in_sink[extra].sum())
    result.ambiguous += int((in_redo > 1).sum())
    unclaimed = beyond & (in_sink == 0)
    result.not_claimed += int(unclaimed.sum())
    result.before_start += int(in_sink[before].sum())
    result.after_redo += int(in_sink[after].sum())
    # What was compared: redo groups not beyond the claim (or present in the sink), sink groups not before the start.
    kept = ~unclaimed & ~before & ~after
    compared = np.repeat(kept, sizes)
    taken_r, taken_s = compared & (side == 0), compared & (side == 1)
    del compared
    result.redo_changes += int(taken_r.sum())
    result.sink_changes += int(taken_s.sum())
    result._add_tables(result.redo_tables, a["tab"][taken_r], a["dig"][taken_r])
    result._add_tables(result.sink_tables, a["tab"][taken_s], a["dig"][taken_s])
    del taken_r, taken_s
    # Transactions: (c_scn, xid) of the compared groups, and of those with a difference (groups are sorted by both).
    bad = missing | duplicated | differs | extra
    result.transactions += _transactions(head[kept])
    result.differing_transactions += _transactions(head[bad])
    room = max_report - len(result.differences)
    if room <= 0 or not bad.any():
        return
    reported = np.flatnonzero(bad)[:room]
    _transaction_tallies(a, side, starts, sizes, kept, head[reported], result)
    for g in reported.tolist():
        first, size, nr = int(starts[g]), int(sizes[g]), int(in_redo[g])
        rec = a[first]
        kind = MISSING if missing[g] else DUPLICATED if duplicated[g] else DIFFERS if differs[g] else EXTRA
        places = a["ord"][first + nr : first + size].tolist()
        result.differences.append(
            Difference(
                kind,
                int(rec["scn"]),
                int(rec["idx"]),
                int(rec["elem"]),
                int(rec["xid"]),
                int(rec["tab"]),
                int(rec["ord"]) if nr else None,
                places,
            )
        )
