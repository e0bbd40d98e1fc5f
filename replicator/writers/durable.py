"""Keeping the saved (durable) confirmed position close behind a writer's confirmations.

A writer whose confirmations arrive while it is busy (Kafka delivery reports during a long
``write``) cannot wait for the daemon's periodic save: a SIGKILL would re-send everything
confirmed since. :class:`DurableLag` has the position saved by a thread of its own (an
fsync'd file write takes ~10 ms of wall time, which the producing thread should not wait
for) once ``every`` confirmations are unsaved or ``interval_s`` passed, and makes the
producer wait while ``limit`` confirmations are unsaved. So at most ``limit - 1``
confirmed messages lie beyond the saved position, plus what is produced but unconfirmed.

The count is conservative: a save covers at least the confirmations counted before it
started (the position is read when the save runs, later). An exception raised by a save
(10102: nothing could be saved for too long) is raised again on the producer's thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

WAIT_S = 1.0  # how long the producer waits for one save before it looks again


class DurableLag:
    """Counts confirmations not yet saved; saves them off the caller's thread; bounds the lag."""

    def __init__(self, save: Callable[[], bool], every: int, limit: int, interval_s: float) -> None:
        self.save = save
        self.every = every
        self.limit = limit
        self.interval_s = interval_s
        self.saves = 0  # saves that succeeded
        self._cond = threading.Condition()
        self._confirmed = 0  # confirmations counted so far
        self._durable = 0  # of them, covered by a completed save
        self._first_unsaved = 0.0  # monotonic time of the oldest unsaved confirmation
        self._requested = False
        self._failed = False  # the last save failed (a full disk): the producer does not wait
        self._closed = False
        self._error: BaseException | None = None  # raised by a save, re-raised to the producer
        self._thread: threading.Thread | None = None

    def confirmed(self, count: int) -> None:
        """``count`` more confirmations were reported; start a save when one is due."""
        now = time.monotonic()
        with self._cond:
            self._raise()
            if count:
                if self._confirmed == self._durable:
                    self._first_unsaved = now
                self._confirmed += count
            unsaved = self._confirmed - self._durable
            if (
                unsaved
                and not self._requested
                and (unsaved >= self.every or now - self._first_unsaved >= self.interval_s)
            ):
                self._requested = True
                self._start()
                self._cond.notify_all()

    def wait_room(self) -> None:
        """Block while ``limit`` confirmations are unsaved (unless saves are failing)."""
        with self._cond:
            self._raise()
            while self._confirmed - self._durable >= self.limit and not self._failed and not self._closed:
                if not self._requested:
                    self._requested = True
                    self._start()
                    self._cond.notify_all()
                self._cond.wait(WAIT_S)
                self._raise()

    @property
    def unsaved(self) -> int:
        """Confirmations not covered by a completed save."""
        with self._cond:
            return self._confirmed - self._durable

    def close(self) -> None:
        """Stop the thread, then save once more if confirmations are unsaved (those a writer's
        close() waited for arrive after the daemon's last save) and the last save worked."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        if self.unsaved and not self._failed and self.save():
            with self._cond:
                self._durable = self._confirmed
                self.saves += 1

    def _raise(self) -> None:
        """Lock held: re-raise a save's exception on the caller's thread (once)."""
        error, self._error = self._error, None
        if error is not None:
            raise error

    def _start(self) -> None:
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(target=self._run, name="durable-position", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._requested and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                target = self._confirmed  # the save reads the position later: it covers at least these
            try:
                ok = self.save()
            except Exception as exc:  # handed to the producer's thread, which stops on it
                with self._cond:
                    self._error, self._failed, self._requested = exc, True, False
                    self._cond.notify_all()
                continue
            with self._cond:
                self._requested = False
                self._failed = not ok
                if ok:
                    self._durable = max(self._durable, target)
                    self.saves += 1
                    if self._confirmed > self._durable:
                        self._first_unsaved = time.monotonic()
                        self._requested = self._confirmed - self._durable >= self.every  # due already
                self._cond.notify_all()
