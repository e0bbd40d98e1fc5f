# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The block checks of a buffer of redo blocks (blocks.check_blocks in C) and the framing errors."""

# The record loop (_dispatch's RecordLoop.feed) checks each buffer with first_bad_block and
# raises raise_block's and framing_error's errors (_framing.pxd); a reader thread checks the next
# buffer ahead with check_chunk, the GIL released (replicator.native.framing(), the drivers'
# chunk_check).
#
# A module of its own (setup.py MODULES, docs/native-engine.md "Native modules"), beside
# blocks.py (the python checks it mirrors) and below the record loop: it cimports only rd32 of
# values/_buf.pxd (no module) and imports only redo.blocks and errors.

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.string cimport memcpy
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t

from replicator.values._buf cimport rd32


cdef inline bint block_xor_bad(const uint8_t* p, int bs) noexcept nogil:
    """The block checksum rule: the XOR of all 16-bit words of a block is zero."""
    cdef uint64_t x = 0, w
    cdef int i
    for i in range(0, bs, 8):
        memcpy(&w, p + i, 8)
        x ^= w
    x ^= x >> 32
    x ^= x >> 16
    return (x & 0xFFFF) != 0


cdef int first_bad_block(const uint8_t* buf, Py_ssize_t n, int64_t first, int bs, uint32_t seq, bint big,
                         bint verify, int* status) noexcept nogil:
    """blocks.check_blocks in C: the index of the first bad block (-1: all good) and why.

    ``status``: 1 empty, 2 overwritten, 3 old, 4 checksum, 5 bad block (the BlockStatus order).
    """
    cdef Py_ssize_t i
    cdef const uint8_t* p
    cdef uint32_t sq
    cdef bint empty, crc
    for i in range(n):
        p = buf + i * bs
        empty = p[0] == 0 and p[1] == 0
        sq = rd32(p + 8, big)
        crc = verify and block_xor_bad(p, bs)
        if empty or rd32(p + 4, big) != <uint32_t>(first + i) or sq != seq or crc:
            status[0] = 1 if empty else 2 if sq > seq else 3 if sq < seq else 4 if crc else 5
            return <int>i
    return -1


def check_chunk(bytes buf, long long first_block, int block_size, uint32_t sequence, bint big, bint verify):
    """The block checks of :meth:`RecordLoop.feed` (first_bad_block) with the GIL released, for a
    reader thread checking the next buffer while the parser frames the current one.

    Returns ``(-1, 0)`` when every whole block of ``buf`` passes, else ``(index, status)`` of the
    first bad one (status as first_bad_block's; :func:`raise_chunk` raises its error). A buffer
    that passed is fed with ``checked=True`` and not checked again.
    """
    cdef const uint8_t* p = <const uint8_t*> PyBytes_AS_STRING(buf)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(buf) // block_size if block_size > 0 else 0
    cdef int status = 0
    cdef int bad
    with nogil:
        bad = first_bad_block(p, n, first_block, block_size, sequence, big, verify, &status)
    return (bad, status if bad >= 0 else 0)


def raise_chunk(int status, str path, int block_size, long long block):
    """Raise the error RecordLoop.feed raises for a bad ``block`` (check_chunk's status)."""
    raise_block(status, path, block_size, block)


cdef int raise_block(int status, str path, int block_size, long long block) except -1:
    """Raise blocks.raise_for's error for a bad ``block`` (first_bad_block's status)."""
    from replicator.redo.blocks import BlockCheck, BlockStatus, raise_for

    kind = (BlockStatus.EMPTY, BlockStatus.OVERWRITTEN, BlockStatus.OLD, BlockStatus.CRC_ERROR,
            BlockStatus.BAD_BLOCK)[status - 1]
    raise_for(BlockCheck(0, kind, block), path, block_size)
    return 0


cdef object framing_error(str text):
    """The record framing's error (RecordFramer's 40008) for the loop to raise."""
    from replicator.errors import RedoLogError

    return RedoLogError(text, 40008)
