# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The protobuf format (RedoResponse messages) rendered natively."""

# The protobuf format (replicator.formats.protobuf: serialized RedoResponse messages)
# rendered natively from the rows phase A assembled: the same column selection and UPDATE
# reduction as OLR JSON (JsonCommitter._images), values typed as protobuf_values does, and
# the protobuf wire bytes written directly (fields in number order, proto3 defaults left out,
# oneof members always written), as the python protobuf runtime serializes them. A value
# these encoders do not take goes through the column's python setter on a python Value, so
# odd values behave alike by construction.
#
# A module of its own (setup.py MODULES, docs/native-engine.md "Native modules"): what it
# shares with the other native modules crosses through .pxd files (values/_buf.pxd, _structs.pxd, _core.pxd, values/_values.pxd, _protobuf.pxd).

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memmove, memcmp, memset, strlen
from libc.stdio cimport snprintf
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t

from replicator.values._buf cimport *
from replicator.native._structs cimport *
from replicator.native._core cimport JsonCommitter, _Plan, _Out
from replicator.values._values cimport number_text, valid_utf8, epoch_of, buf_rowid, ieee_value, utf16_utf8

include "_defs.pxi"

from replicator.events import Message, Transaction
from replicator.flags import FLAG_RAW_HEX

TYPE_VARCHAR2, TYPE_NUMBER, TYPE_DATE, TYPE_RAW, TYPE_CHAR = 1, 2, 12, 23, 96
TYPE_TIMESTAMP, TYPE_TIMESTAMP_LTZ = 180, 231
TYPE_TIMESTAMP_TZ, TYPE_INTERVAL_YM, TYPE_INTERVAL_DS = 181, 182, 183
TYPE_BINARY_FLOAT, TYPE_BINARY_DOUBLE = 100, 101

from libc.math cimport isfinite, isinf
from libc.stdlib cimport strtod, strtof, strtol

# Protobuf value kinds (per column).
DEF PK_PY = 0        # the python setter
DEF PK_NAME = 1      # the name alone (DATE, TIMESTAMP, WITH (LOCAL) TIME ZONE)
DEF PK_BYTES = 2     # value_bytes (RAW)
DEF PK_STR = 3       # value_string: param 0 AL32UTF8, 1 UTF8, 2 AL16UTF16
DEF PK_INT = 4       # NUMBER -> value_int (strtol of the text)
DEF PK_F32 = 5       # NUMBER -> value_float (strtof)
DEF PK_F64 = 6       # NUMBER -> value_double (strtod)
DEF PK_NSTR = 7      # NUMBER -> value_string (the text)
DEF PK_BFLOAT = 8    # BINARY_FLOAT -> value_double
DEF PK_BDOUBLE = 9   # BINARY_DOUBLE -> value_double

_TM_SCALE = (1000000000, 1000000, 1000, 1)


cdef class _PbPlan(_Plan):
    """A table's protobuf plan: phase A's fields plus names, kinds and the python setters."""

    cdef public object pb_plan
    cdef int* pkind
    cdef int* pparam
    cdef uint8_t* has_setter[2]
    cdef uint8_t* null_name[2]
    cdef list names           # the Value name field (tag, length, UTF-8) per column
    cdef list pynames         # the column names (python setter fallback)
    cdef list setters         # [before list, after list] of python setters or None
    cdef dict schema_bytes    # obj -> serialized Schema (no column list)

    def __dealloc__(self):
        cdef int s
        free(self.pkind)
        free(self.pparam)
        for s in range(2):
            free(self.has_setter[s])
            free(self.null_name[s])


cdef inline void pb_varint(Buf* b, uint64_t u) noexcept nogil:
    while u >= 0x80:
        buf_byte(b, <char>((u & 0x7F) | 0x80))
        u >>= 7
    buf_byte(b, <char>u)


cdef inline void pb_len(Buf* b, int tag, const char* p, Py_ssize_t n) noexcept nogil:
    """A length-delimited field: tag byte, length, bytes."""
    buf_byte(b, <char>tag)
    pb_varint(b, <uint64_t>n)
    buf_add(b, p, n)


cdef bytes pb_name(str name):
    data = name.encode("utf-8")
    cdef Buf b
    b.p = NULL
    b.n = b.cap = 0
    try:
        if data:
            pb_len(&b, 0x0A, data, len(data))
        return PyBytes_FromStringAndSize(b.p, b.n)
    finally:
        free(b.p)


cdef _PbPlan make_pb_plan(object fmt, object parser, object table):
    from replicator.flags import FLAG_RAW_HEX as RAW_HEX
    from replicator.formats.olr_columns import effective_type
    from replicator.formats.protobuf_plan import PbTablePlan
    from replicator.values.charset import CharsetError, column_charset_name

    cdef _PbPlan plan = _PbPlan()
    cdef int i, s, kind, param, p, sc
    plans = fmt.plans
    pb_plan = plans.get(id(table))
    if pb_plan is None or pb_plan.table is not table:
        pb_plan = plans[id(table)] = PbTablePlan(table, fmt.options)
    py_plan = pb_plan.json
    opts = fmt.options
    plan.table = table
    plan.py_plan = py_plan
    plan.pb_plan = pb_plan
    plan.ncols = len(py_plan.columns)
    plan.schema = {}
    plan.schema_bytes = {}
    lobs = parser.lobs
    plan.bail = bool(table.system or table.condition or (table.tag_columns and not fmt.full)
                     or (lobs.enabled and lobs.columns(table)) or len(pb_plan.column_plans) != plan.ncols)
    n = plan.ncols
    plan.keys = <uint8_t*> malloc(n + 1)
    plan.nullable = <uint8_t*> malloc(n + 1)
    plan.pkind = <int*> malloc((n + 1) * sizeof(int))
    plan.pparam = <int*> malloc((n + 1) * sizeof(int))
    for s in range(2):
        plan.kind[s] = NULL
        plan.param[s] = NULL
        plan.offset[s] = NULL
        plan.has_setter[s] = <uint8_t*> malloc(n + 1)
        plan.null_name[s] = <uint8_t*> malloc(n + 1)
    plan.names = []
    plan.pynames = []
    plan.setters = [[], []]
    raw = bool(opts.flags & RAW_HEX)
    for i in range(n):
        plan.keys[i] = 1 if py_plan.keys[i] else 0
        plan.nullable[i] = 1 if py_plan.nullable[i] else 0
        cp = pb_plan.column_plans[i]
        plan.names.append(pb_name(cp.name))
        plan.pynames.append(cp.name)
        plan.setters[0].append(cp.before)
        plan.setters[1].append(cp.after)
        plan.has_setter[0][i] = cp.before is not None
        plan.has_setter[1][i] = cp.after is not None
        plan.null_name[0][i] = 1 if cp.null_before else 0
        plan.null_name[1][i] = 1 if cp.null_after else 0
        column = table.columns[i]
        type_code = effective_type(column)
        kind, param = PK_PY, 0
        if raw:
            kind = PK_PY
        elif type_code in (TYPE_VARCHAR2, TYPE_CHAR):
            if opts.char == 0:
                try:
                    name = column_charset_name(column.charset_form, column.charset_id, False,
                                               table.charset, table.ncharset)
                except CharsetError:
                    name = ""
                if name in ("AL32UTF8", "UTF8", "AL16UTF16"):
                    kind, param = PK_STR, (1 if name == "UTF8" else 2 if name == "AL16UTF16" else 0)
        elif type_code == TYPE_NUMBER:
            p, sc = column.precision, column.scale
            if sc == 0 and p <= 17:
                kind = PK_INT
            elif p <= 6 and sc < 38:
                kind = PK_F32
            elif p <= 15 and sc <= 307:
                kind = PK_F64
            else:
                kind = PK_NSTR
        elif type_code == TYPE_RAW:
            kind = PK_BYTES
        elif type_code in (TYPE_DATE, TYPE_TIMESTAMP, TYPE_TIMESTAMP_LTZ, TYPE_TIMESTAMP_TZ):
            kind = PK_NAME
        elif type_code == TYPE_BINARY_FLOAT:
            kind = PK_BFLOAT
        elif type_code == TYPE_BINARY_DOUBLE:
            kind = PK_BDOUBLE
        plan.pkind[i] = kind
        plan.pparam[i] = param
    return plan


cdef bint text_strtol(const char* p, int n, int64_t* out) noexcept nogil:
    """protobuf_values.strtol of a plain decimal text; False above 18 integer digits."""
    cdef int i = 0, k = 0
    cdef bint neg = False
    cdef int64_t v = 0
    if n > 0 and (p[0] == 45 or p[0] == 43):
        neg = p[0] == 45
        i = 1
    while i < n and 48 <= p[i] <= 57:
        if k >= 18:
            return False
        v = v * 10 + (p[i] - 48)
        k += 1
        i += 1
    out[0] = -v if neg else v
    return True


cdef class ProtobufCommitter(JsonCommitter):
    """Commits transactions for the protobuf format natively (replicator.formats.protobuf).

    Phase A is :class:`JsonCommitter`'s; phase B writes the RedoResponse messages of
    ProtobufFormat.transaction: begin, one per row and commit, or one per transaction in
    FULL mode. A transaction above the streaming size is rendered chunk by chunk as
    JsonCommitter._stream does (FULL mode there: the python engine's stream).
    """

    cdef Buf el        # the payload element being written
    cdef Buf hd        # a message's header fields before the payload
    cdef Buf tx        # a value's text (UTF-8 of UTF-16, NUMBER text)

    def __init__(self, fmt, pipeline):
        from replicator.flags import FLAG_SCHEMALESS, FLAG_SYSTEM_TXN

        self.fmt = fmt
        self.pipeline = pipeline
        self.deliver = pipeline.on_native
        self.plans = {}
        self.unknown_tables = bool(fmt.options.flags & (FLAG_SCHEMALESS | FLAG_SYSTEM_TXN))
        self.epochs = {}
        self.scn_all = False
        self.native_transactions = 0
        self.python_transactions = 0
        self.runs = False

    def __dealloc__(self):
        free(self.el.p)
        free(self.hd.p)
        free(self.tx.p)

    cdef _Plan plan_for(self, object parser, object table):
        cdef _Plan plan = self.plans.get(id(table))
        if plan is None or plan.table is not table:
            plan = make_pb_plan(self.fmt, parser, table)
            self.plans[id(table)] = plan
        return plan

    cdef int _header(self, Buf* b, uint64_t scn, object time, bytes txn_part) except -1:
        """ProtobufFormat._header's fields before the payload (code, scn, time, xid, db)."""
        opts = self.fmt.options
        cdef int code = opts.timestamp
        cdef char tmp[24]
        cdef int k
        b.n = 0
        buf_add(b, b"\x08\x05", 2)
        if opts.scn == 1:
            k = snprintf(tmp, 24, "%016llx", <unsigned long long>scn)
            pb_len(b, 0x1A, tmp, k)
        else:
            buf_byte(b, 0x10)
            pb_varint(b, scn)
        if code < 4 and time >= 0:
            buf_byte(b, 0x20)
            pb_varint(b, <uint64_t>(time * _TM_SCALE[code]))
        elif code < 8:
            text = str(time * _TM_SCALE[code - 4]).encode("ascii")
            pb_len(b, 0x2A, text, len(text))
        elif code == 15:
            from replicator.values.datetime import epoch_to_iso

            text = epoch_to_iso(time, True, True).encode("utf-8")
            pb_len(b, 0x2A, text, len(text))
        buf_bytes(b, txn_part)
        return 0

    cdef bytes _txn_part(self, object event):
        """The xid and db fields of a transaction's messages (db bit 1)."""
        opts = self.fmt.options
        x = event.xid
        response = _pb().RedoResponse()
        if opts.xid == 2:
            response.xidn = x
        elif opts.xid == 1:
            response.xid = f"{x >> 48}.{(x >> 32) & 0xFFFF}.{x & 0xFFFFFFFF}"
        elif opts.xid == 3:
            response.xid = f"{x:016x}"
        else:
            response.xid = f"0x{x >> 48:04x}.{(x >> 32) & 0xFFF:03x}.{x & 0xFFFFFFFF:08x}"
        if opts.db & 1:
            response.db = event.con_name or opts.con_name
        return response.SerializeToString()

    cdef int _tail(self, Buf* b, uint64_t lwn_scn, uint64_t idx) except -1:
        if lwn_scn:
            buf_byte(b, 0x50)
            pb_varint(b, lwn_scn)
        if idx:
            buf_byte(b, 0x58)
            pb_varint(b, idx)
        return 0

    cdef _Out _open(self, object parser, object txn, object record):
        """The Transaction event of a commit, its position and xid/db fields (no message yet)."""
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
        o.event = event
        o.ctx = self._txn_part(event)   # the xid and db fields of every message
        o.lwn_scn = fmt.lwn_scn
        o.xid = event.xid
        o.seq = event.begin_seq
        o.messages = []
        return o

    cdef _rows(self, Work* w, _Out o, object parser):
        """ProtobufFormat.transaction's messages for w.rows (the begin message before the first
        row; FULL mode: the elements after the begin header in self.out). A streamed
        transaction (o.room > 0) hands its messages over where the python stream drains."""
        cdef Py_ssize_t r
        cdef Row* row
        cdef _Plan plan
        cdef Buf* b = &self.out
        cdef Buf* e = &self.el
        cdef Buf* h = &self.hd
        cdef uint64_t lwn_scn = o.lwn_scn, scn
        cdef long long idx
        cdef bint full, scn_commit, add_num, rid
        cdef Val* img
        if w.nrows == 0:
            return
        fmt = self.fmt
        opts = fmt.options
        event = o.event
        txn_part = o.ctx
        xid = o.xid
        seq = o.seq
        full = fmt.full
        scn_commit = opts.scn_type & 1
        add_num = fmt.add_num
        rid = opts.rid == 1
        reducer = fmt.reducer
        column_mode = reducer.column_mode
        tables = self._tables
        messages = o.messages
        idx = fmt.lwn_idx
        if not o.started:  # begin: the first change's time; FULL mode keeps this header
            o.started = True
            idx += 1
            self._header(h, event.begin_scn, self.epoch(w.rows.time, parser), txn_part)
            b.n = 0
            buf_add(b, h.p, h.n)
            if not full:
                buf_add(b, b"\x4A\x00", 2)
                self._tail(b, lwn_scn, idx)
                messages.append(Message(PyBytes_FromStringAndSize(b.p, b.n), lwn_scn, idx - 1, None, False, seq, xid))
                if o.room and len(messages) >= o.room:
                    fmt.lwn_idx = idx
                    self._hand_over(o)
                    messages = o.messages
        for r in range(w.nrows):
            row = w.rows + r
            plan = tables[row.table]
            e.n = 0
            buf_byte(e, 0x08)
            buf_byte(e, 2 if row.op == OP_INSERT else 4 if row.op == OP_DELETE else 3)
            self._schema(e, plan, row.obj)
            if rid:
                buf_add(e, b"\x1A\x12", 2)
                buf_rowid(e, row.data_obj, row.bdba, row.slot)
            img = w.vals + row.img
            self._images(row, img, img + row.ncols, plan, column_mode, reducer)
            if add_num and o.num:
                buf_byte(e, 0x50)
                pb_varint(e, <uint64_t>o.num)
            o.num += 1
            if full:
                pb_len(b, 0x4A, e.p, e.n)
                continue
            idx += 1
            scn = event.commit_scn if scn_commit else row.scn
            self._header(h, scn, self.epoch(row.time, parser), txn_part)
            b.n = 0
            buf_add(b, h.p, h.n)
            pb_len(b, 0x4A, e.p, e.n)
            self._tail(b, lwn_scn, idx)
            messages.append(Message(PyBytes_FromStringAndSize(b.p, b.n), lwn_scn, idx - 1, None, False, seq, xid,
                                    plan.table))
            o.rows += 1
            if o.room and len(messages) >= o.room:
                fmt.lwn_idx = idx
                self._hand_over(o)
                messages = o.messages
        fmt.lwn_idx = idx

    cdef _close(self, _Out o):
        """The commit message, or FULL mode's one message (when a row was output)."""
        cdef Buf* b = &self.out
        cdef Buf* h = &self.hd
        cdef long long idx
        if not o.started:
            return
        fmt = self.fmt
        idx = fmt.lwn_idx
        if fmt.full:
            self._tail(b, o.lwn_scn, idx)
            o.messages.append(Message(PyBytes_FromStringAndSize(b.p, b.n), o.lwn_scn, idx - 1, None, False, o.seq,
                                      o.xid))
            return
        idx += 1
        event = o.event
        self._header(h, event.commit_scn, event.commit_time, o.ctx)
        b.n = 0
        buf_add(b, h.p, h.n)
        buf_add(b, b"\x4A\x02\x08\x01", 4)
        self._tail(b, o.lwn_scn, idx)
        o.messages.append(Message(PyBytes_FromStringAndSize(b.p, b.n), o.lwn_scn, idx - 1, None, False, o.seq, o.xid))
        fmt.lwn_idx = idx

    cdef int _schema(self, Buf* e, _Plan plan, uint32_t obj) except -1:
        """The element's Schema (ProtobufFormat._schema), cached per object without a column list."""
        cdef _PbPlan pb
        fmt = self.fmt
        if plan.schemaless:  # an unknown table: no plan
            data = plan.schema.get(obj)
            if data is None:
                data = plan.schema[obj] = self._schema_bytes(None, obj)
        elif fmt.options.schema & 1:
            data = self._schema_bytes((<_PbPlan>plan).pb_plan, obj)
        else:
            pb = <_PbPlan>plan
            data = pb.schema_bytes.get(obj)
            if data is None:
                data = pb.schema_bytes[obj] = self._schema_bytes(pb.pb_plan, obj)
        pb_len(e, 0x12, <bytes>data, len(<bytes>data))
        return 0

    cdef bytes _schema_bytes(self, object pb_plan, uint32_t obj):
        schema = _pb().Schema()
        self.fmt.table_schema(schema, pb_plan, obj)
        return schema.SerializeToString()

    cdef _single(self, Val* image, _Plan plan, int column_mode, int side):
        """reduce_single + PbTablePlan.fill for an INSERT (after) or DELETE (before) image."""
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
            self._fill(out, <_PbPlan>plan, side)
        finally:
            free(out)

    cdef _images(self, Row* row, Val* before, Val* after, _Plan plan, int column_mode, object reducer):
        """UpdateReducer.images + PbTablePlan.fill (or fill_schemaless) of one row into self.el."""
        cdef int n = row.ncols
        cdef int i
        cdef bint in_b, in_a, old_t, new_t
        cdef Val ob, nb
        cdef Val* nb_arr
        cdef Val* na_arr
        cdef bint do_reduce = column_mode < 2
        if plan.schemaless:
            if row.op == OP_INSERT:
                self._fill_schemaless(after, NULL, n, 1)
            elif row.op == OP_DELETE:
                self._fill_schemaless(before, NULL, n, 0)
            else:  # UpdateReducer.reduce without a plan: a column of either image on both sides
                self._fill_schemaless(before, after, n, 0)
                self._fill_schemaless(after, before, n, 1)
            return
        if row.op == OP_INSERT:
            self._single(after, plan, column_mode, 1)
            return
        if row.op == OP_DELETE:
            self._single(before, plan, column_mode, 0)
            return
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
            self._fill(nb_arr, <_PbPlan>plan, 0)
            self._fill(na_arr, <_PbPlan>plan, 1)
        finally:
            free(nb_arr)

    cdef int _fill_schemaless(self, Val* image, Val* other, int n, int side) except -1:
        """fill_schemaless: ``COL_<index>`` with the raw bytes (NULL or only in ``other``: the name alone)."""
        cdef Buf* e = &self.el
        cdef Buf* v = &self.val
        cdef int i
        cdef char tmp[24]
        cdef int k
        for i in range(n):
            if image[i].n == ABSENT and (other == NULL or other[i].n == ABSENT):
                continue
            v.n = 0
            k = snprintf(tmp, 24, "COL_%d", i)
            pb_len(v, 0x0A, tmp, k)
            if image[i].n > 0:
                pb_len(v, 0x32, <const char*>image[i].p, image[i].n)
            pb_len(e, 0x22 if side == 0 else 0x2A, v.p, v.n)
        return 0

    cdef _fill(self, Val* image, _PbPlan plan, int side):
        """PbTablePlan.fill: a Value per present column in column order (see its docstring)."""
        cdef Buf* e = &self.el
        cdef Buf* v = &self.val
        cdef int i, kind, tag = 0x22 if side == 0 else 0x2A
        cdef Val x
        cdef int64_t iv
        cdef double dv
        cdef float fv
        cdef Py_ssize_t mark
        cdef char* end
        for i in range(plan.ncols):
            x = image[i]
            if x.n == ABSENT:
                continue
            v.n = 0
            if x.n <= 0:
                if plan.null_name[side][i]:
                    buf_bytes(v, <bytes>plan.names[i])
                pb_len(e, tag, v.p, v.n)
                continue
            if not plan.has_setter[side][i]:
                buf_byte(e, <char>tag)
                buf_byte(e, 0)
                continue
            buf_bytes(v, <bytes>plan.names[i])
            kind = plan.pkind[i]
            mark = v.n
            if kind == PK_NAME:
                pb_len(e, tag, v.p, v.n)
                continue
            if kind == PK_BYTES:
                pb_len(v, 0x32, <const char*>x.p, x.n)
                pb_len(e, tag, v.p, v.n)
                continue
            if kind == PK_STR:
                buf_byte(v, 0x2A)
                if plan.pparam[i] == 2:
                    self.tx.n = 0
                    if utf16_utf8(&self.tx, x.p, x.n):
                        pb_varint(v, <uint64_t>self.tx.n)
                        buf_add(v, self.tx.p, self.tx.n)
                        pb_len(e, tag, v.p, v.n)
                        continue
                elif is_ascii(x.p, x.n) or valid_utf8(x.p, x.n, plan.pparam[i] == 1):
                    pb_varint(v, <uint64_t>x.n)
                    buf_add(v, <const char*>x.p, x.n)
                    pb_len(e, tag, v.p, v.n)
                    continue
            elif kind == PK_INT or kind == PK_F32 or kind == PK_F64 or kind == PK_NSTR:
                self.tx.n = 0
                if number_text(&self.tx, x.p, x.n) == 0:
                    buf_byte(&self.tx, 0)   # a C string for strtod/strtof
                    if kind == PK_INT:
                        if text_strtol(self.tx.p, <int>self.tx.n - 1, &iv):
                            buf_byte(v, 0x10)
                            pb_varint(v, <uint64_t>iv)
                            pb_len(e, tag, v.p, v.n)
                            continue
                    elif kind == PK_F32:
                        fv = strtof(self.tx.p, &end)
                        if not isinf(fv) and (fv == 0 or fv >= 1.17549435e-38 or fv <= -1.17549435e-38):
                            buf_byte(v, 0x1D)
                            buf_add(v, <const char*>&fv, 4)
                            pb_len(e, tag, v.p, v.n)
                            continue
                    elif kind == PK_F64:
                        dv = strtod(self.tx.p, &end)
                        if not isinf(dv):
                            buf_byte(v, 0x21)
                            buf_add(v, <const char*>&dv, 8)
                            pb_len(e, tag, v.p, v.n)
                            continue
                    else:
                        pb_len(v, 0x2A, self.tx.p, self.tx.n - 1)
                        pb_len(e, tag, v.p, v.n)
                        continue
            elif kind == PK_BFLOAT or kind == PK_BDOUBLE:
                if ieee_value(x.p, x.n, kind == PK_BFLOAT, &dv) and isfinite(dv):
                    buf_byte(v, 0x21)
                    buf_add(v, <const char*>&dv, 8)
                    pb_len(e, tag, v.p, v.n)
                    continue
            # Anything else: the column's python setter on a python Value.
            value = _pb().Value(name=plan.pynames[i])
            plan.setters[side][i](value, PyBytes_FromStringAndSize(<const char*>x.p, x.n))
            data = value.SerializeToString()
            pb_len(e, tag, <bytes>data, len(<bytes>data))


_pb_module = None


def _pb():
    """replicator.proto.olr_pb2 (imported on first use: the protobuf runtime)."""
    global _pb_module
    if _pb_module is None:
        from replicator.proto import olr_pb2
        _pb_module = olr_pb2
    return _pb_module
