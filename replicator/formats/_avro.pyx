# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Avro bodies (avro, dts-avro) and OMS' light types written from the typed row images."""

# Avro bodies written straight from the typed row images, for the formats ``avro`` (per-table
# envelope records, replicator.formats.avro) and ``dts-avro`` (the DTS Record,
# replicator.formats.dts_avro), plus OMS DefaultExtendColumnType's ``__light_type`` object.
# The python formats with fastavro are the reference: every byte here is what
# fastavro.schemaless_writer writes for the python datum. A cell these encoders do not take
# (a python-decoded value, a zoned timestamp, an interval, a value out of the ranges checked
# below) is encoded by the format's own python code for that one column (ColumnCodes.fallback),
# so odd values and errors behave alike by construction.
#
# A compiled module of replicator.formats beside the python encoders it mirrors (avro.py,
# dts_avro.py, oms_default.py): it reads only the typed row images (formats/_rowvalues.pxd) and the
# value texts of values/_values.pxd, nothing of the engine, so it lives in the formats layer and the
# formats reach it as framework.native_avro() (docs/native-engine.md "Where the modules live").

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memmove, memcmp, memset, strlen
from libc.stdio cimport snprintf
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t

from replicator.values._buf cimport *
from cpython cimport array

from replicator.values._values cimport buf_rowid, fraction_trimmed, iso_text
from replicator.formats._rowvalues cimport *  # Cell, RowImages, the CK_* cell kinds


# Avro column kinds (format avro; avro_schema.column_type).
DEF AVK_PY = 0       # always the python fallback
DEF AVK_LONG = 1     # int/long: int(Decimal)
DEF AVK_DEC = 2      # bytes/decimal(p1 = precision, p2 = scale)
DEF AVK_STR = 3      # string: text, or the plain decimal text of a NUMBER
DEF AVK_BYTES = 4
DEF AVK_FLOAT = 5
DEF AVK_DOUBLE = 6
DEF AVK_TIME = 7     # long timestamp; p1 = nanoseconds per unit (1000000, 1000, 1)

# DTS Avro column kinds (dts_avro.dts_value).
DEF DTK_PY = 0
DEF DTK_INTEGER = 1  # Integer{precision p1, value text}
DEF DTK_DECIMAL = 2  # Decimal{text, p1, p2} (p1 or p2 < 0: the value's own digits and scale)
DEF DTK_FLOAT = 3    # Float{value, p1, 0}
DEF DTK_CHAR = 4     # Character{"utf8", bytes}
DEF DTK_BINARY = 5   # BinaryObject{type name (extra), bytes}
DEF DTK_DATETIME = 6 # DateTime fields of a DATE/TIMESTAMP
DEF DTK_TS = 7       # Timestamp{epoch, micros} of a WITH LOCAL TIME ZONE
DEF DTK_ZONED = 8    # TimestampWithTimeZone{DateTime of the wall clock, zone}
DEF DTK_TEXT = 9     # TextObject{type name (extra), the interval literal}


cdef class ColumnCodes:
    """Per visible column of a table view: how a format's Avro encoder writes its value.

    ``kinds``/``p1``/``p2`` are the AVK_*/DTK_* kind and its parameters, ``extra`` pre-encoded
    bytes per column (DTS: the Avro string of the object type name), ``fallback(v, value)``
    the format's python encoding of column ``v``'s value (bytes, union index included).
    """

    cdef int n
    cdef int* kind
    cdef int64_t* p1
    cdef int64_t* p2
    cdef list extra
    cdef object fallback

    def __init__(self, kinds, p1, p2, extra, fallback):
        cdef int v
        self.n = len(kinds)
        self.kind = <int*> malloc((self.n + 1) * sizeof(int))
        self.p1 = <int64_t*> malloc((self.n + 1) * sizeof(int64_t))
        self.p2 = <int64_t*> malloc((self.n + 1) * sizeof(int64_t))
        if self.kind == NULL or self.p1 == NULL or self.p2 == NULL:
            raise MemoryError()
        for v in range(self.n):
            self.kind[v] = kinds[v]
            self.p1[v] = p1[v]
            self.p2[v] = p2[v]
        self.extra = list(extra)
        self.fallback = fallback

    def __dealloc__(self):
        free(self.kind)
        free(self.p1)
        free(self.p2)


cdef inline void zz(Buf* b, int64_t n) noexcept nogil:
    """An Avro int/long: zig-zag, then base-128 varint."""
    cdef uint64_t u = (<uint64_t>n << 1) ^ <uint64_t>(n >> 63)
    while u >= 0x80:
        buf_byte(b, <char>((u & 0x7F) | 0x80))
        u >>= 7
    buf_byte(b, <char>u)


cdef inline void av_span(Buf* b, const char* p, Py_ssize_t n) noexcept nogil:
    """An Avro string or bytes: length, then the bytes."""
    zz(b, n)
    buf_add(b, p, n)


cdef bint text_int(const char* p, int n, int64_t* out) noexcept nogil:
    """int(Decimal(text)) of a plain decimal text (truncated); False above 18 digits."""
    cdef int i = 0, k = 0
    cdef bint neg = False
    cdef int64_t v = 0
    if n > 0 and p[0] == 45:
        neg = True
        i = 1
    while i < n and p[i] != 46:
        if p[i] < 48 or p[i] > 57 or k >= 18:
            return False
        v = v * 10 + (p[i] - 48)
        k += 1
        i += 1
    out[0] = -v if neg else v
    return True


cdef bint text_digits(const char* p, int n, int64_t* unscaled, int* ndigits, int* scale, bint* neg) noexcept nogil:
    """Decimal(text).as_tuple() of a plain decimal text: the digits as an integer, their
    count (leading zeros dropped, at least 1), the places after the point; False above 18."""
    cdef int i = 0, k = 0
    cdef bint frac = False
    neg[0] = False
    unscaled[0] = 0
    scale[0] = 0
    if n > 0 and p[0] == 45:
        neg[0] = True
        i = 1
    while i < n:
        if p[i] == 46:
            if frac:
                return False
            frac = True
        elif 48 <= p[i] <= 57:
            if frac:
                scale[0] += 1
            if k > 0 or p[i] != 48:
                if k >= 18:
                    return False
                unscaled[0] = unscaled[0] * 10 + (p[i] - 48)
                k += 1
        else:
            return False
        i += 1
    ndigits[0] = k if k > 0 else 1
    return True


cdef bint av_decimal(Buf* b, const char* p, int n, int64_t precision, int64_t scale) noexcept nogil:
    """fastavro's bytes/decimal of Decimal(text) (prepare_bytes_decimal); False: python."""
    cdef int64_t unscaled, delta
    cdef int ndigits, places, nbytes, k
    cdef bint neg
    cdef uint8_t tmp[9]
    if not text_digits(p, n, &unscaled, &ndigits, &places, &neg):
        return False
    if ndigits > precision:
        return False  # fastavro raises: the python engine's error
    delta = scale - places
    if delta < 0 or delta + ndigits > 18:
        return False
    while delta > 0:
        unscaled *= 10
        delta -= 1
    nbytes = 1
    while nbytes < 8 and (unscaled >> (8 * nbytes - 1)) != 0:
        nbytes += 1   # (bit_length + 8) // 8 bytes: room for the sign bit
    if neg:
        unscaled = -unscaled
    for k in range(nbytes):
        tmp[nbytes - 1 - k] = <uint8_t>((<uint64_t>unscaled >> (8 * k)) & 0xFF)
    av_span(b, <const char*>tmp, nbytes)
    return True


cdef bint civil_fields(int64_t epoch, int64_t* f) noexcept nogil:
    """temporal.calendar_fields for years 1..9999: year, month, day, hour, minute, second."""
    cdef char tmp[40]
    cdef Buf t
    cdef bint ok
    t.p = NULL
    t.n = t.cap = 0
    ok = iso_text(&t, epoch, 0)
    if ok:
        f[0] = (t.p[0] - 48) * 1000 + (t.p[1] - 48) * 100 + (t.p[2] - 48) * 10 + (t.p[3] - 48)
        f[1] = (t.p[5] - 48) * 10 + (t.p[6] - 48)
        f[2] = (t.p[8] - 48) * 10 + (t.p[9] - 48)
        f[3] = (t.p[11] - 48) * 10 + (t.p[12] - 48)
        f[4] = (t.p[14] - 48) * 10 + (t.p[15] - 48)
        f[5] = (t.p[17] - 48) * 10 + (t.p[18] - 48)
    free(t.p)
    return ok


cdef void ym_literal(Buf* b, int64_t total) noexcept nogil:
    """temporal.interval_literal of a YearMonth (no quotes)."""
    cdef int64_t mag = -total if total < 0 else total
    buf_add(b, b"INTERVAL '", 10)
    if total < 0:
        buf_byte(b, 45)
    buf_int(b, mag // 12)
    buf_byte(b, 45)
    buf_int(b, mag % 12)
    buf_add(b, b"' YEAR TO MONTH", 15)


cdef void duration_iso(Buf* b, int kind, int64_t total) noexcept nogil:
    """temporal.iso_duration of a YearMonth (CK_YM, months) or DaySecond (CK_DS, nanoseconds)."""
    cdef uint64_t mag = <uint64_t>(-total) if total < 0 else <uint64_t>total
    cdef bint neg = total < 0
    cdef int64_t secs, nanos
    buf_byte(b, 80)
    if kind == CK_YM:
        signed_part(b, neg, <int64_t>(mag // 12))
        buf_byte(b, 89)
        signed_part(b, neg, <int64_t>(mag % 12))
        buf_add(b, b"M0DT0H0M0S", 10)
        return
    secs = <int64_t>(mag // 1000000000)
    nanos = <int64_t>(mag % 1000000000)
    buf_add(b, b"0Y0M", 4)
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


cdef inline void opt_int(Buf* b, int64_t v) noexcept nogil:
    """A ["null", "int"] union holding v."""
    buf_byte(b, 2)
    zz(b, v)


cdef inline Cell* image_cells(RowImages rows, Py_ssize_t r, int side):
    return rows.cells + rows.rows[r].cell0 + side * rows.rows[r].nvis


cdef int _fallback(Buf* b, RowImages rows, Py_ssize_t r, int side, int v, ColumnCodes codes) except -1:
    buf_bytes(b, <bytes>codes.fallback(v, rows.value(r, side, v)))
    return 0


cdef int avro_value_record(Buf* b, RowImages rows, Py_ssize_t r, int side, ColumnCodes codes) except -1:
    cdef Buf t
    t.p = NULL
    t.n = t.cap = 0
    try:
        return _avro_value_record(b, &t, rows, r, side, codes)
    finally:
        free(t.p)


cdef int _avro_value_record(Buf* b, Buf* tp, RowImages rows, Py_ssize_t r, int side, ColumnCodes codes) except -1:
    """The envelope's ["null", Value] union of one image (avro_schema.avro_row)."""
    cdef Cell* cells
    cdef Cell* cell
    cdef int v, kind, nvis = rows.rows[r].nvis
    cdef int64_t iv
    cdef double dv
    cdef float fv
    if not (rows.rows[r].op == OP_UPDATE or (rows.rows[r].op == OP_INSERT) == (side == 1)):
        buf_byte(b, 0)
        return 0
    if nvis != codes.n:
        raise AssertionError("avro: column codes do not match the table view")
    cells = image_cells(rows, r, side)
    buf_byte(b, 2)
    for v in range(nvis):
        cell = cells + v
        kind = codes.kind[v]
        if cell.kind == CK_ABSENT or cell.kind == CK_NULL:
            buf_byte(b, 0)
            continue
        if kind == AVK_LONG and cell.kind == CK_NUMBER:
            if text_int(rows.arena.p + cell.off, cell.len, &iv):
                buf_byte(b, 2)
                zz(b, iv)
                continue
        elif kind == AVK_DEC and cell.kind == CK_NUMBER:
            buf_byte(b, 2)
            if av_decimal(b, rows.arena.p + cell.off, cell.len, codes.p1[v], codes.p2[v]):
                continue
            b.n -= 1
        elif kind == AVK_STR and (cell.kind == CK_TEXT or cell.kind == CK_NUMBER):
            buf_byte(b, 2)
            av_span(b, rows.arena.p + cell.off, cell.len)
            continue
        elif kind == AVK_STR and (cell.kind == CK_ZONED or cell.kind == CK_YM or cell.kind == CK_DS):
            # temporal.zoned_iso (local time, then the offset or Z) / temporal.iso_duration
            tp.n = 0
            if cell.kind != CK_ZONED:
                duration_iso(tp, cell.kind, cell.a)
            elif iso_text(tp, cell.a + cell.c, cell.b):
                if cell.c == 0:
                    buf_byte(tp, 90)
                else:
                    buf_add(tp, rows.arena.p + cell.off, cell.len)
            else:
                tp.n = -1
            if tp.n >= 0:
                buf_byte(b, 2)
                av_span(b, tp.p, tp.n)
                continue
        elif kind == AVK_BYTES and cell.kind == CK_BYTES:
            buf_byte(b, 2)
            av_span(b, rows.arena.p + cell.off, cell.len)
            continue
        elif kind == AVK_DOUBLE and cell.kind == CK_FLOAT:
            buf_byte(b, 2)
            buf_add(b, <const char*>&cell.a, 8)   # the double's bits, little-endian
            continue
        elif kind == AVK_FLOAT and cell.kind == CK_FLOAT:
            memcpy(&dv, &cell.a, 8)
            fv = <float>dv
            buf_byte(b, 2)
            buf_add(b, <const char*>&fv, 4)
            continue
        elif kind == AVK_TIME and cell.kind == CK_INSTANT:
            # Instant.units: epoch * units per second + nanos // unit (no int64 overflow)
            if -9000000000 <= cell.a <= 9000000000:
                buf_byte(b, 2)
                zz(b, cell.a * (1000000000 // codes.p1[v]) + cell.b // codes.p1[v])
                continue
        _fallback(b, rows, r, side, v, codes)
    return 0


cdef int dts_image(Buf* b, RowImages rows, Py_ssize_t r, int side, ColumnCodes codes) except -1:
    cdef Buf t
    t.p = NULL
    t.n = t.cap = 0
    try:
        return _dts_image(b, &t, rows, r, side, codes)
    finally:
        free(t.p)


cdef int _dts_image(Buf* b, Buf* tp, RowImages rows, Py_ssize_t r, int side, ColumnCodes codes) except -1:
    """beforeImages/afterImages (["null", "string", array]) of one image (DtsAvroFormat._image)."""
    cdef Cell* cells
    cdef Cell* cell
    cdef int v, kind, nvis = rows.rows[r].nvis, ndigits, places
    cdef int64_t unscaled
    cdef int64_t f[6]
    cdef bint neg
    cdef double dv
    cdef const char* p
    if not (rows.rows[r].op == OP_UPDATE or (rows.rows[r].op == OP_INSERT) == (side == 1)):
        buf_byte(b, 0)
        return 0
    if nvis != codes.n:
        raise AssertionError("dts-avro: column codes do not match the table view")
    cells = image_cells(rows, r, side)
    buf_byte(b, 4)
    if nvis > 0:
        zz(b, nvis)
    for v in range(nvis):
        cell = cells + v
        kind = codes.kind[v]
        p = rows.arena.p + cell.off
        if cell.kind == CK_ABSENT:
            buf_add(b, b"\x18\x02", 2)   # EmptyObject NONE
            continue
        if cell.kind == CK_NULL:
            buf_byte(b, 0)
            continue
        if kind == DTK_INTEGER and cell.kind == CK_NUMBER:
            buf_byte(b, 2)
            zz(b, codes.p1[v])
            av_span(b, p, cell.len)
            continue
        elif kind == DTK_DECIMAL and cell.kind == CK_NUMBER:
            if codes.p1[v] < 0 or codes.p2[v] < 0:
                if not text_digits(p, cell.len, &unscaled, &ndigits, &places, &neg):
                    _fallback(b, rows, r, side, v, codes)
                    continue
                buf_byte(b, 6)
                av_span(b, p, cell.len)
                zz(b, ndigits)
                zz(b, places)
            else:
                buf_byte(b, 6)
                av_span(b, p, cell.len)
                zz(b, codes.p1[v])
                zz(b, codes.p2[v])
            continue
        elif kind == DTK_FLOAT and cell.kind == CK_FLOAT:
            buf_byte(b, 8)
            buf_add(b, <const char*>&cell.a, 8)
            zz(b, codes.p1[v])
            buf_byte(b, 0)
            continue
        elif kind == DTK_CHAR and cell.kind == CK_TEXT:
            buf_add(b, b"\x04\x08utf8", 6)
            av_span(b, p, cell.len)
            continue
        elif kind == DTK_BINARY and cell.kind == CK_BYTES:
            buf_byte(b, 20)
            buf_bytes(b, <bytes>codes.extra[v])
            av_span(b, p, cell.len)
            continue
        elif kind == DTK_DATETIME and cell.kind == CK_INSTANT:
            if civil_fields(cell.a, f):
                buf_byte(b, 12)
                for ndigits in range(6):
                    opt_int(b, f[ndigits])
                opt_int(b, cell.b // 1000)
                continue
        elif kind == DTK_ZONED and cell.kind == CK_ZONED:
            if civil_fields(cell.a + cell.c, f):
                buf_byte(b, 14)             # TimestampWithTimeZone: the wall clock, the zone
                for ndigits in range(6):
                    opt_int(b, f[ndigits])
                opt_int(b, cell.b // 1000)
                av_span(b, p, cell.len)
                continue
        elif kind == DTK_TEXT and (cell.kind == CK_YM or cell.kind == CK_DS):
            tp.n = 0
            if cell.kind == CK_YM:
                ym_literal(tp, cell.a)
            else:
                rows._ds_literal(tp, cell.a)   # quoted: the quotes are cut below
                memmove(tp.p, tp.p + 1, tp.n - 2)
                tp.n -= 2
            buf_byte(b, 22)                 # TextObject{type, literal}
            buf_bytes(b, <bytes>codes.extra[v])
            av_span(b, tp.p, tp.n)
            continue
        elif kind == DTK_TS and cell.kind == CK_INSTANT:
            buf_byte(b, 10)
            zz(b, cell.a)
            zz(b, cell.b // 1000)
            continue
        _fallback(b, rows, r, side, v, codes)
    buf_byte(b, 0)                  # the array's end block
    return 0


def avro_envelope(RowImages rows, Py_ssize_t r, ColumnCodes codes, bytes head, bytes source_a,
                  int64_t ts_ms, bytes source_b, int64_t commit_scn, int64_t c_scn, int64_t c_idx,
                  bytes op, int64_t now_ms) -> bytes:
    """One ``avro`` data message of row ``r`` (AvroFormat.on_row's body, fastavro's bytes).

    ``head``: Confluent framing; ``source_a``: version, connector, name; ``source_b``: db,
    schema, table, txId (all pre-encoded Avro strings); ``op``: the encoded op string.
    """
    cdef Buf* b = &rows.out
    b.n = 0
    buf_bytes(b, head)
    avro_value_record(b, rows, r, 0, codes)
    avro_value_record(b, rows, r, 1, codes)
    buf_bytes(b, source_a)
    zz(b, ts_ms)
    buf_bytes(b, source_b)
    zz(b, <int64_t>rows.rows[r].scn)
    zz(b, commit_scn)
    zz(b, c_scn)
    zz(b, c_idx)
    buf_add(b, b"\x02\x24", 2)   # row_id: union index 1, 18 characters
    buf_rowid(b, rows.rows[r].data_obj, rows.rows[r].bdba, rows.rows[r].slot)
    buf_bytes(b, op)
    zz(b, now_ms)
    return PyBytes_FromStringAndSize(b.p, b.n)


def dts_record(RowImages rows, Py_ssize_t r, ColumnCodes codes, int64_t serial, int64_t time, bytes safe_txid,
               int operation, bytes object_name, int64_t now_ms, bytes tags_fields) -> bytes:
    """One DTS Avro Record of row ``r`` (DtsAvroFormat.on_row's body, fastavro's bytes).

    ``safe_txid``: safeSourcePosition and sourceTxid, ``object_name`` the objectName union,
    ``tags_fields`` the tags map and the fields union (all pre-encoded); ``operation``: the
    Operation enum index; ``now_ms``: the processing time.
    """
    cdef Buf* b = &rows.out
    cdef char tmp[24]
    cdef int k
    b.n = 0
    buf_byte(b, 2)                  # version 1
    zz(b, serial)
    zz(b, time)
    k = snprintf(tmp, 24, "%llu", <unsigned long long>rows.rows[r].scn)
    av_span(b, tmp, k)              # sourcePosition: the change SCN
    buf_bytes(b, safe_txid)
    buf_add(b, b"\x02\x00", 2)      # source: Oracle, version ""
    zz(b, operation)
    buf_bytes(b, object_name)
    buf_add(b, b"\x02\x02", 2)      # processTimestamps: [now_ms]
    zz(b, now_ms)
    buf_byte(b, 0)
    buf_bytes(b, tags_fields)
    dts_image(b, rows, r, 0, codes)
    dts_image(b, rows, r, 1, codes)
    zz(b, time * 1000)              # bornTimestamp
    return PyBytes_FromStringAndSize(b.p, b.n)


def present_json(RowImages rows, Py_ssize_t r, int side, list fragments) -> bytes:
    """``{`` + the fragments of the columns the image holds, comma-separated, + ``}``."""
    cdef Cell* cells = image_cells(rows, r, side)
    cdef Buf* b = &rows.out
    cdef int v
    cdef bint first = True
    b.n = 0
    buf_byte(b, 123)
    for v in range(rows.rows[r].nvis):
        if cells[v].kind == CK_ABSENT:
            continue
        if not first:
            buf_byte(b, 44)
        first = False
        buf_bytes(b, <bytes>fragments[v])
    buf_byte(b, 125)
    return PyBytes_FromStringAndSize(b.p, b.n)
