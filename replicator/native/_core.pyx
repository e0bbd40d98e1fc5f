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

Stage 1's counterpart (the record dispatch and the batch record loop, :class:`RecordDispatcher`
and :class:`RecordLoop`) is the module ``_dispatch`` above this one.

Other formats reuse phase A from modules of their own (``_debezium``, ``_rows``, ``_protobuf``:
they subclass the classes ``_core.pxd`` declares and call the value decoders of ``_values.pxd``;
the typed row images and the Avro encoders are ``replicator.formats._rowvalues`` and ``_avro``):

* :class:`DebeziumCommitter` renders Debezium JSON (envelope, flatten, smt) per row into
  the same buffer, as DebeziumFormat.on_row and orjson would.
* Typed row images, the interface of the remaining formats: ``RowImages`` holds a
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

from replicator.values._buf cimport *  # Buf, its helpers, the byte readers
from replicator.native._structs cimport *  # phase A's structs
from replicator.native._tally cimport tally_rows, tally_commit
from replicator.values._values cimport *  # the value decoders (phase B, stage 2)

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
# "Native modules"): the other formats' commits _debezium, _rows and _protobuf (they cimport _core.pxd;
# the row images and Avro encoders are formats._rowvalues and formats._avro, cimported by _rows),
# the value decoders _values and the output tally _tally (the core cimports _values.pxd and
# _tally.pxd), the Kafka producer _kafka, the run framing _runframes, Debezium's transaction
# metadata _dbztxn, stage 1's record dispatch and batch record loop _dispatch (RecordDispatcher,
# RecordLoop: it cimports grow from _core.pxd and the block checks and framing errors of
# _framing), the daemon's record loops _daemon_loop (they subclass RecordDispatcher and
# RecordLoop, _dispatch.pxd) and stage 2 _stage2 (it drives JsonCommitter, whose ``stage2``
# argument is its class).
