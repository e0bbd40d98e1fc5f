"""One side's changes as fixed-size records on disk, in buckets by transaction.

A side (the redo, or a sink) can hold more changes than memory: each change becomes a
48-byte record (identity, table, kind, digest, ordinal) kept in small in-memory chunks and
appended to one of ``buckets`` files chosen by the transaction (a hash of its xid), so
both sides put a transaction into the same bucket and a bucket of each side fits in memory
for the comparison. Tables are numbered by a :class:`TableNames` both sides share.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from replicator.formats.olr_digest import Change, ChangeId, element_change, xid_text

RECORD = np.dtype(
    [
        ("scn", "<u8"),
        ("xid", "<u8"),
        ("idx", "<u4"),
        ("elem", "<u4"),
        ("tab", "<u4"),
        ("kind", "<u4"),
        ("dig", "<u8"),
        ("ord", "<u8"),
    ]
)
_PACK = struct.Struct("<QQIIIIQQ").pack  # one RECORD
assert struct.calcsize("<QQIIIIQQ") == RECORD.itemsize
CHUNK = 1 << 16  # records kept in memory before they go to the bucket files
BUCKET_BYTES = 16 << 20  # target bucket size per side: a bucket of each side is compared in memory
NO_TABLE = 0  # table number of begin/commit markers


def xid_key(xid: str) -> int:
    """The xid text as a 64-bit key (records hold numbers; the text comes back from the details)."""
    return int.from_bytes(hashlib.blake2b(xid.encode(), digest_size=8).digest(), "little")


def bucket_count(expected_changes: int) -> int:
    """How many buckets keep one bucket of one side under :data:`BUCKET_BYTES`."""
    return max(1, -(-expected_changes * RECORD.itemsize // BUCKET_BYTES))


class TableNames:
    """(owner, table) <-> table number, shared by the two sides (0: no table)."""

    def __init__(self) -> None:
        self.names: list[tuple[str, str]] = [("", "")]
        self._ids: dict[tuple[str, str], int] = {("", ""): NO_TABLE}

    def id(self, owner: str, table: str) -> int:
        key = (owner, table)
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self.names)
            self.names.append(key)
        return found

    def label(self, number: int) -> str:
        owner, table = self.names[number]
        return f"{owner}.{table}" if owner else table


class Spool:
    """The records of one side, written to ``directory/<name>-<bucket>.rec``.

    ``watch`` lists identities whose ordinals the side must report (a sink's claims looked
    up in the redo); ``watch_positions`` (c_scn, c_idx) pairs (a confirmed position, which
    names no xid). Both are matched chunk by chunk, see :attr:`found` and :attr:`found_positions`.
    """

    def __init__(self, directory: Path, name: str, buckets: int, tables: TableNames) -> None:
        self.paths = [directory / f"{name}-{b}.rec" for b in range(buckets)]
        for path in self.paths:
            path.write_bytes(b"")
        self.buckets = buckets
        self.tables = tables
        self.count = 0
        self.watch: dict[tuple[int, int, int, int], ChangeId] = {}
        self.watch_positions: set[tuple[int, int]] = set()
        self.found: dict[ChangeId, int] = {}  # watched identity -> its (first) ordinal
        self.found_positions: dict[tuple[int, int], int] = {}  # watched position -> lowest ordinal
        self._xids: dict[str, int] = {}
        # How a payload element becomes (kind, owner, table, digest): a sink that keeps other
        # values than the messages' (a lake's text images) has the redo side digest those.
        self.element: Callable[[dict[str, Any]], tuple[int, str, str, int] | None] = element_change
        self._reset()

    def _reset(self) -> None:
        self._chunk = bytearray()
        self._held = 0

    def _xid(self, xid: str) -> int:
        key = self._xids.get(xid)
        if key is None:
            if len(self._xids) > 65536:
                self._xids.clear()
            key = self._xids[xid] = xid_key(xid)
        return key

    def watch_for(self, ids: list[ChangeId]) -> None:
        """Report the ordinals of these identities (see :attr:`found`)."""
        for cid in ids:
            self.watch[(cid.c_scn, xid_key(cid.xid), cid.c_idx, cid.elem)] = cid

    def add(self, change: Change, ordinal: int) -> None:
        """One change; ``ordinal`` is where its message is on this side (the redo's order, or
        the sink's place)."""
        cid = change.id
        table = self.tables.id(change.owner, change.table) if change.kind else NO_TABLE
        self._chunk += _PACK(
            cid.c_scn, self._xid(cid.xid), cid.c_idx, cid.elem, table, change.kind, change.digest, ordinal
        )
        self._held += 1
        if self._held >= CHUNK:
            self.flush()

    def add_message(self, doc: dict[str, Any], ordinal: int) -> ChangeId | None:
        """The changes of a decoded OpenLogReplicator JSON message (what
        formats.olr_digest.changes_of gives, without making them): the last one's identity,
        None for a checkpoint message."""
        c_scn, c_idx = int(doc["c_scn"]), int(doc["c_idx"])
        xid = xid_text(doc)
        xkey = self._xid(xid)
        table_id, element = self.tables.id, self.element
        last = None
        for elem, el in enumerate(doc["payload"]):
            found = element(el)
            if found is None:
                continue
            kind, owner, table, digest = found
            self._chunk += _PACK(
                c_scn, xkey, c_idx, elem, table_id(owner, table) if kind else NO_TABLE, kind, digest, ordinal
            )
            self._held += 1
            last = elem
        if last is None:
            return None
        if self._held >= CHUNK:
            self.flush()
        return ChangeId(c_scn, c_idx, last, xid)

    def position(self, c_scn: int, c_idx: int, ordinal: int) -> None:
        """A message without changes (a checkpoint) at ``ordinal``: only a watched position."""
        key = (c_scn, c_idx)
        if key in self.watch_positions and key not in self.found_positions:
            self.found_positions[key] = ordinal

    def flush(self) -> None:
        """Write the records held in memory to their buckets."""
        if not self._held:
            return
        rec = np.frombuffer(bytes(self._chunk), dtype=RECORD)
        self.count += self._held
        self._reset()
        self._match(rec)
        if self.buckets == 1:
            with open(self.paths[0], "ab") as f:
                f.write(rec.tobytes())
            return
        which = rec["xid"] % np.uint64(self.buckets)
        for b in range(self.buckets):
            part = rec[which == b]
            if len(part):
                with open(self.paths[b], "ab") as f:
                    f.write(part.tobytes())

    def _match(self, rec: np.ndarray) -> None:
        for key, cid in self.watch.items():
            if cid in self.found:
                continue
            hit = np.flatnonzero(
                (rec["scn"] == key[0]) & (rec["xid"] == key[1]) & (rec["idx"] == key[2]) & (rec["elem"] == key[3])
            )
            if len(hit):
                self.found[cid] = int(rec["ord"][hit[0]])
        for scn, idx in self.watch_positions:
            hit = np.flatnonzero((rec["scn"] == scn) & (rec["idx"] == idx))
            if len(hit):
                low = int(rec["ord"][hit].min())
                self.found_positions[(scn, idx)] = min(low, self.found_positions.get((scn, idx), low))

    def bucket(self, b: int) -> np.ndarray:
        """The records of bucket ``b`` (call :meth:`flush` first)."""
        return np.fromfile(self.paths[b], dtype=RECORD)

    def remove(self) -> None:
        """Delete the bucket files."""
        for path in self.paths:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
