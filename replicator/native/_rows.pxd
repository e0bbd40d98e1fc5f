# The C-level boundary of replicator.native._rows: what _avro cimports.
#
# The typed row images' C layout (Cell, RowMeta, RowImages' fields: _avro reads a row's cells and
# arena directly). _rows cimports _core and _values; neither cimports it.

from libc.stdint cimport uint8_t, uint32_t, uint64_t, int32_t, int64_t

from replicator.values._buf cimport Buf


cdef struct Cell:
    uint8_t kind
    uint8_t flags
    int32_t len          # arena span length (NUMBER, TEXT, BYTES, ZONED zone)
    int64_t off          # arena span offset
    int64_t a
    int64_t b
    int64_t c


cdef struct RowMeta:
    int op
    int table            # index into RowImages.plans
    int nvis
    Py_ssize_t cell0     # before cells at cell0, after cells at cell0 + nvis
    uint64_t scn
    uint32_t time        # raw redo time
    uint32_t obj
    uint32_t data_obj
    uint32_t bdba
    int slot
    uint64_t offset



cdef class RowImages:
    """A committed transaction's rows, natively decoded once (see _rows.pyx)."""

    cdef RowMeta* rows
    cdef Py_ssize_t nrows
    cdef Cell* cells
    cdef Py_ssize_t ncells
    cdef Buf arena
    cdef Buf out
    cdef list plans
    cdef public list pyvals
    cdef object epoch_of_raw     # raw redo time -> epoch seconds
    cdef dict styles

    cdef int _style(self, object values) except -1
    cdef void _ds_literal(self, Buf* b, int64_t total) noexcept
