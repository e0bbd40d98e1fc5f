# The C-level boundary of replicator.native._dispatch: what the daemon's loops cimport.
#
# The daemon's loops (_daemon_loop: BlockLoop, ThreadLoop, RacMerge) subclass RecordDispatcher
# and RecordLoop: they fill the dispatch's record fields and call its cdef methods (vtable calls,
# as in one module). _dispatch cimports _core (grow) and _framing; neither cimports it, so module
# initialisation never runs in a circle. A change to this file rebuilds _dispatch and
# _daemon_loop (setup.py).

from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t

from replicator.values._buf cimport Buf


cdef enum:
    MAXV = 256      # vectors per record handled natively (more: python)
    MAXF = 32768    # fields per record handled natively (more: python)


cdef struct VecInfo:
    int start
    int size
    int layer
    int code
    int opcode
    int cls
    int con_id
    int nf
    int f1off
    int f1len
    int f2off
    int f2len
    int fbase               # its fields' place in the field arrays given to scan_vectors


cdef struct RecMeta:           # what the dispatch needs of a record besides its bytes
    uint64_t scn
    int64_t block
    int offset
    uint32_t time
    int header_size


cdef struct Rec:               # one record of the current LWN, its bytes in the arena
    uint64_t scn
    uint32_t subscn
    uint32_t vld
    int64_t block
    int offset
    Py_ssize_t at
    Py_ssize_t size


cdef inline int rec_cmp(const void* a, const void* b) noexcept nogil:
    """OLR's analysis order inside an LWN: (SCN, sub-SCN, block, offset) (records._sorted)."""
    cdef const Rec* x = <const Rec*> a
    cdef const Rec* y = <const Rec*> b
    if x.scn != y.scn:
        return -1 if x.scn < y.scn else 1
    if x.subscn != y.subscn:
        return -1 if x.subscn < y.subscn else 1
    if x.block != y.block:
        return -1 if x.block < y.block else 1
    if x.offset != y.offset:
        return -1 if x.offset < y.offset else 1
    return 0


cdef class RecordDispatcher:
    """Parser._dispatch for one record, with the (5.1, 11.x) pairs stored natively (see _dispatch.pyx)."""

    cdef VecInfo vecs[MAXV]
    cdef int flen[MAXF]     # the field lengths and offsets of the record's vectors (scan_vectors)
    cdef int foff[MAXF]
    cdef Buf entry
    cdef object _check_session
    cdef object _undo_info
    cdef object _cv
    cdef object _table_type
    cdef object _session_attributes
    cdef object _record_type
    cdef frozenset _quiet_layers
    cdef frozenset _quiet_opcodes
    # The record being dispatched: its Record (None until a python handler needs it), the
    # ChangeVectors made of it so far (None: none yet), where its bytes are, its rank.
    cdef object _rec
    cdef list _cvs
    cdef const uint8_t* _d
    cdef Py_ssize_t _end
    cdef RecMeta _m
    cdef int _rank
    cdef int _nvec
    cdef uint32_t _subscn
    cdef uint32_t _vld
    cdef long long n_records   # parser.stats counters, added in bulk (flush_counts)
    cdef long long n_vectors
    cdef dict _sessions        # 5.20 attributes by the vector's bytes (_session20)
    cdef uint32_t _sessions_compat
    cdef bint _sessions_big
    cdef object _pool_type     # the MemoryPool/TransactionBuffer classes whose state _store may update inline
    cdef object _buffer_type
    cdef Py_ssize_t _chunk
    # The parser's state the dispatch reads, loaded once per call or per LWN (_load).
    cdef object _p_buffer
    cdef object _p_pool
    cdef object _p_opt
    cdef bint _p_big
    cdef int _p_vh
    cdef int _p_con_id
    cdef int _p_bs
    cdef uint32_t _p_compat
    # ... and of its TransactionBuffer and MemoryPool when they are the plain classes (their
    # slot map and log order are made once, their limits are set at start-up): None otherwise.
    cdef dict _p_by_key         # buffer.by_key
    cdef object _p_touch        # buffer.pool.logs.move_to_end (pool.log_for's mark of activity)
    cdef object _p_limits       # the pool whose swap and max bytes these are, or None
    cdef Py_ssize_t _p_swap
    cdef Py_ssize_t _p_max

    cdef _load(self, object parser)
    cdef int _enter(self, object record) except -1
    cdef bint _dispatch_located(self, object parser, object record) except -1
    cdef bint _run_located(self, object parser) except -1
    cdef flush_counts(self, object parser)
    cdef object _record(self, object parser)
    cdef bint _run(self, object parser) except -1
    cdef object _vec(self, object parser, int i)
    cdef object _info(self, object parser, int i)
    cdef object _session20(self, object parser, VecInfo* v, int vh, bint big, uint32_t compat, int i)
    cdef _pair(self, object parser, VecInfo* u, VecInfo* r, uint32_t usn, uint32_t slot,
               uint32_t sqn, uint32_t obj, uint32_t data_obj, uint32_t flags, uint32_t opc, bint big, int vh,
               int ui, int ri)
    cdef _store(self, object pool, object txn, object clog, Buf* e, int opcode, uint32_t obj)


cdef class RecordLoop(RecordDispatcher):
    """read_lwns + Parser.process_lwn of one redo file, from raw blocks (see _dispatch.pyx)."""

    cdef object parser
    cdef str path
    cdef object on_lwn
    cdef object _lwn_type
    cdef int bs
    cdef int body
    cdef bint big
    cdef bint verify
    cdef uint32_t sequence
    cdef Buf carry             # the payload stream (block bodies) from block buf_block on
    cdef int64_t buf_block
    cdef Py_ssize_t pos        # next record's place in carry
    cdef int64_t lwn_end       # first block after the current LWN
    cdef int64_t pieces
    cdef int64_t nst
    cdef bint have_lwn
    cdef uint64_t lwn_scn
    cdef uint32_t lwn_time
    cdef int64_t lwn_first
    cdef int64_t lwn_end_block
    cdef Buf arena             # the current LWN's records
    cdef Rec* recs
    cdef Py_ssize_t nrecs
    cdef Py_ssize_t cap_recs
    cdef public long long lwns
    # The per-LWN checkpoint step (set_checkpoint_step); None: the parser's own callback.
    cdef object step_full       # the driver's _on_checkpoint(cp): the whole python step
    cdef object step_fmt        # OlrJsonFormat whose unsent checkpoint only moves its position, or None
    cdef object step_manager    # CheckpointManager the hook consults, or None
    cdef object step_hook       # hook(cp, parser): called when the manager writes
    cdef bint step_in_lwn       # the step runs inside _analyse (batch); the daemon's loop runs it after
    cdef object _checkpoint_type
    cdef object _epoch_val
    cdef uint32_t _epoch_raw
    cdef bint _epoch_ok
    cdef public long long python_steps  # LWN checkpoints the C step left to python (tests)

    cdef _scan(self)
    cdef _analyse(self)
    cdef object _epoch(self, object parser)
    cdef _checkpoint(self)
