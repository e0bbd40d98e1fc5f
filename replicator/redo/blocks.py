"""Vectorised block checks over whole read buffers (redo-format.md §2).

Blocks are verified many at a time with numpy: the checksum rule (XOR of all 16-bit
words of a block is zero), the block number and the sequence in every block header.
The verified blocks are returned as one *payload stream*: the block bodies (without
their 16-byte headers) concatenated, in which redo records are contiguous.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from replicator.errors import RedoLogError

BLOCK_HEADER = 16


class BlockStatus(enum.Enum):
    """Outcome of checking one buffer of blocks (the reader's small result enum)."""

    OK = "ok"
    EMPTY = "empty"  # a never-written block (bytes 0 and 1 are zero): the end of an online log
    OVERWRITTEN = "overwritten"  # sequence in a block header is higher than expected
    OLD = "old"  # sequence lower than expected: not yet written in this cycle
    CRC_ERROR = "crc-error"
    BAD_BLOCK = "bad-block"


@dataclass(slots=True)
class BlockCheck:
    """Result of :func:`check_blocks`: how many leading blocks are good, and why it stopped."""

    good: int
    status: BlockStatus
    bad_block: int = -1  # absolute block number of the first bad block


def check_blocks(
    buf: bytes | memoryview,
    first_block: int,
    block_size: int,
    sequence: int,
    endian: str,
    verify_checksum: bool = True,
) -> BlockCheck:
    """Check a buffer holding whole blocks starting at block number ``first_block``.

    Returns the number of leading blocks that pass and the status of the first one that
    does not (``OK`` when all pass). Never raises: the caller decides whether a failure
    is fatal (archived log) or means "not written yet" (online log).
    """
    import numpy as np  # here, not at import: the native engine's runs never need it

    n = len(buf) // block_size
    if n == 0:
        return BlockCheck(0, BlockStatus.OK)
    raw = np.frombuffer(buf, dtype=np.uint8, count=n * block_size).reshape(n, block_size)
    words = np.frombuffer(buf, dtype=endian + "u4", count=n * block_size // 4).reshape(n, block_size // 4)
    empty = (raw[:, 0] == 0) & (raw[:, 1] == 0)
    numbers_bad = words[:, 1] != np.arange(first_block, first_block + n, dtype=np.uint32)
    seq = words[:, 2]
    if verify_checksum:
        halves = np.frombuffer(buf, dtype=np.uint16, count=n * block_size // 2).reshape(n, block_size // 2)
        crc_bad = np.bitwise_xor.reduce(halves, axis=1) != 0
    else:
        crc_bad = np.zeros(n, dtype=bool)
    bad = empty | numbers_bad | (seq != sequence) | crc_bad
    hits = np.flatnonzero(bad)
    if hits.size == 0:
        return BlockCheck(n, BlockStatus.OK)
    i = int(hits[0])
    if empty[i]:
        status = BlockStatus.EMPTY
    elif seq[i] > sequence:
        status = BlockStatus.OVERWRITTEN
    elif seq[i] < sequence:
        status = BlockStatus.OLD
    elif crc_bad[i]:
        status = BlockStatus.CRC_ERROR
    else:
        status = BlockStatus.BAD_BLOCK
    return BlockCheck(i, status, first_block + i)


def payload_of(buf: bytes | memoryview, block_size: int, count: int) -> bytes:
    """Concatenate the bodies of the first ``count`` blocks (headers stripped)."""
    import numpy as np

    raw = np.frombuffer(buf, dtype=np.uint8, count=count * block_size).reshape(count, block_size)
    return raw[:, BLOCK_HEADER:].tobytes()


def raise_for(check: BlockCheck, path: str, block_size: int) -> None:
    """Turn a failed check of an archived log into a clear error naming file and block."""
    where = f"file {path}, block {check.bad_block} (offset {check.bad_block * block_size})"
    if check.status is BlockStatus.CRC_ERROR:
        raise RedoLogError(f"{where}: block checksum mismatch", 40006)
    if check.status is BlockStatus.EMPTY:
        raise RedoLogError(f"{where}: unexpected empty block before the end of the log", 40002)
    raise RedoLogError(f"{where}: bad block header ({check.status.value})", 40002)
