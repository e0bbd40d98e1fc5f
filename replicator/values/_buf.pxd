# The byte buffer and the byte and value helpers of the compiled modules (a .pxd without a module).
#
# Every compiled module that renders into a buffer or reads redo bytes cimports this file
# (``from replicator.values._buf cimport ...``): ``Buf`` is a plain C layout and the helpers are
# ``cdef inline``, so each module compiles its own copy and nothing here is a call across modules
# or an import at run time. It lives in replicator.values, the bottom layer, so that the modules
# beside their python twins in the lower layers (values._values, redo._framing) can cimport it;
# phase A's structs are native/_structs.pxd. Put here only what more than one module needs and
# what needs no module state; a change rebuilds every module that cimports it (setup.py MODULES).

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdlib cimport realloc
from libc.string cimport memcpy
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t


# ----------------------------------------------------------------------------- row images
# A column value in an image and a row's operation: phase A writes them (native/_structs.pxd's
# Row and Work hold Val arrays), the renderers beside their formats read them
# (formats/_rowvalues.pxd), so they are declared here, below both. Enums, not DEFs: a DEF cannot
# be cimported.
cdef struct Val:
    const uint8_t* p
    int n                   # >= 0 length, NULLV or ABSENT


cdef enum:
    ABSENT = -2             # Val.n: the image does not hold the column
    NULLV = -1              # Val.n: NULL


cdef enum:
    OP_INSERT = 1           # Row.op, RowMeta.op
    OP_UPDATE = 2
    OP_DELETE = 3


# ----------------------------------------------------------------------------- growable buffers
cdef struct Buf:
    char* p
    Py_ssize_t n
    Py_ssize_t cap


cdef inline int buf_reserve(Buf* b, Py_ssize_t extra) except -1 nogil:
    cdef Py_ssize_t need = b.n + extra
    cdef Py_ssize_t cap
    cdef char* p
    if need <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap else 4096
    while cap < need:
        cap *= 2
    p = <char*> realloc(b.p, cap)
    if p == NULL:
        with gil:
            raise MemoryError()
    b.p = p
    b.cap = cap
    return 0


cdef inline int buf_add(Buf* b, const char* s, Py_ssize_t n) except -1 nogil:
    if b.n + n > b.cap:
        buf_reserve(b, n)
    memcpy(b.p + b.n, s, n)
    b.n += n
    return 0


cdef inline int buf_byte(Buf* b, char c) except -1 nogil:
    if b.n + 1 > b.cap:
        buf_reserve(b, 1)
    b.p[b.n] = c
    b.n += 1
    return 0


cdef inline int buf_bytes(Buf* b, bytes s) except -1:
    return buf_add(b, PyBytes_AS_STRING(s), PyBytes_GET_SIZE(s))


cdef inline int buf_int(Buf* b, int64_t v) except -1 nogil:
    cdef char tmp[24]
    cdef int i = 24
    cdef uint64_t u
    cdef bint neg = v < 0
    u = <uint64_t>(-v) if neg else <uint64_t>v
    if u == 0:
        i -= 1
        tmp[i] = 48
    while u:
        i -= 1
        tmp[i] = <char>(48 + u % 10)
        u //= 10
    if neg:
        i -= 1
        tmp[i] = 45
    return buf_add(b, tmp + i, 24 - i)


cdef inline int buf_hex(Buf* b, const uint8_t* p, Py_ssize_t n) except -1 nogil:
    cdef Py_ssize_t i
    cdef const char* hexd = "0123456789abcdef"
    buf_reserve(b, 2 * n)
    for i in range(n):
        b.p[b.n] = hexd[p[i] >> 4]
        b.p[b.n + 1] = hexd[p[i] & 15]
        b.n += 2
    return 0


# ----------------------------------------------------------------------------- byte readers
cdef inline uint32_t rd16(const uint8_t* p, bint big) noexcept nogil:
    if big:
        return (<uint32_t>p[0] << 8) | p[1]
    return p[0] | (<uint32_t>p[1] << 8)


cdef inline uint32_t rd32(const uint8_t* p, bint big) noexcept nogil:
    if big:
        return (<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16) | (<uint32_t>p[2] << 8) | p[3]
    return p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline uint64_t rd64le(const uint8_t* p) noexcept nogil:
    return <uint64_t>rd32(p, 0) | (<uint64_t>rd32(p + 4, 0) << 32)


# ----------------------------------------------------------------------------- inline value helpers
cdef inline void two_digits(Buf* b, int v) noexcept nogil:
    """f"{v:02d}" for 0 <= v (more digits when v >= 100)."""
    if v >= 100:
        buf_int(b, v)
        return
    buf_byte(b, <char>(48 + v // 10))
    buf_byte(b, <char>(48 + v % 10))


cdef inline void biased(uint32_t value, int64_t* magnitude, bint* negative) noexcept nogil:
    cdef int64_t bias = (<int64_t>1) << 31
    if value & (<uint32_t>1 << 31):
        magnitude[0] = <int64_t>value - bias
        negative[0] = False
    else:
        magnitude[0] = bias - <int64_t>value
        negative[0] = True


cdef inline void offset60(int byte, int64_t* magnitude, bint* negative) noexcept nogil:
    if byte >= 60:
        magnitude[0] = byte - 60
        negative[0] = False
    else:
        magnitude[0] = 60 - byte
        negative[0] = True


cdef inline int digits(int64_t v) noexcept nogil:
    cdef int n = 1
    while v >= 10:
        v //= 10
        n += 1
    return n


cdef inline int64_t utf16_next(const uint8_t* p, int n, int* i) noexcept nogil:
    """The next code point of strict UTF-16BE (AL16UTF16) at ``p[i[0]]``, advancing ``i[0]``;
    -1 for a lone or reversed surrogate (python's decoder refuses it: the caller falls back).
    The caller checked that ``n`` is even and ``i[0] < n``."""
    cdef uint32_t u = (<uint32_t>p[i[0]] << 8) | p[i[0] + 1]
    cdef uint32_t lo
    i[0] += 2
    if 0xD800 <= u <= 0xDBFF:
        if i[0] >= n:
            return -1
        lo = (<uint32_t>p[i[0]] << 8) | p[i[0] + 1]
        if not (0xDC00 <= lo <= 0xDFFF):
            return -1
        i[0] += 2
        return 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)
    if 0xDC00 <= u <= 0xDFFF:
        return -1
    return u


cdef inline void buf_utf8(Buf* b, uint32_t u) noexcept nogil:
    """One code point as UTF-8 (the caller escapes ASCII itself where JSON needs it)."""
    if u < 0x80:
        buf_byte(b, <char>u)
    elif u < 0x800:
        buf_byte(b, <char>(0xC0 | (u >> 6)))
        buf_byte(b, <char>(0x80 | (u & 0x3F)))
    elif u < 0x10000:
        buf_byte(b, <char>(0xE0 | (u >> 12)))
        buf_byte(b, <char>(0x80 | ((u >> 6) & 0x3F)))
        buf_byte(b, <char>(0x80 | (u & 0x3F)))
    else:
        buf_byte(b, <char>(0xF0 | (u >> 18)))
        buf_byte(b, <char>(0x80 | ((u >> 12) & 0x3F)))
        buf_byte(b, <char>(0x80 | ((u >> 6) & 0x3F)))
        buf_byte(b, <char>(0x80 | (u & 0x3F)))


cdef inline bint is_ascii(const uint8_t* p, int n) noexcept nogil:
    cdef int i = 0
    cdef uint64_t word
    while i + 8 <= n:  # eight bytes at a time
        memcpy(&word, p + i, 8)
        if word & <uint64_t>0x8080808080808080:
            return False
        i += 8
    while i < n:
        if p[i] & 0x80:
            return False
        i += 1
    return True


cdef inline void signed_part(Buf* b, bint neg, int64_t whole) noexcept nogil:
    """temporal._signed without nanoseconds: the interval's sign only on a non-zero part."""
    if neg and whole:
        buf_byte(b, 45)
    buf_int(b, whole)
