# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The typed row images (RowImages): a transaction's rows as typed cells, rowvalues.row_values in C."""

# The typed row-image interface: a committed transaction's rows, decoded natively once into one
# compact structure (RowImages), handed to the formats other than OLR JSON and Debezium through
# their on_native_row (docs/native-engine.md "Typed row images"). It mirrors
# replicator.formats.rowvalues (TableView, row_values, the decoders' values) and the TextValues
# styles of replicator.formats.textvalues, so it lives beside them: a compiled module of
# replicator.formats, which may cimport only what lies below (values/_buf.pxd, values/_values.pxd).
# The engine's EventCommitter (replicator/native/_rows.pyx, above) makes a RowImages from phase A's
# rows through _rowvalues.pxd: it fills RowMeta and calls _decode_row per row; the cells are decoded
# here, with the decoders of _values (C function pointers) and the python decoder of a column for
# what they do not take.

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy, memmove, memcmp
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int32_t, int64_t

from replicator.values._buf cimport *
from replicator.values._values cimport (number_text, valid_utf8, epoch_of, buf_base64, buf_rowid, ieee_value, iso_text,
                                        json_escape, shortest_text, utf16_utf8)

from replicator.formats.rowvalues import Instant as _Instant
from replicator.formats.temporal import DaySecond as _DaySecond, YearMonth as _YearMonth, \
    ZonedInstant as _ZonedInstant

cdef char* B64_STD = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

# Column decode kinds (per visible column of a table).
DEF DC_PY = 0
DEF DC_NUMBER = 1
DEF DC_TEXT = 2      # param 0 AL32UTF8, 1 UTF8, 2 AL16UTF16
DEF DC_INSTANT = 3   # offset: DBTIMEZONE seconds for WITH LOCAL TIME ZONE
DEF DC_ZONED = 4
DEF DC_YM = 5
DEF DC_DS = 6
DEF DC_BYTES = 7
DEF DC_FLOAT = 8     # param 1 BINARY_FLOAT, 0 BINARY_DOUBLE


cdef class RowView:
    """A table's visible columns (rowvalues.TableView) and their decode kinds (fields: _rowvalues.pxd)."""

    def __dealloc__(self):
        free(self.vcol)
        free(self.vkind)
        free(self.vparam)
        free(self.voff)
        free(self.vint)
        free(self.vltz)
        free(self.vkey)


cdef RowView row_view(object fmt, object table):
    """The format's view of ``table`` with each visible column's decode kind; None when the
    table's rows must go to the python format (its view raises, duplicate names, LOB columns)."""
    import orjson
    from replicator.formats.typemap import INTEGER_FAMILIES, LOB_FAMILIES
    from replicator.values.charset import CharsetError, column_charset_name

    cdef RowView plan
    cdef int v, n, kind, param
    cdef int64_t offset
    try:
        view = fmt.table_view(table)
    except Exception:
        return None  # the python engine raises it where it should
    columns = view.columns
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        return None
    for c in columns:
        if c.otype.family in LOB_FAMILIES:
            return None  # unavailable LOB values: python
    n = len(columns)
    plan = RowView()
    plan.table = table
    plan.view = view
    plan.nvis = n
    plan.vcol = <int*> malloc((n + 1) * sizeof(int))
    plan.vkind = <int*> malloc((n + 1) * sizeof(int))
    plan.vparam = <int*> malloc((n + 1) * sizeof(int))
    plan.voff = <int64_t*> malloc((n + 1) * sizeof(int64_t))
    plan.vint = <uint8_t*> malloc(n + 1)
    plan.vltz = <uint8_t*> malloc(n + 1)
    plan.vkey = <uint8_t*> malloc(n + 1)
    plan.nkeys = 0
    plan.vdecode = []
    plan.vname = []
    plan.vcolumns = list(columns)
    opts = fmt.options
    for v in range(n):
        c = columns[v]
        plan.vcol[v] = c.index
        plan.vdecode.append(c.decode)
        plan.vname.append(orjson.dumps(c.name) + b":")
        family = c.otype.family
        plan.vint[v] = family in INTEGER_FAMILIES
        plan.vltz[v] = family == "timestamp_ltz"
        plan.vkey[v] = 1 if c.key else 0
        plan.nkeys += plan.vkey[v]
        kind, param, offset = DC_PY, 0, 0
        if family in INTEGER_FAMILIES or family in ("decimal", "number", "float"):
            kind = DC_NUMBER
        elif family in ("char", "nchar", "varchar", "nvarchar"):
            try:
                cs = column_charset_name(c.column.charset_form, c.column.charset_id, False,
                                         table.charset, table.ncharset)
            except CharsetError:
                cs = ""
            if cs in ("AL32UTF8", "UTF8", "AL16UTF16"):
                kind, param = DC_TEXT, (1 if cs == "UTF8" else 2 if cs == "AL16UTF16" else 0)
        elif family in ("date", "timestamp"):
            kind = DC_INSTANT
        elif family == "timestamp_ltz":
            kind, offset = DC_INSTANT, opts.db_timezone
        elif family == "timestamp_tz":
            kind = DC_ZONED
        elif family == "interval_ym":
            kind = DC_YM
        elif family == "interval_ds":
            kind = DC_DS
        elif family in ("raw", "unsupported"):
            kind = DC_BYTES
        elif family in ("binary_float", "binary_double"):
            kind, param = DC_FLOAT, (1 if family == "binary_float" else 0)
        plan.vkind[v] = kind
        plan.vparam[v] = param
        plan.voff[v] = offset
    return plan


cdef bint decode_cell(Cell* cell, Buf* arena, int kind, int param, int64_t offset, const uint8_t* p,
                      int n) noexcept nogil:
    """A non-NULL value into a typed cell, as rowvalues' decoder would; False: python decodes it."""
    cdef int64_t years, months, days, nanos, hours, minutes, seconds, epoch, fraction
    cdef bint neg, mneg, nneg, hneg, sneg, negative
    cdef int b11, b12, h, m
    cdef uint8_t tmp[11]
    cdef double dvalue
    cdef Py_ssize_t mark = arena.n
    cell.off = arena.n
    if kind == DC_NUMBER:
        if number_text(arena, p, n) != 0:
            arena.n = mark
            return False
        cell.kind = CK_NUMBER
    elif kind == DC_TEXT:
        if param == 2:
            if not utf16_utf8(arena, p, n):
                return False
        elif is_ascii(p, n) or valid_utf8(p, n, param == 1):
            buf_add(arena, <const char*>p, n)
        else:
            return False
        cell.kind = CK_TEXT
    elif kind == DC_BYTES:
        buf_add(arena, <const char*>p, n)
        cell.kind = CK_BYTES
    elif kind == DC_FLOAT:
        if not ieee_value(p, n, param == 1, &dvalue):
            return False
        memcpy(&cell.a, &dvalue, 8)
        cell.b = param
        cell.kind = CK_FLOAT
    elif kind == DC_INSTANT:
        if (n != 7 and n != 11) or not epoch_of(p, n, True, offset, &epoch, &fraction):
            return False
        cell.kind = CK_INSTANT
        cell.a = epoch
        cell.b = fraction
    elif kind == DC_ZONED:
        if n != 9 and n != 13:
            return False
        b11 = p[11] if n == 13 else p[7]
        b12 = p[12] if n == 13 else p[8]
        if not (5 <= b11 <= 36):
            return False  # a region: zoneinfo decides its offset
        negative = b11 < 20 or (b11 == 20 and b12 < 60)
        h = b11 - 20 if b11 >= 20 else 20 - b11
        m = b12 - 60 if b12 >= 60 else 60 - b12
        if m > 59:
            return False
        memcpy(tmp, p, 7)
        if n == 13:
            memcpy(tmp + 7, p + 7, 4)
        if not epoch_of(tmp, 11 if n == 13 else 7, False, 0, &epoch, &fraction):
            return False
        cell.kind = CK_ZONED
        cell.a = epoch
        cell.b = fraction
        cell.c = -(h * 3600 + m * 60) if negative else h * 3600 + m * 60
        buf_byte(arena, 45 if negative else 43)
        two_digits(arena, h)
        buf_byte(arena, 58)
        two_digits(arena, m)
    elif kind == DC_YM:
        if n != 5 or not (49 <= p[4] <= 71):
            return False
        biased(rd32(p, True), &years, &neg)
        if years > 999999999:
            return False
        offset60(p[4], &months, &mneg)
        cell.kind = CK_YM
        cell.a = -(years * 12 + months) if (neg or mneg) else years * 12 + months
    elif kind == DC_DS:
        if n != 11 or not (37 <= p[4] <= 83) or not (1 <= p[5] <= 119) or not (1 <= p[6] <= 119):
            return False
        biased(rd32(p, True), &days, &neg)
        biased(rd32(p + 7, True), &nanos, &nneg)
        if days > 100000 or nanos > 999999999:
            return False
        offset60(p[4], &hours, &hneg)
        offset60(p[5], &minutes, &mneg)
        offset60(p[6], &seconds, &sneg)
        cell.kind = CK_DS
        cell.a = (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000000000 + nanos
        if neg or nneg or hneg or mneg or sneg:
            cell.a = -cell.a
    else:
        return False
    cell.len = <int32_t>(arena.n - mark)
    return True


cdef bint calendar_text_buf(Buf* b, int64_t epoch, int64_t nanos) noexcept nogil:
    """temporal.calendar_text(Instant(epoch, nanos)): space separator, fraction trimmed."""
    cdef Py_ssize_t mark = b.n
    if not iso_text(b, epoch, nanos):
        b.n = mark
        return False
    b.p[mark + 10] = 32  # iso_text writes "YYYY-MM-DDTHH…"
    return True


cdef inline void pad(Buf* b, int64_t v, int width) noexcept nogil:
    """f"{v:0{width}d}" for 0 <= v."""
    cdef int k = digits(v)
    while k < width:
        buf_byte(b, 48)
        k += 1
    buf_int(b, v)


# Text styles (TextValues): bit 0 quote_all, bit 1 quote_decimals, bits 2-3 booleans, bit 4 hex.
DEF ST_QUOTE_ALL = 1
DEF ST_QUOTE_DECIMALS = 2
DEF ST_HEX = 16


cdef class RowImages:
    """A committed transaction's rows, natively decoded once (the typed row-image interface).

    Rows (``count``) carry op, table, SCN, time and ROWID parts; each row has a before and an
    after image of one :class:`Cell` per visible column of its table (the columns of
    :class:`replicator.formats.rowvalues.TableView`, in that order), with exactly the
    semantics of :func:`replicator.formats.rowvalues.row_values`: complete INSERT/DELETE
    images, an UPDATE's after image is the before image overlaid with the new values, and
    ``modified`` marks the after cells an UPDATE changed. Numbers, text, bytes and zone texts
    live in one arena; values the native decoders do not take are decoded by the column's
    python decoder once (``CK_PY``, kept in ``pyvals``). Formats read it through
    :meth:`json` (a JSON object of an image, rendered in C for a
    :class:`~replicator.formats.textvalues.TextValues` style, optionally only the modified
    columns) and the per-row accessors; :meth:`value` gives one python value when a format
    needs it.
    """

    # Its fields and cdef methods are declared in _rowvalues.pxd (native._rows fills the row
    # metadata, _avro reads the cells).

    def __dealloc__(self):
        free(self.rows)
        free(self.cells)
        free(self.arena.p)
        free(self.out.p)

    @property
    def count(self) -> int:
        """Number of rows."""
        return self.nrows

    def op(self, Py_ssize_t r) -> str:
        """``c``, ``u`` or ``d``."""
        cdef int op = self.rows[r].op
        return "c" if op == OP_INSERT else "d" if op == OP_DELETE else "u"

    def view(self, Py_ssize_t r):
        """The row's TableView."""
        return (<RowView>self.views[self.rows[r].table]).view

    def table(self, Py_ssize_t r):
        """The row's dictionary table."""
        return (<RowView>self.views[self.rows[r].table]).table

    def scn(self, Py_ssize_t r) -> int:
        """The SCN of the row's change."""
        return self.rows[r].scn

    def time(self, Py_ssize_t r) -> int:
        """The change time, epoch seconds."""
        return self.epoch_of_raw(self.rows[r].time)

    def rowid(self, Py_ssize_t r) -> str:
        """The ROWID text (values.rowid.rowid_text)."""
        cdef Buf b
        b.p = NULL
        b.n = b.cap = 0
        try:
            buf_rowid(&b, self.rows[r].data_obj, self.rows[r].bdba, self.rows[r].slot)
            return PyBytes_FromStringAndSize(b.p, b.n).decode("ascii")
        finally:
            free(b.p)

    def has_image(self, Py_ssize_t r, int side) -> bool:
        """Whether the row has a before (side 0) or after (side 1) image (RowValues' None)."""
        cdef int op = self.rows[r].op
        return op == OP_UPDATE or (op == OP_INSERT) == (side == 1)

    def value(self, Py_ssize_t r, int side, int v):
        """The python value (rowvalues.Value) of visible column ``v``; raises KeyError when absent."""
        cdef Cell* cell = self.cells + self.rows[r].cell0 + side * self.rows[r].nvis + v
        cdef bytes span
        cdef double dvalue
        if cell.kind == CK_ABSENT:
            raise KeyError(v)
        if cell.kind == CK_NULL:
            return None
        if cell.kind == CK_PY:
            return self.pyvals[cell.a]
        if cell.kind == CK_INSTANT:
            return _Instant(cell.a, cell.b)
        if cell.kind == CK_YM:
            return _YearMonth(cell.a)
        if cell.kind == CK_DS:
            return _DaySecond(cell.a)
        if cell.kind == CK_FLOAT:
            memcpy(&dvalue, &cell.a, 8)
            return dvalue
        span = PyBytes_FromStringAndSize(self.arena.p + cell.off, cell.len)
        if cell.kind == CK_NUMBER:
            from decimal import Decimal
            return Decimal(span.decode("ascii"))
        if cell.kind == CK_TEXT:
            return span.decode("utf-8")
        if cell.kind == CK_ZONED:
            return _ZonedInstant(cell.a, cell.b, span.decode("ascii"))
        return span

    def get(self, Py_ssize_t r, int side, int v, default=None):
        """:meth:`value`, or ``default`` when the image does not hold the column (dict.get)."""
        if self.cells[self.rows[r].cell0 + side * self.rows[r].nvis + v].kind == CK_ABSENT:
            return default
        return self.value(r, side, v)

    def modified(self, Py_ssize_t r, int v) -> bool:
        """Whether an UPDATE set visible column ``v`` to a different value (RowValues.modified)."""
        return (self.rows[r].op != OP_DELETE and
                (self.rows[r].op == OP_INSERT and self.cells[self.rows[r].cell0 + self.rows[r].nvis + v].kind != CK_ABSENT
                 or (self.cells[self.rows[r].cell0 + self.rows[r].nvis + v].flags & CELL_MODIFIED) != 0))

    def masks(self, Py_ssize_t r) -> tuple[str, str]:
        """Qlik's (changeMask, columnMask) of the row (replicator.formats.masks; no LOB columns here)."""
        cdef RowMeta* row = self.rows + r
        cdef RowView plan = self.views[row.table]
        cdef Cell* after = self.cells + row.cell0 + row.nvis
        cdef Cell* image = self.cells + row.cell0 + (0 if row.op == OP_DELETE else row.nvis)
        cdef int v, nbytes = (row.nvis + 7) // 8 if row.nvis > 0 else 1
        cdef bint keys_only = row.op == OP_DELETE and plan.nkeys > 0
        cdef bint changed, present
        change = bytearray(nbytes)
        column = bytearray(nbytes)
        for v in range(row.nvis):
            present = image[v].kind != CK_ABSENT
            if row.op == OP_UPDATE:
                changed = (after[v].flags & CELL_MODIFIED) != 0
            elif keys_only:
                changed = plan.vkey[v]
            else:
                changed = present
            if present:
                column[v >> 3] |= 1 << (v & 7)
            if changed:
                change[v >> 3] |= 1 << (v & 7)
        return change.hex().upper(), column.hex().upper()

    cdef int _style(self, object values) except -1:
        style = self.styles.get(id(values))
        if style is None:
            style = ((ST_QUOTE_ALL if values.quote_all else 0) | (ST_QUOTE_DECIMALS if values.quote_decimals else 0)
                     | (ST_HEX if values.binary == "hex" else 0))
            self.styles[id(values)] = style
        return style

    def json(self, Py_ssize_t r, int side, object values, bint modified_only=False) -> bytes:
        """TextValues.row of one image as JSON bytes (``{}`` when the row has no such image).

        ``values`` is the format's :class:`~replicator.formats.textvalues.TextValues`;
        ``modified_only`` keeps the columns an UPDATE changed (RowValues.modified).
        """
        cdef RowMeta* row = self.rows + r
        cdef RowView plan = self.views[row.table]
        cdef Cell* cells = self.cells + row.cell0 + side * row.nvis
        cdef Cell* cell
        cdef Buf* b = &self.out
        cdef int v, style = self._style(values)
        cdef bint first = True, quoted
        cdef double dvalue
        cdef Py_ssize_t mark
        b.n = 0
        buf_byte(b, 123)
        for v in range(row.nvis):
            cell = cells + v
            if cell.kind == CK_ABSENT:
                continue
            if modified_only and not (self.cells[row.cell0 + row.nvis + v].flags & CELL_MODIFIED):
                continue
            if not first:
                buf_byte(b, 44)
            first = False
            buf_bytes(b, <bytes>plan.vname[v])
            mark = b.n
            if cell.kind == CK_NULL:
                buf_add(b, b"null", 4)
                continue
            if cell.kind == CK_NUMBER:
                quoted = (style & ST_QUOTE_ALL) or ((style & ST_QUOTE_DECIMALS) and not plan.vint[v])
                if quoted:
                    buf_byte(b, 34)
                buf_add(b, self.arena.p + cell.off, cell.len)
                if quoted:
                    buf_byte(b, 34)
                continue
            if cell.kind == CK_TEXT:
                buf_byte(b, 34)
                json_escape(b, <const uint8_t*>self.arena.p + cell.off, cell.len)
                buf_byte(b, 34)
                continue
            if cell.kind == CK_BYTES:
                buf_byte(b, 34)
                if style & ST_HEX:
                    buf_hex(b, <const uint8_t*>self.arena.p + cell.off, cell.len)
                else:
                    buf_base64(b, <const uint8_t*>self.arena.p + cell.off, cell.len, B64_STD)
                buf_byte(b, 34)
                continue
            if cell.kind == CK_INSTANT:
                buf_byte(b, 34)
                if calendar_text_buf(b, cell.a, cell.b):
                    if plan.vltz[v]:
                        buf_add(b, b" UTC", 4)
                    buf_byte(b, 34)
                    continue
            elif cell.kind == CK_ZONED:
                buf_byte(b, 34)
                if calendar_text_buf(b, cell.a + cell.c, cell.b):
                    buf_byte(b, 32)
                    buf_add(b, self.arena.p + cell.off, cell.len)
                    buf_byte(b, 34)
                    continue
            elif cell.kind == CK_YM:
                buf_add(b, b"\"INTERVAL '", 11)
                if cell.a < 0:
                    buf_byte(b, 45)
                buf_int(b, (-cell.a if cell.a < 0 else cell.a) // 12)
                buf_byte(b, 45)
                buf_int(b, (-cell.a if cell.a < 0 else cell.a) % 12)
                buf_add(b, b"' YEAR TO MONTH\"", 16)
                continue
            elif cell.kind == CK_DS:
                self._ds_literal(b, cell.a)
                continue
            elif cell.kind == CK_FLOAT:
                memcpy(&dvalue, &cell.a, 8)
                if style & ST_QUOTE_ALL:
                    buf_byte(b, 34)
                if shortest_text(b, dvalue, cell.b == 1):
                    if style & ST_QUOTE_ALL:
                        buf_byte(b, 34)
                    continue
            # CK_PY, or a calendar value outside 1..9999: the python renderer.
            b.n = mark
            buf_bytes(b, _dumps(values.render(plan.vcolumns[v], self.value(r, side, v))))
        buf_byte(b, 125)
        return PyBytes_FromStringAndSize(b.p, b.n)

    cdef void _ds_literal(self, Buf* b, int64_t total) noexcept:
        """temporal.interval_literal of a DaySecond."""
        cdef int64_t secs, nanos
        cdef uint64_t mag = <uint64_t>(-total) if total < 0 else <uint64_t>total
        secs = <int64_t>(mag // 1000000000)
        nanos = <int64_t>(mag % 1000000000)
        buf_add(b, b"\"INTERVAL '", 11)
        if total < 0:
            buf_byte(b, 45)
        buf_int(b, secs // 86400)
        buf_byte(b, 32)
        two_digits(b, <int>((secs // 3600) % 24))
        buf_byte(b, 58)
        two_digits(b, <int>((secs // 60) % 60))
        buf_byte(b, 58)
        two_digits(b, <int>(secs % 60))
        buf_byte(b, 46)
        pad(b, nanos, 9)
        buf_add(b, b"' DAY TO SECOND\"", 16)

    cdef int _alloc(self, Py_ssize_t nrows, Py_ssize_t ncells) except -1:
        """Room for ``nrows`` rows and ``ncells`` cells (all CK_ABSENT), once per RowImages."""
        self.pyvals = []
        self.styles = {}
        self.nrows = nrows
        self.rows = <RowMeta*> malloc((nrows + 1) * sizeof(RowMeta))
        self.cells = <Cell*> calloc(ncells + 1, sizeof(Cell))
        if self.rows == NULL or self.cells == NULL:
            raise MemoryError()
        self.ncells = ncells
        return 0

    cdef int _decode_row(self, Py_ssize_t r, const Val* img, int ncols) except -1:
        """Row ``r``'s images (its RowMeta filled) from phase A's ``img``: ``ncols`` values of the
        before image, then ``ncols`` of the after image (rowvalues.row_values' semantics, python
        decode order: before side first, then after)."""
        cdef RowMeta* meta = self.rows + r
        cdef RowView plan = self.views[meta.table]
        cdef int v, side, op = meta.op, nvis = meta.nvis
        cdef const Val* val
        cdef const Val* side_img
        cdef Cell* cells = self.cells + meta.cell0
        cdef Cell* cell
        cdef bint complete
        for side in range(2):
            if (op == OP_INSERT and side == 0) or (op == OP_DELETE and side == 1):
                continue  # CK_ABSENT (calloc)
            complete = op != OP_UPDATE
            side_img = img + side * ncols
            for v in range(nvis):
                val = side_img + plan.vcol[v]
                cell = cells + side * nvis + v
                if val.n == ABSENT:
                    if complete:
                        cell.kind = CK_NULL
                    continue
                if val.n <= 0:
                    cell.kind = CK_NULL
                elif not decode_cell(cell, &self.arena, plan.vkind[v], plan.vparam[v], plan.voff[v], val.p, val.n):
                    cell.kind = CK_PY
                    cell.a = len(self.pyvals)
                    self.pyvals.append(plan.vdecode[v](PyBytes_FromStringAndSize(<const char*>val.p, val.n)))
                    if self.pyvals[cell.a] is None:
                        cell.kind = CK_NULL
        if op == OP_UPDATE:
            for v in range(nvis):
                val = img + ncols + plan.vcol[v]   # the new value
                cell = cells + nvis + v
                if cell.kind == CK_ABSENT:
                    cell[0] = cells[v]   # after = before overlaid with the new values
                    continue
                # modified: set and different from the raw before bytes (NULL as empty)
                if (img[plan.vcol[v]].n == ABSENT or
                        (img[plan.vcol[v]].n if img[plan.vcol[v]].n > 0 else 0) != (val.n if val.n > 0 else 0) or
                        (val.n > 0 and memcmp(img[plan.vcol[v]].p, val.p, val.n) != 0)):
                    cell.flags |= CELL_MODIFIED
        return 0


def _dumps(value):
    import orjson
    return orjson.dumps(value)
