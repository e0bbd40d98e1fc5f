# The C-level boundary of replicator.formats._rowvalues (the typed row images): what the engine's
# EventCommitter (native/_rows.pyx) and the Avro encoders (formats/_avro.pyx) cimport.
#
# The cells' kinds and layout (Cell, RowMeta), a table's visible columns and their decode kinds
# (RowView, made by row_view) and RowImages' fields: _avro reads a row's cells and arena directly,
# native._rows fills the row metadata from phase A's rows and has each row's images decoded by
# RowImages._decode_row (one vtable call per row; the cells are decoded inside this module). It
# cimports only values/_buf.pxd and values/_values.pxd, so the engine above may cimport it and
# nothing it needs initialises after it.

from libc.stdint cimport uint8_t, uint32_t, uint64_t, int32_t, int64_t

from replicator.values._buf cimport Buf, Val


# Cell kinds: what a decoded value is (the typed form of rowvalues.Value). Enums, not DEFs: the
# modules that read cells cimport them.
cdef enum:
    CK_ABSENT = 0    # the image does not hold the column
    CK_NULL = 1
    CK_NUMBER = 2    # exact plain decimal text in the arena (Decimal)
    CK_TEXT = 3      # UTF-8 text in the arena (str)
    CK_BYTES = 4     # raw bytes in the arena (bytes)
    CK_INSTANT = 5   # a = epoch seconds, b = nanoseconds (Instant)
    CK_ZONED = 6     # a = UTC epoch, b = nanoseconds, c = zone offset seconds, zone text in the arena
    CK_YM = 7        # a = signed total months (YearMonth)
    CK_DS = 8        # a = signed total nanoseconds (DaySecond)
    CK_PY = 9        # a = index into RowImages.pyvals: the python decoder's value
    CK_FLOAT = 10    # a = the IEEE bits of the double, b = 1 for BINARY_FLOAT (float)


cdef enum:
    CELL_MODIFIED = 1   # Cell.flags: an UPDATE's after cell the statement set to a different value


cdef struct Cell:
    uint8_t kind
    uint8_t flags
    int32_t len          # arena span length (NUMBER, TEXT, BYTES, ZONED zone)
    int64_t off          # arena span offset
    int64_t a
    int64_t b
    int64_t c


cdef struct RowMeta:
    int op               # OP_* (values/_buf.pxd)
    int table            # index into RowImages.views
    int nvis
    Py_ssize_t cell0     # before cells at cell0, after cells at cell0 + nvis
    uint64_t scn
    uint32_t time        # raw redo time
    uint32_t obj
    uint32_t data_obj
    uint32_t bdba
    int slot
    uint64_t offset


cdef class RowView:
    """A table's visible columns (rowvalues.TableView) and how each is decoded into a cell."""

    cdef public object table
    cdef public object view
    cdef int nvis
    cdef int* vcol            # the column's index in the table (and in phase A's images)
    cdef int* vkind
    cdef int* vparam
    cdef int64_t* voff
    cdef uint8_t* vint        # integer family (TextValues: a NUMBER never quoted for quote_decimals)
    cdef uint8_t* vltz        # timestamp_ltz family (" UTC" suffix in text)
    cdef list vdecode         # the python decoder per visible column
    cdef list vname           # b'"NAME":'
    cdef list vcolumns        # the ColumnView per visible column
    cdef uint8_t* vkey        # key column
    cdef int nkeys


cdef RowView row_view(object fmt, object table)


cdef class RowImages:
    """A committed transaction's rows, natively decoded once (see _rowvalues.pyx)."""

    cdef RowMeta* rows
    cdef Py_ssize_t nrows
    cdef Cell* cells
    cdef Py_ssize_t ncells
    cdef Buf arena
    cdef Buf out
    cdef list views              # RowView per table slot (RowMeta.table)
    cdef public list pyvals
    cdef object epoch_of_raw     # raw redo time -> epoch seconds
    cdef dict styles

    cdef int _alloc(self, Py_ssize_t nrows, Py_ssize_t ncells) except -1
    cdef int _decode_row(self, Py_ssize_t r, const Val* img, int ncols) except -1
    cdef int _style(self, object values) except -1
    cdef void _ds_literal(self, Buf* b, int64_t total) noexcept
