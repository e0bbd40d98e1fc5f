"""A one-line progress display for batch runs, and an optional cap on the redo read rate.

The display shows files, MB, the SCN reached, rows/s and an ETA, redrawn in place at
most a few times a second. It is for people watching a terminal: it switches itself off
when the stream is not a TTY (logs, CI, systemd), unless asked explicitly.

:class:`Pacer` slows a run down to a given MB/s. Operators use it to keep a catch-up
from saturating the disks shared with the database; tests use it to watch a run.
"""

from __future__ import annotations

import logging
import shutil
import sys
import time
from collections.abc import Callable
from typing import TextIO

MB = 1_000_000


def progress_wanted(mode: str, stream: TextIO) -> bool:
    """``--progress`` ``on``/``off``/``auto``: auto shows it only on a terminal."""
    if mode == "on":
        return True
    if mode == "off":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def format_duration(seconds: float) -> str:
    """``H:MM:SS`` (``--:--:--`` when unknown)."""
    if seconds != seconds or seconds < 0 or seconds == float("inf"):
        return "--:--:--"
    whole = int(seconds + 0.5)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class Progress:
    """Redraws one status line on ``stream`` for a run over ``total_files``/``total_bytes``.

    Call :meth:`update` as often as you like (it throttles itself to ``interval``), and
    :meth:`finish` once at the end to leave the final figures on their own line. While
    it is shown, a log line from the ``log_name`` logger first erases the status line, so
    the two never end up on one line.
    """

    def __init__(
        self,
        total_files: int,
        total_bytes: int,
        stream: TextIO | None = None,
        *,
        interval: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        log_name: str | None = "replicator",
    ) -> None:
        self.total_files = total_files
        self.total_bytes = max(total_bytes, 0)
        self.stream = sys.stderr if stream is None else stream
        self.interval = interval
        self._clock = clock
        self._started = clock()
        self._next = 0.0
        self._width = 0
        self.last_line = ""
        self._logger = logging.getLogger(log_name) if log_name else None
        self._guard = _EraseBeforeLog(self)
        if self._logger is not None:
            self._logger.addFilter(self._guard)

    def clear(self) -> None:
        """Erase the status line (it is redrawn by the next :meth:`update`)."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
            self._next = 0.0

    def render(self, files_done: int, bytes_done: int, scn: int, rows: int, elapsed: float) -> str:
        """The status line for these figures (pure; used by :meth:`update`)."""
        rate = rows / elapsed if elapsed > 0 else 0.0
        speed = bytes_done / elapsed if elapsed > 0 else 0.0
        remaining = max(self.total_bytes - bytes_done, 0)
        eta = remaining / speed if speed > 0 else float("nan")
        share = bytes_done / self.total_bytes if self.total_bytes else 1.0
        bar_len = 20
        filled = min(bar_len, int(share * bar_len))
        bar = "#" * filled + "." * (bar_len - filled)
        return (
            f"[{bar}] {min(files_done, self.total_files)}/{self.total_files} files  "
            f"{bytes_done / MB:.1f}/{self.total_bytes / MB:.1f} MB  SCN {scn}  "
            f"{rate:,.0f} rows/s  {speed / MB:.1f} MB/s  ETA {format_duration(eta)}"
        )

    def update(self, files_done: int, bytes_done: int, scn: int, rows: int, *, force: bool = False) -> None:
        """Redraw the line if ``interval`` has passed (always with ``force``)."""
        now = self._clock()
        if not force and now < self._next:
            return
        self._next = now + self.interval
        line = self.render(files_done, bytes_done, scn, rows, now - self._started)
        columns = shutil.get_terminal_size((100, 20)).columns
        line = line[: max(columns - 1, 20)]
        # Pad over the previous, possibly longer, line instead of relying on escape codes.
        pad = max(self._width - len(line), 0)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self._width = len(line)
        self.last_line = line

    def finish(self, files_done: int, bytes_done: int, scn: int, rows: int) -> None:
        """Draw the final figures and end the line."""
        if self._logger is not None:
            self._logger.removeFilter(self._guard)
        self.update(files_done, bytes_done, scn, rows, force=True)
        self.stream.write("\n")
        self.stream.flush()
        self._width = 0


class _EraseBeforeLog(logging.Filter):
    """A logger filter that never drops a record; it erases the status line first."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress

    def filter(self, record: logging.LogRecord) -> bool:
        self.progress.clear()
        return True


class Pacer:
    """Keeps the average read rate at or below ``mb_per_s`` by sleeping.

    ``pace(total_bytes)`` is called with the bytes processed so far; it sleeps until
    the time those bytes are due at the configured rate. Sleeps are capped at
    ``max_sleep`` per call so that signals and shutdown stay responsive.
    """

    def __init__(
        self,
        mb_per_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        max_sleep: float = 1.0,
    ) -> None:
        if mb_per_s <= 0:
            raise ValueError("the read rate limit must be positive")
        self.bytes_per_s = mb_per_s * MB
        self._clock = clock
        self._sleep = sleep
        self._max_sleep = max_sleep
        self._started = clock()

    def pace(self, total_bytes: int) -> None:
        """Sleep while ``total_bytes`` is ahead of the allowed rate."""
        due = self._started + total_bytes / self.bytes_per_s
        wait = due - self._clock()
        while wait > 0:
            self._sleep(min(wait, self._max_sleep))
            wait = due - self._clock()
