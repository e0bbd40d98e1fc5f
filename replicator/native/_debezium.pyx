# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Debezium JSON rendered natively (the renderer of replicator.formats.debezium)."""

# Debezium JSON (replicator.formats.debezium: envelope, flatten, smt) rendered natively from
# the rows phase A assembled. The python format is the reference: every byte here is what
# DebeziumFormat.on_row and orjson write for the same row, and any value this code does not
# decode exactly like replicator.formats.rowvalues goes through the python decoder and
# renderer of that column (so warnings and odd values behave alike by construction).
#
# A module of its own (setup.py MODULES, docs/native-engine.md "Native modules"): what it
# shares with the other native modules crosses through .pxd files (values/_buf.pxd, _structs.pxd, _core.pxd, values/_values.pxd
# (the value texts it shares with the other renderers), formats/_dbztxn.pxd); nothing cimports it.

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memmove, memcmp, memset, strlen
from libc.stdio cimport snprintf
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t

from replicator.values._buf cimport *
from replicator.native._structs cimport *
from replicator.native._core cimport JsonCommitter, _Plan, _Out
from replicator.values._values cimport (number_text, valid_utf8, epoch_of, json_escape, buf_base64, buf_rowid,
                                        fraction_trimmed, iso_text, ieee_value, shortest_text)
from replicator.formats._dbztxn cimport TxnMeta  # Debezium's BEGIN/END (replicator/formats/_dbztxn.pxd)

include "_defs.pxi"

import gc

from replicator.events import Message, Transaction
from replicator.values.rowid import rowid_text

import orjson as _orjson

from replicator import __version__ as _VERSION
from replicator.formats.framework import Position, TxnContext, xid_text

# Debezium value kinds (per visible column).
DEF DK_PY = 1       # python decoder + debezium_schema.render + orjson
DEF DK_INT = 2      # NUMBER of an integer family: bare digits
DEF DK_DEC = 3      # NUMBER otherwise: plain decimal text, quoted
DEF DK_STR = 4      # character data; param 0 AL32UTF8, 1 UTF8, 2 AL16UTF16
DEF DK_EPOCH = 5    # DATE/TIMESTAMP: epoch integer; param = nanoseconds per unit
DEF DK_LTZ = 6      # TIMESTAMP WITH LOCAL TIME ZONE: ISO text in UTC, "Z"
DEF DK_TSTZ = 7     # TIMESTAMP WITH TIME ZONE (numeric offsets): ISO local text + offset
DEF DK_IYM = 8      # INTERVAL YEAR TO MONTH: ISO duration
DEF DK_IDS = 9      # INTERVAL DAY TO SECOND: ISO duration
DEF DK_BIN = 10     # RAW: param 0 base64, 1 base64-url-safe, 2 hex
DEF DK_FLOAT = 11   # BINARY_FLOAT (param 1) / BINARY_DOUBLE (param 0): shortest round-trip text

DEF MODE_ENVELOPE = 0
DEF MODE_FLATTEN = 1
DEF MODE_SMT = 2

cdef char* B64_STD = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
cdef char* B64_URL = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


cdef bint utf16_json(Buf* b, const uint8_t* p, int n) noexcept nogil:
    """AL16UTF16 (strict UTF-16BE) as orjson-escaped UTF-8; False (buffer unchanged): python."""
    cdef int i = 0
    cdef int64_t u
    cdef Py_ssize_t mark = b.n
    cdef uint8_t c
    if n & 1:
        return False
    while i < n:
        u = utf16_next(p, n, &i)
        if u < 0:
            b.n = mark
            return False
        if u < 0x80:
            c = <uint8_t>u
            json_escape(b, &c, 1)
        else:
            buf_utf8(b, <uint32_t>u)
    return True


cdef bint iym_iso(Buf* b, const uint8_t* d, int n) noexcept nogil:
    """YearMonth(months) as temporal.iso_duration; False: python."""
    cdef int64_t years, months, total
    cdef bint neg, mneg
    if n != 5 or not (49 <= d[4] <= 71):
        return False
    biased(rd32(d, True), &years, &neg)
    if years > 999999999:
        return False
    offset60(d[4], &months, &mneg)
    total = years * 12 + months
    neg = (neg or mneg) and total != 0
    buf_byte(b, 80)
    signed_part(b, neg, total // 12)
    buf_byte(b, 89)
    signed_part(b, neg, total % 12)
    buf_add(b, b"M0DT0H0M0S", 10)
    return True


cdef bint ids_iso(Buf* b, const uint8_t* d, int n) noexcept nogil:
    """DaySecond(nanos) as temporal.iso_duration; False: python."""
    cdef int64_t days, nanos, hours, minutes, seconds, total, secs
    cdef bint neg, nneg, hneg, mneg, sneg
    if n != 11 or not (37 <= d[4] <= 83) or not (1 <= d[5] <= 119) or not (1 <= d[6] <= 119):
        return False
    biased(rd32(d, True), &days, &neg)
    biased(rd32(d + 7, True), &nanos, &nneg)
    if days > 100000 or nanos > 999999999:
        return False  # python's big integers
    offset60(d[4], &hours, &hneg)
    offset60(d[5], &minutes, &mneg)
    offset60(d[6], &seconds, &sneg)
    total = (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000000000 + nanos
    neg = (neg or nneg or hneg or mneg or sneg) and total != 0
    secs = total // 1000000000
    nanos = total % 1000000000
    buf_add(b, b"P0Y0M", 5)
    signed_part(b, neg, secs // 86400)
    buf_add(b, b"DT", 2)
    signed_part(b, neg, (secs // 3600) % 24)
    buf_byte(b, 72)
    signed_part(b, neg, (secs // 60) % 60)
    buf_byte(b, 77)
    if neg and (secs % 60 or nanos):
        buf_byte(b, 45)
    buf_int(b, secs % 60)
    fraction_trimmed(b, nanos)
    buf_byte(b, 83)
    return True


cdef bint tstz_iso(Buf* b, const uint8_t* d, int n) noexcept nogil:
    """ZonedInstant with a numeric offset as temporal.zoned_iso; False: python (regions...)."""
    cdef int64_t epoch, fraction, offset
    cdef int b11, b12, h, m
    cdef bint negative
    cdef uint8_t tmp[11]
    if n != 9 and n != 13:
        return False
    b11 = d[11] if n == 13 else d[7]
    b12 = d[12] if n == 13 else d[8]
    if not (5 <= b11 <= 36):
        return False
    negative = b11 < 20 or (b11 == 20 and b12 < 60)
    h = b11 - 20 if b11 >= 20 else 20 - b11
    m = b12 - 60 if b12 >= 60 else 60 - b12
    if m > 59:
        return False
    memcpy(tmp, d, 7)
    if n == 13:
        memcpy(tmp + 7, d + 7, 4)
    if not epoch_of(tmp, 11 if n == 13 else 7, False, 0, &epoch, &fraction):
        return False
    offset = h * 3600 + m * 60
    if negative:
        offset = -offset
    if not iso_text(b, epoch + offset, fraction):
        return False
    if offset == 0:
        buf_byte(b, 90)
        return True
    buf_byte(b, 45 if offset < 0 else 43)
    two_digits(b, h)
    buf_byte(b, 58)
    two_digits(b, m)
    return True


cdef class _DbzPlan(_Plan):
    """A table's Debezium plan: visible columns, their native kinds, cached schema texts."""

    cdef int nvis
    cdef int* vcol          # table column index of each visible column
    cdef int* vkind
    cdef int* vparam
    cdef int64_t* voff
    cdef int nkeys
    cdef int* keyvis        # visible position of each key column
    cdef list vname         # b'"NAME":' per visible column
    cdef list vpy           # python renderer (bytes -> JSON bytes) per visible column
    cdef bytes value_head   # b'{"schema":…,"payload":' (envelope) or b""
    cdef bytes key_head
    cdef bytes table_src    # b'"schema":OWNER,"table":NAME'
    cdef object owner
    cdef object name

    def __dealloc__(self):
        free(self.vcol)
        free(self.vkind)
        free(self.vparam)
        free(self.voff)
        free(self.keyvis)


def _dbz_value_renderer(column, binary):
    """The python engine's bytes of one value of ``column`` (decoder, render, orjson)."""
    import orjson
    from replicator.formats.debezium_schema import render

    decode = column.decode

    def value(data):
        return orjson.dumps(render(column, decode(data), binary))

    return value


cdef _DbzPlan make_dbz_plan(object fmt, object parser, object table):
    import orjson
    from replicator.formats.debezium_schema import debezium_type
    from replicator.formats.typemap import INTEGER_FAMILIES, LOB_FAMILIES
    from replicator.values.charset import CharsetError, column_charset_name

    cdef _DbzPlan plan = _DbzPlan()
    cdef int v, n, kind, param
    cdef int64_t offset
    plan.table = table
    plan.ncols = len(table.columns)
    plan.bail = True
    lobs = parser.lobs
    if table.system or (lobs.enabled and lobs.columns(table)):
        return plan
    try:
        view = fmt.table_view(table)
        value_schema, key_schema = fmt.table_schemas(view)
    except Exception:
        return plan  # the python engine raises it where it should
    columns = view.columns
    names = [c.name for c in columns]
    if len(set(names)) != len(names) or (fmt.mode == "smt" and "__deleted" in names):
        return plan  # python's dicts would merge these
    for c in columns:
        if c.otype.family in LOB_FAMILIES:
            return plan  # unavailable-value placeholders: python
    n = len(columns)
    plan.nvis = n
    plan.vcol = <int*> malloc((n + 1) * sizeof(int))
    plan.vkind = <int*> malloc((n + 1) * sizeof(int))
    plan.vparam = <int*> malloc((n + 1) * sizeof(int))
    plan.voff = <int64_t*> malloc((n + 1) * sizeof(int64_t))
    plan.keyvis = <int*> malloc((n + 1) * sizeof(int))
    plan.vname = []
    plan.vpy = []
    plan.nkeys = 0
    binary = fmt.binary
    opts = fmt.options
    for v in range(n):
        c = columns[v]
        plan.vcol[v] = c.index
        plan.vname.append(orjson.dumps(c.name) + b":")
        plan.vpy.append(_dbz_value_renderer(c, binary))
        if c.key:
            plan.keyvis[plan.nkeys] = v
            plan.nkeys += 1
        family = c.otype.family
        kind, param, offset = DK_PY, 0, 0
        if family in INTEGER_FAMILIES:
            kind = DK_INT
        elif family in ("decimal", "number", "float"):
            kind = DK_DEC
        elif family in ("char", "nchar", "varchar", "nvarchar"):
            try:
                cs = column_charset_name(c.column.charset_form, c.column.charset_id, False,
                                         table.charset, table.ncharset)
            except CharsetError:
                cs = ""
            if cs in ("AL32UTF8", "UTF8", "AL16UTF16"):
                kind, param = DK_STR, (1 if cs == "UTF8" else 2 if cs == "AL16UTF16" else 0)
        elif family in ("date", "timestamp"):
            unit = debezium_type(c.otype)[1]
            kind = DK_EPOCH
            param = (1000000 if unit == "io.debezium.time.Timestamp" else
                     1000 if unit == "io.debezium.time.MicroTimestamp" else 1)
        elif family == "timestamp_ltz":
            kind, offset = DK_LTZ, opts.db_timezone
        elif family == "timestamp_tz":
            kind = DK_TSTZ
        elif family in ("binary_float", "binary_double"):
            kind, param = DK_FLOAT, (1 if family == "binary_float" else 0)
        elif family == "interval_ym":
            kind = DK_IYM
        elif family == "interval_ds":
            kind = DK_IDS
        elif family in ("raw", "unsupported") and binary in ("bytes", "base64", "base64-url-safe", "hex"):
            kind, param = DK_BIN, (2 if binary == "hex" else 1 if binary == "base64-url-safe" else 0)
        plan.vkind[v] = kind
        plan.vparam[v] = param
        plan.voff[v] = offset
    if fmt.mode == "envelope":
        plan.value_head = b'{"schema":' + orjson.dumps(value_schema) + b',"payload":'
        plan.key_head = (b'{"schema":' + orjson.dumps(key_schema) + b',"payload":'
                         if key_schema is not None else b"")
    else:
        plan.value_head = plan.key_head = b""
    plan.owner = view.owner
    plan.name = view.name
    plan.table_src = b'"schema":' + orjson.dumps(view.owner) + b',"table":' + orjson.dumps(view.name)
    plan.bail = False
    return plan


cdef class _DbzOut(_Out):
    """A Debezium transaction being rendered: its payload pieces and per-collection counts."""

    cdef object scn
    cdef object db
    cdef object last_before
    cdef long long first_idx
    cdef int64_t total
    cdef dict collections     # name -> index, in order of first sight
    cdef list seen            # collection indexes in order of their first row (the Counter's order)
    cdef int* coll_of         # per table slot: its collection
    cdef Py_ssize_t ncovered
    cdef int64_t* coll_count  # per collection: rows so far
    cdef Py_ssize_t ncount
    cdef bytes xid_json, src_a, src_b, src_c, src_d, src_e, tail_b, db_bytes
    cdef Buf kb

    def __dealloc__(self):
        free(self.coll_of)
        free(self.coll_count)
        free(self.kb.p)

    cdef int cover(self, list tables) except -1:
        """Collections for the table slots added since the last chunk."""
        cdef Py_ssize_t v, n = len(tables)
        cdef _DbzPlan plan
        if n <= self.ncovered:
            return 0
        self.coll_of = <int*> realloc(self.coll_of, (n + 1) * sizeof(int))
        if self.coll_of == NULL:
            raise MemoryError()
        for v in range(self.ncovered, n):
            plan = tables[v]
            self.coll_of[v] = self.collections.setdefault(f"{self.db}.{plan.owner}.{plan.name}",
                                                          len(self.collections))
        self.ncovered = n
        if len(self.collections) > self.ncount:
            self.coll_count = <int64_t*> realloc(self.coll_count, (n + 1) * sizeof(int64_t))
            if self.coll_count == NULL:
                raise MemoryError()
            memset(self.coll_count + self.ncount, 0, (n + 1 - self.ncount) * sizeof(int64_t))
            self.ncount = n + 1
        return 0


cdef class DebeziumCommitter(JsonCommitter):
    """Commits transactions for the Debezium formats natively (envelope, flatten, smt).

    Phase A is :class:`JsonCommitter`'s; phase B renders each row as
    :meth:`replicator.formats.debezium.DebeziumFormat.on_row` would (begin/commit
    transaction metadata written by :class:`TxnMeta`); a transaction above the streaming
    size is rendered chunk by chunk (_stream).
    """

    cdef int mode
    cdef TxnMeta txn_meta     # BEGIN/END transaction metadata (not in smt mode)
    cdef Buf frag             # rendered values of the current row
    cdef Py_ssize_t* foff     # per (side, visible column): offset in frag, length (-1: absent)
    cdef int* flen
    cdef Py_ssize_t fcap

    def __init__(self, fmt, pipeline):
        self.fmt = fmt
        self.pipeline = pipeline
        self.deliver = pipeline.on_native
        self.plans = {}
        self.epochs = {}
        self.scn_all = False
        self.native_transactions = 0
        self.python_transactions = 0
        self.mode = {"envelope": MODE_ENVELOPE, "flatten": MODE_FLATTEN, "smt": MODE_SMT}[fmt.mode]
        self.txn_meta = TxnMeta(fmt) if self.mode != MODE_SMT else None

    def __dealloc__(self):
        free(self.frag.p)
        free(self.foff)
        free(self.flen)

    cdef _Plan plan_for(self, object parser, object table):
        cdef _Plan plan = self.plans.get(id(table))
        if plan is None or plan.table is not table:
            plan = make_dbz_plan(self.fmt, parser, table)
            self.plans[id(table)] = plan
        return plan

    cdef int _value(self, _DbzPlan plan, int v, Val* val) except -1:
        """One value's JSON into self.frag (native, else the column's python renderer)."""
        cdef Buf* b = &self.frag
        cdef Buf* t = &self.val
        cdef Py_ssize_t mark = b.n
        cdef int kind = plan.vkind[v]
        cdef int param = plan.vparam[v]
        cdef int64_t epoch, fraction
        cdef Py_ssize_t k
        cdef const uint8_t* p = val.p
        cdef int n = val.n
        cdef double dvalue
        if n <= 0:
            buf_add(b, b"null", 4)
            return 0
        if kind == DK_INT or kind == DK_DEC:
            t.n = 0
            if number_text(t, p, n) == 0:
                if kind == DK_DEC:
                    buf_byte(b, 34)
                    buf_add(b, t.p, t.n)
                    buf_byte(b, 34)
                    return 0
                for k in range(t.n):
                    if t.p[k] == 46:
                        break
                else:
                    if not (t.n == 2 and t.p[0] == 45 and t.p[1] == 48):
                        buf_add(b, t.p, t.n)
                        return 0
        elif kind == DK_STR:
            if param == 2:
                buf_byte(b, 34)
                if utf16_json(b, p, n):
                    buf_byte(b, 34)
                    return 0
            elif is_ascii(p, n) or valid_utf8(p, n, param == 1):
                buf_byte(b, 34)
                json_escape(b, p, n)
                buf_byte(b, 34)
                return 0
        elif kind == DK_EPOCH:
            if (n == 7 or n == 11) and epoch_of(p, n, True, 0, &epoch, &fraction):
                if param != 1 or (-9000000000 < epoch < 9000000000):
                    buf_int(b, epoch * (1000000000 // param) + fraction // param)
                    return 0
        elif kind == DK_LTZ:
            if (n == 7 or n == 11) and epoch_of(p, n, True, plan.voff[v], &epoch, &fraction):
                buf_byte(b, 34)
                if iso_text(b, epoch, fraction):
                    buf_add(b, b'Z"', 2)
                    return 0
        elif kind == DK_TSTZ:
            buf_byte(b, 34)
            if tstz_iso(b, p, n):
                buf_byte(b, 34)
                return 0
        elif kind == DK_IYM:
            buf_byte(b, 34)
            if iym_iso(b, p, n):
                buf_byte(b, 34)
                return 0
        elif kind == DK_IDS:
            buf_byte(b, 34)
            if ids_iso(b, p, n):
                buf_byte(b, 34)
                return 0
        elif kind == DK_FLOAT:
            if ieee_value(p, n, param == 1, &dvalue) and shortest_text(b, dvalue, param == 1):
                return 0
        elif kind == DK_BIN:
            buf_byte(b, 34)
            if param == 2:
                buf_hex(b, p, n)
            else:
                buf_base64(b, p, n, B64_URL if param == 1 else B64_STD)
            buf_byte(b, 34)
            return 0
        b.n = mark
        buf_bytes(b, plan.vpy[v](PyBytes_FromStringAndSize(<const char*>p, n)))
        return 0

    cdef int _side(self, _DbzPlan plan, Val* img, int base, bint complete) except -1:
        """rowvalues._decode of one image into fragments [base, base + nvis)."""
        cdef int v
        cdef Val* val
        cdef Py_ssize_t start
        for v in range(plan.nvis):
            val = img + plan.vcol[v]
            if val.n == ABSENT and not complete:
                self.flen[base + v] = -1
                continue
            start = self.frag.n
            if val.n == ABSENT:
                buf_add(&self.frag, b"null", 4)
            else:
                self._value(plan, v, val)
            self.foff[base + v] = start
            self.flen[base + v] = <int>(self.frag.n - start)
        return 0

    cdef void _object(self, Buf* b, _DbzPlan plan, int base) noexcept:
        """debezium_schema.row: ``{"NAME":value,…}`` of the present columns."""
        cdef int v
        cdef bint first = True
        buf_byte(b, 123)
        for v in range(plan.nvis):
            if self.flen[base + v] < 0:
                continue
            if not first:
                buf_byte(b, 44)
            first = False
            buf_bytes(b, <bytes>plan.vname[v])
            buf_add(b, self.frag.p + self.foff[base + v], self.flen[base + v])
        buf_byte(b, 125)

    cdef _emit(self, Work* w, object parser, object txn, object record):
        """Phase B: Parser._emit and EventFormat.transaction with DebeziumFormat.on_row."""
        cdef _Out o
        if w.nrows == 0:
            return
        stats = parser.stats
        stats.rows += w.nrows
        stats.transactions += 1
        o = self._open(parser, txn, record)
        self._rows(w, o, parser)
        self._close(o)
        self.deliver(o.event, o.messages, w.nrows)

    cdef bint _stream(self, object parser, object txn, object record) except -1:
        """A transaction above parser.stream_bytes, chunk by chunk as JsonCommitter._stream
        (a checking walk, then the rendering walk handing messages over exactly where the
        python engine's stream drains)."""
        cdef _Out o
        if not self._walk(parser, txn, None):
            return False
        parser.stats.transactions += 1
        o = self._open(parser, txn, record)
        o.room = self.pipeline.on_native_stream(o.event)
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

    cdef _Out _open(self, object parser, object txn, object record):
        """The Transaction event and the per-transaction pieces of the payload (no message yet)."""
        cdef _DbzOut o = _DbzOut()
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
        opts = fmt.options
        fmt.reset(event.begin_scn)
        db = event.con_name or opts.con_name or opts.database
        ctx = TxnContext(event, [], db)
        o.event = event
        o.ctx = ctx
        o.messages = []
        o.xid = event.xid
        o.seq = event.begin_seq
        o.db = db
        o.collections = {}
        o.seen = []
        # Per-transaction pieces of the payload and of the "source" struct.
        dumps = _orjson.dumps
        o.xid_json = dumps(xid_text(event.xid))
        thread = b"%d" % event.thread
        o.src_a = (b',"source":{"version":' + dumps(_VERSION) + b',"connector":"oracle","name":' + dumps(fmt.server)
                   + b',"ts_ms":')
        o.src_b = b',"snapshot":"false","db":' + dumps(db) + b","
        o.src_c = b',"txId":' + o.xid_json + b',"scn":"'
        o.src_d = (b'","commit_scn":"%d","redo_thread":' % event.commit_scn + thread + b',"user_name":'
                   + dumps(ctx.user) + b',"row_id":"')
        o.tail_b = b',"transaction":{"id":' + o.xid_json + b',"total_order":'
        o.db_bytes = db.encode()
        return o

    cdef int _split(self, _Out o) except -1:
        """Hand over exactly ``o.room`` messages whenever that many are waiting (streamed)."""
        while o.room and len(o.messages) >= o.room:
            rest = o.messages[o.room:]
            del o.messages[o.room:]
            self._hand_over(o)
            o.messages = rest
        return 0

    cdef _rows(self, Work* w, _Out out, object parser):
        """Render w.rows (the begin metadata before the first row of the transaction)."""
        cdef _DbzOut o = <_DbzOut>out
        cdef Py_ssize_t r
        cdef Row* row
        cdef _DbzPlan plan
        cdef Buf* b = &self.out
        cdef Buf* kb = &o.kb
        cdef Val* img
        cdef int base, v, side, nvis, coll
        cdef long long pos_idx
        cdef int64_t now
        cdef int mode = self.mode
        fmt = self.fmt
        ctx = o.ctx
        messages = o.messages
        if not o.started:
            o.started = True
            if not fmt.skip_begin:
                if self.txn_meta is None:
                    messages += fmt.on_begin(ctx, fmt.take())
                else:
                    messages += self.txn_meta.begin(fmt, ctx, fmt.take(), o.xid_json)
            o.scn = fmt.scn
            o.first_idx = fmt.idx
            o.last_before = fmt.last
            o.src_e = b'","server_id":' + (b"%d" % o.event.thread) + b',"pos":"%d:' % o.scn
        scn = o.scn
        xid = o.xid
        seq = o.seq
        src_a, src_b, src_c, src_d, src_e, tail_b = o.src_a, o.src_b, o.src_c, o.src_d, o.src_e, o.tail_b
        clock = fmt.clock
        tombstones = fmt.tombstones
        db_bytes = o.db_bytes
        # Data collections: per table slot, an index into the transaction's collection list.
        tables = self._tables
        o.cover(tables)
        for r in range(w.nrows):
            row = w.rows + r
            plan = tables[row.table]
            nvis = plan.nvis
            if 2 * nvis + 1 > self.fcap:
                self.fcap = 2 * nvis + 1
                self.foff = <Py_ssize_t*> realloc(self.foff, self.fcap * sizeof(Py_ssize_t))
                self.flen = <int*> realloc(self.flen, self.fcap * sizeof(int))
                if self.foff == NULL or self.flen == NULL:
                    raise MemoryError()
            self.frag.n = 0
            img = w.vals + row.img
            # Values, in the python engine's decode order (before image, then after).
            if row.op == OP_INSERT:
                self._side(plan, img + row.ncols, nvis, True)
                side = 1
            elif row.op == OP_DELETE:
                self._side(plan, img, 0, True)
                side = 0
            else:
                self._side(plan, img, 0, False)
                self._side(plan, img + row.ncols, nvis, False)
                for v in range(nvis):  # after = before overlaid with the new values
                    if self.flen[nvis + v] < 0 and self.flen[v] >= 0:
                        self.foff[nvis + v] = self.foff[v]
                        self.flen[nvis + v] = self.flen[v]
                side = 1
            coll = o.coll_of[row.table]
            if o.coll_count[coll] == 0:
                o.seen.append(coll)
            o.coll_count[coll] += 1
            o.total += 1
            pos_idx = o.first_idx + o.num
            o.num += 1
            o.rows += 1
            # The key: the key columns of the current image.
            key = None
            if plan.nkeys:
                kb.n = 0
                if mode == MODE_ENVELOPE:
                    buf_bytes(kb, plan.key_head)
                buf_byte(kb, 123)
                for v in range(plan.nkeys):
                    if v:
                        buf_byte(kb, 44)
                    base = side * nvis + plan.keyvis[v]
                    buf_bytes(kb, <bytes>plan.vname[plan.keyvis[v]])
                    if self.flen[base] >= 0:
                        buf_add(kb, self.frag.p + self.foff[base], self.flen[base])
                    else:
                        buf_add(kb, b"null", 4)
                buf_byte(kb, 125)
                if mode == MODE_ENVELOPE:
                    buf_byte(kb, 125)
                key = PyBytes_FromStringAndSize(kb.p, kb.n)
            op = b"c" if row.op == OP_INSERT else b"d" if row.op == OP_DELETE else b"u"
            time = self.epoch(row.time, parser)
            b.n = 0
            if mode == MODE_SMT:
                self._object(b, plan, side * nvis)
                b.n -= 1
                if b.n > 1:
                    buf_byte(b, 44)
                buf_add(b, b'"__deleted":"true"}' if row.op == OP_DELETE else b'"__deleted":"false"}',
                        19 if row.op == OP_DELETE else 20)
                headers = [("__op", op), ("__db", db_bytes), ("__schema", plan.owner.encode()),
                           ("__table", plan.name.encode()), ("__source_ts_ms", b"%d" % (time * 1000))]
                messages.append(Message(PyBytes_FromStringAndSize(b.p, b.n), scn, pos_idx, key, False, seq,
                                        xid, plan.table, headers))
            else:
                buf_bytes(b, plan.value_head)
                buf_add(b, b'{"op":"', 7)
                buf_bytes(b, op)
                buf_byte(b, 34)
                buf_bytes(b, src_a)
                buf_int(b, time * 1000)
                buf_bytes(b, src_b)
                buf_bytes(b, plan.table_src)
                buf_bytes(b, src_c)
                buf_int(b, <int64_t>row.scn)
                buf_bytes(b, src_d)
                buf_rowid(b, row.data_obj, row.bdba, row.slot)
                buf_bytes(b, src_e)
                buf_int(b, pos_idx + 1)
                buf_add(b, b'"},"before":', 12)
                if row.op == OP_INSERT:
                    buf_add(b, b"null", 4)
                else:
                    self._object(b, plan, 0)
                buf_add(b, b',"after":', 9)
                if row.op == OP_DELETE:
                    buf_add(b, b"null", 4)
                else:
                    self._object(b, plan, nvis)
                now = <int64_t>(clock() * 1000)
                buf_add(b, b',"ts_ms":', 9)
                buf_int(b, now)
                buf_bytes(b, tail_b)
                buf_int(b, o.total)
                buf_add(b, b',"data_collection_order":', 25)
                buf_int(b, o.coll_count[coll])
                buf_add(b, b"}}", 2)
                if mode == MODE_ENVELOPE:
                    buf_byte(b, 125)
                messages.append(Message(PyBytes_FromStringAndSize(b.p, b.n), scn, pos_idx, key, False, seq, xid,
                                        plan.table))
                if row.op == OP_DELETE and tombstones and key is not None:
                    tombstone = Message(b"", scn, pos_idx, key, False, seq, xid, plan.table)
                    tombstone.tombstone = True
                    messages.append(tombstone)
            if o.room and len(messages) >= o.room:
                self._split(o)
                messages = o.messages

    cdef _close(self, _Out out):
        """Positions and per-collection counts as the python hooks leave them, then the END
        metadata (when a row was output)."""
        cdef _DbzOut o = <_DbzOut>out
        cdef long long last_idx
        if not o.started:
            return
        fmt = self.fmt
        ctx = o.ctx
        last_idx = o.first_idx + o.num - 1
        fmt.previous = Position(o.scn, last_idx - 1) if o.num > 1 else o.last_before
        fmt.last = Position(o.scn, last_idx)
        fmt.idx = last_idx + 1
        orders = fmt.orders
        orders.clear()
        names = list(o.collections)
        for coll in o.seen:
            orders[names[coll]] = o.coll_count[coll]
        fmt.orders_of = ctx
        if not fmt.skip_commit:
            if self.txn_meta is None:
                o.messages += fmt.on_commit(ctx, fmt.take())
            else:
                o.messages += self.txn_meta.commit(fmt, ctx, fmt.take(), o.xid_json)
            self._split(o)
