# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The native decode core: a committed transaction's stored bytes -> OpenLogReplicator JSON.

At commit the python engine rebuilds change vectors, Pair, Kdo and RowChange objects and row
image dicts, then renders them value by value. This module does the same work from the
stored bytes with C structs only: it walks the transaction's chunks (the entries
:meth:`replicator.txn.buffer.OpenTransaction.add_pair` wrote), parses the KDO headers and
supplemental data, groups row pieces as :func:`replicator.txn.rows.group_rows` does, assembles
each row into arrays of (pointer, length) per column, applies the column rules of
:mod:`replicator.formats.olr_rows` and renders every message into one C buffer.

Phase A (assembly) never has side effects (its entry parsing runs without the GIL): anything it does not
handle exactly like the python engine (DDL, LOB columns, split columns, compressed rows,
SYS tables, multi-row changes of unknown tables, a warning to log, any inconsistency the
python engine turns into an error) makes :meth:`JsonCommitter.commit` return False, and the
python engine processes the whole transaction instead. Phase B (rendering) decodes NUMBER,
DATE/TIMESTAMP/TSLTZ and TIMESTAMP WITH TIME ZONE (numeric codes), INTERVALs,
BINARY_FLOAT/DOUBLE, RAW and AL32UTF8/UTF8/AL16UTF16 text natively (the decoders of _values.pxd); any other value goes
through the python engine's own renderer for that column, so the bytes are the same by
construction. Rows of unknown tables (schemaless mode) are rendered as COL_<n> hex.

A transaction above ``Parser.stream_bytes`` is walked chunk by chunk (JsonCommitter._stream):
a checking walk, then a rendering walk handing messages over in the python stream's batches.

:class:`RecordDispatcher` is stage 1's counterpart: Parser._dispatch for one record, with the
(5.1, 11.x) pairs stored without ChangeVector objects.

Other formats reuse phase A from modules of their own (``_debezium``, ``_rows``, ``_avro``,
``_protobuf``: they subclass the classes ``_core.pxd`` declares and call the value decoders of ``_values.pxd``):

* :class:`DebeziumCommitter` renders Debezium JSON (envelope, flatten, smt) per row into
  the same buffer, as DebeziumFormat.on_row and orjson would.
* Typed row images, the interface of the remaining formats: :class:`RowImages` holds a
  committed transaction's rows decoded once — per row a ``RowMeta`` (op, table, SCN, time,
  ROWID parts) and 2 x (visible columns) ``Cell`` structs (kind ``CK_*``, three int64 and an
  arena span: NUMBER text, UTF-8 text, bytes, a double, epoch + nanoseconds, zone offset and text,
  interval totals; ``CK_PY`` only for values the python decoder must take). Image semantics
  are rowvalues.row_values'. :class:`EventCommitter` drives an EventFormat that defines
  ``on_native_row(ctx, pos, rows, r)``; the format renders an image with
  ``rows.json(r, side, text_values, modified_only)`` (C, no per-column python object) and
  reads one python value with ``rows.get``/``rows.value`` only where it needs one.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_GET_SIZE, PyByteArray_Resize
from cpython.object cimport Py_SIZE
from cpython cimport array
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memmove, memcmp, memset, strlen
from libc.stdio cimport snprintf
from libc.math cimport ldexp
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t

from replicator.native._structs cimport *  # Buf, phase A's structs, the inline helpers
from replicator.native._tally cimport tally_rows, tally_commit
from replicator.native._framing cimport first_bad_block, raise_block, framing_error  # the block checks
from replicator.native._values cimport *  # the value decoders (phase B, stage 2)

cdef extern from "Python.h":
    # CPython's bytearray object (its capacity, for grow_chunk)
    ctypedef struct ByteArrayObject "PyByteArrayObject":
        Py_ssize_t ob_alloc
        char* ob_bytes
        char* ob_start
        Py_ssize_t ob_exports
    void Py_SET_SIZE(object o, Py_ssize_t size)

import gc

from replicator.events import Message, Transaction
from replicator.flags import FLAG_RAW_HEX
from replicator.formats.escape import escape_str
from replicator.redo.timeconv import redo_time_to_epoch
from replicator.values.rowid import rowid_text

# ----------------------------------------------------------------------------- constants
include "_defs.pxi"

TYPE_VARCHAR2, TYPE_NUMBER, TYPE_DATE, TYPE_RAW, TYPE_CHAR = 1, 2, 12, 23, 96
TYPE_TIMESTAMP, TYPE_TIMESTAMP_LTZ = 180, 231
TYPE_TIMESTAMP_TZ, TYPE_INTERVAL_YM, TYPE_INTERVAL_DS = 181, 182, 183
TYPE_BINARY_FLOAT, TYPE_BINARY_DOUBLE = 100, 101


# ----------------------------------------------------------------------------- phase A's arrays
cdef void work_free(Work* w) noexcept nogil:
    free(w.pairs)
    free(w.fields)
    free(w.rows)
    free(w.vals)
    w.pairs = NULL
    w.fields = NULL
    w.rows = NULL
    w.vals = NULL


cdef int grow(void** p, Py_ssize_t* cap, Py_ssize_t need, size_t item) except -1 nogil:
    cdef Py_ssize_t c = cap[0]
    cdef void* q
    if need <= c:
        return 0
    c = c * 2 if c else 256
    while c < need:
        c *= 2
    q = realloc(p[0], c * item)
    if q == NULL:
        with gil:
            raise MemoryError()
    p[0] = q
    cap[0] = c
    return 0


cdef int grow_ints(int** p, int* cap) except -1 nogil:
    """Double an int array (a row group's pair indexes)."""
    cdef int* q = <int*> realloc(p[0], 2 * cap[0] * sizeof(int))
    if q == NULL:
        with gil:
            raise MemoryError()
    p[0] = q
    cap[0] *= 2
    return 0


# ----------------------------------------------------------------------------- phase A: parsing
cdef inline int f_len(Work* w, CV* cv, int i) noexcept nogil:
    """Length of field i (1-based), 0 when absent (ChangeVector.flen)."""
    if i < 1 or i > cv.nf:
        return 0
    return w.fields[cv.fi + i - 1].len


cdef inline const uint8_t* f_ptr(Work* w, CV* cv, int i) noexcept nogil:
    return cv.p + w.fields[cv.fi + i - 1].off


cdef int parse_cv(Work* w, CV* cv, const uint8_t* p, Py_ssize_t avail, int vh, bint big) except -2 nogil:
    """Parse a vector's header and field table; returns its size, or -1 when inconsistent."""
    cdef Py_ssize_t tsize, count, pos, k
    cdef int n
    if avail < vh + 2:
        return -1
    tsize = rd16(p + vh, big)
    if tsize < 2 or vh + tsize > avail:
        return -1
    count = (tsize - 2) >> 1
    cv.p = p
    cv.opcode = (p[0] << 8) | p[1]
    cv.nf = <int>count
    grow(<void**>&w.fields, &w.cap_fields, w.nfields + count, sizeof(Field))
    cv.fi = w.nfields
    pos = vh + ((tsize + 2) & ~3)
    for k in range(count):
        n = rd16(p + vh + 2 + 2 * k, big)
        w.fields[w.nfields + k].off = <int>pos
        w.fields[w.nfields + k].len = n
        pos += (n + 3) & ~3
    if pos > avail:
        return -1
    w.nfields += count
    return <int>pos


cdef bint parse_kdo(Work* w, CV* cv, int index, bint big, Kdo* k) noexcept nogil:
    """kdo.parse_kdo; False when the python engine must decide (QMI/QMD)."""
    cdef int size = f_len(w, cv, index)
    cdef const uint8_t* f
    cdef int op_byte
    k.valid = False
    if size < 16:
        return True
    f = f_ptr(w, cv, index)
    k.bdba = rd32(f, big)
    op_byte = f[10]
    k.op = op_byte & 0x1F
    k.rowdeps = (op_byte & 0x40) != 0
    k.kdom2 = (f[11] & 0x80) != 0
    k.slot = 0
    k.fb = 0
    k.cc = 0
    k.size_delt = 0
    k.nulls = NULL
    k.nulls_len = 0
    k.nrow = 0
    k.slots = NULL
    if k.op == URP:
        if size < 26:
            return True
        k.fb = f[16]
        k.slot = rd16(f + 20, big)
        k.cc = f[23]
        k.nulls = f + 26
        k.nulls_len = min((k.cc + 7) // 8, size - 26)
    elif k.op == IRP or k.op == ORP:
        if size < 45:
            return True
        k.fb = f[16]
        k.cc = f[18]
        k.size_delt = rd16(f + 40, big)
        k.slot = rd16(f + 42, big)
        k.nulls = f + 45
        k.nulls_len = min((k.cc + 7) // 8, size - 45)
    elif k.op == DRP or k.op == LKR:
        if size >= 18:
            k.slot = rd16(f + 16, big)
    elif k.op == CFA:
        if size >= 26:
            k.slot = rd16(f + 24, big)
    elif k.op == QMI or k.op == QMD:
        if size < 20:
            return True
        k.nrow = f[18]
        if size >= 20 + 2 * k.nrow:
            k.slots = f + 20
        if k.nrow:
            k.slot = rd16(f + 20, big) if k.slots != NULL else 0
    k.valid = True
    return True


cdef inline bint null_bit(Kdo* k, int c) noexcept nogil:
    if (c >> 3) >= k.nulls_len:
        return False
    return (k.nulls[c >> 3] >> (c & 7)) & 1


cdef const uint8_t* colnums(Work* w, CV* cv, int index, int cc) noexcept nogil:
    cdef int n = f_len(w, cv, index)
    if n == 0 or cc == 0 or n < 2 * cc:
        return NULL
    return f_ptr(w, cv, index)


cdef bint analyse(Work* w, Pair* p) noexcept nogil:
    """Pair.analyse: KDO headers, undo layout, supplemental data. False: let python decide."""
    cdef Kdo* uk = &p.uk
    cdef int i, c, n, index, size
    cdef const uint8_t* head
    cdef int supp_at = 0
    p.supp.valid = False
    p.ufirst = 0
    p.unums = NULL
    if not parse_kdo(w, &p.u, 4, p.big, uk) or not parse_kdo(w, &p.r, 2, p.big, &p.rk):
        return False
    if not uk.valid:
        return True
    n = p.u.nf
    if uk.op == URP:
        p.unums = colnums(w, &p.u, 5, uk.cc)
        p.ufirst = 6
        if uk.kdom2:
            supp_at = 7
        else:
            if uk.nulls_len < (uk.cc + 7) >> 3:
                return False  # python raises 40009
            i = 6
            for c in range(uk.cc):
                if not null_bit(uk, c):
                    while i <= n and f_len(w, &p.u, i) == 0:
                        i += 1
                    i += 1
            if uk.rowdeps:
                while i <= n and f_len(w, &p.u, i) == 0:
                    i += 1
                i += 1
            supp_at = i
    elif uk.op == IRP or uk.op == ORP:
        i = 5
        if uk.cc:
            if uk.cc > 1 and f_len(w, &p.u, 5) == uk.size_delt:
                i = 6
            else:
                i = 5 + uk.cc
        if uk.rowdeps:
            i += 1
        p.ufirst = 5 if uk.cc else 0
        supp_at = i
    elif uk.op == QMI:
        p.ufirst = 5
        supp_at = 0
    else:
        supp_at = 5 + (1 if uk.op == DRP and uk.rowdeps else 0)
    if not supp_at:
        return True
    # parse_supplemental
    index = supp_at
    while index <= n and f_len(w, &p.u, index) == 0:
        index += 1
    if index > n:
        return True
    size = f_len(w, &p.u, index)
    if size < 20:
        return True
    head = f_ptr(w, &p.u, index)
    p.supp.valid = True
    p.supp.fb = head[1]
    p.supp.cc = rd16(head + 2, p.big)
    p.supp.before = rd16(head + 6, p.big)
    p.supp.after = rd16(head + 8, p.big)
    if size >= 26:
        p.supp.bdba = rd32(head + 20, p.big)
        p.supp.slot = rd16(head + 24, p.big)
    else:
        p.supp.bdba = uk.bdba
        p.supp.slot = uk.slot
    p.supp.nums = NULL
    p.supp.lens = NULL
    p.supp.first_value = 0
    if index + 2 > n or p.supp.cc == 0:
        return True
    if f_len(w, &p.u, index + 1) < 2 * p.supp.cc or f_len(w, &p.u, index + 2) < 2 * p.supp.cc:
        return False  # python: struct.error -> 40009
    p.supp.nums = f_ptr(w, &p.u, index + 1)
    p.supp.lens = f_ptr(w, &p.u, index + 2)
    p.supp.first_value = index + 3
    return True


cdef inline void head_of(Pair* p, uint32_t* bdba, int* slot) noexcept nogil:
    if p.supp.valid:
        bdba[0] = p.supp.bdba
        slot[0] = p.supp.slot
    elif p.rk.valid:
        bdba[0] = p.rk.bdba
        slot[0] = p.rk.slot
    elif p.uk.valid:
        bdba[0] = p.uk.bdba
        slot[0] = p.uk.slot
    else:
        bdba[0] = 0
        slot[0] = 0


# ----------------------------------------------------------------------------- phase A: rows
cdef bint columns(Work* w, CV* cv, Kdo* k, int first, const uint8_t* nums, int shift, bint undo,
                  Val* target, int limit, bint big) noexcept nogil:
    """rows._columns into a (pointer, length) image; False: let python decide."""
    cdef int n, i, c, col, split_first, split_last
    cdef const uint8_t* vp
    cdef int vn
    if not first:
        return True
    if nums != NULL:
        shift -= <int>rd16(nums, big)
    n = cv.nf
    split_first = 0 if k.fb & FB_P else -1
    split_last = k.cc - 1 if k.fb & FB_N else -1
    i = first - 1
    for c in range(k.cc):
        col = (<int>rd16(nums + 2 * c, big) if nums != NULL else c) + shift
        if col >= limit:
            break
        if col < 0:
            return False
        if undo:
            if null_bit(k, c):
                vp = NULL
                vn = NULLV
            else:
                while i < n and w.fields[cv.fi + i].len == 0:
                    i += 1
                if i >= n:
                    break
                vp = cv.p + w.fields[cv.fi + i].off
                vn = w.fields[cv.fi + i].len
                i += 1
        else:
            if i >= n:
                break
            if null_bit(k, c):
                vp = NULL
                vn = NULLV
            else:
                vp = cv.p + w.fields[cv.fi + i].off
                vn = w.fields[cv.fi + i].len
            i += 1
        if c == split_first or c == split_last:
            return False  # split columns: the python engine joins the pieces
        target[col].p = vp
        target[col].n = vn
    return True


cdef bint supplemental(Work* w, Pair* p, Val* after_supp, Val* before_supp, int limit) noexcept nogil:
    cdef int op = p.r.opcode
    cdef bint to_after = op == OPC_IRP or op == OPC_LKR or op == OPC_URP or op == OPC_SUPP
    cdef bint to_before = op == OPC_DRP or op == OPC_URP or op == OPC_ORP or op == OPC_SUPP
    cdef int k = p.supp.first_value - 1
    cdef int n = p.u.nf
    cdef int j, col, length, vn
    cdef const uint8_t* vp
    for j in range(p.supp.cc):
        col = <int>rd16(p.supp.nums + 2 * j, p.big) - 1
        length = rd16(p.supp.lens + 2 * j, p.big)
        if col >= limit:
            break
        if col < 0:
            return False
        if length == 0xFFFF or length == 0 or k >= n:
            vp = NULL
            vn = NULLV
        else:
            vp = p.u.p + w.fields[p.u.fi + k].off
            vn = w.fields[p.u.fi + k].len
        k += 1
        if to_after:
            after_supp[col].p = vp
            after_supp[col].n = vn
        if to_before:
            before_supp[col].p = vp
            before_supp[col].n = vn
    return True


cdef inline bint is_compressed(Work* w, CV* cv, Kdo* k, int first, bint redo) noexcept nogil:
    if (k.op != IRP and k.op != ORP) or not first:
        return False
    return (k.cc > 1 or (redo and k.cc == 0)) and f_len(w, cv, first) == k.size_delt


cdef bint build_row(Work* w, int* group, int glen, int op, int ncols, Row* row, Val* scratch) noexcept nogil:
    """rows.build_row into w.vals[row.img ...]; False: let python decide."""
    cdef Val* before = w.vals + row.img
    cdef Val* after = before + ncols
    cdef Val* before_supp = scratch
    cdef Val* after_supp = scratch + ncols
    cdef int gi, c, shift, rfirst
    cdef Pair* p
    cdef Pair* head
    cdef const uint8_t* rnums
    for c in range(ncols):
        before[c].n = ABSENT
        after[c].n = ABSENT
        before_supp[c].n = ABSENT
        after_supp[c].n = ABSENT
    for gi in range(glen):
        p = w.pairs + group[gi]
        if p.uk.valid:
            shift = p.supp.before - 1 if p.supp.valid and p.supp.before > 0 else 0
            if p.ufirst and is_compressed(w, &p.u, &p.uk, p.ufirst, False):
                return False
            if not columns(w, &p.u, &p.uk, p.ufirst, p.unums, shift, True, before, ncols, p.big):
                return False
        if p.supp.valid and p.supp.first_value:
            if not supplemental(w, p, after_supp, before_supp, ncols):
                return False
        if p.rk.valid:
            rnums = NULL
            rfirst = 0
            if p.rk.op == URP:
                rfirst = 4 if p.r.nf >= 4 else 0
                rnums = colnums(w, &p.r, 3, p.rk.cc)
            elif p.rk.op == IRP or p.rk.op == ORP:
                rfirst = 3 if p.rk.cc else 0
            shift = p.supp.after - 1 if p.supp.valid and p.supp.after > 0 else 0
            if rfirst and is_compressed(w, &p.r, &p.rk, rfirst, True):
                return False
            if not columns(w, &p.r, &p.rk, rfirst, rnums, shift, False, after, ncols, p.big):
                return False
    # _Values.merged: a supplemental value fills a column the image lacks or holds as NULL.
    for c in range(ncols):
        if before_supp[c].n != ABSENT and before[c].n < 0:
            before[c] = before_supp[c]
        if after_supp[c].n != ABSENT and after[c].n < 0:
            after[c] = after_supp[c]
    p = w.pairs + group[0]
    if op == OP_INSERT:
        head = p
        for gi in range(glen):
            if w.pairs[group[gi]].rk.valid and w.pairs[group[gi]].rk.fb & FB_F:
                head = w.pairs + group[gi]
                break
        if head.rk.valid:
            row.bdba = head.rk.bdba
            row.slot = head.rk.slot
        else:
            row.bdba = 0
            row.slot = 0
        row.obj = head.obj
        row.data_obj = head.data_obj
    elif p.supp.valid and (p.supp.bdba or p.supp.slot):
        row.bdba = p.supp.bdba
        row.slot = p.supp.slot
        row.obj = p.obj
        row.data_obj = p.data_obj
    else:
        if p.rk.valid:
            row.bdba = p.rk.bdba
            row.slot = p.rk.slot
        elif p.uk.valid:
            row.bdba = p.uk.bdba
            row.slot = p.uk.slot
        else:
            row.bdba = 0
            row.slot = 0
        row.obj = p.obj
        row.data_obj = p.data_obj
    if op == OP_INSERT:
        for c in range(ncols):
            before[c].n = ABSENT
    elif op == OP_DELETE:
        for c in range(ncols):
            after[c].n = ABSENT
    p = w.pairs + group[glen - 1]
    row.scn = p.scn
    row.time = p.time
    row.offset = w.pairs[group[0]].offset
    row.op = op
    return True


cdef int multirow(Work* w, Pair* p, bint big_scn, int ncols, Row* rows_out, Py_ssize_t* nrows) except -2 nogil:
    """kdo.multirow + rows.multirow_changes: rows of a QMI redo or of a QMD's undo.

    Appends the rows (images in w.vals) and returns their count, or -1 when python must decide.
    Needs w.rows/w.vals room reserved by the caller for kdo.nrow rows.
    """
    cdef Kdo* k
    cdef CV* cv
    cdef int op, sizes_field, rows_field, nsizes, j, col, cc, vn
    cdef Py_ssize_t pos, q, dlen, size
    cdef const uint8_t* data
    cdef const uint8_t* sizes
    cdef Val* img
    cdef Row* row
    if p.r.opcode == OPC_QMI:
        k, cv, op, sizes_field, rows_field = &p.rk, &p.r, OP_INSERT, 3, 4
    else:
        k, cv, op, sizes_field, rows_field = &p.uk, &p.u, OP_DELETE, 5, 6
    if not k.valid or not k.nrow:
        return 0
    if f_len(w, cv, sizes_field) < 2 * k.nrow:
        return -1  # struct.error in python
    sizes = f_ptr(w, cv, sizes_field)
    dlen = f_len(w, cv, rows_field)
    data = f_ptr(w, cv, rows_field) if dlen else NULL
    pos = 0
    for j in range(k.nrow):
        size = rd16(sizes + 2 * j, p.big)
        if pos + 3 > dlen:
            return -1
        q = pos + 3
        cc = data[pos + 2]
        if k.rowdeps:
            q += 8 if big_scn else 6
        img = w.vals + w.nvals
        row = rows_out + nrows[0]
        for col in range(2 * ncols):
            img[col].n = ABSENT
        for col in range(cc):
            if q >= dlen:
                return -1
            vn = data[q]
            q += 1
            if vn == 0xFF:
                if col < ncols:
                    img[col].p = NULL
                    img[col].n = NULLV
                continue
            if vn == 0xFE:
                if q + 2 > dlen:
                    return -1
                vn = rd16(data + q, p.big)
                q += 2
            if q + vn > dlen:
                return -1  # python would slice short: let it
            if col < ncols:
                img[col].p = data + q
                img[col].n = vn
            q += vn
        pos += size
        if k.slots == NULL:
            continue  # zip(kdo.slots, rows) with no slots: rows decoded (errors), none output
        row.op = op
        row.obj = p.obj
        row.data_obj = p.data_obj
        row.scn = p.scn
        row.time = p.time
        row.bdba = k.bdba
        row.slot = rd16(k.slots + 2 * j, p.big)
        row.offset = p.offset
        row.ncols = ncols
        row.img = w.nvals
        if op == OP_INSERT:
            for col in range(ncols):
                img[ncols + col] = img[col]
                img[col].n = ABSENT
        w.nvals += 2 * ncols
        nrows[0] += 1
    return 0


# ----------------------------------------------------------------------------- table plans
cdef class _Plan:
    """Per-table render plan: the python TablePlan plus native column kinds per image."""

    # Its fields and cdef methods are declared in _core.pxd (the modules split off the core use them).

    def __dealloc__(self):
        cdef int s
        free(self.c)
        free(self.keys)
        free(self.nullable)
        for s in range(2):
            free(self.kind[s])
            free(self.param[s])
            free(self.offset[s])


cdef _Plan make_plan(object fmt, object parser, object table):
    from replicator.formats.olr_columns import effective_type
    from replicator.values.charset import CharsetError, column_charset_name

    cdef _Plan plan = _Plan()
    cdef int i, s, kind, param
    cdef int64_t offset
    py_plan = fmt.plan(table)
    opts = fmt.options
    plan.table = table
    plan.py_plan = py_plan
    plan.ncols = len(py_plan.columns)
    plan.schema = {}
    lobs = parser.lobs
    plan.bail = bool(table.system or table.condition or (table.tag_columns and not fmt.full)
                     or (lobs.enabled and lobs.columns(table)))
    n = plan.ncols
    plan.keys = <uint8_t*> malloc(n + 1)
    plan.nullable = <uint8_t*> malloc(n + 1)
    for s in range(2):
        plan.kind[s] = <int*> malloc((n + 1) * sizeof(int))
        plan.param[s] = <int*> malloc((n + 1) * sizeof(int))
        plan.offset[s] = <int64_t*> malloc((n + 1) * sizeof(int64_t))
    plan.prefix = []
    plan.nulls = [list(py_plan.nulls[0]), list(py_plan.nulls[1])]
    plan.frags = [py_plan.fragments[0], py_plan.fragments[1]]
    for i in range(n):
        plan.keys[i] = 1 if py_plan.keys[i] else 0
        plan.nullable[i] = 1 if py_plan.nullable[i] else 0
        column = table.columns[i]
        plan.prefix.append(b'"' + escape_str(column.name) + b'":')
        type_code = effective_type(column)
        kind, param, offset = K_PY, 0, 0
        if opts.flags & FLAG_RAW_HEX:
            kind = K_PY
        elif type_code == TYPE_NUMBER:
            kind = K_NUMBER
        elif type_code == TYPE_RAW:
            kind = K_HEX
        elif type_code in (TYPE_VARCHAR2, TYPE_CHAR):
            if opts.char == 0:
                try:
                    name = column_charset_name(column.charset_form, column.charset_id, False,
                                               table.charset, table.ncharset)
                except CharsetError:
                    name = ""
                if name in ("AL32UTF8", "UTF8", "AL16UTF16"):
                    kind, param = K_STR, (1 if name == "UTF8" else 2 if name == "AL16UTF16" else 0)
        elif type_code in (TYPE_DATE, TYPE_TIMESTAMP, TYPE_TIMESTAMP_LTZ):
            if 0 <= opts.timestamp < 8:
                kind, param = K_TS, opts.timestamp
                offset = opts.db_timezone if type_code == TYPE_TIMESTAMP_LTZ else 0
        elif type_code == TYPE_BINARY_FLOAT:
            kind = K_BFLOAT
        elif type_code == TYPE_BINARY_DOUBLE:
            kind = K_BDOUBLE
        elif type_code == TYPE_TIMESTAMP_TZ:
            if 0 <= opts.timestamp_tz < 4:
                kind, param = K_TSTZ, opts.timestamp_tz
        elif type_code == TYPE_INTERVAL_YM:
            if 0 <= opts.interval_ytm <= 4:
                kind, param = K_IYM, opts.interval_ytm
        elif type_code == TYPE_INTERVAL_DS:
            if 0 <= opts.interval_dts <= 10:
                kind, param = K_IDS, opts.interval_dts
        for s in range(2):
            plan.kind[s][i] = K_SKIP if plan.frags[s][i] is None else kind
            plan.param[s][i] = param
            plan.offset[s][i] = offset
    return plan


cdef _Plan make_schemaless_plan(int limit):
    """The plan of every table the dictionary does not know (FLAG_SCHEMALESS or FLAG_SYSTEM_TXN).

    Rows are built over ``limit`` columns (the parser's column limit, as rows.build_row
    does without a table) and shrunk to the highest column present (shrink_row).
    """
    cdef _Plan plan = _Plan()
    plan.table = None
    plan.py_plan = None
    plan.ncols = limit
    plan.bail = False
    plan.schema = {}
    plan.schemaless = True
    return plan


cdef void shrink_row(Work* w, Row* row) noexcept nogil:
    """Keep a schemaless row's images only up to its highest column present."""
    cdef Val* img = w.vals + row.img
    cdef int n = row.ncols
    cdef int hi = n - 1
    while hi >= 0 and img[hi].n == ABSENT and img[n + hi].n == ABSENT:
        hi -= 1
    memmove(img + hi + 1, img + n, (hi + 1) * sizeof(Val))
    row.ncols = hi + 1


cdef int hex_columns(Buf* b, Val* image, Val* other, int n) except -1 nogil:
    """render_schemaless: ``{"COL_<i>":"<hex>"|null,...}``; with ``other`` (an UPDATE), a
    column only the other image mentions is printed as null."""
    cdef int i
    cdef bint first = True
    buf_byte(b, 123)
    for i in range(n):
        if image[i].n == ABSENT and (other == NULL or other[i].n == ABSENT):
            continue
        if not first:
            buf_byte(b, 44)
        first = False
        buf_add(b, b'"COL_', 5)
        buf_int(b, i)
        buf_add(b, b'":', 2)
        if image[i].n > 0:
            buf_byte(b, 34)
            buf_hex(b, image[i].p, image[i].n)
            buf_byte(b, 34)
        else:
            buf_add(b, b"null", 4)
    buf_byte(b, 125)
    return 0


# ----------------------------------------------------------------------------- chunk walking
cdef void grouping_free(Grouping* g) noexcept nogil:
    free(g.idx)
    free(g.scratch)
    g.idx = NULL
    g.scratch = NULL


cdef Py_ssize_t parse_entries(Work* w, const uint8_t* base, Py_ssize_t size) except -2 nogil:
    """The (5.1, 11.x) entries of one chunk (OpenTransaction.add_pair) into w.pairs.

    Returns where parsing stopped: ``size`` when every entry was a well-formed pair (a DDL
    entry or anything else stops it, and the python engine judges the transaction).
    """
    cdef Py_ssize_t pos = 0
    cdef Py_ssize_t n1, n2
    cdef int vh, got
    cdef bint big
    cdef Pair* p
    while pos < size:
        if pos + ENTRY_SIZE > size or base[pos] != KIND_PAIR:
            break
        big = base[pos + 1] != 0
        vh = base[pos + 2]
        n1 = rd32(base + pos + 32, 0)
        n2 = rd32(base + pos + 36, 0)
        if pos + ENTRY_SIZE + n1 + n2 > size:
            break
        grow(<void**>&w.pairs, &w.cap_pairs, w.npairs + 1, sizeof(Pair))
        p = w.pairs + w.npairs
        p.big = big
        p.obj = rd32(base + pos + 4, 0)
        p.data_obj = rd32(base + pos + 8, 0)
        p.scn = rd64le(base + pos + 12)
        p.time = rd32(base + pos + 20, 0)
        p.offset = rd64le(base + pos + 24)
        got = parse_cv(w, &p.u, base + pos + ENTRY_SIZE, n1, vh, big)
        if got != n1:
            break
        got = parse_cv(w, &p.r, base + pos + ENTRY_SIZE + n1, n2, vh, big)
        if got != n2:
            break
        w.npairs += 1
        pos += ENTRY_SIZE + n1 + n2
    return pos


cdef int carry_group(Work* w, Grouping* g) except -1 nogil:
    """Keep only the open group's pairs (renumbered from 0) and their fields; drop the rest.

    Between two chunks of a streamed transaction: every finished row was rendered, so only
    the pieces of a row still missing its last piece must survive (their bytes stay valid
    while the caller holds the chunks they point into).
    """
    cdef Pair* pairs
    cdef Field* fields
    cdef Py_ssize_t nf = 0, pos = 0
    cdef int k
    cdef Pair* p
    w.nrows = 0
    w.nvals = 0
    if g.len == 0:
        w.npairs = 0
        w.nfields = 0
        return 0
    for k in range(g.len):
        nf += w.pairs[g.idx[k]].u.nf + w.pairs[g.idx[k]].r.nf
    pairs = <Pair*> malloc(g.len * sizeof(Pair))
    fields = <Field*> malloc((nf + 1) * sizeof(Field))
    if pairs == NULL or fields == NULL:
        free(pairs)
        free(fields)
        with gil:
            raise MemoryError()
    for k in range(g.len):
        p = pairs + k
        p[0] = w.pairs[g.idx[k]]
        memcpy(fields + pos, w.fields + p.u.fi, p.u.nf * sizeof(Field))
        p.u.fi = pos
        pos += p.u.nf
        memcpy(fields + pos, w.fields + p.r.fi, p.r.nf * sizeof(Field))
        p.r.fi = pos
        pos += p.r.nf
        g.idx[k] = k
    memcpy(w.pairs, pairs, g.len * sizeof(Pair))
    memcpy(w.fields, fields, nf * sizeof(Field))
    w.npairs = g.len
    w.nfields = nf
    free(pairs)
    free(fields)
    return 0


cdef class MessageRun:
    """A committed transaction's messages rendered into one buffer (no per-row object).

    ``data`` holds every message body followed by a newline (the file layout), so a sink
    that only writes or counts bytes takes it whole; the positions (idx, table) are C
    arrays. It behaves as the sequence of :class:`~replicator.events.Message` it stands
    for: ``len()``, indexing and iteration make the Message objects lazily.
    """

    # Its fields are declared in _core.pxd (the other native modules read them).

    def __dealloc__(self):
        free(self.ends)
        free(self.idxs)
        free(self.tabs)

    def __len__(self):
        return self.n

    @property
    def body_bytes(self):
        """Bytes of the messages' data (the newlines not counted)."""
        return PyBytes_GET_SIZE(self.data) - self.n

    @property
    def last_idx(self):
        """idx of the last message (its confirm position); -1 when the run is empty."""
        return self.idxs[self.n - 1] if self.n else -1

    cpdef message(self, Py_ssize_t i):
        """Message ``i`` as a :class:`~replicator.events.Message`."""
        cdef Py_ssize_t start = 0 if i == 0 else self.ends[i - 1] + 1
        cdef int t = self.tabs[i]
        return Message(self.data[start:self.ends[i]], self.scn, self.idxs[i], None, False, self.seq, self.xid,
                       None if t < 0 else self.tables[t])

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.message(j) for j in range(*i.indices(self.n))]
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError("MessageRun index out of range")
        return self.message(i)

    def __iter__(self):
        cdef Py_ssize_t i
        for i in range(self.n):
            yield self.message(i)


cdef class _Out:
    """One committed transaction being rendered: its event, header pieces and messages."""

    # Its fields and cdef methods are declared in _core.pxd (the modules split off the core use them).


# ----------------------------------------------------------------------------- the committer
cdef class JsonCommitter:
    """Commits transactions for the OpenLogReplicator JSON format natively (see module doc).

    ``fmt`` is the pipeline's :class:`~replicator.formats.olr_json.OlrJsonFormat`;
    ``pipeline`` is the :class:`~replicator.runner.pipeline.Pipeline`; its ``on_native(txn,
    messages, rows)`` takes a committed transaction's messages.
    """

    # Its fields and cdef methods are declared in _core.pxd (the modules split off the core use them).

    def __init__(self, fmt, pipeline, stage2=None):
        from replicator.flags import FLAG_SCHEMALESS, FLAG_SYSTEM_TXN

        self.fmt = fmt
        self.pipeline = pipeline
        self.deliver = pipeline.on_native
        self.plans = {}
        self.unknown_tables = bool(fmt.options.flags & (FLAG_SCHEMALESS | FLAG_SYSTEM_TXN))
        self.epochs = {}
        header = fmt.header
        self.scn_all = bool(header.scn_all or header.tm_all)
        self.native_transactions = 0
        self.python_transactions = 0
        self.runs = bool(pipeline.native_runs)  # the driver's port (runner.stages.CommitSink)
        workers = int(pipeline.decode_workers)
        # stage2: the class of the decode/format workers (replicator.native.stage2().Stage2, a module
        # that cimports this one: the wiring hands it over), created when the driver has workers.
        self.stage2 = stage2(self, pipeline, workers) if stage2 is not None and workers > 0 and self.runs else None

    def __dealloc__(self):
        free(self.out.p)
        free(self.val.p)
        free(self.run.p)
        free(self.run_ends)
        free(self.run_idx)
        free(self.run_tab)

    cdef int _run_add(self, const char* p, Py_ssize_t n, int64_t idx, int tab) except -1:
        """Append one message body (and its newline) to the run buffer."""
        if self.run_n + 1 > self.run_cap:
            grow(<void**>&self.run_ends, &self.run_cap, self.run_n + 1, sizeof(int64_t))
            self.run_idx = <int64_t*> realloc(self.run_idx, self.run_cap * sizeof(int64_t))
            self.run_tab = <int*> realloc(self.run_tab, self.run_cap * sizeof(int))
            if self.run_idx == NULL or self.run_tab == NULL:
                raise MemoryError()
        buf_add(&self.run, p, n)
        self.run_ends[self.run_n] = self.run.n
        self.run_idx[self.run_n] = idx
        self.run_tab[self.run_n] = tab
        self.run_n += 1
        buf_byte(&self.run, 10)
        return 0

    cdef MessageRun _take_run(self, _Out o):
        """The rendered run as a MessageRun (the committer's buffers are reset)."""
        cdef MessageRun r = MessageRun.__new__(MessageRun)
        cdef Py_ssize_t n = self.run_n
        r.data = PyBytes_FromStringAndSize(self.run.p, self.run.n)
        r.scn = o.lwn_scn
        r.seq = o.seq
        r.xid = o.xid
        plans = self._tables if self._tables is not None else o.tables
        r.tables = [(<_Plan>plan).table for plan in plans] if plans is not None else []
        r.ends = <int64_t*> malloc((n + 1) * sizeof(int64_t))
        r.idxs = <int64_t*> malloc((n + 1) * sizeof(int64_t))
        r.tabs = <int*> malloc((n + 1) * sizeof(int))
        if r.ends == NULL or r.idxs == NULL or r.tabs == NULL:
            raise MemoryError()
        if n:
            memcpy(r.ends, self.run_ends, n * sizeof(int64_t))
            memcpy(r.idxs, self.run_idx, n * sizeof(int64_t))
            memcpy(r.tabs, self.run_tab, n * sizeof(int))
        r.n = n
        self.run.n = 0
        self.run_n = 0
        return r

    cdef _Plan plan_for(self, object parser, object table):
        cdef _Plan plan = self.plans.get(id(table))
        if plan is None or plan.table is not table:
            plan = make_plan(self.fmt, parser, table)
            self.plans[id(table)] = plan
        return plan

    cdef object epoch(self, uint32_t raw, object parser):
        value = self.epochs.get(raw)
        if value is None:
            if len(self.epochs) > 4096:
                self.epochs.clear()
            value = self.epochs[raw] = parser.epoch(raw)
        return value

    def commit(self, parser, txn, record):
        """Parser hook: output ``txn`` natively; False when the python engine must do it."""
        pipeline = self.pipeline
        # The pipeline's observers are python's; with a tally the committer counts for them.
        if (txn.system or txn.clog.key in parser.schema_txns
                or (self.tally is None and (pipeline.on_commit is not None or pipeline.on_change is not None))):
            if self.stage2 is not None:
                self.stage2.barrier()  # the python engine outputs it: after the queued ones
            self.python_transactions += 1
            return False
        if self.stage2 is not None:
            return self.stage2.commit(parser, txn, record)
        return self._commit_one(parser, txn, record)

    cdef object _commit_one(self, object parser, object txn, object record):
        """commit() in this thread: the transaction streamed, or assembled and rendered here."""
        if txn.size > parser.stream_bytes:
            if self._stream(parser, txn, record):
                self.native_transactions += 1
                if self.tally is not None:  # a stream is counted as python counts one (_tallied)
                    tally_commit(self.tally)
                return True
            self.python_transactions += 1
            return False
        chunks = [c for c in parser.pool.read(txn.clog) if len(c)]
        cdef Work w
        w.pairs = NULL
        w.fields = NULL
        w.rows = NULL
        w.vals = NULL
        w.npairs = w.cap_pairs = w.nfields = w.cap_fields = w.nrows = w.cap_rows = w.nvals = w.cap_vals = 0
        try:
            if not self._assemble(&w, parser, chunks):
                self.python_transactions += 1
                return False
            self.native_transactions += 1
            self._emit(&w, parser, txn, record)
            if self.tally is not None and w.nrows:
                tally_rows(self.tally, &w, self._tables)
                tally_commit(self.tally)
            return True
        finally:
            self._views = None
            self._tables = None
            work_free(&w)

    cdef bint _stream(self, object parser, object txn, object record) except -1:
        """A transaction above parser.stream_bytes: rows rendered chunk by chunk, bounded memory.

        Two walks over the stored chunks (read back from the pool or its swap file one at a
        time): the first only checks that this engine outputs every row exactly as the python
        engine would, so python can still take the whole transaction; the second renders the
        rows and hands the messages over as the python engine's stream does (Parser._emit
        with a one-pass iterator, Pipeline._on_transaction draining every FLUSH_MESSAGES).
        """
        cdef _Out o
        if self.fmt.full:
            return False  # FULL mode holds every element of the transaction anyway: python's stream
        if not self._walk(parser, txn, None):
            return False
        parser.stats.transactions += 1
        o = self._open(parser, txn, record)
        o.room = self.pipeline.on_native_stream(o.event)
        # Parts go over as MessageRuns where the sink takes them (one buffer per part).
        o.run = self.runs
        self.run.n = 0
        self.run_n = 0
        # A message per row, alive until the pipeline drains: with the collector on, the
        # survivors trigger full collections every few ten thousand rows (a fifth of the
        # rendering time). The walk creates no reference cycle, so it runs without it.
        collecting = gc.isenabled()
        gc.disable()
        try:
            if not self._walk(parser, txn, o):
                raise AssertionError("native stream: the rendering walk disagrees with the checking walk")
        finally:
            if collecting:
                gc.enable()
        self._close(o)
        self._hand_over(o)
        return True

    cdef bint _walk(self, object parser, object txn, _Out o) except -1:
        """Group and build the rows of the stored chunks one chunk at a time; render them into
        ``o`` unless it is None. False when python must process the transaction."""
        cdef Work w
        cdef Grouping g
        cdef const uint8_t[::1] mv
        cdef const uint8_t* base
        cdef Py_ssize_t size, pos, first
        memset(&w, 0, sizeof(Work))
        memset(&g, 0, sizeof(Grouping))
        table_list = []
        table_index = {}
        held = []  # the chunks the open row group's pieces point into
        chunks = parser.pool.read(txn.clog)
        try:
            for chunk in chunks:
                if not len(chunk):
                    continue
                mv = chunk
                held.append(mv)
                base = &mv[0]
                size = mv.shape[0]
                first = w.npairs
                if self.stage2 is None:
                    pos = parse_entries(&w, base, size)  # one thread: the GIL stays held (_assemble)
                else:
                    with nogil:
                        pos = parse_entries(&w, base, size)
                if pos != size:
                    return False
                if not self._group(&w, &g, parser, first, table_list, table_index):
                    return False
                if o is not None and w.nrows:
                    self._tables = o.tables = table_list
                    parser.stats.rows += w.nrows
                    self._rows(&w, o, parser)
                    if self.tally is not None and o.event is not None:  # (event None: a counting walk)
                        tally_rows(self.tally, &w, table_list)
                carry_group(&w, &g)
                if g.len == 0:
                    del held[:]
            return True
        finally:
            chunks.close()
            self._tables = None
            work_free(&w)
            grouping_free(&g)

    cdef inline int _slot(self, Grouping* g, object parser, object tables, uint32_t obj, list table_list,
                          dict table_index) except -2:
        """_table_slot, remembering the last object's answer."""
        if g.last_slot >= 0 and obj == g.last_obj:
            return g.last_slot
        t = self._table_slot(parser, tables, obj, table_list, table_index)
        if t >= 0:
            g.last_obj = obj
            g.last_slot = t
        return t

    cdef int _table_slot(self, object parser, object tables, uint32_t obj, list table_list,
                         dict table_index) except -2:
        """Index of obj's table plan in this transaction's list; -1 when python must do the row."""
        cdef _Plan plan
        table = tables.get(obj)
        if table is None:
            if not self.unknown_tables:
                return -1
            limit = parser.column_limit
            t = table_index.get(-limit, -1)  # id() is never negative
            if t < 0:
                plan = self.plans.get(-limit)
                if plan is None:
                    plan = self.plans[-limit] = make_schemaless_plan(limit)
                t = len(table_list)
                table_index[-limit] = t
                table_list.append(plan)
            return t
        t = table_index.get(id(table), -1)
        if t < 0:
            plan = self.plan_for(parser, table)
            if plan.bail or plan.ncols != len(table.columns):
                return -1
            t = len(table_list)
            table_index[id(table)] = t
            table_list.append(plan)
        return t

    cdef bint _assemble(self, Work* w, object parser, list chunks) except -1:
        """Phase A: pairs -> rows (images in w.vals); False when python must process the txn."""
        cdef const uint8_t[::1] mv
        cdef const uint8_t* base
        cdef Py_ssize_t size, pos
        cdef Grouping g
        table_list = []
        views = []
        # Parse every stored entry into pairs.
        for chunk in chunks:
            mv = chunk
            views.append(mv)
            base = &mv[0]
            size = mv.shape[0]
            if self.stage2 is None:
                # One thread: the GIL stays held (it is a few microseconds per commit). Released,
                # it would wake the daemon's threads waiting for it (event loop, writer, reader)
                # once per commit, only to see it taken back: most of the daemon's futex CPU.
                pos = parse_entries(w, base, size)
            else:
                with nogil:
                    pos = parse_entries(w, base, size)
            if pos != size:
                return False  # a DDL entry or something python must judge
        memset(&g, 0, sizeof(Grouping))
        try:
            if not self._group(w, &g, parser, 0, table_list, {}):
                return False
        finally:
            grouping_free(&g)
        self._tables = table_list
        self._views = views
        return True

    cdef bint _group(self, Work* w, Grouping* g, object parser, Py_ssize_t first, list table_list,
                     dict table_index) except -1:
        """rows.group_rows over w.pairs[first:]: each row is built as soon as it is complete.

        The open group stays in ``g`` (a streamed transaction continues it with the next
        chunk's pairs); False when python must process the transaction.
        """
        cdef int ncols, code, supp_fb, t
        cdef Pair* p
        cdef Pair* last
        cdef uint32_t hb1, hb2
        cdef int hs1, hs2
        cdef Py_ssize_t i, j, first_row
        cdef Kdo* k
        cdef bint big_scn = parser.header.big_scn
        tables = parser.opt.tables
        if g.idx == NULL:
            g.last_slot = -1
            g.cap = 64
            g.idx = <int*> malloc(g.cap * sizeof(int))
            if g.idx == NULL:
                raise MemoryError()
        for i in range(first, w.npairs):
            p = w.pairs + i
            if not analyse(w, p):
                return False
            if (p.uk.valid and p.uk.fb & FB_K) or (p.rk.valid and p.rk.fb & FB_K):
                continue
            if p.supp.valid and p.supp.fb & FB_K:
                continue
            code = p.r.opcode
            if code == OPC_QMI or code == OPC_QMD:
                k = &p.rk if code == OPC_QMI else &p.uk
                if not k.valid or not k.nrow:
                    continue
                t = self._slot(g, parser, tables, p.obj, table_list, table_index)
                if t < 0:
                    return False
                if (<_Plan>table_list[t]).schemaless:
                    return False  # multi-row changes of unknown tables: the python engine
                ncols = (<_Plan>table_list[t]).ncols
                grow(<void**>&w.rows, &w.cap_rows, w.nrows + k.nrow, sizeof(Row))
                grow(<void**>&w.vals, &w.cap_vals, w.nvals + 2 * ncols * (k.nrow + 1), sizeof(Val))
                first_row = w.nrows
                if multirow(w, p, big_scn, ncols, w.rows, &w.nrows) < 0:
                    return False
                for j in range(first_row, w.nrows):
                    w.rows[j].table = t
                continue
            if not (code == OPC_IRP or code == OPC_DRP or code == OPC_URP or code == OPC_ORP
                    or code == OPC_CFA or code == OPC_SUPP or code == OPC_CMP):
                continue
            if not g.op:
                g.op = OP_INSERT if code == OPC_IRP else OP_DELETE if code == OPC_DRP else OP_UPDATE
            elif g.op == OP_INSERT and (code == OPC_DRP or code == OPC_URP or code == OPC_ORP or code == OPC_CFA):
                g.op = OP_UPDATE
            elif g.op == OP_DELETE and (code == OPC_IRP or code == OPC_URP or code == OPC_ORP or code == OPC_CFA):
                g.op = OP_UPDATE
            supp_fb = p.supp.fb if p.supp.valid else FB_L
            if g.len == 0:
                if not (code == OPC_CMP and (not p.supp.valid or p.supp.bdba == 0) and not supp_fb & FB_L):
                    g.idx[0] = i
                    g.len = 1
            else:
                last = w.pairs + g.idx[g.len - 1]
                head_of(last, &hb1, &hs1)
                head_of(p, &hb2, &hs2)
                if hb1 == hb2 and hs1 == hs2 and w.pairs[g.idx[0]].obj == p.obj:
                    if g.len + 1 > g.cap:
                        grow_ints(&g.idx, &g.cap)
                    if g.op == OP_INSERT:
                        memmove(g.idx + 1, g.idx, g.len * sizeof(int))
                        g.idx[0] = i
                    elif code == OPC_ORP and last.r.opcode == OPC_IRP:
                        g.idx[g.len] = g.idx[g.len - 1]
                        g.idx[g.len - 1] = i
                    else:
                        g.idx[g.len] = i
                    g.len += 1
                else:
                    return False  # warning 60017: logged by the python engine
            if supp_fb & FB_L:
                if g.len:
                    t = self._slot(g, parser, tables, w.pairs[g.idx[0]].obj, table_list, table_index)
                    if t < 0:
                        return False
                    ncols = (<_Plan>table_list[t]).ncols
                    grow(<void**>&w.rows, &w.cap_rows, w.nrows + 1, sizeof(Row))
                    grow(<void**>&w.vals, &w.cap_vals, w.nvals + 2 * ncols, sizeof(Val))
                    if g.scratch_cap < 2 * ncols:
                        g.scratch_cap = 2 * ncols
                        g.scratch = <Val*> realloc(g.scratch, (g.scratch_cap + 1) * sizeof(Val))
                        if g.scratch == NULL:
                            raise MemoryError()
                    w.rows[w.nrows].img = w.nvals
                    w.rows[w.nrows].ncols = ncols
                    w.rows[w.nrows].table = t
                    if not build_row(w, g.idx, g.len, g.op, ncols, w.rows + w.nrows, g.scratch):
                        return False
                    if (<_Plan>table_list[t]).schemaless:
                        shrink_row(w, w.rows + w.nrows)
                    w.nvals += 2 * w.rows[w.nrows].ncols
                    w.nrows += 1
                g.len = 0
                g.op = 0
        return True

    cdef _emit(self, Work* w, object parser, object txn, object record):
        """Phase B: the Parser._emit and OlrJsonFormat.iter_transaction of a native transaction."""
        cdef _Out o
        if w.nrows == 0:
            return
        stats = parser.stats
        stats.rows += w.nrows
        stats.transactions += 1
        o = self._open(parser, txn, record)
        o.run = self.runs
        self.run.n = 0
        self.run_n = 0
        self._rows(w, o, parser)
        self._close(o)
        self.deliver(o.event, self._take_run(o) if o.run else o.messages, w.nrows)

    cdef _Out _open(self, object parser, object txn, object record):
        """The Transaction event of a commit and its header pieces (no message yet)."""
        cdef _Out o = _Out()
        header = parser.header
        fmt = self.fmt
        lwn = parser.lwn
        begin_scn = txn.begin_scn if txn.begun else record.scn
        begin_time = txn.begin_time if txn.begun else record.time
        event = Transaction(
            xid=txn.xid, begin_scn=begin_scn, begin_time=parser.epoch(begin_time), commit_scn=record.scn,
            commit_time=parser.epoch(record.time), changes=[], attributes=txn.attributes,
            logon_user=txn.logon_user, thread=header.thread, begin_seq=txn.begin_seq, begin_offset=txn.begin_offset,
            system=txn.system, con_name=parser.opt.con_name,
            commit_pos=(header.sequence, (lwn.first_block if lwn else 0) * header.block_size, parser.rank),
        )
        fmt.set_position(event.begin_scn)
        hb = fmt.header
        hb.start_transaction(event)
        o.event = event
        o.hb = hb
        o.ctx = hb.transaction_context(event)
        o.lwn_scn = fmt.lwn_scn
        o.xid = event.xid
        o.seq = event.begin_seq
        o.messages = []
        o.prefix = o.suffix = None
        if not self.scn_all and not fmt.full:
            sentinel = 918273645546372819
            template = hb.dml(o.lwn_scn, sentinel, 0, 0, o.ctx)
            mark = b'"c_idx":%d' % sentinel
            if template.count(mark) == 1:
                prefix, suffix = template.split(mark)
                o.prefix = b"{" + prefix + b'"c_idx":'
                o.suffix = suffix + b',"payload":['
        return o

    cdef _rows(self, Work* w, _Out o, object parser):
        """Render w.rows into o.messages (the begin message before the first row).

        A streamed transaction (o.room > 0) hands its messages to the pipeline whenever
        they reach o.room, where the python engine's stream would drain them.
        """
        cdef Py_ssize_t r
        cdef Row* row
        cdef _Plan plan
        cdef Buf* b = &self.out
        cdef Val* img
        cdef long long idx
        if w.nrows == 0:
            return
        fmt = self.fmt
        hb = o.hb
        ctx = o.ctx
        lwn_scn = o.lwn_scn
        xid = o.xid
        seq = o.seq
        messages = o.messages
        full = fmt.full  # `message` bit 1 (in-memory transactions only): one message, the begin
        # header and every row element (OlrJsonFormat.iter_transaction's FULL branch)
        if not o.started:
            o.started = True
            if full:
                head = hb.begin(lwn_scn, fmt.take_index(), self.epoch(w.rows.time, parser), ctx)
                b.n = 0
                buf_byte(b, 123)
                buf_bytes(b, head)
                buf_add(b, b',"payload":[', 12)
            elif not fmt.skip_begin:
                head = hb.begin(lwn_scn, fmt.take_index(), self.epoch(w.rows.time, parser), ctx)
                data = b"{" + head + b',"payload":[{"op":"begin"}]}'
                if o.run:
                    self._run_add(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), fmt.lwn_idx - 1, -1)
                else:
                    messages.append(Message(data=data, scn=lwn_scn, idx=fmt.lwn_idx - 1, xid=xid, seq=seq))
                if o.room and (self.run_n if o.run else len(messages)) >= o.room:
                    self._hand_over(o)
                    messages = o.messages
        prefix = o.prefix
        suffix = o.suffix
        add_offset = fmt.add_offset
        add_num = fmt.add_num
        rid = fmt.rid
        schema_columns = fmt.schema_columns
        reducer = fmt.reducer
        column_mode = reducer.column_mode
        tables = self._tables
        # Positions are taken here and stored back once (OlrJsonFormat._take_index per row).
        idx = fmt.lwn_idx
        for r in range(w.nrows):
            row = w.rows + r
            plan = tables[row.table]
            if full:  # elements only, after the begin header
                if o.num:
                    buf_byte(b, 44)
            else:
                b.n = 0
                idx += 1
                if prefix is not None:
                    buf_bytes(b, prefix)
                    buf_int(b, idx)
                    buf_bytes(b, suffix)
                else:
                    head = hb.dml(lwn_scn, idx, row.scn, self.epoch(row.time, parser), ctx)
                    buf_add(b, b"{", 1)
                    buf_bytes(b, head)
                    buf_add(b, b',"payload":[', 12)
            buf_add(b, b'{"op":"', 7)
            buf_byte(b, 99 if row.op == OP_INSERT else 100 if row.op == OP_DELETE else 117)
            buf_add(b, b'",', 2)
            if add_offset:
                buf_add(b, b'"offset":', 9)
                buf_int(b, <int64_t>row.offset)
                buf_byte(b, 44)
            if schema_columns:
                buf_bytes(b, fmt.table_schema(plan.py_plan, row.obj))
            else:
                schema = plan.schema.get(row.obj)
                if schema is None:
                    schema = plan.schema[row.obj] = fmt.table_schema(plan.py_plan, row.obj)
                buf_bytes(b, schema)
            if add_num:
                buf_add(b, b',"num":', 7)
                buf_int(b, o.num)
            if rid:
                buf_add(b, b',"rid":"', 8)
                buf_bytes(b, rowid_text(row.data_obj, row.bdba, row.slot).encode("ascii"))
                buf_byte(b, 34)
            o.num += 1
            img = w.vals + row.img
            self._images(row, img, img + row.ncols, plan, column_mode, reducer)
            if full:
                buf_byte(b, 125)
                continue
            buf_add(b, b"}]}", 3)
            if o.run:
                self._run_add(b.p, b.n, idx - 1, row.table)
                o.rows += 1
                if o.room and self.run_n >= o.room:
                    fmt.lwn_idx = idx
                    self._hand_over(o)
                continue
            messages.append(Message(PyBytes_FromStringAndSize(b.p, b.n), lwn_scn, idx - 1, None, False, seq, xid,
                                    plan.table))
            o.rows += 1
            if o.room and len(messages) >= o.room:
                fmt.lwn_idx = idx
                self._hand_over(o)
                messages = o.messages
        if full:
            buf_add(b, b"]}", 2)
            if o.run:
                self._run_add(b.p, b.n, fmt.lwn_idx - 1, -1)
                return
            messages.append(Message(PyBytes_FromStringAndSize(b.p, b.n), lwn_scn, fmt.lwn_idx - 1, None, False, seq,
                                    xid))
            return
        fmt.lwn_idx = idx

    cdef _hand_over(self, _Out o):
        """Give a streamed transaction's messages so far to the pipeline (which drains them):
        a list of Messages, or one MessageRun when the sink takes runs."""
        if o.run:
            o.room = self.pipeline.on_native_part(self._take_run(o), o.rows)
        else:
            o.room = self.pipeline.on_native_part(o.messages, o.rows)
            o.messages = []
        o.rows = 0

    cdef _close(self, _Out o):
        """The commit message (when a row was output and the options want it)."""
        fmt = self.fmt
        if o.started and not fmt.skip_commit and not fmt.full:
            head = o.hb.commit(o.lwn_scn, fmt.take_index(), o.ctx)
            data = b"{" + head + b',"payload":[{"op":"commit"}]}'
            if o.run:
                self._run_add(PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), fmt.lwn_idx - 1, -1)
            else:
                o.messages.append(Message(data=data, scn=o.lwn_scn, idx=fmt.lwn_idx - 1, xid=o.xid, seq=o.seq))

    cdef _images(self, Row* row, Val* before, Val* after, _Plan plan, int column_mode, object reducer):
        """UpdateReducer.images + TablePlan.render of one row into self.out."""
        cdef int n = row.ncols
        cdef int i
        cdef bint in_b, in_a, old_t, new_t
        cdef Val ob, nb
        cdef Buf* b = &self.out
        cdef Val* nb_arr
        cdef Val* na_arr
        cdef bint do_reduce = column_mode < 2
        if plan.schemaless:  # reduce_single/reduce without a plan: nothing is dropped
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
            return
        if row.op == OP_INSERT:
            buf_add(b, b',"after":', 9)
            self._single(after, plan, column_mode, 1)
            return
        if row.op == OP_DELETE:
            buf_add(b, b',"before":', 10)
            self._single(before, plan, column_mode, 0)
            return
        # UPDATE (olr_rows.UpdateReducer.reduce): keep[i] marks printed columns; the values
        # printed go to the scratch arrays so both images render from the same decision.
        nb_arr = <Val*> malloc((2 * n + 1) * sizeof(Val))
        na_arr = nb_arr + n
        copy_after = reducer.copy_after
        try:
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
                    reducer.warn_not_null(plan.py_plan, i)
                    if copy_after:
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
            self._render(nb_arr, plan, 0)
            buf_add(b, b',"after":', 9)
            self._render(na_arr, plan, 1)
        finally:
            free(nb_arr)

    cdef _single(self, Val* image, _Plan plan, int column_mode, int side):
        """reduce_single + render for an INSERT (after) or DELETE (before) image."""
        cdef int n = plan.ncols
        cdef int i
        cdef Val* out = <Val*> malloc((n + 1) * sizeof(Val))
        try:
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
            self._render(out, plan, side)
        finally:
            free(out)

    cdef _render(self, Val* image, _Plan plan, int side):
        """TablePlan.render: present columns in column order."""
        cdef Buf* b = &self.out
        cdef int i, kind, res
        cdef bint first = True
        cdef Py_ssize_t mark
        cdef Val v
        cdef int* kinds = plan.kind[side]
        nulls = plan.nulls[side]
        buf_byte(b, 123)
        for i in range(plan.ncols):
            v = image[i]
            if v.n == ABSENT:
                continue
            if v.n <= 0:
                piece = nulls[i]
                if piece is None:
                    continue
                if not first:
                    buf_byte(b, 44)
                first = False
                buf_bytes(b, piece)
                continue
            kind = kinds[i]
            if kind == K_SKIP:
                continue
            mark = b.n
            if not first:
                buf_byte(b, 44)
            if kind == K_NUMBER:
                buf_bytes(b, plan.prefix[i])
                res = number_text(b, v.p, v.n)
                if res == 0:
                    first = False
                    continue
            elif kind == K_HEX:
                buf_bytes(b, plan.prefix[i])
                buf_byte(b, 34)
                buf_hex(b, v.p, v.n)
                buf_byte(b, 34)
                first = False
                continue
            elif kind == K_STR:
                if plan.param[side][i] == 2:
                    buf_bytes(b, plan.prefix[i])
                    buf_byte(b, 34)
                    if utf16_escaped(b, v.p, v.n):
                        buf_byte(b, 34)
                        first = False
                        continue
                elif is_ascii(v.p, v.n) or valid_utf8(v.p, v.n, plan.param[side][i] == 1):
                    buf_bytes(b, plan.prefix[i])
                    buf_byte(b, 34)
                    buf_escape(b, v.p, v.n)
                    buf_byte(b, 34)
                    first = False
                    continue
            elif kind == K_BFLOAT or kind == K_BDOUBLE:
                buf_bytes(b, plan.prefix[i])
                if float_text(b, v.p, v.n, kind == K_BDOUBLE):
                    first = False
                    continue
            elif kind == K_TS:
                buf_bytes(b, plan.prefix[i])
                if timestamp_text(b, v.p, v.n, plan.param[side][i], plan.offset[side][i]):
                    first = False
                    continue
            elif kind == K_TSTZ:
                buf_bytes(b, plan.prefix[i])
                if timestamp_tz_text(b, v.p, v.n, plan.param[side][i]):
                    first = False
                    continue
            elif kind == K_IYM:
                buf_bytes(b, plan.prefix[i])
                if interval_ym_text(b, v.p, v.n, plan.param[side][i]):
                    first = False
                    continue
            elif kind == K_IDS:
                buf_bytes(b, plan.prefix[i])
                if interval_ds_text(b, v.p, v.n, plan.param[side][i]):
                    first = False
                    continue
            # Anything else: the python engine's own renderer for this column.
            b.n = mark
            piece = plan.frags[side][i](PyBytes_FromStringAndSize(<const char*>v.p, v.n))
            if piece is None:
                continue
            if not first:
                buf_byte(b, 44)
            first = False
            buf_bytes(b, piece)
        buf_byte(b, 125)


def native_version() -> str:
    """A short description of the compiled core (for diagnostics)."""
    return "replicator native core 1 (Cython)"


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
        self._p_buffer = parser.buffer
        self._p_pool = parser.pool

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
        buffer = self._p_buffer
        txn = None
        if type(buffer) is self._buffer_type:
            # TransactionBuffer.get's usual case, inline: the transaction is open in its slot.
            txn = (<dict>buffer.by_key).get((u.con_id, usn, slot))
            if txn is not None and txn.xid == xid:
                buffer.pool.logs.move_to_end(txn.clog.key)  # pool.log_for: mark active (swap order)
            else:
                txn = None
        if txn is None:
            txn = buffer.get(u.con_id, xid)
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
        table = (<dict>opt.tables).get(obj) if type(opt.tables) is dict else opt.tables.get(obj)
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
        self._store(self._p_pool, txn, e, r.opcode, obj)

    cdef _store(self, object pool, object txn, Buf* e, int opcode, uint32_t obj):
        """pool.append + txn.remember + txn.size of one entry; inline when nothing special is due.

        The inline case is MemoryPool.append's when neither swap-mb nor max-mb is reached:
        bytes appended to the transaction's last chunk, or to a new one (from the free list)
        when it is full or swapped, usage and peak counted. Reaching swap-mb (swapping) or
        max-mb (error 10016) is the pool's own code.
        """
        cdef Py_ssize_t n = e.n, used, at, index
        cdef char* dst
        cdef array.array where, what, objs
        clog = txn.clog
        index = -1
        if type(pool) is self._pool_type:
            used = pool.used
            swap = pool.swap_bytes
            if (not swap or used + n <= swap) and used + n <= pool.max_bytes:
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

    def __init__(self, parser, header, str path, bint verify_checksum, long long first_block, on_lwn=None):
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
        self.lwns += 1
        if self.on_lwn is not None:
            self.on_lwn(lwn)


cdef _lwn_fields_of(bytes data, bint big):
    from replicator.redo.records import lwn_fields

    return lwn_fields(data, ">" if big else "<")


cdef inline void put32le(char* p, uint32_t v) noexcept nogil:
    p[0] = <char>(v & 0xFF)
    p[1] = <char>((v >> 8) & 0xFF)
    p[2] = <char>((v >> 16) & 0xFF)
    p[3] = <char>((v >> 24) & 0xFF)


def value_text(int kind, int param, long long offset, bytes data):
    """The native text of one value (tests): bytes, or None when the python renderer is used.

    ``kind`` is "number", "ts", "tstz", "iym", "ids", "str" or "hex" as an index into
    VALUE_KINDS; ``param`` the format code; ``offset`` the TSLTZ time zone offset.
    """
    cdef Buf b
    cdef const uint8_t* p = <const uint8_t*> PyBytes_AS_STRING(data)
    cdef int n = <int>PyBytes_GET_SIZE(data)
    cdef bint ok
    b.p = NULL
    b.n = b.cap = 0
    try:
        if kind == 0:
            ok = n > 0 and number_text(&b, p, n) == 0
        elif kind == 1:
            ok = timestamp_text(&b, p, n, param, offset)
        elif kind == 2:
            ok = timestamp_tz_text(&b, p, n, param)
        elif kind == 3:
            ok = interval_ym_text(&b, p, n, param)
        elif kind == 4:
            ok = interval_ds_text(&b, p, n, param)
        elif kind == 5:
            if param == 2:
                ok = utf16_escaped(&b, p, n)
            else:
                ok = is_ascii(p, n) or valid_utf8(p, n, param == 1)
                if ok:
                    buf_escape(&b, p, n)
        elif kind == 7 or kind == 8:
            ok = float_text(&b, p, n, kind == 8)
        else:
            buf_hex(&b, p, n)
            ok = True
        return PyBytes_FromStringAndSize(b.p, b.n) if ok else None
    finally:
        free(b.p)


VALUE_KINDS = ("number", "ts", "tstz", "iym", "ids", "str", "hex", "bfloat", "bdouble")


# ============================================================================= the modules beside it
# The other sections are modules of their own across .pxd boundaries (docs/native-engine.md
# "Native modules"): the renderers _debezium, _rows, _avro and _protobuf (they cimport _core.pxd),
# the value decoders _values and the output tally _tally (the core cimports _values.pxd and
# _tally.pxd), the block checks and framing errors _framing (_framing.pxd), the Kafka producer _kafka, the run framing _runframes, Debezium's transaction
# metadata _dbztxn, the daemon's record loops _daemon_loop (they subclass RecordDispatcher and
# RecordLoop, _core.pxd) and stage 2 _stage2 (it drives JsonCommitter, whose ``stage2`` argument
# is its class).
