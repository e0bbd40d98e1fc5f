# The C-level boundary of replicator.values._values: the value decoders the core and the
# renderers call (C function pointers exported by _values, imported when a module that
# cimports them initialises).
#
# _values cimports only _buf.pxd, so every module can cimport it: the core (phase B and
# stage 2), _debezium, _rows, _avro and _protobuf. Each returns a failure (0/False, or number_text's 1
# and 2) for a value its python decoder must take. A change to this file rebuilds every module
# that cimports it (setup.py).

from libc.stdint cimport uint8_t, uint32_t, int64_t

from replicator.values._buf cimport Buf


cdef int buf_escape(Buf* b, const uint8_t* p, Py_ssize_t n) except -1 nogil
cdef int number_text(Buf* b, const uint8_t* d, int n) noexcept nogil
cdef bint valid_utf8(const uint8_t* p, int n, bint bmp_only) noexcept nogil
cdef bint epoch_of(const uint8_t* d, int n, bint check_fraction, int64_t tz_offset, int64_t* epoch_out,
                   int64_t* fraction_out) noexcept nogil
cdef bint numeric_time(Buf* b, int64_t epoch, int64_t fraction, int unit) noexcept nogil
cdef bint timestamp_text(Buf* b, const uint8_t* d, int n, int code, int64_t tz_offset) noexcept nogil
cdef bint timestamp_tz_text(Buf* b, const uint8_t* d, int n, int code) noexcept nogil
cdef bint interval_ym_text(Buf* b, const uint8_t* d, int n, int code) noexcept nogil
cdef bint interval_ds_text(Buf* b, const uint8_t* d, int n, int code) noexcept nogil
cdef bint float_text(Buf* b, const uint8_t* d, int n, bint dbl) noexcept nogil
cdef bint utf16_escaped(Buf* b, const uint8_t* p, int n) noexcept nogil


# The renderers' value texts (_debezium, _rows, _avro, _protobuf): orjson's string escaping,
# UTF-16 to UTF-8, base64, ROWID text, ISO times, IEEE floats and their shortest text.
cdef int json_escape(Buf* b, const uint8_t* p, Py_ssize_t n) except -1 nogil
cdef bint utf16_utf8(Buf* b, const uint8_t* p, int n) noexcept nogil
cdef void buf_base64(Buf* b, const uint8_t* p, Py_ssize_t n, const char* alphabet) noexcept nogil
cdef void buf_rowid(Buf* b, uint32_t data_obj, uint32_t dba, int slot) noexcept nogil
cdef void fraction_trimmed(Buf* b, int64_t nanos) noexcept nogil
cdef bint iso_text(Buf* b, int64_t epoch, int64_t nanos) noexcept nogil
cdef bint ieee_value(const uint8_t* d, int n, bint single, double* out) noexcept nogil
cdef bint shortest_text(Buf* b, double v, bint single) noexcept nogil
