# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The daemon's record loops: BlockLoop (one redo thread), and for RAC ThreadLoop and RacMerge."""

# RecordLoop fed block by block.
#
# The daemon's reader thread (replicator.redo.online.RedoFollower with raw=True) hands over
# whole blocks as it reads them: an archived log in large buffers, a growing online log
# whatever was written since the last poll (only blocks that passed the block checks). The
# parser thread feeds them to one BlockLoop per sequence, which checks, frames and analyses
# them exactly as RecordLoop does for a batch file; a sequence that moves from its online
# log to the archived copy (the group was reused) goes on in the same loop at the next block.
# Instead of a python callback per LWN, the loop keeps what the engine's per-LWN bookkeeping
# needs (LWNs, their blocks, the last LWN's SCN and time) for the engine to read after a feed.
#
# A module of its own (setup.py MODULES, docs/native-engine.md "Native modules"): it subclasses
# _dispatch's RecordDispatcher and RecordLoop (_dispatch.pxd); python reaches it as
# replicator.native.daemon_loop() (the runner's drivers).

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from libc.stdint cimport uint8_t, uint32_t, uint64_t

from replicator.native._dispatch cimport RecordDispatcher, RecordLoop, Rec, rec_cmp

include "_defs.pxi"

cdef extern from "stdlib.h":
    void qsort(void* base, size_t n, size_t size, int (*cmp)(const void*, const void*) noexcept nogil) nogil

from time import monotonic as time_monotonic


cdef class BlockLoop(RecordLoop):
    """RecordLoop for the daemon: blocks fed as the reader delivers them, LWN totals kept.

    ``lwns`` (RecordLoop's) counts the LWNs analysed, ``lwn_blocks`` the blocks they span;
    ``last_scn`` and ``last_time`` are the SCN and raw redo time of the last one.
    """

    cdef public long long lwn_blocks
    cdef uint64_t _last_scn
    cdef uint32_t _last_time

    def __init__(self, parser, header, str path, bint verify_checksum, long long first_block):
        RecordLoop.__init__(self, parser, header, path, verify_checksum, first_block, None)
        self.lwn_blocks = 0
        # The checkpoint step (RecordLoop.set_checkpoint_step) runs after the LWN's totals here:
        # a halt it raises (DaemonEngine._on_checkpoint_native) leaves that LWN counted.
        self.step_in_lwn = False

    cdef _analyse(self):
        RecordLoop._analyse(self)
        self.lwn_blocks += self.lwn_end_block - self.lwn_first
        self._last_scn = self.lwn_scn
        self._last_time = self.lwn_time
        if self.step_full is not None:
            self._checkpoint()

    @property
    def last_scn(self):
        """SCN of the last LWN analysed."""
        return self._last_scn

    @property
    def last_time(self):
        """Raw redo time of the last LWN analysed."""
        return self._last_time

    def set_path(self, str path):
        """The file the next blocks come from (named in errors): an online log's archived copy."""
        self.path = path


# ----------------------------------------------------------------------------- RAC: framed, then merged
cdef class LwnBuf:
    """A complete LWN framed by a :class:`ThreadLoop`: its records in OLR's order and their bytes."""

    cdef bytes data
    cdef Rec* recs
    cdef public Py_ssize_t n
    cdef public Py_ssize_t index   # the next record to merge
    cdef readonly object lwn       # the Lwn (scn, time, first_block, end_block; records stay here)

    def __dealloc__(self):
        free(self.recs)

    @property
    def last_scn(self):
        """SCN of its last (highest) record."""
        return self.recs[self.n - 1].scn if self.n else 0


cdef class ThreadLoop(RecordLoop):
    """RecordLoop of one RAC redo thread: complete LWNs are appended to ``ready`` (LwnBuf), not
    analysed; :class:`RacMerge` analyses their records merged with the other threads'."""

    cdef object ready

    def __init__(self, parser, header, str path, bint verify_checksum, long long first_block, ready):
        RecordLoop.__init__(self, parser, header, path, verify_checksum, first_block, None)
        self.ready = ready

    def set_path(self, str path):
        """The file the next blocks come from (named in errors): an online log's archived copy."""
        self.path = path

    cdef _analyse(self):
        cdef LwnBuf buf = LwnBuf.__new__(LwnBuf)
        qsort(self.recs, self.nrecs, sizeof(Rec), rec_cmp)
        buf.data = PyBytes_FromStringAndSize(self.arena.p, self.arena.n)
        buf.recs = <Rec*> malloc((self.nrecs + 1) * sizeof(Rec))
        if buf.recs == NULL:
            raise MemoryError()
        if self.nrecs:
            memcpy(buf.recs, self.recs, self.nrecs * sizeof(Rec))
        buf.n = self.nrecs
        buf.index = 0
        buf.lwn = self._lwn_type(self.lwn_scn, self.lwn_time, self.lwn_first, self.lwn_end_block)
        self.nrecs = 0
        self.arena.n = 0
        self.lwns += 1
        self.ready.append(buf)


cdef class RacMerge(RecordDispatcher):
    """RacEngine._merge in C over the threads' LwnBufs: the record with the lowest (SCN, thread)
    is analysed once every thread without a record in hand has a bound proving it cannot go
    lower (the same rule, the same calls to the engine's ``fill_native`` and ``handoff``)."""

    def run(self, engine, parser, list threads, stop):
        cdef LwnBuf buf
        cdef LwnBuf best_buf
        cdef LwnBuf last_buf = None
        cdef Rec* rec
        cdef uint64_t scn, best_scn
        cdef long best_thread, t
        cdef bint hold
        cdef long long beat = 0
        cdef const uint8_t* base
        state = engine.state
        fill = engine.fill_native
        monotonic = time_monotonic
        last_st = None
        try:
            while True:
                if beat & 255 == 0:
                    state.heartbeat = monotonic()
                beat += 1
                if stop.is_set():  # a soft stop: the restart point written next re-reads from the cut
                    self.flush_counts(parser)
                    engine.handoff()
                    return
                best = None
                best_buf = None
                best_scn = 0
                best_thread = 0
                for st in threads:
                    buf = st.cur
                    if buf is None or buf.index >= buf.n:
                        self.flush_counts(parser)  # parser.stats per LWN, as merged records would
                        if not fill(st):
                            continue
                        buf = st.cur
                    scn = buf.recs[buf.index].scn
                    t = st.thread
                    if best is None or scn < best_scn or (scn == best_scn and t < best_thread):
                        best, best_buf, best_scn, best_thread = st, buf, scn, t
                hold = best is None
                if not hold:
                    for st in threads:
                        if st is best:
                            continue
                        buf = st.cur
                        if buf is None or buf.index >= buf.n:
                            bound = st.bound
                            if bound < best_scn or (bound == best_scn and st.thread < best_thread):
                                hold = True
                                break
                if hold:
                    self.flush_counts(parser)
                    engine.handoff()
                    if stop.is_set() or all(st.done for st in threads):
                        return
                    stop.wait(0.005)
                    continue
                if best is not last_st or best_buf is not last_buf:
                    parser.enter(best.header, best_buf.lwn)
                    self._load(parser)
                    last_st, last_buf = best, best_buf
                rec = best_buf.recs + best_buf.index
                base = <const uint8_t*> PyBytes_AS_STRING(best_buf.data)
                self._rec = None
                self._cvs = None
                self._d = base + rec.at
                self._end = rec.size
                self._m.scn = rec.scn
                self._m.block = rec.block
                self._m.offset = rec.offset
                self._m.time = best_buf.lwn.time
                self._m.header_size = LWN_RECORD_HEADER if rec.vld & VLD_LWN else RECORD_HEADER
                self._subscn = rec.subscn
                self._vld = rec.vld
                self._rank = <int>best_buf.index
                parser.rank = best_buf.index
                if not self._run_located(parser):
                    parser.process_record(self._record(parser))
                self._rec = None
                self._cvs = None
                engine.cut_scn = best_scn
                if best.bound < best_scn:
                    best.bound = best_scn  # a thread's later records are not lower
                best_buf.index += 1
        finally:
            self.flush_counts(parser)

