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

Removed messages are collected and handed out by :meth:`ConfirmQueue.take_confirmed`, so
the writer reports them (``on_confirm``) on its caller's thread, in order. All methods
are thread-safe: a stream writer's I/O thread and the pipeline thread share one queue.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

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

    @property
    def position(self) -> Position:
        """The message's (c_scn, internal idx)."""
        return (self.message.scn, self.message.idx)


class ConfirmQueue:
    """FIFO of unconfirmed messages with a send cursor (see the module docstring)."""

    def __init__(self, capacity: int, confirmed: Position | None = None) -> None:
        self.capacity = capacity
        self._entries: deque[Entry] = deque()
        self._cond = threading.Condition()
        self._out: list[Message] = []
        self.cursor = 0  # entries [0, cursor) were handed to the current stream client
        self.confirmed: Position | None = confirmed  # last position that left the queue
        # the last message the client had that left the queue: unlike ``confirmed`` never a
        # silent checkpoint message, whose (LWN SCN, 0) may equal a transaction's position
        self.client_has: Position | None = confirmed
        self.max_sent: Position | None = confirmed  # highest position a client was given (or claimed)
        self.sent_total = 0  # entries ever handed to a client
        self.skip: Position | None = None  # resume position: entries up to it are silent
        self.hold: Position | None = None  # a resumed client's position the replay has not reached yet
        self.hold_since = 0.0
        self.hold_limit_s = HOLD_LIMIT_S

    def __len__(self) -> int:
        with self._cond:
            return len(self._entries)

    def wait_for_space(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds until an entry fits; True when one does."""
        with self._cond:
            return self._cond.wait_for(lambda: len(self._entries) < self.capacity, max(0.0, timeout))

    def wait_empty(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds until every entry left; True when empty."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._entries, max(0.0, timeout))

    def put(self, entry: Entry) -> None:
        """Append ``entry`` even beyond capacity (callers wait for space first)."""
        with self._cond:
            self._append(entry)
            self._release()

    def put_many(self, entries: list[Entry]) -> int:
        """Append as many of ``entries`` as fit; returns how many were taken."""
        with self._cond:
            room = max(0, self.capacity - len(self._entries))
            for entry in entries[:room]:
                self._append(entry)
            self._release()
            return min(room, len(entries))

    def take_unsent(self, limit: int) -> list[Entry]:
        """Up to ``limit`` entries from the cursor on that must be delivered, marked as sent.

        Silent entries are stepped over; the cursor moves past everything returned.
        """
        taken: list[Entry] = []
        now = time.monotonic()
        with self._cond:
            entries = self._entries
            if self.hold is not None and not self._hold_expired(now):
                return taken
            while self.cursor < len(entries) and len(taken) < limit:
                entry = entries[self.cursor]
                self.cursor += 1
                if entry.silent:
                    continue
                entry.sent_at = now
                taken.append(entry)
            if taken:
                self.sent_total += len(taken)
                for entry in taken:
                    self._note_sent(entry.position)
            return taken

    def mark_done(self, entry: Entry) -> None:
        """The sink delivered ``entry`` (e.g. a Kafka delivery report)."""
        with self._cond:
            entry.done = True
            self._release()

    def confirm_through(self, position: Position) -> int:
        """A client CONFIRM: remove sent entries up to ``position``; returns how many.

        When a sent entry has exactly that position (a client echoing the last message it
        processed), everything up to the first such entry goes, and nothing after it:
        positions are not guaranteed to grow (c_scn is a transaction's begin SCN), so a
        later message with a lower position may not have been processed yet (OLR #330).
        Otherwise the leading run of sent entries at or below ``position`` goes.
        """
        removed = 0
        with self._cond:
            limit = self._exact(position, self.cursor)
            while self._entries and self.cursor > 0:
                head = self._entries[0]
                if limit is None and not head.silent and head.position > position:
                    break
                head.done = True
                self._pop()
                removed += 1
                if limit is not None:
                    limit -= 1
                    if limit < 0:
                        break
            removed += self._release()
        return removed

    def resume_after(self, position: Position | None) -> None:
        """A client CONTINUE: restart delivery at the front, dropping only what it provably has.

        A client has a queued message only if that message was handed to a client and the
        client names exactly its position: everything up to the first such entry is then
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
            limit = self._exact(position, len(self._entries), sent=True)
            if limit is not None:
                self._drop_through(limit)

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
            limit = self._exact(position, len(self._entries))
            if limit is not None:
                self._drop_through(limit)
                self.hold = None
                return
            self.hold = position
            self.hold_since = time.monotonic()

    def rewind(self) -> None:
        """The client went away: everything still queued will be sent again."""
        with self._cond:
            self.cursor = 0

    def unconfirmed(self) -> list[Entry]:
        """Entries not yet delivered, in order (for a Kafka producer rebuild)."""
        with self._cond:
            return [e for e in self._entries if not e.done and not e.silent]

    def take_confirmed(self) -> list[Message]:
        """Messages that left the queue since the last call, in order."""
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

    def _append(self, entry: Entry) -> None:
        if self.hold is not None and not entry.silent and entry.position == self.hold:
            self._entries.append(entry)
            self._drop_through(len(self._entries) - 1)
            self.hold = None
            return
        if self.skip is not None:
            if entry.position <= self.skip:
                entry.silent = True  # the resuming client already has it
                self._note_sent(entry.position)
            else:
                self.skip = None
        self._entries.append(entry)

    def _exact(self, position: Position, within: int, sent: bool = False) -> int | None:
        """Index of the first of the first ``within`` entries at exactly ``position`` (``sent``:
        among those handed to a client)."""
        for index in range(min(within, len(self._entries))):
            entry = self._entries[index]
            if not entry.silent and entry.position == position and (entry.sent_at or not sent):
                return index
        return None

    def _drop_through(self, index: int) -> None:
        """Confirm without sending the first ``index + 1`` entries (a resuming client has them)."""
        last = self._entries[index].position
        for _ in range(index + 1):
            self._entries[0].silent = True
            self._pop()
        self.client_has = last
        self._release()

    def _hold_expired(self, now: float) -> bool:
        """Give up holding for a position that does not show up (sending duplicates instead)."""
        if len(self._entries) < self.capacity and now - self.hold_since < self.hold_limit_s:
            return False
        assert self.hold is not None
        log.warning(
            60240,
            f"the resumed client's position (scn: {self.hold[0]}, idx: {self.hold[1] + 1}) "
            f"was not found in the {len(self._entries)} messages replayed after the restart; "
            "sending them (the client may receive duplicates)",
        )
        self.hold = None
        return True

    def _note_sent(self, position: Position) -> None:
        if self.max_sent is None or position > self.max_sent:
            self.max_sent = position

    def _pop(self) -> None:
        entry = self._entries.popleft()
        self.confirmed = entry.position
        if not entry.silent:
            self.client_has = entry.position
        self._out.append(entry.message)
        if self.cursor > 0:
            self.cursor -= 1
        self._cond.notify_all()

    def _release(self) -> int:
        """Remove the leading entries that need nothing more (silent or done)."""
        removed = 0
        while self._entries and (self._entries[0].silent or self._entries[0].done):
            self._pop()
            removed += 1
        return removed
