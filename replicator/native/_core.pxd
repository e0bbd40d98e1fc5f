# The C-level boundary of replicator.native._core: what the other native modules cimport.
#
# Cython reads this file when it compiles _core.pyx (the declarations below are the ones of
# _core's own classes, not repeated in the .pyx) and when a module does
# ``from replicator.native._core cimport ...``: _kafka and _runframes read a MessageRun's C arrays
# directly; the renderers split off the core (_debezium, _rows, _avro, _protobuf) subclass
# _Plan, _Out and JsonCommitter (their fields are C struct members, their cdef methods calls
# through the class's vtable, as in one module); the value decoders they call are _values'
# (_values.pxd); the daemon's loops (_daemon_loop) subclass RecordDispatcher and RecordLoop;
# stage 2 (_stage2) drives JsonCommitter and calls phase A's helpers below.
# Importing such a module imports _core; _core cimports none of them, only what lies below it
# (_structs.pxd, which is no module, _values and _tally), so module initialisation never runs in
# a circle. Declare here only what crosses a module boundary; a change to this file rebuilds
# every module that cimports it (setup.py).

from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t

from replicator.native._structs cimport Buf, Val, Row, Work, Grouping


# ----------------------------------------------------------------------------- phase A's helpers
# Stage 2 (_stage2) assembles rows as the committer does and renders RAW columns in hex.
cdef void work_free(Work* w) noexcept nogil
cdef int grow(void** p, Py_ssize_t* cap, Py_ssize_t need, size_t item) except -1 nogil
cdef int hex_columns(Buf* b, Val* image, Val* other, int n) except -1 nogil
cdef void grouping_free(Grouping* g) noexcept nogil
cdef Py_ssize_t parse_entries(Work* w, const uint8_t* base, Py_ssize_t size) except -2 nogil


# ----------------------------------------------------------------------------- classes
cdef class MessageRun:
    """A committed transaction's messages rendered into one buffer (see _core.pyx)."""

    cdef readonly bytes data
    cdef readonly object scn
    cdef readonly object seq
    cdef readonly object xid
    cdef list tables        # table of each slot in tabs
    cdef int64_t* ends      # end of message i's body in data (its newline is at ends[i])
    cdef int64_t* idxs
    cdef int* tabs          # slot in tables, -1: no table (begin, commit, FULL)
    cdef Py_ssize_t n

    cpdef message(self, Py_ssize_t i)


cdef class _Plan:
    """Per-table render plan: the python TablePlan plus native column kinds per image."""

    cdef public object table
    cdef public object py_plan
    cdef int ncols
    cdef bint bail
    cdef uint8_t* keys
    cdef uint8_t* nullable
    cdef int* kind[2]
    cdef int* param[2]
    cdef int64_t* offset[2]
    cdef list prefix      # "NAME": per column
    cdef list nulls       # [before list, after list] of bytes or None
    cdef list frags       # [before tuple, after tuple] of python fragments
    cdef dict schema      # obj -> schema bytes (schema bit 1 off)
    cdef bint schemaless  # an unknown table (schemaless mode): COL_<n> names, hex values, no reduction
    cdef void* c          # its C view for stage-2 workers (a PlanC block, _stage2.pyx), NULL until needed


cdef class _Out:
    """One committed transaction being rendered: its event, header pieces and messages."""

    cdef object event
    cdef object hb
    cdef object ctx
    cdef object lwn_scn
    cdef object xid
    cdef object seq
    cdef object prefix      # b'{...,"c_idx":' before a row's index, or None (headers per row)
    cdef object suffix
    cdef list messages
    cdef bint started       # the begin message is out
    cdef long long num      # rows rendered ("num" field)
    cdef long long rows     # rows in messages not yet handed over
    cdef Py_ssize_t room    # streamed: messages until the pipeline drains; 0: one list at the end
    cdef bint run           # render into the committer's run buffer (a MessageRun), not Messages
    cdef list tables        # streamed: the transaction's table plans (run slots point into it)


cdef class JsonCommitter:
    """Commits transactions for the OpenLogReplicator JSON format natively (see _core.pyx)."""

    cdef object fmt
    cdef object deliver
    cdef dict plans
    cdef dict epochs
    cdef int64_t host_tz
    cdef bint scn_all
    cdef Buf out
    cdef Buf val
    cdef Buf run            # the MessageRun being rendered: bodies and newlines
    cdef int64_t* run_ends
    cdef int64_t* run_idx
    cdef int* run_tab
    cdef Py_ssize_t run_n, run_cap
    cdef object pipeline
    cdef list _tables
    cdef list _views
    cdef public long long native_transactions
    cdef public long long python_transactions
    cdef bint unknown_tables  # rows of tables the dictionary lacks are printed (printable_filter)
    cdef public bint runs     # hand a transaction's messages over as one MessageRun (else a list)
    cdef public object tally  # the daemon's metrics Tally: output rows counted by _tally (_tally.pxd)
    cdef public object stage2  # the decode/format workers (_stage2.Stage2) or None: one thread

    cdef int _run_add(self, const char* p, Py_ssize_t n, int64_t idx, int tab) except -1
    cdef MessageRun _take_run(self, _Out o)
    cdef _Plan plan_for(self, object parser, object table)
    cdef object epoch(self, uint32_t raw, object parser)
    cdef object _commit_one(self, object parser, object txn, object record)
    cdef bint _stream(self, object parser, object txn, object record) except -1
    cdef bint _walk(self, object parser, object txn, _Out o) except -1
    cdef inline int _slot(self, Grouping* g, object parser, object tables, uint32_t obj, list table_list,
                   dict table_index) except -2
    cdef int _table_slot(self, object parser, object tables, uint32_t obj, list table_list,
                         dict table_index) except -2
    cdef bint _assemble(self, Work* w, object parser, list chunks) except -1
    cdef bint _group(self, Work* w, Grouping* g, object parser, Py_ssize_t first, list table_list,
                     dict table_index) except -1
    cdef _emit(self, Work* w, object parser, object txn, object record)
    cdef _Out _open(self, object parser, object txn, object record)
    cdef _rows(self, Work* w, _Out o, object parser)
    cdef _hand_over(self, _Out o)
    cdef _close(self, _Out o)
    cdef _images(self, Row* row, Val* before, Val* after, _Plan plan, int column_mode, object reducer)
    cdef _single(self, Val* image, _Plan plan, int column_mode, int side)
    cdef _render(self, Val* image, _Plan plan, int side)


# ----------------------------------------------------------------------------- the record loop
# RecordDispatcher and RecordLoop are subclassed by the daemon's loops (_daemon_loop: BlockLoop,
# ThreadLoop, RacMerge), which fill the dispatch's record fields and call its cdef methods.
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
    """Parser._dispatch for one record, with the (5.1, 11.x) pairs stored natively (see _core.pyx)."""

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
    cdef _store(self, object pool, object txn, Buf* e, int opcode, uint32_t obj)


cdef class RecordLoop(RecordDispatcher):
    """read_lwns + Parser.process_lwn of one redo file, from raw blocks (see _core.pyx)."""

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

    cdef _scan(self)
    cdef _analyse(self)
