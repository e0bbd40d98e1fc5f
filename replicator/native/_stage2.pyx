# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Stage 2 (decode/format) of the OpenLogReplicator JSON commit in worker threads (``--decode-workers``)."""

# Stage 2 in worker threads, an ordered merge in stage 1.
#
# Stage 1 (the python thread: record loop, dispatch, pool store) commits a transaction as
# JsonCommitter does (phase A: rows assembled from the stored chunks), then does everything
# that depends on the order of transactions or needs python: the Transaction event, the
# header pieces, the message positions (c_idx reserved for the begin, every row and the
# commit) and each row's schema bytes. The rows are then a job (RJob): pure C data,
# rendered by a worker without the GIL into the job's own buffer and position arrays.
# Jobs keep their commit order in the queue; the merge (stage 1 again) hands finished jobs
# to the pipeline strictly in that order, as MessageRuns, and releases their pool chunks.
# A job with a value only python renders (a column without a native decoder, text or a
# number the native decoders reject, the NOT NULL warning 60034) is rendered by the merge,
# with the python fallbacks, in its turn.
#
# Everything else is a barrier: the queue is merged completely before stage 1 outputs a
# python transaction, a streamed one, a format option the job path lacks, checkpoint
# messages, at the end of a file or run, on an error, and before the stage-1 thread logs a
# line (so a warning the merge's python fallbacks log keeps its single-thread place), and
# before the pool swaps or fails (10016).

# A module of its own (setup.py MODULES, docs/native-engine.md "Native modules"): it cimports the
# core's committer, plans and runs and phase A's helpers from _core.pxd; the core never imports it.
# The wiring hands the class to JsonCommitter (its ``stage2`` argument), which creates the Stage2
# of a run with decode workers and calls its python methods once per transaction.

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from cpython.exc cimport PyErr_Clear
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memset, memcmp
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t
cimport cython

from replicator.values._buf cimport *
from replicator.native._structs cimport *
from replicator.values._values cimport *
from replicator.native._tally cimport tally_rows, tally_commit
from replicator.native._core cimport (MessageRun, _Plan, _Out, JsonCommitter, work_free, grow, hex_columns,
                                      grouping_free, parse_entries)

include "_defs.pxi"

import collections
import logging
import threading

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    ctypedef unsigned long pthread_t
    int pthread_mutex_init(pthread_mutex_t* m, void* attr)
    int pthread_mutex_destroy(pthread_mutex_t* m)
    int pthread_mutex_lock(pthread_mutex_t* m)
    int pthread_mutex_unlock(pthread_mutex_t* m)
    int pthread_cond_init(pthread_cond_t* c, void* attr)
    int pthread_cond_destroy(pthread_cond_t* c)
    int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m)
    int pthread_cond_broadcast(pthread_cond_t* c)
    int pthread_create(pthread_t* t, void* attr, void* (*start)(void*) noexcept nogil, void* arg)
    int pthread_join(pthread_t t, void** ret)

DEF J_QUEUED = 0
DEF J_RUNNING = 1
DEF J_DONE = 2
DEF J_BAIL = 3
DEF MAX_WORKERS = 16
DEF MAX_JOBS = 64                   # jobs in flight before stage 1 waits for the oldest
DEF MAX_BYTES = 16 * 1024 * 1024    # stored bytes of the jobs in flight (pool chunks held)
DEF SPARE = MAX_JOBS + 8             # render buffers kept for reuse
DEF BATCH_ROWS = 256                # workers are woken per batch of jobs (fewer thread switches)


cdef struct PlanC:
    # A _Plan's C view (one malloc block, freed by the _Plan): what a worker reads.
    int ncols
    bint schemaless
    uint8_t* keys
    uint8_t* nullable
    int* kind[2]
    int* param[2]
    int64_t* offset[2]
    const char** pre            # '"NAME":' per column
    Py_ssize_t* pre_n
    const char** nul[2]         # the NULL piece per side and column; NULL: the column is left out
    Py_ssize_t* nul_n[2]
    void* py                    # the _Plan (the job keeps it alive)


cdef struct RJob:
    # input, written by stage 1 before the job is queued
    Work w                      # phase A's rows and images (pointing into the held chunks)
    PlanC** plans               # per table slot
    const char* prefix          # '{<header>,"c_idx":' and ',<header rest>,"payload":['
    Py_ssize_t prefix_n
    const char* suffix
    Py_ssize_t suffix_n
    const char* begin           # the whole begin / commit message, or NULL
    Py_ssize_t begin_n
    int64_t begin_idx
    const char* commit
    Py_ssize_t commit_n
    int64_t commit_idx
    const char** schema         # per row: the schema piece after "op"
    Py_ssize_t* schema_n
    int64_t idx0                # the position before the first row
    bint add_offset
    bint add_num
    int column_mode
    bint copy_after
    void* reducer               # the format's UpdateReducer (python fallbacks only)
    # output
    Buf run                     # message bodies, each followed by a newline
    int64_t* ends
    int64_t* idxs
    int* tabs
    Py_ssize_t n
    Py_ssize_t cap
    Buf out                     # the row being rendered
    Val* scratch
    Py_ssize_t scratch_cap
    int state
    bint python                 # a value only python renders: the merge renders the whole job
    RJob* next


cdef struct Queue:
    pthread_mutex_t mu
    pthread_cond_t work         # a job was queued, or stop
    pthread_cond_t done         # a job finished
    RJob* take                  # the next job for a worker
    RJob* tail
    bint stop
    int waiting                 # stage 1 waits for a job (signal `done` only then)


cdef void job_free(RJob* j) noexcept nogil:
    work_free(&j.w)
    free(j.plans)
    free(j.schema)
    free(j.schema_n)
    free(j.run.p)
    free(j.ends)
    free(j.idxs)
    free(j.tabs)
    free(j.out.p)
    free(j.scratch)
    free(j)


cdef PlanC* plan_c(_Plan plan) except NULL:
    """The plan's C view, made once (stage 1, with the GIL)."""
    cdef Py_ssize_t n = plan.ncols + 1
    cdef PlanC* pc
    cdef char* block
    cdef int i, s
    if plan.c != NULL:
        return <PlanC*> plan.c
    block = <char*> calloc(1, sizeof(PlanC) + n * (3 * sizeof(char*) + 3 * sizeof(Py_ssize_t)))
    if block == NULL:
        raise MemoryError()
    pc = <PlanC*> block
    pc.pre = <const char**> (block + sizeof(PlanC))
    pc.nul[0] = pc.pre + n
    pc.nul[1] = pc.nul[0] + n
    pc.pre_n = <Py_ssize_t*> (pc.nul[1] + n)
    pc.nul_n[0] = pc.pre_n + n
    pc.nul_n[1] = pc.nul_n[0] + n
    pc.ncols = plan.ncols
    pc.schemaless = plan.schemaless
    pc.keys = plan.keys
    pc.nullable = plan.nullable
    for s in range(2):
        pc.kind[s] = plan.kind[s]
        pc.param[s] = plan.param[s]
        pc.offset[s] = plan.offset[s]
    if not plan.schemaless:
        for i in range(plan.ncols):
            piece = plan.prefix[i]
            pc.pre[i] = PyBytes_AS_STRING(piece)
            pc.pre_n[i] = PyBytes_GET_SIZE(piece)
            for s in range(2):
                piece = plan.nulls[s][i]
                if piece is not None:
                    pc.nul[s][i] = PyBytes_AS_STRING(piece)
                    pc.nul_n[s][i] = PyBytes_GET_SIZE(piece)
    pc.py = <void*> plan
    plan.c = pc
    return pc


cdef bint utf16_ok(const uint8_t* p, int n) noexcept nogil:
    """utf16_escaped would accept these bytes."""
    cdef int i = 0
    cdef uint32_t u, lo
    if n & 1:
        return False
    while i < n:
        u = (<uint32_t>p[i] << 8) | p[i + 1]
        i += 2
        if 0xD800 <= u <= 0xDBFF:
            if i >= n:
                return False
            lo = (<uint32_t>p[i] << 8) | p[i + 1]
            if not (0xDC00 <= lo <= 0xDFFF):
                return False
            i += 2
        elif 0xDC00 <= u <= 0xDFFF:
            return False
    return True


cdef bint job_needs_python(Work* w, PlanC** plans) noexcept nogil:
    """Whether a value of these rows has no native renderer (K_PY): the merge renders the job.

    Values the native decoders may still reject (bad text, odd numbers or dates) and the
    NOT NULL warning are found by the worker, which leaves the job to the merge then.
    """
    cdef Py_ssize_t r
    cdef int i, side, n
    cdef Row* row
    cdef PlanC* plan
    cdef Val* img
    for r in range(w.nrows):
        row = w.rows + r
        plan = plans[row.table]
        if plan.schemaless:
            continue  # hex only
        img = w.vals + row.img
        n = row.ncols
        for side in range(2):
            if (side == 0 and row.op == OP_INSERT) or (side == 1 and row.op == OP_DELETE):
                continue
            for i in range(n):
                if img[side * n + i].n > 0 and plan.kind[side][i] == K_PY:
                    return True
    return False


cdef int py_value(Buf* b, void* plan, int side, int i, const uint8_t* p, int n, bint* first) except -1 with gil:
    """The python renderer of one value (a job rendered again by the merge)."""
    piece = (<_Plan> plan).frags[side][i](PyBytes_FromStringAndSize(<const char*> p, n))
    if piece is None:
        return 0
    if not first[0]:
        buf_byte(b, 44)
    first[0] = False
    buf_bytes(b, piece)
    return 0


cdef int py_not_null(void* reducer, void* plan, int i) except -1 with gil:
    (<object> reducer)._warn_not_null((<_Plan> plan).py_plan, i)
    return 0


cdef void clear_error() noexcept with gil:
    PyErr_Clear()


cdef int job_add(RJob* j, const char* p, Py_ssize_t n, int64_t idx, int tab) except -1 nogil:
    """Append one message body (and its newline) to the job's run."""
    if j.n + 1 > j.cap:
        grow(<void**>&j.ends, &j.cap, j.n + 1, sizeof(int64_t))
        j.idxs = <int64_t*> realloc(j.idxs, j.cap * sizeof(int64_t))
        j.tabs = <int*> realloc(j.tabs, j.cap * sizeof(int))
        if j.idxs == NULL or j.tabs == NULL:
            with gil:
                raise MemoryError()
    buf_add(&j.run, p, n)
    j.ends[j.n] = j.run.n
    j.idxs[j.n] = idx
    j.tabs[j.n] = tab
    j.n += 1
    buf_byte(&j.run, 10)
    return 0


cdef int job_image(Buf* b, Val* image, PlanC* plan, int side, bint py) except -1 nogil:
    """JsonCommitter._render without the GIL; 1 when a value needs python and ``py`` is off."""
    cdef int i, kind, res
    cdef bint first = True
    cdef Py_ssize_t mark
    cdef Val v
    cdef int* kinds = plan.kind[side]
    buf_byte(b, 123)
    for i in range(plan.ncols):
        v = image[i]
        if v.n == ABSENT:
            continue
        if v.n <= 0:
            if plan.nul[side][i] == NULL:
                continue
            if not first:
                buf_byte(b, 44)
            first = False
            buf_add(b, plan.nul[side][i], plan.nul_n[side][i])
            continue
        kind = kinds[i]
        if kind == K_SKIP:
            continue
        mark = b.n
        if not first:
            buf_byte(b, 44)
        if kind == K_NUMBER:
            buf_add(b, plan.pre[i], plan.pre_n[i])
            res = number_text(b, v.p, v.n)
            if res == 0:
                first = False
                continue
        elif kind == K_HEX:
            buf_add(b, plan.pre[i], plan.pre_n[i])
            buf_byte(b, 34)
            buf_hex(b, v.p, v.n)
            buf_byte(b, 34)
            first = False
            continue
        elif kind == K_STR:
            if plan.param[side][i] == 2:
                buf_add(b, plan.pre[i], plan.pre_n[i])
                buf_byte(b, 34)
                if utf16_escaped(b, v.p, v.n):
                    buf_byte(b, 34)
                    first = False
                    continue
            elif is_ascii(v.p, v.n) or valid_utf8(v.p, v.n, plan.param[side][i] == 1):
                buf_add(b, plan.pre[i], plan.pre_n[i])
                buf_byte(b, 34)
                buf_escape(b, v.p, v.n)
                buf_byte(b, 34)
                first = False
                continue
        elif kind == K_BFLOAT or kind == K_BDOUBLE:
            buf_add(b, plan.pre[i], plan.pre_n[i])
            if float_text(b, v.p, v.n, kind == K_BDOUBLE):
                first = False
                continue
        elif kind == K_TS:
            buf_add(b, plan.pre[i], plan.pre_n[i])
            if timestamp_text(b, v.p, v.n, plan.param[side][i], plan.offset[side][i]):
                first = False
                continue
        elif kind == K_TSTZ:
            buf_add(b, plan.pre[i], plan.pre_n[i])
            if timestamp_tz_text(b, v.p, v.n, plan.param[side][i]):
                first = False
                continue
        elif kind == K_IYM:
            buf_add(b, plan.pre[i], plan.pre_n[i])
            if interval_ym_text(b, v.p, v.n, plan.param[side][i]):
                first = False
                continue
        elif kind == K_IDS:
            buf_add(b, plan.pre[i], plan.pre_n[i])
            if interval_ds_text(b, v.p, v.n, plan.param[side][i]):
                first = False
                continue
        b.n = mark
        if not py:
            return 1
        py_value(b, plan.py, side, i, v.p, v.n, &first)
    buf_byte(b, 125)
    return 0


cdef Val* job_scratch(RJob* j, Py_ssize_t need) except NULL nogil:
    if j.scratch_cap < need:
        j.scratch_cap = need
        j.scratch = <Val*> realloc(j.scratch, (need + 1) * sizeof(Val))
        if j.scratch == NULL:
            with gil:
                raise MemoryError()
    return j.scratch


cdef int job_single(RJob* j, Val* image, PlanC* plan, int side, bint py) except -1 nogil:
    """JsonCommitter._single without the GIL."""
    cdef int n = plan.ncols
    cdef int i
    cdef Val* out = job_scratch(j, n)
    cdef int column_mode = j.column_mode
    for i in range(n):
        if column_mode >= 1:
            out[i] = image[i]
            if out[i].n == ABSENT:
                out[i].n = NULLV
        elif image[i].n > 0 or (image[i].n != ABSENT and plan.keys[i]):
            out[i] = image[i]
        elif plan.keys[i]:
            out[i].n = NULLV
        else:
            out[i].n = ABSENT
    return job_image(&j.out, out, plan, side, py)


cdef int job_images(RJob* j, Row* row, Val* before, Val* after, PlanC* plan, bint py) except -1 nogil:
    """JsonCommitter._images without the GIL."""
    cdef int n = row.ncols
    cdef int i, res
    cdef bint in_b, in_a, old_t, new_t
    cdef Val ob, nb
    cdef Buf* b = &j.out
    cdef Val* nb_arr
    cdef Val* na_arr
    cdef bint do_reduce = j.column_mode < 2
    if plan.schemaless:
        if row.op == OP_INSERT:
            buf_add(b, b',"after":', 9)
            hex_columns(b, after, NULL, n)
        elif row.op == OP_DELETE:
            buf_add(b, b',"before":', 10)
            hex_columns(b, before, NULL, n)
        else:
            buf_add(b, b',"before":', 10)
            hex_columns(b, before, after, n)
            buf_add(b, b',"after":', 9)
            hex_columns(b, after, before, n)
        return 0
    if row.op == OP_INSERT:
        buf_add(b, b',"after":', 9)
        return job_single(j, after, plan, 1, py)
    if row.op == OP_DELETE:
        buf_add(b, b',"before":', 10)
        return job_single(j, before, plan, 0, py)
    nb_arr = job_scratch(j, 2 * n)
    na_arr = nb_arr + n
    for i in range(n):
        ob = before[i]
        nb = after[i]
        in_b = ob.n != ABSENT
        in_a = nb.n != ABSENT
        nb_arr[i].n = ABSENT
        na_arr[i].n = ABSENT
        if not in_b and not in_a:
            continue
        if not in_b:
            ob.n = NULLV
        if not in_a:
            nb.n = NULLV
        old_t = ob.n > 0
        new_t = nb.n > 0
        if not plan.nullable[i] and in_b and in_a and not old_t and new_t:
            if not py:
                return 1
            py_not_null(j.reducer, plan.py, i)
            if j.copy_after:
                ob = nb
                old_t = new_t
        if do_reduce and not plan.keys[i]:
            if in_b and in_a and (ob.n if ob.n > 0 else 0) == (nb.n if nb.n > 0 else 0) and (
                    ob.n <= 0 or memcmp(ob.p, nb.p, ob.n) == 0):
                continue
            if (in_b and not old_t and not in_a) or (in_a and not new_t and not in_b):
                continue
        nb_arr[i] = ob
        na_arr[i] = nb
    buf_add(b, b',"before":', 10)
    res = job_image(b, nb_arr, plan, 0, py)
    if res:
        return res
    buf_add(b, b',"after":', 9)
    return job_image(b, na_arr, plan, 1, py)


cdef int job_rows(RJob* j, bint py) except -1 nogil:
    """Render a job's messages (JsonCommitter._rows and _close, a MessageRun's layout).

    0 when done; 1 when a value needs python and ``py`` is off (the worker's case).
    """
    cdef Buf* b = &j.out
    cdef Py_ssize_t r
    cdef Row* row
    cdef PlanC* plan
    cdef Val* img
    cdef int64_t idx = j.idx0
    cdef long long num = 0
    cdef int res
    j.run.n = 0
    j.n = 0
    if j.begin != NULL:
        job_add(j, j.begin, j.begin_n, j.begin_idx, -1)
    for r in range(j.w.nrows):
        row = j.w.rows + r
        plan = j.plans[row.table]
        b.n = 0
        idx += 1
        buf_add(b, j.prefix, j.prefix_n)
        buf_int(b, idx)
        buf_add(b, j.suffix, j.suffix_n)
        buf_add(b, b'{"op":"', 7)
        buf_byte(b, 99 if row.op == OP_INSERT else 100 if row.op == OP_DELETE else 117)
        buf_add(b, b'",', 2)
        if j.add_offset:
            buf_add(b, b'"offset":', 9)
            buf_int(b, <int64_t>row.offset)
            buf_byte(b, 44)
        buf_add(b, j.schema[r], j.schema_n[r])
        if j.add_num:
            buf_add(b, b',"num":', 7)
            buf_int(b, num)
        num += 1
        img = j.w.vals + row.img
        res = job_images(j, row, img, img + row.ncols, plan, py)
        if res:
            return res
        buf_add(b, b"}]}", 3)
        job_add(j, b.p, b.n, idx - 1, row.table)
    if j.commit != NULL:
        job_add(j, j.commit, j.commit_n, j.commit_idx, -1)
    return 0


cdef void* stage2_main(void* arg) noexcept nogil:
    """A worker: render queued jobs in turn until stop."""
    cdef Queue* q = <Queue*> arg
    cdef RJob* j
    cdef int res
    pthread_mutex_lock(&q.mu)
    while True:
        while not q.stop and q.take == NULL:
            pthread_cond_wait(&q.work, &q.mu)
        if q.take == NULL:
            break
        j = q.take
        q.take = j.next
        j.state = J_RUNNING
        pthread_mutex_unlock(&q.mu)
        res = 1 if j.python else job_rows(j, False)
        if res < 0:
            clear_error()  # out of memory: the merge renders it again and raises
        pthread_mutex_lock(&q.mu)
        j.state = J_DONE if res == 0 else J_BAIL
        if q.waiting:
            pthread_cond_broadcast(&q.done)
    pthread_mutex_unlock(&q.mu)
    return NULL


cdef class _Job:
    """A queued job's python side: what its C data points into, and what the merge hands over."""

    cdef RJob* j
    cdef object event
    cdef list tables        # the plans of its table slots
    cdef list keep          # bytes and chunks the job's pointers point into
    cdef list held          # pool chunks to release after the merge
    cdef Py_ssize_t size
    cdef long long nrows
    cdef object lwn_scn
    cdef object seq
    cdef object xid

    def __dealloc__(self):
        if self.j != NULL:
            job_free(self.j)


class _LogBarrier(logging.Handler):
    """First handler of the replicator logger: merges the queued jobs before stage 1 logs,
    so every log line keeps the single-thread order."""

    def __init__(self, stage2, owner):
        super().__init__()
        self.stage2 = stage2
        self.owner = owner

    def handle(self, record):
        if threading.get_ident() == self.owner:
            self.stage2.barrier()
        return True

    def emit(self, record):
        pass


@cython.no_gc_clear
cdef class Stage2:
    """Stage 2 of a JsonCommitter: ``workers`` threads, the job queue and the ordered merge."""

    cdef JsonCommitter c
    cdef object pipeline
    cdef public int workers
    cdef int started
    cdef Queue* q
    cdef pthread_t threads[MAX_WORKERS]
    cdef object jobs        # collections.deque of _Job in commit order
    cdef Py_ssize_t bytes   # stored bytes the queued jobs hold
    cdef bint merging
    cdef bint inline        # a format option the job path lacks: every transaction in this thread
    cdef bint skip_begin, skip_commit, add_offset, add_num, copy_after
    cdef int column_mode
    cdef object reducer
    cdef object pool
    cdef bint plain_pool
    cdef Buf spare_run[SPARE]  # render buffers of merged jobs, lent to new ones
    cdef Buf spare_out[SPARE]
    cdef int spare_n
    cdef RJob* pending      # queued jobs not yet given to the workers (a batch in the making)
    cdef RJob* pending_tail
    cdef Py_ssize_t pending_rows
    cdef object log_barrier
    cdef public long long queued   # transactions handed to stage 2 as jobs (tests and the bench read it)
    cdef public long long rerendered  # of those, rendered by the merge (a value only python renders)

    def __cinit__(self):
        self.q = <Queue*> calloc(1, sizeof(Queue))
        if self.q == NULL:
            raise MemoryError()
        pthread_mutex_init(&self.q.mu, NULL)
        pthread_cond_init(&self.q.work, NULL)
        pthread_cond_init(&self.q.done, NULL)

    def __init__(self, JsonCommitter committer, pipeline, int workers):
        fmt = committer.fmt
        # Format options are fixed for the run: read once.
        self.inline = bool(fmt.full or fmt.rid or fmt.schema_columns or committer.scn_all)
        self.skip_begin = bool(fmt.skip_begin)
        self.skip_commit = bool(fmt.skip_commit)
        self.add_offset = bool(fmt.add_offset)
        self.add_num = bool(fmt.add_num)
        self.reducer = fmt.reducer
        self.column_mode = self.reducer.column_mode
        self.copy_after = bool(self.reducer.copy_after)
        self.c = committer
        self.pipeline = pipeline
        self.pool = pipeline.parser.pool
        from replicator.txn.pool import MemoryPool
        self.plain_pool = type(self.pool) is MemoryPool  # its detach/release may be done inline
        self.workers = min(workers, MAX_WORKERS)
        self.jobs = collections.deque()
        self.log_barrier = None

    def __dealloc__(self):
        self._stop()
        self.jobs = None  # frees the C side of jobs never merged (a run that failed)
        while self.spare_n:
            self.spare_n -= 1
            free(self.spare_run[self.spare_n].p)
            free(self.spare_out[self.spare_n].p)
        pthread_cond_destroy(&self.q.work)
        pthread_cond_destroy(&self.q.done)
        pthread_mutex_destroy(&self.q.mu)
        free(self.q)

    cdef int _start(self) except -1:
        cdef int i
        for i in range(self.workers):
            if pthread_create(&self.threads[i], NULL, stage2_main, <void*> self.q) != 0:
                self._stop()
                raise MemoryError("cannot start a decode worker thread")
            self.started += 1
        root = logging.getLogger("replicator")
        self.log_barrier = _LogBarrier(self, threading.get_ident())
        root.handlers.insert(0, self.log_barrier)
        pool = self.pipeline.parser.pool
        pool.pressure = self.barrier
        return 0

    cdef void _stop(self) noexcept:
        cdef int i, n = self.started
        if n == 0:
            return
        with nogil:
            pthread_mutex_lock(&self.q.mu)
            self.q.stop = True
            pthread_cond_broadcast(&self.q.work)
            pthread_mutex_unlock(&self.q.mu)
            for i in range(n):
                pthread_join(self.threads[i], NULL)
        self.started = 0
        self.q.stop = False
        try:
            logging.getLogger("replicator").handlers.remove(self.log_barrier)
        except (ValueError, AttributeError):
            pass
        self.log_barrier = None
        try:
            if self.pipeline.parser.pool.pressure == self.barrier:
                self.pipeline.parser.pool.pressure = None
        except AttributeError:
            pass

    def finish(self):
        """Merge every queued job and stop the workers (the end of a run, or an error)."""
        self.barrier()
        self._stop()

    def barrier(self):
        """Hand every queued job to the pipeline, in order (waiting for the workers)."""
        if self.merging:
            return
        self._merge(True, 0)

    cdef int _merge(self, bint wait, Py_ssize_t keep) except -1:
        """Hand finished jobs at the head of the queue over; with ``wait``, until at most
        ``keep`` are left."""
        cdef _Job job
        cdef int state
        self.merging = True
        try:
            while len(self.jobs) > keep:
                job = self.jobs[0]
                if wait and self.pending != NULL:
                    self._publish()
                with nogil:
                    pthread_mutex_lock(&self.q.mu)
                    if wait and job.j.state < J_DONE:
                        self.q.waiting += 1
                        while job.j.state < J_DONE:
                            pthread_cond_wait(&self.q.done, &self.q.mu)
                        self.q.waiting -= 1
                    state = job.j.state
                    pthread_mutex_unlock(&self.q.mu)
                if state < J_DONE:
                    break
                self.jobs.popleft()
                self._deliver(job, state)
        finally:
            self.merging = False
        return 0

    cdef _deliver(self, _Job job, int state):
        cdef RJob* j = job.j
        cdef MessageRun r
        if state == J_BAIL:
            self.rerendered += 1
            job_rows(j, True)
        r = MessageRun.__new__(MessageRun)
        r.data = PyBytes_FromStringAndSize(j.run.p, j.run.n)
        self._take_back(j)
        r.scn = job.lwn_scn
        r.seq = job.seq
        r.xid = job.xid
        r.tables = [(<_Plan>plan).table for plan in job.tables]
        r.ends, r.idxs, r.tabs, r.n = j.ends, j.idxs, j.tabs, j.n
        j.ends = j.idxs = NULL
        j.tabs = NULL
        j.n = j.cap = 0
        job_free(j)
        job.j = NULL
        self.bytes -= job.size
        self._release(job.held)
        self.c.deliver(job.event, r, job.nrows)

    cdef _release(self, list held):
        """MemoryPool.release_detached, inline (MemoryPool._release per chunk)."""
        pool = self.pool
        if not self.plain_pool:
            pool.release_detached(held)
            return
        free = pool.free_chunks
        cdef Py_ssize_t used = pool.used
        cdef Py_ssize_t keep = pool.min_chunks
        for chunk in held:
            used -= PyByteArray_GET_SIZE(chunk)
            if len(free) < keep:
                PyByteArray_Resize(chunk, 0)
                free.append(chunk)
        pool.used = used

    def commit(self, parser, txn, record):
        """JsonCommitter.commit with stage 2 in the workers (see the module comment)."""
        cdef JsonCommitter c = self.c
        cdef Work w
        cdef _Out o
        cdef _Job job
        cdef RJob* j
        cdef PlanC** plans
        cdef Py_ssize_t r, t
        cdef Row* row
        cdef uint32_t last_obj = 0
        cdef int last_table = -1
        fmt = c.fmt
        if self.inline or txn.size > parser.stream_bytes:
            self.barrier()
            return c._commit_one(parser, txn, record)
        pool = parser.pool
        clog = txn.clog
        if self.plain_pool and clog.swap_path is None:  # all in memory (pool.read without its generator)
            chunks = [x for x in clog.chunks if PyByteArray_GET_SIZE(x)]
        else:
            chunks = [x for x in pool.read(clog) if len(x)]
        memset(&w, 0, sizeof(Work))
        plans = NULL
        try:
            if not self._assemble(&w, parser, chunks):
                self.barrier()
                c.python_transactions += 1
                return False
            c.native_transactions += 1
            if w.nrows == 0:
                return True
            tables = c._tables
            if c.tally is not None:  # metrics: rows counted here, in commit order (_tally.pyx)
                tally_rows(c.tally, &w, tables)
                tally_commit(c.tally)
            plans = <PlanC**> malloc((len(tables) + 1) * sizeof(PlanC*))
            if plans == NULL:
                raise MemoryError()
            for t in range(len(tables)):
                plans[t] = plan_c(<_Plan> tables[t])
            stats = parser.stats
            stats.rows += w.nrows
            stats.transactions += 1
            o = c._open(parser, txn, record)
            if o.prefix is None:  # headers per row: rendered here, after the queued jobs
                self.barrier()
                o.run = True
                c.run.n = 0
                c.run_n = 0
                c._rows(&w, o, parser)
                c._close(o)
                c.deliver(o.event, c._take_run(o), w.nrows)
                return True
            job = _Job()
            j = job.j = <RJob*> calloc(1, sizeof(RJob))
            if j == NULL:
                raise MemoryError()
            keep = [o.prefix, o.suffix, chunks]
            j.prefix = PyBytes_AS_STRING(o.prefix)
            j.prefix_n = PyBytes_GET_SIZE(o.prefix)
            j.suffix = PyBytes_AS_STRING(o.suffix)
            j.suffix_n = PyBytes_GET_SIZE(o.suffix)
            hb = o.hb
            # Positions in the order _rows and _close take them.
            if not self.skip_begin:
                head = hb.begin(o.lwn_scn, fmt.take_index(), c.epoch(w.rows.time, parser), o.ctx)
                data = b"{" + head + b',"payload":[{"op":"begin"}]}'
                keep.append(data)
                j.begin = PyBytes_AS_STRING(data)
                j.begin_n = PyBytes_GET_SIZE(data)
                j.begin_idx = fmt.lwn_idx - 1
            j.idx0 = fmt.lwn_idx
            fmt.lwn_idx = j.idx0 + w.nrows
            if not self.skip_commit:
                head = hb.commit(o.lwn_scn, fmt.take_index(), o.ctx)
                data = b"{" + head + b',"payload":[{"op":"commit"}]}'
                keep.append(data)
                j.commit = PyBytes_AS_STRING(data)
                j.commit_n = PyBytes_GET_SIZE(data)
                j.commit_idx = fmt.lwn_idx - 1
            # The schema piece of every row (cached per table and object, as _rows does).
            j.schema = <const char**> malloc((w.nrows + 1) * sizeof(char*))
            j.schema_n = <Py_ssize_t*> malloc((w.nrows + 1) * sizeof(Py_ssize_t))
            if j.schema == NULL or j.schema_n == NULL:
                raise MemoryError()
            schema = None
            for r in range(w.nrows):
                row = w.rows + r
                if row.table != last_table or row.obj != last_obj or schema is None:
                    plan = tables[row.table]
                    schema = (<_Plan>plan).schema.get(row.obj)
                    if schema is None:
                        schema = (<_Plan>plan).schema[row.obj] = fmt.table_schema((<_Plan>plan).py_plan, row.obj)
                    last_table = row.table
                    last_obj = row.obj
                j.schema[r] = PyBytes_AS_STRING(schema)
                j.schema_n[r] = PyBytes_GET_SIZE(schema)
            j.add_offset = self.add_offset
            j.add_num = self.add_num
            j.column_mode = self.column_mode
            j.copy_after = self.copy_after
            j.reducer = <void*> self.reducer
            j.python = job_needs_python(&w, plans)
            j.plans = plans
            plans = NULL
            # The messages' position arrays at their final size (MessageRun takes them over).
            j.cap = w.nrows + 2
            j.ends = <int64_t*> malloc(j.cap * sizeof(int64_t))
            j.idxs = <int64_t*> malloc(j.cap * sizeof(int64_t))
            j.tabs = <int*> malloc(j.cap * sizeof(int))
            if j.ends == NULL or j.idxs == NULL or j.tabs == NULL:
                raise MemoryError()
            self._lend(j)
            j.w = w
            memset(&w, 0, sizeof(Work))
            job.event = o.event
            job.tables = tables
            job.keep = keep
            job.nrows = j.w.nrows
            job.lwn_scn = o.lwn_scn
            job.seq = o.seq
            job.xid = o.xid
            if self.plain_pool and clog.swap_path is None and pool.logs.get(clog.key) is clog:  # detach
                job.held = clog.chunks
                clog.chunks = []
                del pool.logs[clog.key]
            else:
                job.held = pool.detach(clog)  # the chunks now belong to the job
            job.size = txn.size
            self._queue(job)
            return True
        finally:
            free(plans)
            c._views = None
            c._tables = None
            work_free(&w)

    cdef bint _assemble(self, Work* w, object parser, list chunks) except -1:
        """JsonCommitter._assemble over raw chunk pointers (no buffer export: the pool may
        clear the chunks when the job releases them)."""
        cdef const uint8_t* base
        cdef Py_ssize_t size, pos
        cdef Grouping g
        table_list = []
        for chunk in chunks:
            if type(chunk) is bytearray:
                base = <const uint8_t*> PyByteArray_AS_STRING(chunk)
                size = PyByteArray_GET_SIZE(chunk)
            elif type(chunk) is bytes:
                base = <const uint8_t*> PyBytes_AS_STRING(chunk)
                size = PyBytes_GET_SIZE(chunk)
            else:
                raise TypeError(f"pool chunk of type {type(chunk).__name__}")
            with nogil:
                pos = parse_entries(w, base, size)
            if pos != size:
                return False  # a DDL entry or something python must judge
        memset(&g, 0, sizeof(Grouping))
        try:
            if not self.c._group(w, &g, parser, 0, table_list, {}):
                return False
        finally:
            grouping_free(&g)
        self.c._tables = table_list
        return True

    cdef void _lend(self, RJob* j) noexcept:
        """Give a job the render buffers of a merged one (no allocation in the worker)."""
        if self.spare_n:
            self.spare_n -= 1
            j.run = self.spare_run[self.spare_n]
            j.out = self.spare_out[self.spare_n]
            j.run.n = j.out.n = 0

    cdef void _take_back(self, RJob* j) noexcept:
        """Keep a merged job's render buffers for the next job (a few, not too large)."""
        if self.spare_n < SPARE and j.run.cap <= (1 << 20) and j.out.cap <= (1 << 20):
            self.spare_run[self.spare_n] = j.run
            self.spare_out[self.spare_n] = j.out
            self.spare_n += 1
            j.run.p = j.out.p = NULL
            j.run.cap = j.out.cap = 0

    cdef int _queue(self, _Job job) except -1:
        cdef RJob* j = job.j
        if not self.started:
            self._start()
        # Bounded memory: wait for the oldest jobs first when too much is in flight.
        if len(self.jobs) >= MAX_JOBS or self.bytes + job.size > MAX_BYTES:
            self._merge(True, len(self.jobs) // 2)
        self.jobs.append(job)
        self.bytes += job.size
        self.queued += 1
        j.state = J_QUEUED
        j.next = NULL
        if self.pending == NULL:
            self.pending = j
        else:
            self.pending_tail.next = j
        self.pending_tail = j
        self.pending_rows += j.w.nrows
        if self.pending_rows >= BATCH_ROWS:
            self._publish()
            self._merge(False, 0)  # hand over whatever is already done
        return 0

    cdef void _publish(self) noexcept:
        """Give the jobs queued since the last call to the workers (one wake-up)."""
        cdef RJob* first = self.pending
        cdef RJob* last = self.pending_tail
        if first == NULL:
            return
        self.pending = self.pending_tail = NULL
        self.pending_rows = 0
        with nogil:
            pthread_mutex_lock(&self.q.mu)
            if self.q.take == NULL:
                self.q.take = first
            else:
                self.q.tail.next = first
            self.q.tail = last
            pthread_cond_broadcast(&self.q.work)
            pthread_mutex_unlock(&self.q.mu)
