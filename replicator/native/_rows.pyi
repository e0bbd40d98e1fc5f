"""Typed interface of the engine's commit for the typed row images (replicator/native/_rows.pyx).

Checked against the built module by stubtest (tests/unit/test_gates.py, with
tests/unit/stubtest_allowlist.txt). Python reaches it as ``replicator.native.rows()``.
"""

from replicator.native._core import JsonCommitter

class EventCommitter(JsonCommitter):
    """Commits transactions natively for an EventFormat with ``on_native_row``."""
