"""Reading ahead in a thread of its own: the next pieces are read (and checked) while the
current one is parsed.

:class:`ReadAhead` runs a producer (an iterator of pieces: a redo file's buffers of blocks, see
:func:`replicator.redo.reader.read_chunks`) in a reader thread, at most ``depth`` pieces ahead
of the consumer (a bounded queue). The consumer sees the pieces in order, then the producer's
end, or its error at the place it happened: after every piece read before it, exactly as if
it had iterated the producer itself. Leaving the iteration early (an error of the consumer, a
stop, ``break``) stops the reader at its next piece and waits for it to end (it closes the
producer, so a file it holds open is closed), so no thread outlives the iteration.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

# What the queue carries: a piece, the producer's end, or the error that ended it.
_PIECE, _END, _ERROR = 0, 1, 2
_STOP_POLL = 0.05  # seconds a reader waiting for room goes without looking at the stop


class ReadAhead(Generic[T]):
    """Iterate ``produce()`` in a reader thread, up to ``depth`` pieces ahead (iterate it once)."""

    def __init__(self, produce: Callable[[], Iterable[T]], depth: int, name: str = "replicator-read-ahead"):
        self._queue: queue.Queue[tuple[int, object]] = queue.Queue(max(1, depth))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._read, args=(produce,), name=name, daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        """True while the reader thread runs (tests)."""
        return self._thread.is_alive()

    def _put(self, kind: int, value: object) -> bool:
        """Queue one item, waiting for room; False when the consumer stopped meanwhile."""
        while not self._stop.is_set():
            try:
                self._queue.put((kind, value), timeout=_STOP_POLL)
                return True
            except queue.Full:
                continue
        return False

    def _read(self, produce: Callable[[], Iterable[T]]) -> None:
        try:
            pieces = iter(produce())
            try:
                for piece in pieces:
                    if not self._put(_PIECE, piece):
                        return
            finally:
                close = getattr(pieces, "close", None)
                if close is not None:
                    close()  # a generator's finally (the file it reads is closed here, in its thread)
        except BaseException as e:  # the consumer raises it in its place
            self._put(_ERROR, e)
            return
        self._put(_END, None)

    def __iter__(self) -> Iterator[T]:
        try:
            while True:
                kind, value = self._queue.get()
                if kind == _PIECE:
                    yield value  # type: ignore[misc]  # a T (the queue holds pieces and markers)
                elif kind == _END:
                    return
                else:
                    assert isinstance(value, BaseException)
                    raise value
        finally:
            self.close()

    def close(self) -> None:
        """Stop the reader (it ends at its next piece) and wait for its end."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()
