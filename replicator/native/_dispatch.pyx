# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Stage 1 in C: the record dispatch (RecordDispatcher), OLR's field checks and the batch record loop.

:class:`RecordDispatcher` is Parser._dispatch for one record, with the (5.1, 11.x) pairs stored
without ChangeVector objects (into the pool's chunks, as OpenTransaction.add_pair writes them);
a vector failing one of OLR's field checks sends its record to the python parser.
:class:`RecordLoop` is read_lwns + Parser.process_lwn of one archived redo file: block checks
(_framing), record framing into LWNs and the dispatch of their records.
"""

# A module of its own (setup.py MODULES, docs/native-engine.md "Native modules"), above the core:
# it cimports grow from _core.pxd and the block checks from _framing.pxd; the core's committer
# never calls it. Its fields and cdef methods are declared in _dispatch.pxd (the daemon's loops,
# _daemon_loop, subclass RecordDispatcher and RecordLoop); python reaches it as
# replicator.native.dispatch() (the wiring, the tests).

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from cpython.object cimport Py_SIZE
from cpython cimport array
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memmove, memcmp, memset
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t

from replicator.values._buf cimport *  # Buf, its helpers, the byte readers
from replicator.native._core cimport grow
from replicator.redo._framing cimport first_bad_block, raise_block, framing_error  # the block checks

cdef extern from "Python.h":
    # CPython's bytearray object (its capacity, for grow_chunk)
    ctypedef struct ByteArrayObject "PyByteArrayObject":
        Py_ssize_t ob_alloc
        char* ob_bytes
        char* ob_start
        Py_ssize_t ob_exports
    void Py_SET_SIZE(object o, Py_ssize_t size)

include "_defs.pxi"

# ============================================================================= OLR's field checks
# replicator.redo.invariants in C, pass/fail only: a vector failing one of them sends its
# record to the python parser, whose own check then raises with OLR's code and text. Each
# function makes the same decisions as the python function its docstring names (the python
# fast paths for 5.1, 11.2/11.6 and 11.5 fold back into the generic steps here); the python
# code is the reference, tests/unit/native/test_native_checks.py compares the two.
DEF KDOM2 = 0x80
DEF ROWDEPS = 0x40
DEF LMN = 16
DEF CKI = 9
DEF V12_1 = 0x0C100000

cdef struct FV:             # one vector's fields, as the checks read them
    const uint8_t* d        # the record
    int* ln                 # field lengths (0-based)
    int* of                 # field offsets in the record
    int n                   # field count
    bint big

cdef struct KdoHead:        # invariants._kdo's result
    int op_byte
    int flags
    int cc
    const uint8_t* nulls    # the NULL bitmap of the cc columns (NULL when cc == 0)
    int extra               # size/delt of an IRP/ORP, nrow of a QMI/QMD


cdef inline int ktb_min(int key) noexcept nogil:
    cdef int k = key & 0x0F
    return (8 if key & 0x10 else 4) + (8 if k == 2 else 24 if k == 4 else 16 if k == 1 else -4)


cdef inline bint ktb_bad(FV* v, int i) noexcept nogil:
    """invariants._ktb_redo: True when field ``i`` is too short for its KTB operation."""
    cdef int size = v.ln[i]
    cdef const uint8_t* p
    if size < 8:
        return False
    p = v.d + v.of[i]
    return size < ktb_min((p[0] & 0x0F) | (p[1] & 0x08) << 1)


cdef inline bint nbit(const uint8_t* nulls, int c) noexcept nogil:
    return (nulls[c >> 3] >> (c & 7)) & 1


cdef int null_count(const uint8_t* nulls, int cc) noexcept nogil:
    cdef int c, k = 0
    for c in range(cc):
        k += nbit(nulls, c)
    return k


cdef int cc_data(const uint8_t* nulls, int cc) noexcept nogil:
    """invariants._cc_data: one past the last non-NULL column."""
    cdef int c = cc
    while c > 0 and nbit(nulls, c - 1):
        c -= 1
    return c


cdef bint null_fields_bad(FV* v, const uint8_t* nulls, int first, int count) noexcept nogil:
    """invariants._null_fields: a NULL column among the first ``count`` owns a non-empty field."""
    cdef int c
    for c in range(count):
        if nbit(nulls, c) and v.ln[first + c]:
            return True
    return False


cdef bint kdo_bad(FV* v, int i, KdoHead* k) noexcept nogil:
    """invariants._kdo: True when the KDO header of field ``i`` fails; else ``k`` is filled."""
    cdef int size = v.ln[i]
    cdef const uint8_t* p
    cdef int op, nbytes
    k.cc = 0
    k.nulls = NULL
    k.extra = 0
    if size < 16:
        return True
    p = v.d + v.of[i]
    k.op_byte = p[10]
    k.flags = p[11]
    op = p[10] & 0x1F
    if op == URP:
        if size < 28:
            return True
        k.cc = p[23]
        nbytes = (k.cc + 7) >> 3
        if size < 26 + nbytes:
            return True
        if k.cc:
            k.nulls = p + 26
    elif op == IRP or op == ORP:
        if size < 48:
            return True
        k.cc = p[18]
        nbytes = (k.cc + 7) >> 3
        if size < 45 + nbytes:
            return True
        if k.cc:
            k.nulls = p + 45
        k.extra = <int>rd16(p + 40, v.big)
    elif op == DRP or op == LKR or op == CKI:
        return size < 20
    elif op == CFA:
        return size < 32
    elif op == QMI or op == QMD:
        if size < 24:
            return True
        k.extra = p[18]
    return False


cdef bint supplemental_bad(FV* v, int j) noexcept nogil:
    """invariants._supplemental from field ``j``."""
    cdef int n = v.n
    cdef int supp_cc
    while j < n and v.ln[j] == 0:
        j += 1
    if j >= n:
        return False
    if v.ln[j] < 20:
        return True
    supp_cc = <int>rd16(v.d + v.of[j] + 2, v.big)
    j += 3
    if j > n:
        return False
    return j + supp_cc > n


cdef int values_end(FV* v, int k) noexcept nogil:
    """Past the ``k`` non-empty value fields from field 5 (empty fillers skipped); -1: they run out."""
    cdef int n = v.n
    cdef int j = 5 + k
    cdef int i
    if j <= n:
        for i in range(5, j):
            if v.ln[i] == 0:
                break
        else:
            return j
    j = 5
    for i in range(k):
        while j < n and v.ln[j] == 0:
            j += 1
        if j >= n:
            return -1
        j += 1
    return j


cdef bint urp_tail_bad(FV* v, int j, int op_byte) noexcept nogil:
    """After a URP undo's values: row dependencies (invariants._skip_take), then supplemental data."""
    cdef int n = v.n
    if op_byte & ROWDEPS:
        while j < n and v.ln[j] == 0:
            j += 1
        if j >= n:
            return True
        j += 1
    return supplemental_bad(v, j)


cdef bint undo_row_bad(FV* v) noexcept nogil:
    """invariants._undo_row: the row operation a 5.1 undoes (field 4 onwards)."""
    cdef KdoHead k
    cdef int n = v.n
    cdef int op, j, count
    if kdo_bad(v, 3, &k):
        return True
    op = k.op_byte & 0x1F
    if op == URP:
        if n < 5:
            return True
        if k.flags & KDOM2:
            return n < 6
        j = values_end(v, k.cc - (null_count(k.nulls, k.cc) if k.cc else 0))
        if j < 0:
            return False
        return urp_tail_bad(v, j, k.op_byte)
    if op == DRP:
        j = 4
        if k.op_byte & ROWDEPS:
            if n < 5:
                return True
            j = 5
        return supplemental_bad(v, j)
    if op == IRP or op == ORP:
        j = 4
        if k.cc:
            if n < 5:
                return False
            if v.ln[4] == k.extra and k.cc > 1:
                j = 5
            else:
                count = k.cc if k.cc < n - 4 else n - 4
                if null_fields_bad(v, k.nulls, 4, count):
                    return True
                if n < 4 + k.cc:
                    return False
                j = 4 + k.cc
        if k.op_byte & ROWDEPS:
            if j >= n:
                return True
            j += 1
        return supplemental_bad(v, j)
    if op == QMI:
        return n < 6
    if op == LMN or op == LKR or op == CFA:
        return supplemental_bad(v, 4)
    return False


cdef bint check_0501_bad(FV* v, bint merged) noexcept nogil:
    """invariants._check_0501 (``merged``: a 5.1 reassembled from a multi-block undo)."""
    cdef int n = v.n
    cdef const uint8_t* p
    cdef int layer, code
    if n < 2 or v.ln[1] < 24 or v.ln[0] < 20:
        return not (n == 1 and v.ln[0] >= 20)
    p = v.d + v.of[1]
    # ktub flags (u16 at +20): a piece of a multi-block undo (0x0001, 0x0002, 0x0100) stops here.
    if not merged and rd16(p + 20, v.big) & 0x0103:
        return False
    if n < 3:
        return False
    layer = p[16]
    code = p[17]
    if layer != 11 or code != 1:
        if (layer == 10 and code == 0x16) or (layer == 26 and code == 1):
            if ktb_bad(v, 2):
                return True
            return layer == 10 and n >= 4 and v.ln[3] < 20
        return layer == 14 and code == 8 and v.ln[2] < 4
    if ktb_bad(v, 2):
        return True
    if n < 4:
        return False
    return undo_row_bad(v)


cdef bint row_redo_bad(FV* v, KdoHead* k) noexcept nogil:
    """invariants._row_redo: KTB redo in field 1, the KDO header in field 2 (when present)."""
    k.cc = 0
    k.nulls = NULL
    k.extra = 0
    k.op_byte = -1          # no field 2
    if v.n < 1 or ktb_bad(v, 0):
        return True
    return v.n >= 2 and kdo_bad(v, 1, k)


cdef bint check_0b02_bad(FV* v) noexcept nogil:
    """invariants._check_0b02 (11.2 IRP, 11.6 ORP): a NULL column from field 3 owns no data."""
    cdef KdoHead k
    cdef int count, cdat
    if row_redo_bad(v, &k):
        return True
    if v.n < 3 or not k.cc or (k.op_byte & 0x1F) not in (IRP, ORP):
        return False
    if null_count(k.nulls, k.cc) == 0 or (k.cc > 1 and v.ln[2] == k.extra):
        return False
    cdat = cc_data(k.nulls, k.cc) + 1
    count = k.cc if k.cc < cdat else cdat
    if v.n - 2 < count:
        count = v.n - 2
    return null_fields_bad(v, k.nulls, 2, count)


cdef bint check_0b05_bad(FV* v) noexcept nogil:
    """invariants._check_0b05 (11.5 URP): a NULL column up to ccData owns an empty field."""
    cdef KdoHead k
    cdef int count
    if row_redo_bad(v, &k):
        return True
    if v.n < 3 or (k.op_byte & 0x1F) != URP:
        return False
    if k.flags & KDOM2:
        return v.n < 4
    if not k.cc or not v.ln[2] or null_count(k.nulls, k.cc) == 0:
        return False
    count = cc_data(k.nulls, k.cc)
    if v.n - 3 < count:
        count = v.n - 3
    return null_fields_bad(v, k.nulls, 3, count)


cdef bint vector_bad(FV* v, int opcode, uint32_t compat) noexcept nogil:
    """invariants.CHECKS[opcode]: True when the vector fails one of OLR's checks."""
    cdef int n = v.n
    cdef KdoHead k
    if opcode == 0x0501:
        return check_0501_bad(v, False)
    if opcode == 0x0B05:
        return check_0b05_bad(v)
    if opcode == 0x0B02 or opcode == 0x0B06:
        return check_0b02_bad(v)
    if opcode == 0x0B03 or opcode == 0x0B04 or opcode == 0x0B08 or opcode == 0x0B0C or opcode == 0x0B10 \
            or opcode == 0x0B16:
        return row_redo_bad(v, &k)
    if opcode == 0x0B0B:
        if row_redo_bad(v, &k):
            return True
        return n >= 3 and k.op_byte >= 0 and v.ln[2] < k.extra * 2
    if opcode == 0x0502:
        if n < 1 or v.ln[0] < 32:
            return True
        if compat >= V12_1 and n >= 2 and v.ln[1] != 4:
            return v.ln[1] < 36 or (n >= 3 and v.ln[2] < 4)
        return False
    if opcode == 0x0504:
        if n < 1 or v.ln[0] < 20:
            return True
        return n >= 2 and v.d[v.of[0] + 16] & 0x02 and v.ln[1] < 16
    if opcode == 0x0506:
        if n < 1 or v.ln[0] < 24:
            return True
        return n >= 2 and v.ln[1] < 8
    if opcode == 0x050B:
        return n < 1 or v.ln[0] < 24
    if opcode == 0x0A02 or opcode == 0x0A12:
        return n < 1 or ktb_bad(v, 0)
    return False


cdef inline bint checked_opcode(int op) noexcept nogil:
    if op >> 8 == 11:
        op &= 0xFF
        return op == 2 or op == 3 or op == 4 or op == 5 or op == 6 or op == 8 or op == 11 or op == 12 \
            or op == 16 or op == 22
    return op == 0x0501 or op == 0x0502 or op == 0x0504 or op == 0x0506 or op == 0x050B or op == 0x0A02 \
        or op == 0x0A12


# ============================================================================= stage 1: records




cdef int OPC_UNDO = 0x0501
cdef int OPC_BEGIN = 0x0502
cdef int OPC_COMMIT = 0x0504
cdef int OPC_ROLLBACK6 = 0x0506
cdef int OPC_ROLLBACK11 = 0x050B
cdef int OPC_SESSION19 = 0x0513
cdef int OPC_SESSION20 = 0x0514
cdef int OPC_DDL = 0x1801
cdef int OPC_LOB_PAGE = 0x1301
cdef int OPC_LOB_BIMG = 0x1A06
cdef int OPC_LOB_REDO = 0x1A02
cdef int UNDO_HEAD = 0x1
cdef int UNDO_BEGIN = 0x8
cdef int UNDO_TAIL = 0x2
cdef int UNDO_MID = 0x100


cdef inline uint32_t usn_of(int cls) noexcept nogil:
    """ChangeVector.usn: the undo segment number of a layer 5 vector's class."""
    return <uint32_t>((cls - 15) // 2) if cls >= 15 else 0


cdef inline bint stored_redo(int op) noexcept nogil:
    return (op == 0x0B02 or op == 0x0B03 or op == 0x0B05 or op == 0x0B06 or op == 0x0B08 or op == 0x0B0B
            or op == 0x0B0C or op == 0x0B10 or op == 0x0B16)


cdef int scan_vectors(const uint8_t* d, Py_ssize_t end, int pos, int vh, bint big, VecInfo* out,
                      int* lens, int* offs) noexcept nogil:
    """iter_vectors + ChangeVector.__init__ checks: the vectors of one record; -1 when python must do it.

    Every field's length and offset go to ``lens``/``offs`` (MAXF entries) for the field checks.
    """
    cdef int count = 0
    cdef int fi = 0
    cdef Py_ssize_t table, tsize, nf, k, p, n
    while pos + vh + 2 <= end:
        if d[pos] == 0 and d[pos + 1] == 0:
            break
        if count >= MAXV:
            return -1
        table = pos + vh
        tsize = rd16(d + table, big)
        if tsize < 2 or table + tsize > end:
            return -1
        nf = (tsize - 2) >> 1
        p = table + ((tsize + 2) & ~3)
        out[count].f1off = out[count].f2off = 0
        out[count].f1len = out[count].f2len = -1
        if fi + nf > MAXF:
            return -1   # over 32K fields in one record: python
        out[count].fbase = fi
        for k in range(nf):
            n = rd16(d + table + 2 + 2 * k, big)
            lens[fi] = <int>n
            offs[fi] = <int>p
            fi += 1
            if k == 0:
                out[count].f1off = <int>p
                out[count].f1len = <int>n
            elif k == 1:
                out[count].f2off = <int>p
                out[count].f2len = <int>n
            p += (n + 3) & ~3
        if p > end:
            return -1
        out[count].start = pos
        out[count].size = <int>(p - pos)
        out[count].layer = d[pos]
        out[count].code = d[pos + 1]
        out[count].opcode = (d[pos] << 8) | d[pos + 1]
        out[count].cls = rd16(d + pos + 2, big)
        out[count].con_id = rd16(d + pos + 24, big) if vh == 32 else 0
        out[count].nf = <int>nf
        count += 1
        pos = <int>p
    return count


def vector_passes(bytes data, int start, int header_size, str endian, uint32_t compat) -> bool:
    """The C checks on one vector (tests): True when it passes, as invariants.check_vector."""
    cdef const uint8_t* d = <const uint8_t*> PyBytes_AS_STRING(data)
    cdef VecInfo one[MAXV]
    cdef int* ln = <int*> malloc(MAXF * sizeof(int) * 2)
    cdef FV v
    if ln == NULL:
        raise MemoryError()
    try:
        if start < 0 or scan_vectors(d, PyBytes_GET_SIZE(data), start, header_size, endian == ">", one,
                                     ln, ln + MAXF) < 1:
            raise ValueError("no change vector at this offset")
        if not checked_opcode(one[0].opcode) or d[start + 21] & 0x80:
            return True
        v.d = d
        v.big = endian == ">"
        v.ln = ln
        v.of = ln + MAXF
        v.n = one[0].nf
        return not vector_bad(&v, one[0].opcode, compat)
    finally:
        free(ln)





cdef class RecordDispatcher:
    """Parser._dispatch for one record, with the (5.1, 11.x) pairs stored natively.

    Every other vector is handed to the python parser's own handler (as a ChangeVector), in
    the same order, so side effects and errors are the python engine's. Returns False, having
    done nothing, when the record's vectors cannot be laid out or one of them fails OLR's field
    checks (python then raises the error). A 5.19's checks and a merged multi-block undo's are
    made by the python code this calls for them.

    The record is either a :class:`~replicator.redo.records.Record` (:meth:`dispatch`, the
    parser hook) or raw bytes of :class:`RecordLoop` (no Record object unless a python handler
    needs one: :meth:`_record` makes it then).
    """

    def __init__(self):
        from replicator.events import Table
        from replicator.redo import parser as python_parser
        from replicator.redo.invariants import check_session
        from replicator.redo.opcodes.session import session_attributes
        from replicator.redo.opcodes.undo import undo_info
        from replicator.redo.records import Record
        from replicator.redo.vectors import ChangeVector
        from replicator.txn import pool as txn_pool
        from replicator.txn.buffer import TransactionBuffer

        self._sessions = {}
        self._pool_type = txn_pool.MemoryPool
        self._buffer_type = TransactionBuffer
        self._chunk = txn_pool.CHUNK

        self._quiet_layers = frozenset(python_parser.QUIET_LAYERS)
        self._quiet_opcodes = frozenset(python_parser.QUIET_OPCODES)
        self._session_attributes = session_attributes
        self._undo_info = undo_info
        self._cv = ChangeVector
        self._table_type = Table
        self._check_session = check_session
        self._record_type = Record

    def __dealloc__(self):
        free(self.entry.p)

    cdef _load(self, object parser):
        """Read what the dispatch needs of the parser (valid until the next LWN or call)."""
        header = parser.header
        self._p_big = header.endian == ">"
        self._p_compat = header.compat
        self._p_bs = header.block_size
        self._p_vh = parser.vector_header_size
        self._p_opt = parser.opt
        # Several PDBs (source.containers): -1, each record goes to Parser.process_record, which
        # routes its vectors by CON_ID to their container's options (the commits come back here).
        self._p_con_id = -1 if parser.views is not None else self._p_opt.con_id
        self._p_buffer = buffer = parser.buffer
        self._p_pool = pool = parser.pool
        if type(buffer) is self._buffer_type and type(buffer.pool) is self._pool_type:
            self._p_by_key = buffer.by_key
            self._p_touch = buffer.pool.logs.move_to_end
        else:
            self._p_by_key = None
            self._p_touch = None
        if type(pool) is self._pool_type:
            self._p_limits = pool
            self._p_swap = pool.swap_bytes
            self._p_max = pool.max_bytes
        else:
            self._p_limits = None

    def dispatch(self, parser, record):
        """Process ``record`` like Parser._dispatch; False when it must go to python untouched."""
        self._load(parser)
        self._enter(record)
        try:
            return self._run(parser)
        finally:
            self._rec = None
            self._cvs = None
            self.flush_counts(parser)

    def dispatch_records(self, parser, list records):
        """Parser.process_lwn's record loop for records already framed (the daemon's LWNs).

        Each record goes through this dispatch, else to ``parser.process_record`` (which
        raises the python engine's coded error); errors of the handlers are located as
        ``Parser.process_record`` does.
        """
        cdef Py_ssize_t rank
        self._load(parser)
        try:
            for rank in range(len(records)):
                record = records[rank]
                parser.rank = rank
                if not self._dispatch_located(parser, record):
                    parser.process_record(record)
        finally:
            self.flush_counts(parser)

    cdef int _enter(self, object record) except -1:
        """Point the dispatch at ``record``'s bytes and position (it keeps a reference)."""
        cdef bytes data = record.data
        self._rec = record
        self._cvs = None
        self._d = <const uint8_t*> PyBytes_AS_STRING(data)
        self._end = PyBytes_GET_SIZE(data)
        self._m.scn = record.scn
        self._m.block = record.block
        self._m.offset = record.offset
        self._m.time = record.time
        self._m.header_size = record.header_size
        return 0

    cdef bint _dispatch_located(self, object parser, object record) except -1:
        self._enter(record)
        try:
            return self._run_located(parser)
        finally:
            self._rec = None
            self._cvs = None

    cdef bint _run_located(self, object parser) except -1:
        """_run with the handlers' errors turned into Parser.process_record's coded errors."""
        try:
            return self._run(parser)
        except _field_check_error() as exc:
            raise parser.field_error(self._record(parser), exc) from None
        except (_struct_error(), IndexError) as exc:
            raise parser.decode_error(self._record(parser), exc) from exc

    cdef flush_counts(self, object parser):
        if self.n_records or self.n_vectors:
            stats = parser.stats
            stats.records += self.n_records
            stats.vectors += self.n_vectors
            self.n_records = self.n_vectors = 0

    cdef object _record(self, object parser):
        """The Record of the record being dispatched (made now for the raw bytes of RecordLoop)."""
        if self._rec is None:
            self._rec = self._record_type(self._m.scn, self._subscn, self._m.block, self._m.offset, self._vld,
                                          PyBytes_FromStringAndSize(<const char*>self._d, self._end), self._m.time)
            parser.rank = self._rank
        return self._rec

    cdef bint _run(self, object parser) except -1:
        cdef const uint8_t* d = self._d
        cdef Py_ssize_t end = self._end
        cdef bint big = self._p_big
        cdef int vh = self._p_vh
        cdef int count = scan_vectors(d, end, self._m.header_size, vh, big, self.vecs, self.flen, self.foff)
        cdef int i, op, prev = -1, con_id = self._p_con_id
        cdef bint info_ok = False
        cdef uint32_t xid_usn, xid_slot, xid_sqn, obj = 0, data_obj = 0, flags = 0, opc = 0
        cdef VecInfo* v
        cdef VecInfo* u
        cdef FV fv
        cdef uint32_t compat
        if count < 0 or con_id < 0:
            return False
        self._nvec = count
        # OLR checks every vector as it reads it, whatever its object or container: a record
        # with a failing vector goes to the python parser, which raises OLR's error for it.
        compat = self._p_compat
        fv.d = d
        fv.big = big
        for i in range(count):
            v = &self.vecs[i]
            if checked_opcode(v.opcode) and not d[v.start + 21] & 0x80:
                fv.ln = self.flen + v.fbase
                fv.of = self.foff + v.fbase
                fv.n = v.nf
                if vector_bad(&fv, v.opcode, compat):
                    return False
        self.n_records += 1
        lobs = None
        for i in range(count):
            v = &self.vecs[i]
            self.n_vectors += 1
            if con_id and v.con_id != con_id and vh == 32:
                parser.other_container(v.con_id)  # counted, logged once per container (60041)
                continue
            op = v.opcode
            if prev >= 0:
                u = &self.vecs[prev]
                if u.opcode == OPC_UNDO:
                    if v.layer == 11 or op == OPC_SESSION19 or op == OPC_SESSION20:
                        if info_ok and v.layer == 11:
                            self._pair(parser, u, v, xid_usn, xid_slot, xid_sqn, obj, data_obj,
                                       flags, opc, big, vh, prev, i)
                        elif info_ok:
                            parser.data_pair(self._vec(parser, prev), self._info(parser, prev),
                                              self._vec(parser, i), self._record(parser))
                        prev = -1
                        continue
                    if v.layer == 10 or op == OPC_LOB_REDO:
                        if lobs is None:
                            lobs = parser.lobs
                        if lobs.enabled and info_ok:
                            ucv = self._vec(parser, prev)
                            pyinfo = self._undo_info(ucv)
                            if op == OPC_LOB_REDO:
                                lobs.kdli_pair(pyinfo, ucv, self._vec(parser, i))
                            else:
                                lobs.index_pair(pyinfo, ucv, self._vec(parser, i))
                        prev = -1
                        continue
                    prev = -1
                elif op == OPC_ROLLBACK6 or op == OPC_ROLLBACK11:
                    # Parser._partial_rollback with undo.ktub_info read in place
                    if v.f1len >= 22:
                        parser.undo_last(v.con_id, usn_of(v.cls), d[v.f1off + 18], rd32(d + v.f1off, big),
                                          u.opcode)
                    prev = -1
                    continue
                else:
                    prev = -1
            if op == OPC_UNDO:
                # undo.undo_info, read in place
                info_ok = v.f1len >= 20 and v.f2len >= 22 and v.nf >= 2
                if info_ok:
                    xid_usn = rd16(d + v.f1off + 8, big)
                    xid_slot = rd16(d + v.f1off + 10, big)
                    xid_sqn = rd32(d + v.f1off + 12, big)
                    obj = rd32(d + v.f2off, big)
                    data_obj = rd32(d + v.f2off + 4, big)
                    opc = (d[v.f2off + 16] << 8) | d[v.f2off + 17]
                    flags = rd16(d + v.f2off + 20, big)
                if info_ok and flags & (UNDO_TAIL | UNDO_MID):
                    ucv = self._vec(parser, i)
                    parser.undo_piece(ucv, self._undo_info(ucv))
                else:
                    prev = i
            elif v.layer == 11:
                prev = i
                info_ok = False  # a lone redo: prev is not an undo
            elif op == OPC_BEGIN:
                # Parser._begin with undo.begin_xid read in place (SQN 0: a cleanup, no begin)
                if v.f1len >= 8 and rd32(d + v.f1off + 4, big):
                    parser.open_txn(v.con_id, (<uint64_t>usn_of(v.cls) << 48) | (<uint64_t>rd16(d + v.f1off, big) << 32)
                                 | rd32(d + v.f1off + 4, big), self._m.scn, self._m.time, self._m.block)
            elif op == OPC_COMMIT:
                # Parser._commit with undo.commit_info read in place
                if v.f1len >= 17:
                    parser.end_txn(v.con_id, (<uint64_t>usn_of(v.cls) << 48) | (<uint64_t>rd16(d + v.f1off, big) << 32)
                                | rd32(d + v.f1off + 4, big), (d[v.f1off + 16] & 0x04) != 0, self._record(parser))
            elif op == OPC_SESSION19 or op == OPC_SESSION20:
                touched = parser.last_touched
                if touched is not None:
                    if op == OPC_SESSION19:
                        self._check_session(self._vec(parser, i))
                        touched.attributes.update(self._session_attributes(self._vec(parser, i), compat))
                    else:
                        touched.attributes.update(self._session20(parser, v, vh, big, compat, i))
            elif op == OPC_DDL:
                parser.ddl(self._vec(parser, i), self._record(parser))
            elif op == OPC_LOB_BIMG or op == OPC_LOB_PAGE:
                if lobs is None:
                    lobs = parser.lobs
                if lobs.enabled:
                    lobs.page(self._vec(parser, i))
            elif op == OPC_ROLLBACK6 or op == OPC_ROLLBACK11 or v.layer == 5 or v.layer == 24:
                pass
            elif v.layer not in self._quiet_layers and op not in self._quiet_opcodes:
                parser.unknown(self._vec(parser, i))
        return True

    cdef object _vec(self, object parser, int i):
        cdef list cvs = self._cvs
        if cvs is None:
            cvs = self._cvs = [None] * self._nvec
        cv = cvs[i]
        if cv is None:
            cv = cvs[i] = self._cv(self._record(parser).data, self.vecs[i].start, parser.vector_header_size, parser.header.endian)
        return cv

    cdef object _info(self, object parser, int i):
        return self._undo_info(self._vec(parser, i))

    cdef object _session20(self, object parser, VecInfo* v, int vh, bint big, uint32_t compat, int i):
        """session.session_attributes of a 5.20, remembered by its fields' bytes (a session repeats them)."""
        cdef dict cache = self._sessions
        if compat != self._sessions_compat or big != self._sessions_big or len(cache) >= 4096:
            cache.clear()
            self._sessions_compat = compat
            self._sessions_big = big
        key = PyBytes_FromStringAndSize(<const char*>(self._d + v.start + vh), v.size - vh)
        attrs = cache.get(key)
        if attrs is None:
            attrs = cache[key] = self._session_attributes(self._vec(parser, i), compat)
        return attrs

    cdef _pair(self, object parser, VecInfo* u, VecInfo* r, uint32_t usn, uint32_t slot,
               uint32_t sqn, uint32_t obj, uint32_t data_obj, uint32_t flags, uint32_t opc, bint big, int vh,
               int ui, int ri):
        """Parser.data_pair + OpenTransaction.add_pair for a (5.1, 11.x) pair."""
        cdef object xid = (<uint64_t>usn << 48) | (<uint64_t>slot << 32) | sqn
        cdef Buf* e = &self.entry
        cdef const uint8_t* d = self._d
        cdef uint64_t offset, scn
        cdef uint32_t time
        cdef dict by_key = self._p_by_key
        txn = None
        clog = None
        if by_key is not None:
            # TransactionBuffer.get's usual case, inline: the transaction is open in its slot.
            txn = by_key.get((u.con_id, usn, slot))
            if txn is not None and txn.xid == xid:
                clog = txn.clog
                self._p_touch(clog.key)  # pool.log_for: mark active (swap order)
            else:
                txn = None
        if txn is None:
            txn = self._p_buffer.get(u.con_id, xid)
        parser.last_touched = txn
        if flags & UNDO_BEGIN and txn.logon_user < 0:
            # undo.logon_user: the ktubl's user# at +72 of field 2 (76+ bytes), -1 if absent
            if u.f2len >= 76:
                txn.logon_user = <long long>rd32(d + u.f2off + 72, big)
            else:
                txn.logon_user = -1
        if flags & UNDO_HEAD and txn.pending_undo:
            parser.data_pair(self._vec(parser, ui), self._info(parser, ui), self._vec(parser, ri),
                              self._record(parser))
            return
        if not stored_redo(r.opcode) or opc != 0x0B01:
            return
        # Parser._tracked: the table, True in schemaless mode, None when not replicated
        opt = self._p_opt
        tables = opt.tables
        table = (<dict>tables).get(obj) if type(tables) is dict else tables.get(obj)
        if table is None:
            if not opt.schemaless:
                return
            table = True
        if isinstance(table, self._table_type) and table.system:
            txn.system = True
            tracker = opt.tracker
            if tracker is not None and tracker.is_schema_table(table):
                parser.schema_txns.add(txn.clog.key)
        offset = <uint64_t>(self._m.block * self._p_bs + self._m.offset + u.start)
        scn = self._m.scn
        time = self._m.time
        e.n = 0
        buf_reserve(e, ENTRY_SIZE + u.size + r.size)
        e.p[0] = KIND_PAIR
        e.p[1] = 1 if big else 0
        e.p[2] = <char>vh
        e.p[3] = 0
        put32le(e.p + 4, obj)
        put32le(e.p + 8, data_obj)
        put32le(e.p + 12, <uint32_t>scn)
        put32le(e.p + 16, <uint32_t>(scn >> 32))
        put32le(e.p + 20, time)
        put32le(e.p + 24, <uint32_t>offset)
        put32le(e.p + 28, <uint32_t>(offset >> 32))
        put32le(e.p + 32, <uint32_t>u.size)
        put32le(e.p + 36, <uint32_t>r.size)
        e.n = ENTRY_SIZE
        # The redo directly follows its undo in the record: one slice, as add_pair does.
        buf_add(e, <const char*>(d + u.start), u.size)
        buf_add(e, <const char*>(d + r.start), r.size)
        if clog is None:
            clog = txn.clog
        self._store(self._p_pool, txn, clog, e, r.opcode, obj)

    cdef _store(self, object pool, object txn, object clog, Buf* e, int opcode, uint32_t obj):
        """pool.append + txn.remember + txn.size of one entry; inline when nothing special is due.

        The inline case is MemoryPool.append's when neither swap-mb nor max-mb is reached:
        bytes appended to the transaction's last chunk, or to a new one (from the free list)
        when it is full or swapped, usage and peak counted. Reaching swap-mb (swapping) or
        max-mb (error 10016) is the pool's own code.
        """
        cdef Py_ssize_t n = e.n, used, at, index
        cdef char* dst
        cdef array.array where, what, objs
        cdef Py_ssize_t swap
        index = -1
        if pool is self._p_limits:
            used = pool.used
            swap = self._p_swap
            if (not swap or used + n <= swap) and used + n <= self._p_max:
                chunks = clog.chunks
                tail = chunks[len(chunks) - 1] if chunks else None
                if type(tail) is not bytearray or (PyByteArray_GET_SIZE(tail) + n > self._chunk
                                                   and PyByteArray_GET_SIZE(tail) > 0):
                    free = pool.free_chunks
                    tail = free.pop() if free else bytearray()
                    if chunks and n < self._chunk:
                        # A transaction past its first chunk is a big one: its next chunk
                        # gets its whole capacity now instead of growing (and moving).
                        grow_chunk(tail, self._chunk, self._chunk)
                        grow_chunk(tail, 0, self._chunk)
                    chunks.append(tail)
                if type(tail) is bytearray:
                    at = PyByteArray_GET_SIZE(tail)
                    grow_chunk(tail, at + n, self._chunk)
                    dst = PyByteArray_AS_STRING(tail)
                    memcpy(dst + at, e.p, n)
                    index = len(chunks) - 1
                    pool.used = used + n
                    if used + n > pool.peak_bytes:
                        pool.peak_bytes = used + n
        if index < 0:
            index, at = pool.append(clog, PyBytes_FromStringAndSize(e.p, n))
        where = txn.where
        what = txn.what
        objs = txn.objs
        if where.ob_descr.typecode == b'q' and what.ob_descr.typecode == b'l' and objs.ob_descr.typecode == b'L':
            array.resize_smart(where, Py_SIZE(where) + 1)
            where.data.as_longlongs[Py_SIZE(where) - 1] = (<long long>index << 32) | at
            array.resize_smart(what, Py_SIZE(what) + 1)
            what.data.as_longs[Py_SIZE(what) - 1] = (KIND_PAIR << 16) | opcode
            array.resize_smart(objs, Py_SIZE(objs) + 1)
            objs.data.as_ulongs[Py_SIZE(objs) - 1] = obj
        else:
            txn.remember(index, at, KIND_PAIR, opcode, obj)
        txn.size += n


cdef int grow_chunk(object chunk, Py_ssize_t size, Py_ssize_t limit) except -1:
    """Set a pool chunk (bytearray) to ``size`` bytes, its capacity at least doubling.

    PyByteArray_Resize grows a bytearray by an eighth, and gives back all capacity when the
    size is below half of it: a 1 MiB chunk filled entry by entry was reallocated about a
    hundred times, its bytes copied to fresh pages each time (page faults and copies were a
    third of a huge transaction's processing). Here the capacity doubles (up to ``limit``,
    the chunk size) and the size is set within it; bytes past the size stay unused.
    """
    cdef ByteArrayObject* b = <ByteArrayObject*>chunk
    cdef Py_ssize_t room = b.ob_alloc - (b.ob_start - b.ob_bytes) if b.ob_bytes != NULL else 0
    cdef Py_ssize_t cap
    if size + 1 > room:
        if b.ob_exports > 0:  # a view holds the buffer: the plain resize (and its BufferError)
            PyByteArray_Resize(chunk, size)
            return 0
        cap = 2 * room
        if cap > limit:
            cap = limit
        if cap < size:
            cap = size
        PyByteArray_Resize(chunk, cap)  # a major upsize: exactly cap (+1) bytes
    Py_SET_SIZE(chunk, size)
    b.ob_start[size] = 0  # the trailing NUL a bytearray keeps
    return 0


_python_errors = None


cdef object _field_check_error():
    global _python_errors
    if _python_errors is None:
        import struct
        from replicator.redo.invariants import FieldCheckError
        _python_errors = (FieldCheckError, struct.error)
    return _python_errors[0]


cdef object _struct_error():
    _field_check_error()
    return _python_errors[1]


# ============================================================================= stage 1: the record loop







cdef extern from "stdlib.h":
    void qsort(void* base, size_t n, size_t size, int (*cmp)(const void*, const void*) noexcept nogil) nogil


cdef class RecordLoop(RecordDispatcher):
    """read_lwns + Parser.process_lwn of one archived redo file, from raw blocks, in C.

    :meth:`feed` takes consecutive buffers of whole blocks as read from the file: it checks
    them (blocks.check_blocks: empty, block number, sequence, checksum), cuts the block bodies
    into records across block boundaries and groups them into LWNs (records.RecordFramer,
    same rules and errors), and dispatches each complete LWN's records in OLR's order
    (RecordDispatcher) between ``parser.lwn_started`` and ``parser.lwn_done``, then calls
    ``on_lwn(lwn)``. No Record object is made unless a python handler needs the record
    (begin, commit, DDL, session attributes, anything unusual); a record the dispatch cannot
    take goes to ``parser.process_record`` as the python engine's would.
    """

    def __init__(self, parser, header, str path, bint verify_checksum, long long first_block, on_lwn=None,
                 checkpoint_step=None):
        from replicator.redo.records import Lwn

        RecordDispatcher.__init__(self)
        self.parser = parser
        self.path = path
        self.on_lwn = on_lwn
        self._lwn_type = Lwn
        self.bs = header.block_size
        self.body = self.bs - BLOCK_HEADER
        self.big = header.endian == ">"
        self.verify = verify_checksum
        self.sequence = header.sequence
        self.buf_block = first_block
        self.lwn_end = first_block
        self.lwns = 0
        self.step_in_lwn = True
        if checkpoint_step is not None:  # (full, fmt, manager, hook): set_checkpoint_step's
            self.set_checkpoint_step(*checkpoint_step)

    def set_checkpoint_step(self, full, fmt, manager, hook):
        """Take over the parser's per-LWN checkpoint (``parser.on_checkpoint`` must be None while
        the loop analyses): ``full(cp)`` is the python step (the driver's _on_checkpoint). With ``fmt``
        (an OlrJsonFormat not outputting checkpoints) and ``manager`` (the run's CheckpointManager,
        whose ``after_lwn`` ``hook(cp, parser)`` runs), an LWN costs no python call unless the
        manager writes a schema checkpoint then (CheckpointManager.after_lwn's rules, in C) or the
        dictionary changed; otherwise ``full`` runs for every LWN."""
        from replicator.events import Checkpoint

        self.step_full = full
        self.step_fmt = fmt
        self.step_manager = manager
        self.step_hook = hook
        self._checkpoint_type = Checkpoint

    def __dealloc__(self):
        free(self.carry.p)
        free(self.arena.p)
        free(self.recs)

    def feed(self, bytes buf, long long first_block, Py_ssize_t count, bint checked=False):
        """Check ``count`` blocks read from ``first_block`` on and analyse every LWN they complete.

        ``checked``: :func:`check_chunk` already passed the buffer (a reader thread's read-ahead).
        """
        cdef const uint8_t* p = <const uint8_t*> PyBytes_AS_STRING(buf)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(buf) // self.bs
        cdef int status = 0
        cdef int bad
        cdef Py_ssize_t keep_from, i
        cdef int64_t expected
        if count < 0 or count > n:
            raise ValueError(f"RecordLoop.feed: {count} blocks asked of a buffer of {n}")
        if checked:
            bad = -1
        else:
            with nogil:
                bad = first_bad_block(p, n, first_block, self.bs, self.sequence, self.big, self.verify, &status)
        if bad >= 0:
            raise_block(status, self.path, self.bs, first_block + bad)
        if self.pos:
            # Keep from the block where the unfinished record starts (block-aligned).
            keep_from = (self.pos // self.body) * self.body
            if keep_from >= self.carry.n:
                self.carry.n = 0
            else:
                memmove(self.carry.p, self.carry.p + keep_from, self.carry.n - keep_from)
                self.carry.n -= keep_from
            self.buf_block += keep_from // self.body
            self.pos -= keep_from
        expected = self.buf_block + self.carry.n // self.body
        if first_block != expected:
            raise framing_error(f"file {self.path}: block {first_block} read out of order (expected {expected})")
        buf_reserve(&self.carry, count * self.body)
        for i in range(count):
            memcpy(self.carry.p + self.carry.n, p + i * self.bs + BLOCK_HEADER, self.body)
            self.carry.n += self.body
        self._scan()

    def finish(self):
        """The end of the valid data (NAB): analyse the last LWN."""
        cdef int64_t end
        if self.have_lwn:
            end = self.buf_block + self.pos // self.body
            if end > self.lwn_end_block:
                self.lwn_end_block = end
            self.have_lwn = False
            self._analyse()

    cdef _scan(self):
        """records.RecordFramer._scan over the payload stream (same rules, same errors)."""
        cdef const uint8_t* buf
        cdef Py_ssize_t pos = self.pos
        cdef Py_ssize_t limit = self.carry.n
        cdef Py_ssize_t inoff
        cdef int body = self.body
        cdef int bs = self.bs
        cdef bint big = self.big
        cdef int64_t block
        cdef uint32_t size, vld, wrap, base, subscn, w, hi
        cdef uint64_t length
        cdef const uint8_t* r
        cdef Rec* rec
        while True:
            buf = <const uint8_t*> self.carry.p
            inoff = pos % body
            if BLOCK_HEADER + inoff + 20 >= bs:
                pos += body - inoff  # too little room left: next record starts in the next block
                continue
            block = self.buf_block + pos // body
            if block >= self.lwn_end:
                if inoff:
                    pos += body - inoff  # the rest of the LWN's last block is unused
                    continue
                if self.have_lwn and self.pieces >= self.nst:
                    # Every block of the LWN has been read: analyse it now.
                    self.have_lwn = False
                    self.pos = pos
                    self._analyse()
            if pos + RECORD_HEADER > limit:
                break
            r = buf + pos
            size = rd32(r, big)
            vld = r[4]
            if size == 0:
                pos += body - inoff
                continue
            if size & 3 or size < RECORD_HEADER:
                raise framing_error(f"file {self.path}, block {block}, offset {BLOCK_HEADER + inoff}: "
                                    f"bad record size {size}")
            if pos + size > limit:
                break
            if block >= self.lwn_end and not vld & VLD_LWN:
                raise framing_error(f"file {self.path}, block {block}: expected an LWN header at offset 16 "
                                    f"(vld {vld:#x})")
            if vld & VLD_LWN:
                if size < LWN_RECORD_HEADER:
                    _lwn_fields_of(PyBytes_FromStringAndSize(<const char*>r, size), big)  # raises as python does
                    raise framing_error(f"file {self.path}, block {block}: LWN header record of {size} bytes")
                if not self.have_lwn:
                    base = rd32(r + 40, big)
                    w = rd16(r + 44, big)
                    hi = rd16(r + 46, big)
                    if base == 0xFFFFFFFF and w == 0xFFFF:
                        self.lwn_scn = 0xFFFFFFFFFFFFFFFF
                    elif w & 0x8000:
                        self.lwn_scn = base | (<uint64_t>hi << 32) | (<uint64_t>(w & 0x7FFF) << 48)
                    else:
                        self.lwn_scn = base | (<uint64_t>w << 32)
                    self.lwn_time = rd32(r + 64, big)
                    self.lwn_first = block
                    self.have_lwn = True
                    self.pieces = 0
                    self.nst = rd16(r + 26, big)
                self.pieces += 1
                length = rd32(r + 28, big)
                self.lwn_end = block + <int64_t>length
                self.lwn_end_block = self.lwn_end
            if not self.have_lwn:
                raise framing_error(f"file {self.path}, block {block}: record outside any LWN")
            if vld & VLD_DATA:
                grow(<void**>&self.recs, &self.cap_recs, self.nrecs + 1, sizeof(Rec))
                rec = self.recs + self.nrecs
                rec.scn = (<uint64_t>rd16(r + 6, big) << 32) | rd32(r + 8, big)
                rec.subscn = rd16(r + 12, big)
                rec.vld = vld
                rec.block = block
                rec.offset = <int>(BLOCK_HEADER + inoff)
                rec.at = self.arena.n
                rec.size = size
                buf_add(&self.arena, <const char*>r, size)
                self.nrecs += 1
            pos += size
        self.pos = pos

    cdef _analyse(self):
        """Parser.process_lwn for the LWN just completed (its records in the arena)."""
        cdef Py_ssize_t rank
        cdef Rec* rec
        parser = self.parser
        lwn = self._lwn_type(self.lwn_scn, self.lwn_time, self.lwn_first, self.lwn_end_block)
        parser.lwn_started(lwn)
        self._load(parser)
        qsort(self.recs, self.nrecs, sizeof(Rec), rec_cmp)
        try:
            for rank in range(self.nrecs):
                rec = self.recs + rank
                self._rec = None
                self._cvs = None
                self._d = <const uint8_t*> self.arena.p + rec.at
                self._end = rec.size
                self._m.scn = rec.scn
                self._m.block = rec.block
                self._m.offset = rec.offset
                self._m.time = self.lwn_time
                self._m.header_size = LWN_RECORD_HEADER if rec.vld & VLD_LWN else RECORD_HEADER
                self._subscn = rec.subscn
                self._vld = rec.vld
                self._rank = <int>rank
                if not self._run_located(parser):
                    parser.process_record(self._record(parser))
        finally:
            self._rec = None
            self._cvs = None
            self.nrecs = 0
            self.arena.n = 0
            self.flush_counts(parser)
        parser.lwn_done(lwn)
        if self.step_in_lwn and self.step_full is not None:
            self._checkpoint()  # Parser.lwn_done's checkpoint, before the LWN's observers (python's order)
        self.lwns += 1
        if self.on_lwn is not None:
            self.on_lwn(lwn)

    cdef object _epoch(self, object parser):
        """parser.epoch of the LWN's time (LWNs of one second share it)."""
        if not self._epoch_ok or self._epoch_raw != self.lwn_time:
            self._epoch_val = parser.epoch(self.lwn_time)
            self._epoch_raw = self.lwn_time
            self._epoch_ok = True
        return self._epoch_val

    cdef _checkpoint(self):
        """Parser.lwn_done's checkpoint of the LWN just analysed, then the driver's _on_checkpoint:
        the format's position step and the run's schema checkpoint step."""
        cdef object scn = self.lwn_scn
        cdef long long redo_bytes
        parser = self.parser
        opt = parser.opt
        if scn <= opt.first_data_scn:
            return
        header = parser.header
        fmt = self.step_fmt
        manager = self.step_manager
        tracker = opt.tracker
        epoch = self._epoch(parser)
        if fmt is None or manager is None or (tracker is not None and tracker.pending):
            self.python_steps += 1
            self.step_full(self._checkpoint_type(scn, epoch, header.sequence, self.lwn_end_block * self.bs, False,
                                                 header.thread, self.lwn_first))
            return
        # OlrJsonFormat.checkpoint_unsent: _position(scn), _take_index()
        if fmt.lwn_scn != scn:
            fmt.lwn_scn = scn
            fmt.lwn_idx = 1
        else:
            fmt.lwn_idx += 1
        # CheckpointManager.after_lwn without a dictionary change: nothing when this SCN was
        # the last written; else write when due (due() adds the LWN's bytes either way).
        written = manager.written_scns
        if written and written[len(written) - 1] == scn:  # (no negative indexes: wraparound=False)
            return
        redo_bytes = (self.lwn_end_block - self.lwn_first) * self.bs
        since = manager.bytes_since + redo_bytes
        if written and epoch - manager.last_time < manager.interval_s and since < manager.interval_mb * 1048576:
            manager.bytes_since = since
            return
        self.python_steps += 1
        self.step_hook(self._checkpoint_type(scn, epoch, header.sequence, self.lwn_end_block * self.bs, False,
                                             header.thread, self.lwn_first), parser)


cdef _lwn_fields_of(bytes data, bint big):
    from replicator.redo.records import lwn_fields

    return lwn_fields(data, ">" if big else "<")


cdef inline void put32le(char* p, uint32_t v) noexcept nogil:
    p[0] = <char>(v & 0xFF)
    p[1] = <char>((v >> 8) & 0xFF)
    p[2] = <char>((v >> 16) & 0xFF)
    p[3] = <char>((v >> 24) & 0xFF)
