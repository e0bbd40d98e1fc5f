"""SIGTERM/SIGINT caught from the first moment of ``replicator run`` (issue 15, fault 9).

The daemon installs its own handlers on its event loop, but only after imports, the
config, the checkpoints and (online) the database session are ready, several seconds
in. Until then Python's default action would kill it with rc -15 and no final
checkpoint. :func:`capture` records such signals instead; the daemon replays them as
soon as its handlers are in place (a clean stop), and a batch run puts the default
handlers back and re-raises what arrived.
"""

from __future__ import annotations

import os
import signal
from types import FrameType

_SIGNALS = (signal.SIGTERM, signal.SIGINT)
_pending: list[int] = []


def _remember(signum: int, frame: FrameType | None) -> None:
    _pending.append(signum)
    if len(_pending) > 1:  # a second signal exits at once, as it does once the daemon runs
        os.write(2, f"ERROR 10015 caught signal {signum} again during startup, exiting immediately\n".encode())
        os._exit(1)


def capture() -> None:
    """Record SIGTERM and SIGINT from now on, instead of dying."""
    for sig in _SIGNALS:
        signal.signal(sig, _remember)


def take() -> list[int]:
    """The signals recorded so far (and forget them)."""
    taken = list(_pending)
    _pending.clear()
    return taken


def release() -> None:
    """Back to Python's default handlers; a signal caught meanwhile is raised again now."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for sig in take():
        signal.raise_signal(sig)
