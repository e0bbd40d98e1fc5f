"""A "still working" line on a terminal for steps that are otherwise silent for long.

``with Ticker(lambda elapsed: f"writing redo: {done()} MB"):`` redraws that text on stderr
twice a second while the block runs, then erases it. Like the batch progress line it shows
only on a TTY (``mode="auto"``), never in logs, pipes or under systemd, unless asked for
with ``mode="on"``.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TextIO

from replicator.ops.progress import format_duration, progress_wanted

INTERVAL = 0.5  # seconds between redraws unless a Ticker is given its own


class Ticker:
    """Redraws ``text(elapsed_seconds)`` every ``interval`` seconds from a background thread."""

    def __init__(
        self,
        text: Callable[[float], str],
        *,
        mode: str = "auto",
        stream: TextIO | None = None,
        interval: float | None = None,
    ) -> None:
        self.text = text
        self.stream = sys.stderr if stream is None else stream
        self.interval = INTERVAL if interval is None else interval
        self.enabled = progress_wanted(mode, self.stream)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._width = 0
        self._started = time.monotonic()

    def __enter__(self) -> Ticker:
        self._started = time.monotonic()
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="ticker", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            if self._width:
                self._write("")  # erase: what follows starts on a clean line

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                line = self.text(time.monotonic() - self._started)
            except Exception:  # noqa: BLE001 - a display must never break the work it shows
                continue
            self._write(line)

    def _write(self, line: str) -> None:
        pad = max(self._width - len(line), 0)
        self.stream.write("\r" + line + " " * pad + ("\r" if not line else ""))
        self.stream.flush()
        self._width = len(line)


def elapsed_text(what: str) -> Callable[[float], str]:
    """``what ... 0:00:12``: the text of a step whose progress cannot be measured."""
    return lambda elapsed: f"{what} ... {format_duration(elapsed)}"
