"""Digests of OpenLogReplicator JSON changes: what ``replicator verify`` compares, and what
checkpoint messages carry with ``format.checkpoint-digests`` (docs/formats.md §10).

A message is cut into *changes*, one per payload element: one per message, except in FULL
mode (one message per transaction). Begin and commit markers are changes too (no table);
checkpoint messages are not. A change is

* identified by its stream position and transaction, :class:`ChangeId` = (c_scn, c_idx,
  elem, xid): (c_scn, c_idx) alone is not unique (transactions that begin at one SCN share
  positions), the xid makes it so, and ``elem`` numbers the elements of a FULL message;
* digested from its *content*: ``[op, owner, table, before, after, sql]`` as compact JSON
  with object keys sorted (msgspec's encoder), where an image is null or the element's
  object as decoded with integers as JSON integers, every other number as a string of its
  printed text (``1.50`` stays ``"1.50"``), strings, true/false and null as they are; sql
  only for DDL. The digest is the first 8 bytes of BLAKE2b of those bytes, read as a
  little-endian unsigned 64-bit integer. Header fields (scn, tm, db, attrs...) are not
  content: the position and the xid are compared as the identity. A reader of a sink that
  keeps rows rather than messages (a lake's change log) rebuilds the images with the column
  types it knows and calls :func:`change_digest`.

A set of changes is summarised by its count and the sum of its change digests modulo 2**64:
independent of order (Kafka partitions, rotated files), and a missing, duplicated or
altered change moves it.

Checkpoint digests (``format.checkpoint-digests: 1``, with source flag 0x1000): every
checkpoint message gets a ``"digests"`` member in its payload element, the summary of the
changes of the messages since the previous checkpoint, per table and in total, and where
that segment starts::

    {"op":"chkpt","seq":1,"offset":18944,"digests":{"from":[1,9728],"n":52,"d":"7fb9460746741bdd",
     "tables":[{"owner":"APP","table":"T00","n":50,"d":"a434f141aed06587"}]}}

A checkpoint follows every LWN of the redo (and the end of each file), so the segments are
cut by the redo itself: a restarted daemon re-reads the redo from a restart point at or
before the first message it still has to send, renders every message of those LWNs again
(also those it skips as already confirmed) and so repeats the same values for the same
checkpoints. ``from`` is the redo position (seq, offset) of the previous checkpoint; a
consumer that checks it against the previous checkpoint it received also notices a lost
checkpoint with all its changes. :class:`CheckpointDigests` is the producer's side,
:class:`StreamVerifier` the consumer's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgspec

from replicator.errors import InternalError, ReplicatorError
from replicator.events import Message

MASK64 = (1 << 64) - 1
DIGEST_MISMATCH = 10403  # errors.CATALOGUE
CHAIN_BROKEN = 10404
NO_DIGESTS = 10405
KIND_TXN, KIND_ROW, KIND_DDL = 0, 1, 2  # begin/commit markers, row changes, DDL
_KINDS = {"begin": KIND_TXN, "commit": KIND_TXN, "c": KIND_ROW, "u": KIND_ROW, "d": KIND_ROW, "ddl": KIND_DDL}


class StreamCheckFailed(ReplicatorError):
    """A stream failed its checkpoint digests (10403, 10404, 10405): never retried, so a
    client that reconnects on lost connections still stops here."""


class ChangeId(NamedTuple):
    """Where a change sits in the stream: unique across the stream."""

    c_scn: int
    c_idx: int
    elem: int
    xid: str


class Change(NamedTuple):
    """One change of a message: identity, table ("" for begin/commit), kind and digest."""

    id: ChangeId
    owner: str
    table: str
    kind: int
    digest: int


# -- decoding and the canonical content --------------------------------------------------------

_DECODER = msgspec.json.Decoder(float_hook=str)  # integers as int, other numbers as their printed text
_CANONICAL = msgspec.json.Encoder(order="sorted")  # compact JSON, object keys sorted
_NONFINITE = re.compile(rb"(?<=[:\[,])\s*(-?)(inf|nan)(?=\s*[,}\]])")


def _quoted(m: re.Match[bytes]) -> bytes:
    return b'"' + m[1] + (b"Infinity" if m[2] == b"inf" else b"NaN") + b'"'


def decode(body: bytes) -> Any:
    """A message as a document: integers as int, other numbers as their printed text; OLR's
    unquoted inf/nan (BINARY_FLOAT/DOUBLE) as the texts "Infinity"/"-Infinity"/"NaN".
    Raises ValueError when it is not JSON."""
    try:
        return _DECODER.decode(body)
    except msgspec.DecodeError:
        fixed = _NONFINITE.sub(_quoted, body)
        if fixed == body:
            raise ValueError(f"not JSON: {body[:80]!r}") from None
        try:
            return _DECODER.decode(fixed)
        except msgspec.DecodeError as exc:
            raise ValueError(f"not JSON: {exc}") from None


def value_text(value: Any) -> str | None:
    """A decoded value as text (reports: which column differs)."""
    if value is None or value.__class__ is str:
        return value  # type: ignore[no-any-return]
    if value.__class__ is bool:
        return "true" if value else "false"
    if value.__class__ is int:
        return str(value)
    return _CANONICAL.encode(value).decode()


def change_digest(
    op: str, owner: str, table: str, before: dict[str, Any] | None, after: dict[str, Any] | None, sql: str | None = None
) -> int:
    """The digest of one change's content (see the module docstring): images as decoded by
    :func:`decode` (a reader of another sink passes the values it stored, typed the same way)."""
    data = _CANONICAL.encode([op, owner, table, before, after, sql])
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def xid_text(doc: dict[str, Any]) -> str:
    """The transaction id as the header prints it (``xid`` text, or ``xidn`` as decimal)."""
    xid = doc.get("xid")
    if xid is not None:
        return str(xid)
    xidn = doc.get("xidn")
    return "" if xidn is None else str(xidn)


def is_checkpoint(doc: dict[str, Any]) -> bool:
    """A checkpoint message (its first element's op is chkpt)."""
    payload = doc.get("payload")
    if not payload:
        return False
    first = payload[0]
    return isinstance(first, dict) and first.get("op") == "chkpt"


def element_change(el: dict[str, Any]) -> tuple[int, str, str, int] | None:
    """(kind, owner, table, digest) of one payload element; None for a checkpoint. Raises
    KeyError/TypeError/ValueError when it is not an OpenLogReplicator JSON element."""
    op = el["op"]
    kind = _KINDS.get(op)
    if kind is None:
        if op == "chkpt":
            return None
        raise ValueError(f"unknown payload op {op!r}")
    schema = el.get("schema")
    owner = table = ""
    if schema is not None:
        owner, table = schema.get("owner", ""), schema.get("table", "")
    before, after = el.get("before"), el.get("after")
    return (
        kind,
        owner,
        table,
        change_digest(
            op,
            owner,
            table,
            before if isinstance(before, dict) else None,
            after if isinstance(after, dict) else None,
            el.get("sql") if kind == KIND_DDL else None,
        ),
    )


def changes_of(doc: dict[str, Any]) -> list[Change]:
    """The changes of a decoded message (none for a checkpoint). Raises KeyError/TypeError/
    ValueError on a document that is not an OpenLogReplicator JSON message."""
    c_scn, c_idx = int(doc["c_scn"]), int(doc["c_idx"])
    xid = xid_text(doc)
    out = []
    for elem, el in enumerate(doc["payload"]):
        found = element_change(el)
        if found is not None:
            kind, owner, table, digest = found
            out.append(Change(ChangeId(c_scn, c_idx, elem, xid), owner, table, kind, digest))
    return out


# -- summaries ---------------------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    """A set of changes: count and digest sum modulo 2**64."""

    n: int = 0
    d: int = 0

    def add(self, digest: int) -> None:
        self.n += 1
        self.d = (self.d + digest) & MASK64

    @property
    def hex(self) -> str:
        return f"{self.d:016x}"


class Segment:
    """The changes since the last checkpoint: in total and per (owner, table)."""

    def __init__(self) -> None:
        self.total = Tally()
        self.tables: dict[tuple[str, str], Tally] = {}

    def add(self, change: Change) -> None:
        self.total.add(change.digest)
        if change.kind != KIND_TXN:
            key = (change.owner, change.table)
            tally = self.tables.get(key)
            if tally is None:
                tally = self.tables[key] = Tally()
            tally.add(change.digest)

    def render(self, start: tuple[int, int]) -> bytes:
        """The ``"digests"`` member of a checkpoint element."""
        doc = {
            "from": list(start),
            "n": self.total.n,
            "d": self.total.hex,
            "tables": [
                {"owner": owner, "table": table, "n": t.n, "d": t.hex}
                for (owner, table), t in sorted(self.tables.items())
            ],
        }
        return b'"digests":' + msgspec.json.encode(doc)


def _checkpoint_position(element: dict[str, Any]) -> tuple[int, int]:
    return int(element["seq"]), int(element["offset"])


class CheckpointDigests:
    """The producer's side: every message passes :meth:`observe` in the order it is
    rendered (the daemon: before the restart position drops anything), in runs, lists or
    streams; checkpoint messages come out with their ``"digests"`` member added.

    ``start`` is the redo position (seq, offset) the run starts at: the schema checkpoint
    it restarted from, which is where the previous checkpoint was.
    """

    def __init__(self, start: tuple[int, int]) -> None:
        self._from = start
        self._segment = Segment()

    def observe(self, messages: Any) -> Any:
        """``messages`` as the same kind of sequence, taken into the digests: a list or another
        collection (a native MessageRun) is read at once, a one-pass iterator (a streamed
        transaction) as it is consumed."""
        if isinstance(messages, Iterator):
            return self._passing(messages)
        for message in messages:
            self._take(message)
        return messages

    def _passing(self, messages: Iterator[Any]) -> Iterator[Any]:
        for message in messages:
            self._take(message)
            yield message

    def _take(self, message: Any) -> None:
        if type(message) is not Message:  # a MessageRun among a batch's Messages
            self.observe(message)
        elif message.checkpoint:
            message.data = self._sign(message.data)
        else:
            self._add(message.data)

    def _add(self, body: bytes) -> None:
        for change in changes_of(decode(body)):
            self._segment.add(change)

    def _sign(self, body: bytes) -> bytes:
        """The checkpoint message ``body`` with the segment's digests; the segment ends here."""
        element = decode(body)["payload"][0]
        if not body.endswith(b"}]}"):
            raise InternalError(
                "checkpoint-digests: a checkpoint message does not end its payload element "
                "as OpenLogReplicator JSON does"
            )
        signed = body[:-3] + b"," + self._segment.render(self._from) + b"}]}"
        self._from = _checkpoint_position(element)
        self._segment = Segment()
        return signed


class StreamVerifier:
    """The consumer's side: :meth:`take` every message as received, in order; raises
    :class:`StreamCheckFailed` when a checkpoint's digests disagree with the changes received
    since the previous checkpoint (10403: lost, duplicated or altered changes), when a
    checkpoint does not continue the previous one (10404: a checkpoint and its changes were
    lost), or when checkpoints carry no digests (10405).

    The first checkpoint only synchronises (a consumer may start inside a segment). Delivery
    may repeat after a reconnect or a restart: a change received again within its segment
    with the same digest, and a checkpoint at or before the last one verified (with what
    came since), are replays and are set aside (:attr:`replayed`), not counted twice.
    """

    def __init__(self) -> None:
        self.last: tuple[int, int, bool] | None = None  # (seq, offset, redo switch) of the last checkpoint
        self.checked = 0  # checkpoints verified
        self.changes = 0  # changes in verified segments
        self.replayed = 0  # changes (and checkpoints) received again
        self._segment = Segment()
        self._seen: dict[ChangeId, int] = {}  # the segment's changes and their digests

    def take(self, body: bytes) -> bool:
        """One message; True when it was a checkpoint that verified its segment."""
        doc = decode(body)
        if not is_checkpoint(doc):
            for change in changes_of(doc):
                self.change(change)
            return False
        return self.checkpoint(doc["payload"][0], doc.get("c_scn"), doc.get("c_idx"))

    def change(self, change: Change) -> None:
        """One change of a message, in stream order (a consumer that cut and digested the
        messages itself, such as the Spark job, calls this and :meth:`checkpoint`)."""
        seen = self._seen.get(change.id)
        if seen is None:
            self._seen[change.id] = change.digest
            self._segment.add(change)
        elif seen == change.digest:
            self.replayed += 1
        else:
            cid = change.id
            raise StreamCheckFailed(
                f"change c_scn {cid.c_scn}, c_idx {cid.c_idx}, xid {cid.xid} came again with another content",
                DIGEST_MISMATCH,
            )

    def checkpoint(self, element: dict[str, Any], c_scn: Any = None, c_idx: Any = None) -> bool:
        """A checkpoint message's payload element (``c_scn``/``c_idx`` of its header, for the
        messages); True when it verified its segment."""
        position = _checkpoint_position(element)
        key = (*position, bool(element.get("redo")))
        digests = element.get("digests")
        if not isinstance(digests, dict):
            raise StreamCheckFailed(
                f"checkpoint at redo position {position[0]}:{position[1]} (c_scn "
                f"{c_scn}) carries no digests: set format.checkpoint-digests to 1 "
                "in the producer's config",
                NO_DIGESTS,
            )
        verified = False
        if self.last is not None and key <= self.last:  # a replay of what was verified already
            self.replayed += self._segment.total.n + 1
        else:
            if self.last is not None:
                self._check(c_scn, c_idx, digests, position)
                self.checked += 1
                self.changes += self._segment.total.n
                verified = True
            self.last = key
        self._segment = Segment()
        self._seen = {}
        return verified

    def _check(self, c_scn: Any, c_idx: Any, digests: dict[str, Any], position: tuple[int, int]) -> None:
        assert self.last is not None
        start = tuple(digests.get("from", ()))
        where = f"checkpoint at redo position {position[0]}:{position[1]} (c_scn {c_scn}, c_idx {c_idx})"
        if start != self.last[:2]:
            raise StreamCheckFailed(
                f"{where} continues from {':'.join(map(str, start))}, but the last checkpoint "
                f"received was at {self.last[0]}:{self.last[1]}: the checkpoints between and "
                "their changes were lost",
                CHAIN_BROKEN,
            )
        got = self._segment
        problems = []
        if (got.total.n, got.total.hex) != (digests.get("n"), digests.get("d")):
            problems.append(
                f"{got.total.n} changes (digest {got.total.hex}) received, "
                f"{digests.get('n')} (digest {digests.get('d')}) sent"
            )
        sent = {(t.get("owner", ""), t.get("table", "")): (t.get("n"), t.get("d")) for t in digests.get("tables", [])}
        for table in sorted(set(sent) | set(got.tables)):
            mine = got.tables.get(table, Tally())
            theirs = sent.get(table, (0, f"{0:016x}"))
            if (mine.n, mine.hex) != theirs:
                problems.append(
                    f"table {table[0]}.{table[1]}: {mine.n} received (digest {mine.hex}), "
                    f"{theirs[0]} sent (digest {theirs[1]})"
                )
        if problems:
            first = next(iter(self._seen), None)
            since = (
                f"; the first change received since: c_scn {first.c_scn}, c_idx {first.c_idx}, xid {first.xid}"
                if first is not None
                else ""
            )
            raise StreamCheckFailed(
                f"{where}: the changes since the previous checkpoint ({start[0]}:{start[1]}) "
                "differ from what was sent (lost, duplicated or altered messages): " + "; ".join(problems) + since,
                DIGEST_MISMATCH,
            )
