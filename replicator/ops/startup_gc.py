"""The garbage collector during the start-up of ``replicator run`` and ``bench``.

Imports, the config and the schema checkpoint allocate hundreds of thousands of objects
that all live as long as the run; every few hundred allocations trigger a collection that
only walks them again (tens of milliseconds of a run that takes a fraction of a second).
The command pauses the collector while it starts; the run resumes it right after
``gc.freeze()`` has moved those objects out of its way (runner.batch.run_job), the daemon
before it starts, and the command in any case when it returns.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Stop automatic collections until :func:`resume` (nothing if already disabled)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Undo :func:`pause` (nothing when it did not disable the collector)."""
    global _paused
    if _paused:
        _paused = False
        gc.enable()
