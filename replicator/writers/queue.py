"""The bounded queue of messages a writer holds until its sink confirms them.

Every message a writer takes goes into one FIFO of :class:`Entry` objects, in arrival
order; entries leave only from the front, so the confirmed position reported to the
checkpoint manager never passes the oldest unconfirmed message. ``capacity``
(``queue-size``) bounds the FIFO: :meth:`ConfirmQueue.wait_for_space` is where a writer
applies backpressure.

An entry leaves the front when it is

* ``silent`` -- a checkpoint that is only confirmed, or a message at or below the
  restored checkpoint position (``skip``: a writer checkpoint without a stream position);
* ``done`` -- the sink's guarantee was reached (a Kafka delivery report);
* confirmed by a stream client's CONTINUE naming exactly a message it was sent (or, after
  a restart, the client's message when the replay produces it again: :meth:`ConfirmQueue.resume_at`);
* covered by a stream client's CONFIRM: it was handed to the current client (it lies
  before ``cursor``) and lies up to the first sent message with exactly the confirmed
  position, or -- when no message has that position -- in the leading run of messages at
  or below it (positions need not grow: see :meth:`ConfirmQueue.confirm_through`).

Positions are ``(c_scn, idx)`` with the *internal* index. On the wire a client names the
printed index (internal + 1) of the last message it processed; :func:`client_position`
converts, so CONFIRM(c_scn, c_idx) covers exactly the messages the client has seen.

Removed messages are collected and handed out by :meth:`ConfirmQueue.take_confirmed` (or,
as the entries that left, by :meth:`ConfirmQueue.take_released`), so the writer reports
them (``on_confirm``) on its caller's thread, in order. All methods are thread-safe: a
stream writer's I/O thread and the pipeline thread share one queue.

A :class:`RunEntry` holds a slice of a native MessageRun (a transaction's messages in one
buffer, one SCN, growing idx) as one entry: every rule above still applies message by
message (``capacity`` counts messages, a CONFIRM or CONTINUE naming a message inside a run
splits it there, a skip or hold position inside it too), so the stream writers take runs
with exactly the per-message semantics and no object per message.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from replicator import log
from replicator.events import Message

Position = tuple[int, int]  # (c_scn, internal idx)

NO_SCN = (1 << 64) - 1  # "no position" in requests (CONTINUE c_scn) and "now" in START scn
HOLD_LIMIT_S = 30.0  # a held resume position that never shows up stops holding after this


def client_position(c_scn: int, c_idx: int) -> Position:
    """The internal position covered by a client's (c_scn, printed c_idx).

    The client echoes the ``c_idx`` printed in the data (internal + 1), so it has seen
    every message of ``c_scn`` whose internal index is below it; ``c_idx`` 0 means none.
    """
    return (c_scn, c_idx - 1)


def wire_position(position: Position | None) -> Position:
    """The (c_scn, printed c_idx) a reply reports for an internal position ((0, 0) if none)."""
    if position is None:
        return (0, 0)
    return (position[0], position[1] + 1)


@dataclass(slots=True, eq=False)
class Entry:
    """One message in the queue and what the sink has done with it."""

    message: Message
    silent: bool = False  # confirmed without being delivered
    done: bool = False  # delivered (the sink's guarantee reached)
    sent_at: float = 0.0  # monotonic time it was handed to the sink

    count = 1  # messages in the entry

    @property
    def position(self) -> Position:
        """The message's (c_scn, internal idx)."""
        return (self.message.scn, self.message.idx)

    @property
    def last(self) -> Position:
        """The position of the entry's last message (its own)."""
        return (self.message.scn, self.message.idx)

    def covered(self, position: Position) -> int:
        """How many of the entry's leading messages are at or below ``position``."""
        return 1 if self.position <= position else 0

    def exact(self, position: Position) -> int | None:
        """The entry's first message at exactly ``position`` (0), or None."""
        return 0 if self.position == position else None


class RunEntry:
    """Messages [first, stop) of a native MessageRun as one queue entry (see the module docstring).

    A run has one SCN and growing idx, so its messages at or below a position are a prefix
    (found by bisection in C, :func:`run_bisect`)."""

    __slots__ = ("done", "first", "last", "position", "run", "sent_at", "silent", "stop")

    def __init__(self, run: Any, first: int = 0, stop: int | None = None, silent: bool = False) -> None:
        self.run = run
        self.first = first
        self.stop = len(run) if stop is None else stop
        self.silent = silent
        self.done = False
        self.sent_at = 0.0
        self._positions()

    def _positions(self) -> None:
        idx = _native().run_idx
        self.position: Position = (self.run.scn, idx(self.run, self.first))
        self.last: Position = (self.run.scn, idx(self.run, self.stop - 1))

    @property
    def count(self) -> int:
        """Messages in the entry."""
        return self.stop - self.first

    def covered(self, position: Position) -> int:
        """How many of the entry's leading messages are at or below ``position``."""
        scn = self.run.scn
        if scn != position[0]:
            return self.count if scn < position[0] else 0
        return int(_native().run_bisect(self.run, position[1], self.first, self.stop)) - self.first

    def exact(self, position: Position) -> int | None:
        """Offset in the entry of its message at exactly ``position``, or None."""
        if self.run.scn != position[0]:
            return None
        core = _native()
        end = core.run_bisect(self.run, position[1], self.first, self.stop)
        if end > self.first and core.run_idx(self.run, end - 1) == position[1]:
            return int(end) - 1 - self.first
        return None

    def split(self, k: int) -> RunEntry:
        """Take the first ``k`` messages off as an entry of their own (this one keeps the rest)."""
        head = RunEntry(self.run, self.first, self.first + k, self.silent)
        head.done, head.sent_at = self.done, self.sent_at
        self.first += k
        self._positions()
        return head

    @property
    def body_bytes(self) -> int:
        """Bytes of the entry's message bodies."""
        return int(_native().run_slice_bytes(self.run, self.first, self.stop))

    def messages(self) -> list[Message]:
        """The entry's messages as Message objects (for callers that want them one by one)."""
        return [self.run.message(i) for i in range(self.first, self.stop)]


AnyEntry = Entry | RunEntry


_core: Any = None


def _native() -> Any:
    """The native run positions module (only a native engine produces MessageRuns), looked up once."""
    global _core
    if _core is None:
        from replicator.native import runframes

        _core = runframes()
    return _core


class ConfirmQueue:
    """FIFO of unconfirmed messages with a send cursor (see the module docstring)."""

    def __init__(self, capacity: int, confirmed: Position | None = None) -> None:
        self.capacity = capacity  # messages (a RunEntry counts its messages)
        self._entries: deque[AnyEntry] = deque()
        self._count = 0  # messages in _entries
        self._cond = threading.Condition()
        self._out: list[AnyEntry] = []
        self.cursor = 0  # entries [0, cursor) were handed to the current stream client
        self.confirmed: Position | None = confirmed  # last position that left the queue
        # the last message the client had that left the queue: unlike ``confirmed`` never a
        # silent checkpoint message, whose (LWN SCN, 0) may equal a transaction's position
        self.client_has: Position | None = confirmed
        self.max_sent: Position | None = confirmed  # highest position a client was given (or claimed)
        self.sent_total = 0  # messages ever handed to a client
        self.skip: Position | None = None  # resume position: entries up to it are silent
        self.hold: Position | None = None  # a resumed client's position the replay has not reached yet
        self.hold_since = 0.0
        self.hold_limit_s = HOLD_LIMIT_S

    def __len__(self) -> int:
        """Messages in the queue."""
        with self._cond:
            return self._count

    def wait_for_space(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds until a message fits; True when one does."""
        with self._cond:
            return self._cond.wait_for(lambda: self._count < self.capacity, max(0.0, timeout))

    def wait_empty(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds until every entry left; True when empty."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._entries, max(0.0, timeout))

    def put(self, entry: AnyEntry) -> None:
        """Append ``entry`` even beyond capacity (callers wait for space first)."""
        with self._cond:
            self._append(entry)
            self._release()

    def put_many(self, entries: list[AnyEntry]) -> int:
        """Append as many of ``entries`` as fit; returns how many were taken whole.

        A RunEntry with more messages than the room left is split: its head goes in and
        the entry in ``entries`` keeps the rest (the first one not taken whole)."""
        with self._cond:
            taken = 0
            for entry in entries:
                room = self.capacity - self._count
                if room <= 0:
                    break
                if entry.count > room:
                    assert isinstance(entry, RunEntry)
                    self._append(entry.split(room))
                    break
                self._append(entry)
                taken += 1
            self._release()
            return taken

    def take_unsent(self, limit: int) -> list[AnyEntry]:
        """Entries from the cursor on that must be delivered, up to ``limit`` messages (at
        least one entry), marked as sent.

        Silent entries are stepped over; the cursor moves past everything returned.
        """
        taken: list[AnyEntry] = []
        now = time.monotonic()
        with self._cond:
            entries = self._entries
            if self.hold is not None and not self._hold_expired(now):
                return taken
            messages = 0
            while self.cursor < len(entries) and messages < limit:
                entry = entries[self.cursor]
                self.cursor += 1
                if entry.silent:
                    continue
                entry.sent_at = now
                taken.append(entry)
                messages += entry.count
            if taken:
                self.sent_total += messages
                for entry in taken:
                    self._note_sent(entry.last)
            return taken

    def mark_done(self, entry: AnyEntry) -> None:
        """The sink delivered ``entry`` (e.g. a Kafka delivery report)."""
        with self._cond:
            entry.done = True
            self._release()

    def confirm_through(self, position: Position) -> int:
        """A client CONFIRM: remove sent messages up to ``position``; returns how many.

        When a sent message has exactly that position (a client echoing the last message it
        processed), everything up to the first such message goes, and nothing after it:
        positions are not guaranteed to grow (c_scn is a transaction's begin SCN), so a
        later message with a lower position may not have been processed yet (OLR #330).
        Otherwise the leading run of sent messages at or below ``position`` goes.
        """
        removed = 0
        with self._cond:
            exact = self._exact(position, self.cursor)
            if exact is not None:
                index, offset = exact
                for _ in range(index):
                    removed += self._pop(done=True)
                removed += self._pop(offset + 1, done=True)
            else:
                while self._entries and self.cursor > 0:
                    head = self._entries[0]
                    covered = head.count if head.silent else head.covered(position)
                    if not covered:
                        break
                    whole = covered == head.count
                    removed += self._pop(covered, done=True)
                    if not whole:
                        break  # the run's next message lies above the position
            removed += self._release()
        return removed

    def resume_after(self, position: Position | None) -> None:
        """A client CONTINUE: restart delivery at the front, dropping only what it provably has.

        A client has a queued message only if that message was handed to a client and the
        client names exactly its position: everything up to the first such message is then
        dropped (confirmed without being sent again). Any other position drops nothing, and
        the unconfirmed messages are sent again (duplicates, never a loss): positions are
        neither unique nor growing (c_scn is a transaction's begin SCN), so "at or below
        it" cannot tell what the client has, and a position it was never sent must not
        confirm anything (issue 31). A pending :meth:`resume_at` hold ends.
        """
        with self._cond:
            self.cursor = 0
            self.hold = None
            if position is None:
                return
            exact = self._exact(position, len(self._entries), sent=True)
            if exact is not None:
                self._drop_through(*exact)

    def resume_at(self, position: Position) -> None:
        """A client CONTINUE after a restart, at a position this writer has not produced yet.

        The replay will produce the client's message again (positions are deterministic),
        but positions do not grow along the stream (c_scn is a transaction's begin SCN),
        so "skip what is at or below it" is wrong both ways: it re-sent messages the
        client had confirmed (a later-committed transaction with a lower begin SCN ends
        the skip) and could drop new ones. Instead nothing is sent until the message at
        exactly ``position`` arrives; everything up to it is then dropped as the client
        has it. Should it not arrive within ``capacity`` messages or ``hold_limit_s``
        seconds, the held messages are sent after all (duplicates, never a loss) with a
        warning.
        """
        with self._cond:
            self.cursor = 0
            self.skip = None
            self._note_sent(position)
            exact = self._exact(position, len(self._entries))
            if exact is not None:
                self._drop_through(*exact)
                self.hold = None
                return
            self.hold = position
            self.hold_since = time.monotonic()

    def rewind(self) -> None:
        """The client went away: everything still queued will be sent again."""
        with self._cond:
            self.cursor = 0

    def unconfirmed(self) -> list[AnyEntry]:
        """Entries not yet delivered, in order (for a Kafka producer rebuild)."""
        with self._cond:
            return [e for e in self._entries if not e.done and not e.silent]

    def take_confirmed(self) -> list[Message]:
        """Messages that left the queue since the last call, in order."""
        out: list[Message] = []
        for entry in self.take_released():
            if isinstance(entry, RunEntry):
                out.extend(entry.messages())
            else:
                out.append(entry.message)
        return out

    def take_released(self) -> list[AnyEntry]:
        """Entries that left the queue since the last call, in order (a run's whole or the
        part of it that left)."""
        with self._cond:
            out, self._out = self._out, []
            return out

    def oldest_sent_at(self) -> float | None:
        """When the oldest undelivered entry was handed to the sink (None if none was)."""
        with self._cond:
            for entry in self._entries:
                if not entry.done and not entry.silent:
                    return entry.sent_at or None
            return None

    # -- internals (lock held) ---------------------------------------------------------------

    def _append(self, entry: AnyEntry) -> None:
        if self.hold is not None and not entry.silent:
            offset = entry.exact(self.hold)
            if offset is not None:
                self._add(entry)
                self._drop_through(len(self._entries) - 1, offset)
                self.hold = None
                return
        if self.skip is not None:
            covered = entry.covered(self.skip)
            if covered == entry.count:
                entry.silent = True  # the resuming client already has it
                self._note_sent(entry.last)
            else:
                if covered:  # a run the skip position ends inside: its head is silent
                    assert isinstance(entry, RunEntry)
                    head = entry.split(covered)
                    head.silent = True
                    self._note_sent(head.last)
                    self._add(head)
                self.skip = None
        self._add(entry)

    def _add(self, entry: AnyEntry) -> None:
        self._entries.append(entry)
        self._count += entry.count

    def _exact(self, position: Position, within: int, sent: bool = False) -> tuple[int, int] | None:
        """(entry index, offset in it) of the first message of the first ``within`` entries at
        exactly ``position`` (``sent``: among those handed to a client)."""
        for index in range(min(within, len(self._entries))):
            entry = self._entries[index]
            if not entry.silent and (entry.sent_at or not sent):
                offset = entry.exact(position)
                if offset is not None:
                    return index, offset
        return None

    def _drop_through(self, index: int, offset: int = 0) -> None:
        """Confirm without sending the queue's messages through message ``offset`` of entry
        ``index`` (a resuming client has them)."""
        for _ in range(index):
            self._pop(silent=True)
        last = self._entries[0].position[0], _message_idx(self._entries[0], offset)
        self._pop(offset + 1, silent=True)
        self.client_has = last
        self._release()

    def _hold_expired(self, now: float) -> bool:
        """Give up holding for a position that does not show up (sending duplicates instead)."""
        if self._count < self.capacity and now - self.hold_since < self.hold_limit_s:
            return False
        assert self.hold is not None
        log.warning(
            60240,
            f"the resumed client's position (scn: {self.hold[0]}, idx: {self.hold[1] + 1}) "
            f"was not found in the {self._count} messages replayed after the restart; "
            "sending them (the client may receive duplicates)",
        )
        self.hold = None
        return True

    def _note_sent(self, position: Position) -> None:
        if self.max_sent is None or position > self.max_sent:
            self.max_sent = position

    def _pop(self, count: int = 0, *, done: bool = False, silent: bool = False) -> int:
        """Remove the head entry, or only its first ``count`` messages (a run split there),
        marked ``done`` or ``silent`` as asked; returns how many messages left."""
        entry = self._entries[0]
        if 0 < count < entry.count:
            assert isinstance(entry, RunEntry)
            entry = entry.split(count)  # the rest stays at the head, still before the cursor
        else:
            self._entries.popleft()
            if self.cursor > 0:
                self.cursor -= 1
        entry.done = entry.done or done
        entry.silent = entry.silent or silent
        self._count -= entry.count
        self.confirmed = entry.last
        if not entry.silent:
            self.client_has = entry.last
        self._out.append(entry)
        self._cond.notify_all()
        return entry.count

    def _release(self) -> int:
        """Remove the leading entries that need nothing more (silent or done)."""
        removed = 0
        while self._entries and (self._entries[0].silent or self._entries[0].done):
            removed += self._pop()
        return removed


def _message_idx(entry: AnyEntry, offset: int) -> int:
    """idx of message ``offset`` of ``entry``."""
    if isinstance(entry, RunEntry):
        return int(_native().run_idx(entry.run, entry.first + offset))
    return entry.message.idx
