"""Typed interface of stage 1's record dispatch and batch record loop (replicator/native/_dispatch.pyx).

The daemon's loops subclass RecordDispatcher and RecordLoop through _dispatch.pxd; python reaches
this module as ``replicator.native.dispatch()``. Checked by stubtest (tests/unit/test_gates.py).
Every ``cdef class`` with fields of its own is a ``@disjoint_base``: its instance layout is C's.
"""

from typing import Any

from typing_extensions import disjoint_base

@disjoint_base
class RecordDispatcher:
    """Parser._dispatch in C for one record or an LWN's records (the (5.1, 11.x) pairs stored natively)."""

    def __init__(self) -> None: ...  # stubtest sees (*args, **kwargs): see the allowlist
    def dispatch(self, parser: Any, record: Any) -> bool:
        """Process ``record``; False (nothing done) when the python parser must process it."""
    def dispatch_records(self, parser: Any, records: list[Any]) -> None:
        """Process an LWN's records in order (each natively, else by ``parser.process_record``)."""

@disjoint_base
class RecordLoop(RecordDispatcher):
    """Block checks, record framing, LWNs and dispatch of one archived redo file, in C."""

    lwns: int
    python_steps: int

    def __init__(
        self,
        parser: Any,
        header: Any,
        path: str,
        verify_checksum: bool,
        first_block: int,
        on_lwn: Any = None,
        checkpoint_step: Any = None,
    ) -> None: ...
    def set_checkpoint_step(self, full: Any, fmt: Any, manager: Any, hook: Any) -> None:
        """Take over the parser's per-LWN checkpoint (C step; python only when a file is written)."""
    def feed(self, buf: bytes, first_block: int, count: int, checked: bool = False) -> None:
        """Check ``count`` blocks read from ``first_block`` on (unless ``checked``: _framing's check_chunk
        passed them); analyse every LWN they complete."""
    def finish(self) -> None:
        """The end of the valid data: analyse the last LWN."""

def vector_passes(data: bytes, start: int, header_size: int, endian: str, compat: int) -> bool:
    """The C field checks on one vector (tests): True when it passes, as invariants.check_vector."""
