"""Where a stream client's START puts a daemon that has no confirmed position yet (issue 31, item 7).

OpenLogReplicator lets the client's START replace ``reader.start-*``: for ``scn:N`` it loads
the newest schema checkpoint at or below N and streams the transactions from N on (what
``start-scn`` N would). The daemon does the same, and refuses -- FAILED_START, an ERROR with
its code, then READY for another START -- what it cannot honour, where OpenLogReplicator
stops with 10040 or streams nothing:

* ``now`` in offline mode: there is no database to ask for its current SCN, so it means
  the configured start (OpenLogReplicator: 10040, the daemon exits);
* ``scn:N`` without a schema checkpoint at or below N: 10040 (OpenLogReplicator: the same
  code, and it exits);
* ``scn:N`` beyond the end of every redo log on disk, or that no Oracle SCN reaches
  (``scn:2^64-2``): 10093 (OpenLogReplicator would wait for that SCN for ever, streaming
  nothing);
* a time (``time:``/``time_rel:``) in offline mode: 10093 (OpenLogReplicator: 10040);
* with the online reader, any position but ``now`` or the configured one: 10093, for now
  (the schema is read from the database at start-up, for the configured position).

A ``seq`` given with START is ignored, as OpenLogReplicator ignores it once a schema
checkpoint gives the position.
"""

from __future__ import annotations

from replicator import log
from replicator.errors import RuntimeFailure
from replicator.redo.header import SCN_NONE
from replicator.writers.stream import StartRequest

START_REFUSED = 10093
MAX_SCN = 1 << 63


def requested_scn(start: StartRequest, *, online: bool, configured: int) -> int | None:
    """The start SCN ``start`` asks for, or None for the configured start; RuntimeFailure 10093
    for a position the daemon cannot start at (see the module docstring)."""
    if start.seq is not None:
        log.info(f"START seq {start.seq} ignored: the schema checkpoint gives the redo position")
    if start.now or (start.kind == "scn" and start.scn == configured):
        return None
    if online:
        raise RuntimeFailure(
            "the online reader starts where reader.start-scn/start-time/start-time-rel say (the "
            "dictionary is read for it at start-up): START now, or change the config and restart",
            START_REFUSED,
        )
    if start.kind != "scn" or start.scn is None:
        raise RuntimeFailure(
            "the offline reader cannot start at a time (no database to map it to an SCN): START with scn:N",
            START_REFUSED,
        )
    return start.scn


def check_within_redo(scn: int, next_scns: list[int]) -> None:
    """RuntimeFailure 10093 when ``scn`` lies beyond the redo: beyond every log on disk
    (``next_scns``: the next SCN in each one's header; an online log being written,
    ``SCN_NONE``, has no end yet), or at 2^63 or above, which no Oracle SCN reaches (its
    widest form is 63 bits)."""
    if scn >= MAX_SCN:
        raise RuntimeFailure(
            f"START at scn {scn}: no Oracle SCN is that high; START at an SCN the redo holds, or now", START_REFUSED
        )
    if next_scns and SCN_NONE not in next_scns and scn >= max(next_scns):
        raise RuntimeFailure(
            f"START at scn {scn}: the redo logs on disk end before scn {max(next_scns)}, so nothing "
            "would ever be streamed; START at an SCN they hold, or now",
            START_REFUSED,
        )
