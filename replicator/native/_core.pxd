# The C-level boundary of replicator.native._core: what the other native modules cimport.
#
# Cython reads this file when it compiles _core.pyx (the declarations below are the ones of
# _core's own classes, not repeated in the .pyx) and when a module does
# ``from replicator.native._core cimport ...``: _kafka and _runframes read a MessageRun's C arrays
# directly; the renderers split off the core (_debezium, _rows, _protobuf) subclass
# _Plan, _Out and JsonCommitter (their fields are C struct members, their cdef methods calls
# through the class's vtable, as in one module); the value decoders they call are _values'
# (replicator/values/_values.pxd); stage 1's dispatch (_dispatch) calls grow; stage 2 (_stage2) drives
# JsonCommitter and calls phase A's helpers below.
# Importing such a module imports _core; _core cimports none of them, only what lies below it
# (values/_buf.pxd and _structs.pxd, which are no modules, values._values and _tally), so module initialisation never runs in
# a circle. Declare here only what crosses a module boundary; a change to this file rebuilds
# every module that cimports it (setup.py).

from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t

from replicator.values._buf cimport Buf, Val
from replicator.native._structs cimport Row, Work, Grouping


# ----------------------------------------------------------------------------- phase A's helpers
# Stage 2 (_stage2) assembles rows as the committer does and renders RAW columns in hex; the
# record loop (_dispatch) grows its record array with grow.
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
