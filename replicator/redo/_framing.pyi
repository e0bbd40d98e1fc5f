"""Typed interface of the block checks (replicator/redo/_framing.pyx).

The record loop (_dispatch) calls them through _framing.pxd; python reaches check_chunk and
raise_chunk as ``replicator.native.framing()``. Checked by stubtest (tests/unit/test_gates.py).
"""

def check_chunk(
    buf: bytes, first_block: int, block_size: int, sequence: int, big: bool, verify: bool
) -> tuple[int, int]:
    """RecordLoop.feed's block checks with the GIL released: (-1, 0), or the first bad block's
    (index, status)."""

def raise_chunk(status: int, path: str, block_size: int, block: int) -> None:
    """Raise RecordLoop.feed's error for a bad block (check_chunk's status)."""
