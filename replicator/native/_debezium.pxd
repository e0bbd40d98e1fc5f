# The C-level boundary of replicator.native._debezium: the value renderers _rows, _avro and
# _protobuf share with it (ISO times, ROWIDs, base64, JSON strings, IEEE floats).
#
# Exported as C function pointers (a call, as it was within one module); _debezium cimports
# _core and _dbztxn, and no module it cimports cimports it.

from libc.stdint cimport uint8_t, uint32_t, int64_t

from replicator.values._buf cimport Buf


cdef int json_escape(Buf* b, const uint8_t* p, Py_ssize_t n) except -1 nogil
cdef void buf_base64(Buf* b, const uint8_t* p, Py_ssize_t n, const char* alphabet) noexcept nogil
cdef void buf_rowid(Buf* b, uint32_t data_obj, uint32_t dba, int slot) noexcept nogil
cdef void fraction_trimmed(Buf* b, int64_t nanos) noexcept nogil
cdef bint iso_text(Buf* b, int64_t epoch, int64_t nanos) noexcept nogil
cdef bint ieee_value(const uint8_t* d, int n, bint single, double* out) noexcept nogil
cdef bint shortest_text(Buf* b, double v, bint single) noexcept nogil
