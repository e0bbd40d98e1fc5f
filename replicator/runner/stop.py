"""SIGTERM and SIGINT during a batch run: a soft stop at the next LWN, like the daemon's.

Python's default action would kill the run on SIGTERM (exit 143, nothing logged, no final
checkpoint) and raise KeyboardInterrupt anywhere on SIGINT. Instead the first signal is
logged and recorded; the run's observer (:class:`~replicator.runner.runwatch.RunWatch`) ends
the run at the next LWN boundary, where the parser's state is whole, so the final schema
checkpoint is written as at the end of a run and the writer is flushed and closed. A
second signal exits at once (the daemon's rule).
"""

from __future__ import annotations

import os
import signal
from types import FrameType

from replicator import log

SIGNALS = (signal.SIGTERM, signal.SIGINT)


class SoftStop:
    """The stop request of one batch run (``signum`` 0 until a signal arrives)."""

    def __init__(self) -> None:
        self.signum = 0

    def install(self) -> None:
        """Handle SIGTERM/SIGINT from now on; those caught during start-up count as arrived now."""
        from replicator.ops import early_signals

        for sig in SIGNALS:
            signal.signal(sig, self._on_signal)
        for early in early_signals.take():
            self._on_signal(early, None)

    def uninstall(self) -> None:
        """Back to Python's default handlers."""
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.signum:
            os.write(2, f"ERROR 10015 caught signal {signum} again, exiting immediately\n".encode())
            os._exit(1)
        self.signum = signum
        log.info(f"caught signal {signum}, stopping at the next LWN: flushing the writer, writing a final checkpoint")

    @property
    def exit_code(self) -> int:
        """128 + the signal number, as a shell reports a process the signal ended."""
        return 128 + self.signum
