# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Stream framing of a MessageRun's messages, and a run's positions (its own extension module).

The network and zeromq writers frame every message on the wire: a 4-byte little-endian
length (network; 0xFFFFFFFF and an 8-byte length from 4 GiB on) or a ZMTP data-frame
header (zeromq: flags and a 1-byte size, or LONG and an 8-byte big-endian size from 256
bytes on), then the body without the run's newline. A run slice [lo, hi) is framed here
into one buffer, so a writer handles a transaction as one item, never as a Message per row.
The positions helpers let the confirm queue find a client's position inside a run (one
SCN, indexes growing) without building Messages.

A run's C arrays are read (and, by :func:`make_run`, written) through
``replicator/native/_core.pxd`` (MessageRun's fields), the only thing this module takes from
the core.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc
from libc.string cimport memcpy

from replicator.native._core cimport MessageRun

FRAME_LENGTH_PREFIXED = 0  # network writer
FRAME_ZMTP = 1  # zeromq writer


cdef inline Py_ssize_t _run_start(MessageRun r, Py_ssize_t i):
    return 0 if i == 0 else r.ends[i - 1] + 1


cdef int _check_slice(MessageRun r, Py_ssize_t lo, Py_ssize_t hi) except -1:
    if lo < 0 or hi > r.n or lo > hi:
        raise IndexError(f"run slice [{lo}, {hi}) outside the run's {r.n} messages")
    return 0


def run_frames(MessageRun r, Py_ssize_t lo, Py_ssize_t hi, int kind):
    """Messages [lo, hi) of ``r``, each framed for the wire ``kind`` (FRAME_*), as one bytes."""
    _check_slice(r, lo, hi)
    cdef const char* data = PyBytes_AS_STRING(r.data)
    cdef Py_ssize_t i, start, size, total = 0
    cdef uint64_t u
    cdef int k
    for i in range(lo, hi):
        size = r.ends[i] - _run_start(r, i)
        if kind == FRAME_ZMTP:
            total += size + (2 if size < 256 else 9)
        else:
            total += size + (4 if size < 0xFFFFFFFF else 12)
    out = PyBytes_FromStringAndSize(NULL, total)
    cdef unsigned char* p = <unsigned char*> PyBytes_AS_STRING(out)
    for i in range(lo, hi):
        start = _run_start(r, i)
        size = r.ends[i] - start
        u = <uint64_t> size
        if kind == FRAME_ZMTP:
            if size < 256:
                p[0] = 0
                p[1] = <unsigned char> size
                p += 2
            else:
                p[0] = 2  # LONG
                for k in range(8):
                    p[1 + k] = <unsigned char> (u >> (56 - 8 * k))
                p += 9
        elif size < 0xFFFFFFFF:
            for k in range(4):
                p[k] = <unsigned char> (u >> (8 * k))
            p += 4
        else:
            for k in range(4):
                p[k] = 0xFF
            for k in range(8):
                p[4 + k] = <unsigned char> (u >> (8 * k))
            p += 12
        memcpy(p, data + start, size)
        p += size
    return out


def run_slice_bytes(MessageRun r, Py_ssize_t lo, Py_ssize_t hi):
    """Body bytes of messages [lo, hi) of ``r`` (the newlines not counted)."""
    _check_slice(r, lo, hi)
    if lo == hi:
        return 0
    return r.ends[hi - 1] - _run_start(r, lo) - (hi - 1 - lo)


def run_idx(MessageRun r, Py_ssize_t i):
    """idx of message ``i`` of ``r``."""
    _check_slice(r, i, i + 1)
    return r.idxs[i]


def run_bisect(MessageRun r, int64_t idx, Py_ssize_t lo, Py_ssize_t hi):
    """The first message in [lo, hi) whose idx is above ``idx`` (hi when none): the run's
    messages at or below a position of its SCN are [lo, result)."""
    _check_slice(r, lo, hi)
    cdef Py_ssize_t mid
    while lo < hi:
        mid = (lo + hi) // 2
        if r.idxs[mid] <= idx:
            lo = mid + 1
        else:
            hi = mid
    return lo


def make_run(list messages):
    """A MessageRun of ``messages`` (Messages of one SCN, growing idx; bodies without
    newlines): for benchmarks and tests of the writers that take runs."""
    cdef MessageRun r = MessageRun.__new__(MessageRun)
    cdef Py_ssize_t n = len(messages), i, at = 0
    if n == 0:
        raise ValueError("a run has at least one message")
    first = messages[0]
    tables = []
    slots = {}
    r.ends = <int64_t*> malloc((n + 1) * sizeof(int64_t))
    r.idxs = <int64_t*> malloc((n + 1) * sizeof(int64_t))
    r.tabs = <int*> malloc((n + 1) * sizeof(int))
    if r.ends == NULL or r.idxs == NULL or r.tabs == NULL:
        raise MemoryError()
    parts = []
    for i in range(n):
        m = messages[i]
        if m.scn != first.scn or (i and m.idx <= r.idxs[i - 1]):
            raise ValueError("a run's messages share one SCN and have growing idx")
        parts.append(m.data)
        at += len(m.data)
        r.ends[i] = at
        at += 1
        r.idxs[i] = m.idx
        if m.table is None:
            r.tabs[i] = -1
        else:
            slot = slots.get(id(m.table))
            if slot is None:
                slot = slots[id(m.table)] = len(tables)
                tables.append(m.table)
            r.tabs[i] = slot
    parts.append(b"")
    r.data = b"\n".join(parts)
    r.n = n
    r.scn = first.scn
    r.seq = first.seq
    r.xid = first.xid
    r.tables = tables
    return r
