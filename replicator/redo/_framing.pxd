# The C-level boundary of replicator.redo._framing: the block checks and framing errors the
# record loop uses (_dispatch: RecordLoop.feed and _scan).
#
# _framing cimports only values/_buf.pxd (no module), so any module can cimport it.

from libc.stdint cimport uint8_t, uint32_t, int64_t


cdef int first_bad_block(const uint8_t* buf, Py_ssize_t n, int64_t first, int bs, uint32_t seq, bint big,
                         bint verify, int* status) noexcept nogil
cdef int raise_block(int status, str path, int block_size, long long block) except -1
cdef object framing_error(str text)
