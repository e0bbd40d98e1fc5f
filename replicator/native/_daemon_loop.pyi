"""Typed interface of the daemon's record loops (replicator/native/_daemon_loop.pyx).

BlockLoop, ThreadLoop and RacMerge subclass _dispatch's RecordLoop and RecordDispatcher through
_dispatch.pxd; the runner's drivers reach them as ``replicator.native.daemon_loop()``. Checked by
stubtest (tests/unit/test_gates.py).
"""

from typing import Any

from typing_extensions import disjoint_base

from replicator.native._dispatch import RecordDispatcher, RecordLoop

@disjoint_base
class BlockLoop(RecordLoop):
    """RecordLoop for the daemon: blocks fed as the reader delivers them, LWN totals kept."""

    lwn_blocks: int
    @property
    def last_scn(self) -> int: ...
    @property
    def last_time(self) -> int: ...
    def __init__(self, parser: Any, header: Any, path: str, verify_checksum: bool, first_block: int) -> None: ...
    def set_path(self, path: str) -> None:
        """The file the next blocks come from (named in errors)."""

@disjoint_base
class LwnBuf:
    """A complete LWN framed by a ThreadLoop: its records in OLR's order and their bytes."""

    n: int
    index: int
    lwn: Any
    @property
    def last_scn(self) -> int: ...

@disjoint_base
class ThreadLoop(RecordLoop):
    """RecordLoop of one RAC redo thread: complete LWNs go to ``ready`` (LwnBuf), not analysed."""

    def __init__(
        self, parser: Any, header: Any, path: str, verify_checksum: bool, first_block: int, ready: Any
    ) -> None: ...
    def set_path(self, path: str) -> None: ...

class RacMerge(RecordDispatcher):
    """RacEngine._merge in C over the threads' LwnBufs."""

    def run(self, engine: Any, parser: Any, threads: list[Any], stop: Any) -> None: ...
