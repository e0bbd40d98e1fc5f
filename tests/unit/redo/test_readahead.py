"""The reader thread of redo.readahead: pieces in order, the producer's error in its place,
and no thread left behind when the consumer stops early or fails."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import nullcontext

import pytest

from replicator.errors import RedoLogError
from replicator.redo.readahead import ReadAhead


def _readers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "replicator-read-ahead"]


def test_pieces_in_order_then_the_end() -> None:
    reader = ReadAhead(lambda: iter(range(1000)), 3)
    assert list(reader) == list(range(1000))
    assert not reader.alive and not _readers()


def test_error_after_the_pieces_before_it() -> None:
    error = RedoLogError("file x: short read at block 40", 40007)

    def produce() -> Iterator[int]:
        yield from range(5)
        raise error

    got: list[int] = []
    reader = ReadAhead(produce, 2)
    with pytest.raises(RedoLogError) as e:
        for piece in reader:
            got.append(piece)
    assert got == [0, 1, 2, 3, 4]
    assert e.value is error and e.value.code == 40007
    assert not reader.alive and not _readers()


@pytest.mark.parametrize("how", ["break", "raise"])
def test_an_early_stop_ends_and_closes_the_producer(how: str) -> None:
    closed = threading.Event()
    where: list[str] = []

    def produce() -> Iterator[int]:
        try:
            n = 0
            while True:  # more than the consumer takes: the reader waits for room
                yield n
                n += 1
        finally:
            where.append(threading.current_thread().name)
            closed.set()

    reader = ReadAhead(produce, 2)
    got: list[int] = []
    with pytest.raises(ValueError) if how == "raise" else nullcontext():
        for piece in reader:
            got.append(piece)
            if piece == 3:
                if how == "raise":
                    raise ValueError("the consumer failed")
                break
    reader.close()  # (the loop's end closes it; a second close is harmless)
    assert got == [0, 1, 2, 3]
    assert closed.is_set() and where == ["replicator-read-ahead"]  # the producer closed in its own thread
    assert not reader.alive and not _readers()


def test_an_error_opening_comes_first() -> None:
    def produce() -> Iterator[int]:
        raise RedoLogError("file x: not a redo log", 40001)

    with pytest.raises(RedoLogError) as e:
        list(ReadAhead(produce, 4))
    assert e.value.code == 40001
    assert not _readers()
