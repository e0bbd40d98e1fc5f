# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The native value decoders: one column value's stored bytes -> its text (the core and the renderers call them),
and the value texts the renderers share (orjson escaping, base64, ROWID, ISO times, IEEE floats).

Each function makes the decisions of the python decoder its docstring names
(replicator.values.*, replicator.formats.escape) for the values it handles and returns a
failure for the rest, which the caller hands to the python decoder, so the bytes are the same
by construction. Nothing here holds state beyond the read-only tables built at import (the
escaping table, the time zone region names): the functions run without the GIL, on stage 2's
workers too.

A module of its own below the core (setup.py MODULES, docs/native-engine.md "Native modules"),
beside the python decoders it mirrors: the others call these C functions through _values.pxd; it
cimports only _buf.pxd (no module), so nothing it needs initialises after it.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdlib cimport calloc, free, strtod, strtof, strtol
from libc.string cimport memcpy, strlen
from libc.stdio cimport snprintf
from libc.math cimport ldexp, isfinite, signbit, frexp
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t

from replicator.values._buf cimport *  # Buf, its helpers, the byte readers


# ----------------------------------------------------------------------------- OLR JSON string escaping
cdef uint8_t PLAIN[256]      # bytes buf_escape copies as they are
for _c in range(256):
    PLAIN[_c] = 1 if _c > 0x1E and _c != 0x22 and _c != 0x2F and _c != 0x5C else 0


cdef int buf_escape(Buf* b, const uint8_t* p, Py_ssize_t n) except -1 nogil:
    """OLR's JSON string escaping (replicator.formats.escape): runs of plain bytes copied at once."""
    cdef Py_ssize_t i = 0, start
    cdef uint8_t c
    buf_reserve(b, n)
    while i < n:
        start = i
        while i < n and PLAIN[p[i]]:
            i += 1
        if i > start:
            buf_reserve(b, i - start)
            memcpy(b.p + b.n, p + start, i - start)
            b.n += i - start
            if i >= n:
                break
        c = p[i]
        i += 1
        if c == 0x5C:
            buf_add(b, b"\\\\", 2)
        elif c == 0x22:
            buf_add(b, b"\\\"", 2)
        elif c == 0x2F:
            buf_add(b, b"\\/", 2)
        elif c == 0x08:
            buf_add(b, b"\\b", 2)
        elif c == 0x09:
            buf_add(b, b"\\t", 2)
        elif c == 0x0A:
            buf_add(b, b"\\n", 2)
        elif c == 0x0C:
            buf_add(b, b"\\f", 2)
        elif c == 0x0D:
            buf_add(b, b"\\r", 2)
        else:
            buf_add(b, b"\\u00", 4)
            buf_byte(b, <char>(48 + c // 10))
            buf_byte(b, <char>(48 + c % 10))
    return 0


# ----------------------------------------------------------------------------- phase B: values
cdef int number_text(Buf* b, const uint8_t* d, int n) noexcept nogil:
    """values.number.number_text into b; 0 ok, 1 undecodable (python renders), 2 error (python raises)."""
    cdef int first = d[0]
    cdef const uint8_t* m
    cdef int mn, ip, j, digit, last
    cdef bint neg
    if first == 0x80:
        buf_byte(b, 48)
        return 0
    if n < 2:
        if first == 0:
            buf_byte(b, 48)
            return 0
        return 2
    neg = first < 0x80
    m = d + 1
    if neg:
        mn = n - 2 if d[n - 1] == 0x66 else n - 1
        ip = 0x3F - first
    else:
        mn = n - 1
        ip = first - 0xC0
    if mn <= 0:
        return 1
    for j in range(mn):
        digit = 101 - m[j] if neg else m[j] - 1
        if digit < 0 or digit > 99:
            return 1
    if neg:
        buf_byte(b, 45)
    if ip <= 0:
        buf_add(b, b"0.", 2)
        for j in range(-ip):
            buf_add(b, b"00", 2)
        for j in range(mn - 1):
            digit = 101 - m[j] if neg else m[j] - 1
            buf_byte(b, <char>(48 + digit // 10))
            buf_byte(b, <char>(48 + digit % 10))
        last = 101 - m[mn - 1] if neg else m[mn - 1] - 1
        buf_byte(b, <char>(48 + last // 10))
        if last % 10:
            buf_byte(b, <char>(48 + last % 10))
        return 0
    digit = 101 - m[0] if neg else m[0] - 1
    if digit >= 10:
        buf_byte(b, <char>(48 + digit // 10))
    buf_byte(b, <char>(48 + digit % 10))
    if ip >= mn:
        for j in range(1, mn):
            digit = 101 - m[j] if neg else m[j] - 1
            buf_byte(b, <char>(48 + digit // 10))
            buf_byte(b, <char>(48 + digit % 10))
        for j in range(ip - mn):
            buf_add(b, b"00", 2)
        return 0
    for j in range(1, ip):
        digit = 101 - m[j] if neg else m[j] - 1
        buf_byte(b, <char>(48 + digit // 10))
        buf_byte(b, <char>(48 + digit % 10))
    buf_byte(b, 46)
    for j in range(ip, mn - 1):
        digit = 101 - m[j] if neg else m[j] - 1
        buf_byte(b, <char>(48 + digit // 10))
        buf_byte(b, <char>(48 + digit % 10))
    last = 101 - m[mn - 1] if neg else m[mn - 1] - 1
    buf_byte(b, <char>(48 + last // 10))
    if last % 10:
        buf_byte(b, <char>(48 + last % 10))
    return 0


cdef int CUM_DAYS[12]
CUM_DAYS[:] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]
cdef int64_t AD_EPOCH = 62167132800


cdef bint timestamp_text(Buf* b, const uint8_t* d, int n, int code, int64_t tz_offset) noexcept nogil:
    """DATE/TIMESTAMP/TSLTZ under `timestamp` codes 0..7 (AD years); False: python renders."""
    cdef int64_t epoch, fraction
    if n != 7 and n != 11:
        return False
    if not epoch_of(d, n, True, tz_offset, &epoch, &fraction):
        return False
    if code >= 4:
        buf_byte(b, 34)
    if not numeric_time(b, epoch, fraction, code % 4):
        return False
    if code >= 4:
        buf_byte(b, 34)
    return True


cdef bint valid_utf8(const uint8_t* p, int n, bint bmp_only) noexcept nogil:
    """Whether Python's strict UTF-8 decoder accepts p (and, with bmp_only, no 4-byte form)."""
    cdef int i = 0
    cdef uint8_t c, c1
    while i < n:
        c = p[i]
        if c < 0x80:
            i += 1
            continue
        if 0xC2 <= c <= 0xDF:
            if i + 1 >= n or (p[i + 1] & 0xC0) != 0x80:
                return False
            i += 2
        elif 0xE0 <= c <= 0xEF:
            if i + 2 >= n or (p[i + 1] & 0xC0) != 0x80 or (p[i + 2] & 0xC0) != 0x80:
                return False
            c1 = p[i + 1]
            if (c == 0xE0 and c1 < 0xA0) or (c == 0xED and c1 > 0x9F):
                return False
            i += 3
        elif 0xF0 <= c <= 0xF4 and not bmp_only:
            if (i + 3 >= n or (p[i + 1] & 0xC0) != 0x80 or (p[i + 2] & 0xC0) != 0x80
                    or (p[i + 3] & 0xC0) != 0x80):
                return False
            c1 = p[i + 1]
            if (c == 0xF0 and c1 < 0x90) or (c == 0xF4 and c1 > 0x8F):
                return False
            i += 4
        else:
            return False
    return True


cdef bint epoch_of(const uint8_t* d, int n, bint check_fraction, int64_t tz_offset, int64_t* epoch_out,
                   int64_t* fraction_out) noexcept nogil:
    """values.datetime._decode_fields for AD years; False: python decides."""
    cdef int64_t month, day, hour, minute, second, year, days, fraction
    cdef bint leap
    month = d[2] - 1
    day = d[3] - 1
    hour = d[4] - 1
    minute = d[5] - 1
    second = d[6] - 1
    fraction = 0
    if n >= 11:
        fraction = (<int64_t>d[7] << 24) | (<int64_t>d[8] << 16) | (<int64_t>d[9] << 8) | d[10]
    if not (0 <= second <= 59 and 0 <= minute <= 59 and 0 <= hour <= 23 and 0 <= day <= 30 and 0 <= month <= 11):
        return False
    if check_fraction and fraction > 999999999:
        return False
    if d[0] < 100 or d[1] < 100:
        return False
    year = (d[0] - 100) * 100 + (d[1] - 100)
    if year <= 0:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = year * 365 + year // 4 - year // 100 + year // 400 - (1 if month < 2 and leap else 0)
    days += CUM_DAYS[month] + day
    epoch_out[0] = ((days * 24 + hour) * 60 + minute) * 60 + second - AD_EPOCH - tz_offset
    fraction_out[0] = fraction
    return True


cdef bint numeric_time(Buf* b, int64_t epoch, int64_t fraction, int unit) noexcept nogil:
    """timefmt._NUMERIC[unit]; False: python renders (nanoseconds of a large epoch)."""
    cdef int64_t value
    cdef int64_t abs_epoch, high, low
    cdef uint64_t tail
    cdef char tmp[24]
    cdef int k
    if unit == 0:
        if not (-1000000000 < epoch < 1000000000):
            # timefmt.nanos_text: epoch / 1e9, then 18 digits (the low part wraps as u64)
            abs_epoch = -epoch if epoch < 0 else epoch
            high = abs_epoch // 1000000000
            low = (abs_epoch % 1000000000) * 1000000000 + (fraction if epoch > 0 else -fraction)
            buf_int(b, high if epoch > 0 else -high)
            tail = (<uint64_t>low) % (<uint64_t>1000000000000000000)
            for k in range(18):
                tmp[17 - k] = <char>(48 + tail % 10)
                tail //= 10
            buf_add(b, tmp, 18)
            return True
        value = epoch * 1000000000 + fraction
    elif unit == 1:
        value = epoch * 1000000 + (fraction + 500) // 1000
    elif unit == 2:
        value = epoch * 1000 + (fraction + 500000) // 1000000
    else:
        value = epoch + (fraction + 500000000) // 1000000000
    buf_int(b, value)
    return True


# Region names of TIMESTAMP WITH TIME ZONE by 16-bit region id (values.timezones.REGION_NAMES).
cdef const char** REGIONS = <const char**> calloc(65536, sizeof(char*))
cdef list _region_bytes = []


def _load_regions():
    from replicator.values.timezones import REGION_NAMES, UNKNOWN_REGION

    unknown = UNKNOWN_REGION.encode("ascii")
    _region_bytes.append(unknown)
    for i in range(65536):
        REGIONS[i] = PyBytes_AS_STRING(unknown)
    for key, name in REGION_NAMES.items():
        data = name.encode("ascii")
        _region_bytes.append(data)
        REGIONS[key & 0xFFFF] = PyBytes_AS_STRING(data)


_load_regions()


cdef bint timestamp_tz_text(Buf* b, const uint8_t* d, int n, int code) noexcept nogil:
    """TIMESTAMP WITH TIME ZONE under `timestamp-tz` codes 0..3 (values.timezones.zone_text)."""
    cdef int64_t epoch, fraction
    cdef int b11, b12, h, m
    cdef bint negative
    cdef uint8_t tmp[11]
    if n != 9 and n != 13:
        return False
    b11 = d[11] if n == 13 else d[7]
    b12 = d[12] if n == 13 else d[8]
    memcpy(tmp, d, 7)
    if n == 13:
        memcpy(tmp + 7, d + 7, 4)
    if not epoch_of(tmp, 11 if n == 13 else 7, False, 0, &epoch, &fraction):
        return False
    buf_byte(b, 34)
    if not numeric_time(b, epoch, fraction, code):
        return False
    buf_byte(b, 44)
    if not (5 <= b11 <= 36):
        buf_add(b, REGIONS[(b11 << 8) | b12], strlen(REGIONS[(b11 << 8) | b12]))
        buf_byte(b, 34)
        return True
    negative = b11 < 20 or (b11 == 20 and b12 < 60)
    h = b11 - 20 if b11 >= 20 else 20 - b11
    m = b12 - 60 if b12 >= 60 else 60 - b12
    buf_byte(b, 45 if negative else 43)
    two_digits(b, h)
    buf_byte(b, 58)
    two_digits(b, m)
    buf_byte(b, 34)
    return True


cdef bint interval_ym_text(Buf* b, const uint8_t* d, int n, int code) noexcept nogil:
    """values.interval.interval_ym_renderer(code); False: python (unknown value)."""
    cdef int64_t years, months
    cdef bint neg, mneg
    if n != 5 or not (49 <= d[4] <= 71):
        return False
    biased(rd32(d, True), &years, &neg)
    if years > 999999999:
        return False
    offset60(d[4], &months, &mneg)
    if code == 1 or code >= 2:
        buf_byte(b, 34)
    if neg or mneg:
        buf_byte(b, 45)
    if code <= 1:
        buf_int(b, years * 12 + months)
    else:
        buf_int(b, years)
        buf_byte(b, 32 if code == 2 else 44 if code == 3 else 45)
        buf_int(b, months)
    if code >= 1:
        buf_byte(b, 34)
    return True


cdef bint interval_ds_text(Buf* b, const uint8_t* d, int n, int code) noexcept nogil:
    """values.interval.interval_ds_renderer(code); False: python (unknown value or a huge total)."""
    cdef int64_t days, nanos, hours, minutes, seconds, total, divisor, half
    cdef bint neg, nneg, hneg, mneg, sneg
    if n != 11 or not (37 <= d[4] <= 83) or not (1 <= d[5] <= 119) or not (1 <= d[6] <= 119):
        return False
    biased(rd32(d, True), &days, &neg)
    biased(rd32(d + 7, True), &nanos, &nneg)
    if days > 999999999 or nanos > 999999999:
        return False
    offset60(d[4], &hours, &hneg)
    offset60(d[5], &minutes, &mneg)
    offset60(d[6], &seconds, &sneg)
    neg = neg or nneg or hneg or mneg or sneg
    if code >= 8:
        buf_byte(b, 34)
        if neg:
            buf_byte(b, 45)
        buf_int(b, days)
        buf_byte(b, 32 if code == 8 else 44 if code == 9 else 45)
        two_digits(b, <int>hours)
        buf_byte(b, 58)
        two_digits(b, <int>minutes)
        buf_byte(b, 58)
        two_digits(b, <int>seconds)
        buf_byte(b, 46)
        if nanos < 100000000:
            buf_add(b, b"000000000", 9 - digits(nanos))
        buf_int(b, nanos)
        buf_byte(b, 34)
        return True
    if days > 100000:
        return False  # the nanosecond total would not fit 64 bits: python
    if code % 4 == 0:
        divisor, half = 1, 0
    elif code % 4 == 1:
        divisor, half = 1000, 500
    elif code % 4 == 2:
        divisor, half = 1000000, 500000
    else:
        divisor, half = 1000000000, 500000000
    total = (((days * 24 + hours) * 60 + minutes) * 60 + seconds) * 1000000000 + nanos
    if code >= 4:
        buf_byte(b, 34)
    if neg:
        buf_byte(b, 45)
    buf_int(b, (total + half) // divisor)
    if code >= 4:
        buf_byte(b, 34)
    return True


cdef bint float_text(Buf* b, const uint8_t* d, int n, bint dbl) noexcept nogil:
    """values.floats.binary_float_text / binary_double_text for finite values; False: python."""
    cdef uint64_t raw = 0, sig, frac_mask, sign_bit
    cdef int exp_bits = 11 if dbl else 8
    cdef int frac_bits = 52 if dbl else 23
    cdef int64_t exp_mask = (1 << exp_bits) - 1
    cdef int64_t bias = exp_mask >> 1
    cdef int64_t exponent, e2
    cdef int i, sign, bitlen, k
    cdef double value
    cdef char tmp[64]
    if n != (8 if dbl else 4):
        return False
    for i in range(n):
        raw = (raw << 8) | d[i]
    frac_mask = ((<uint64_t>1) << frac_bits) - 1
    sign_bit = (<uint64_t>1) << (exp_bits + frac_bits)
    exponent = <int64_t>((raw >> frac_bits) & <uint64_t>exp_mask)
    sig = raw & frac_mask
    if raw & sign_bit:
        if sig == 0 and (exponent == 0 or exponent == exp_mask):
            return False
        if sig == ((<uint64_t>1) << (frac_bits - 1)) and exponent == exp_mask:
            return False
        if exponent > 0:
            sig |= (<uint64_t>1) << frac_bits
        sign = 1
        e2 = exponent - bias - frac_bits
    else:
        if exponent == 0 and sig == frac_mask:
            return False
        sig = frac_mask - sig
        if exponent < exp_mask:
            sig += (<uint64_t>1) << frac_bits
        sign = -1
        e2 = (bias + 1) - exponent - frac_bits
    if dbl:
        bitlen = 0
        while bitlen < 64 and (sig >> bitlen):
            bitlen += 1
        if not (-1022 <= e2 + bitlen - 1 <= 1023):
            return False
    value = ldexp(<double>sig, <int>e2)
    if value == 0.0 and sig != 0:
        return False
    k = snprintf(tmp, 64, "%g", sign * value)
    if k <= 0 or k >= 64:
        return False
    buf_add(b, tmp, k)
    return True


cdef inline void put_utf8_escaped(Buf* b, uint32_t cp) noexcept nogil:
    cdef uint8_t c
    if cp < 0x80:
        c = <uint8_t>cp
        buf_escape(b, &c, 1)
    else:
        buf_utf8(b, cp)


cdef bint utf16_escaped(Buf* b, const uint8_t* p, int n) noexcept nogil:
    """AL16UTF16 (strict UTF-16BE, as Python decodes it) to escaped UTF-8; False: python."""
    cdef int i = 0
    cdef int64_t u
    cdef Py_ssize_t mark = b.n
    if n & 1:
        return False
    while i < n:
        u = utf16_next(p, n, &i)
        if u < 0:
            b.n = mark
            return False
        put_utf8_escaped(b, <uint32_t>u)
    return True

# ----------------------------------------------------------------------------- the renderers' value texts
# What the other formats' renderers (native._debezium, _rows, _protobuf; formats._avro) write for
# a decoded value: orjson's string escaping, base64, ROWID text, ISO times, IEEE floats and their
# shortest round-trip text. They were _debezium's and shared through its .pxd; they take nothing
# but a value and a buffer, so they live here with the decoders, below every renderer.
cdef char* HEXD = b"0123456789abcdef"
cdef char* B64_STD = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
cdef int64_t MIN_ISO_EPOCH = -62135596800   # 0001-01-01T00:00:00
cdef int64_t MAX_ISO_EPOCH = 253402300799    # 9999-12-31T23:59:59


cdef int json_escape(Buf* b, const uint8_t* p, Py_ssize_t n) except -1 nogil:
    """orjson's string escaping of valid UTF-8 (quotes, backslash, C0 controls only)."""
    cdef Py_ssize_t i
    cdef uint8_t c
    buf_reserve(b, n)
    for i in range(n):
        c = p[i]
        if c >= 0x20 and c != 0x22 and c != 0x5C:
            if b.n + 1 > b.cap:
                buf_reserve(b, 1)
            b.p[b.n] = <char>c
            b.n += 1
        elif c == 0x22:
            buf_add(b, b"\\\"", 2)
        elif c == 0x5C:
            buf_add(b, b"\\\\", 2)
        elif c == 0x08:
            buf_add(b, b"\\b", 2)
        elif c == 0x09:
            buf_add(b, b"\\t", 2)
        elif c == 0x0A:
            buf_add(b, b"\\n", 2)
        elif c == 0x0C:
            buf_add(b, b"\\f", 2)
        elif c == 0x0D:
            buf_add(b, b"\\r", 2)
        else:
            buf_add(b, b"\\u00", 4)
            buf_byte(b, HEXD[c >> 4])
            buf_byte(b, HEXD[c & 15])
    return 0


cdef bint utf16_utf8(Buf* b, const uint8_t* p, int n) noexcept nogil:
    """Strict UTF-16BE to UTF-8 (no escaping); False (buffer unchanged): python."""
    cdef int i = 0
    cdef int64_t u
    cdef Py_ssize_t mark = b.n
    if n & 1:
        return False
    while i < n:
        u = utf16_next(p, n, &i)
        if u < 0:
            b.n = mark
            return False
        buf_utf8(b, <uint32_t>u)
    return True


cdef void buf_base64(Buf* b, const uint8_t* p, Py_ssize_t n, const char* alphabet) noexcept nogil:
    """base64.b64encode / urlsafe_b64encode (with '=' padding)."""
    cdef Py_ssize_t i = 0
    cdef uint32_t v
    buf_reserve(b, 4 * (n // 3 + 1))
    while i + 3 <= n:
        v = (<uint32_t>p[i] << 16) | (<uint32_t>p[i + 1] << 8) | p[i + 2]
        b.p[b.n] = alphabet[v >> 18]
        b.p[b.n + 1] = alphabet[(v >> 12) & 63]
        b.p[b.n + 2] = alphabet[(v >> 6) & 63]
        b.p[b.n + 3] = alphabet[v & 63]
        b.n += 4
        i += 3
    if n - i == 1:
        v = <uint32_t>p[i] << 16
        b.p[b.n] = alphabet[v >> 18]
        b.p[b.n + 1] = alphabet[(v >> 12) & 63]
        b.p[b.n + 2] = 61
        b.p[b.n + 3] = 61
        b.n += 4
    elif n - i == 2:
        v = (<uint32_t>p[i] << 16) | (<uint32_t>p[i + 1] << 8)
        b.p[b.n] = alphabet[v >> 18]
        b.p[b.n + 1] = alphabet[(v >> 12) & 63]
        b.p[b.n + 2] = alphabet[(v >> 6) & 63]
        b.p[b.n + 3] = 61
        b.n += 4


cdef void buf_rowid(Buf* b, uint32_t data_obj, uint32_t dba, int slot) noexcept nogil:
    """values.rowid.rowid_text: 6+3+6+3 base-64 digits."""
    cdef int k
    cdef uint64_t v
    for k in range(5, -1, -1):
        buf_byte(b, B64_STD[(data_obj >> (6 * k)) & 0x3F])
    v = dba >> 22
    for k in range(2, -1, -1):
        buf_byte(b, B64_STD[(v >> (6 * k)) & 0x3F])
    v = dba & 0x3FFFFF
    for k in range(5, -1, -1):
        buf_byte(b, B64_STD[(v >> (6 * k)) & 0x3F])
    for k in range(2, -1, -1):
        buf_byte(b, B64_STD[(<uint32_t>slot >> (6 * k)) & 0x3F])


cdef void fraction_trimmed(Buf* b, int64_t nanos) noexcept nogil:
    """temporal.fraction(nanos): ".fffffffff" with trailing zeros cut ("" for 0)."""
    cdef char tmp[9]
    cdef int k, end
    if nanos == 0:
        return
    for k in range(9):
        tmp[8 - k] = <char>(48 + nanos % 10)
        nanos //= 10
    end = 9
    while end > 0 and tmp[end - 1] == 48:
        end -= 1
    buf_byte(b, 46)
    buf_add(b, tmp, end)


cdef bint iso_text(Buf* b, int64_t epoch, int64_t nanos) noexcept nogil:
    """datetime.epoch_to_iso(epoch, True, False) + temporal.fraction(nanos), years 1..9999 only."""
    cdef int64_t days, secs, z, era, doe, yoe, y, doy, mp, d, m
    if epoch < MIN_ISO_EPOCH or epoch > MAX_ISO_EPOCH or nanos < 0 or nanos > 999999999:
        return False
    days = epoch // 86400
    secs = epoch - days * 86400
    if secs < 0:
        days -= 1
        secs += 86400
    # civil_from_days (proleptic Gregorian)
    z = days + 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    if m <= 2:
        y += 1
    buf_byte(b, <char>(48 + y // 1000))
    buf_byte(b, <char>(48 + (y // 100) % 10))
    buf_byte(b, <char>(48 + (y // 10) % 10))
    buf_byte(b, <char>(48 + y % 10))
    buf_byte(b, 45)
    two_digits(b, <int>m)
    buf_byte(b, 45)
    two_digits(b, <int>d)
    buf_byte(b, 84)
    two_digits(b, <int>(secs // 3600))
    buf_byte(b, 58)
    two_digits(b, <int>((secs // 60) % 60))
    buf_byte(b, 58)
    two_digits(b, <int>(secs % 60))
    fraction_trimmed(b, nanos)
    return True


cdef bint ieee_value(const uint8_t* d, int n, bint single, double* out) noexcept nogil:
    """values.floats.decode_binary_float/double: Oracle's order-preserving bytes to a double."""
    cdef uint64_t raw = 0
    cdef uint32_t bits32
    cdef float f
    cdef int i
    if n != (4 if single else 8):
        return False
    for i in range(n):
        raw = (raw << 8) | d[i]
    if single:
        bits32 = <uint32_t>raw
        if bits32 & <uint32_t>0x80000000:
            bits32 = bits32 ^ <uint32_t>0x80000000
        else:
            bits32 = ~bits32
        memcpy(&f, &bits32, 4)
        out[0] = f
    else:
        if raw & (<uint64_t>1 << 63):
            raw = raw ^ (<uint64_t>1 << 63)
        else:
            raw = ~raw
        memcpy(out, &raw, 8)
    return True


cdef bint shortest_text(Buf* b, double v, bint single) noexcept nogil:
    """repr(v) (double) or str(numpy.float32(v)) (single): the shortest round-trip digits.

    False (python renders) for non-finite values and exact powers of two, where the shortest
    string need not be the correctly rounded one this search finds.
    """
    cdef char tmp[48]
    cdef char dig[24]
    cdef int p, k, nd, e, i, decpt
    cdef double m, a
    cdef bint use_exp
    cdef int e_at
    if not isfinite(v):
        return False
    if v == 0.0:
        if signbit(v):
            buf_add(b, b"-0.0", 4)
        else:
            buf_add(b, b"0.0", 3)
        return True
    m = frexp(v, &e)
    if m == 0.5 or m == -0.5:
        return False
    k = 0
    for p in range(17 if not single else 9):
        k = snprintf(tmp, 48, "%.*e", p, v)
        if single:
            if strtof(tmp, NULL) == <float>v:
                break
        elif strtod(tmp, NULL) == v:
            break
    else:
        return False
    # tmp: [-]d[.ddd]e[+-]xx
    i = 1 if tmp[0] == 45 else 0
    nd = 0
    while i < k and tmp[i] != 101:
        if tmp[i] != 46:
            dig[nd] = tmp[i]
            nd += 1
        i += 1
    e_at = i
    e = <int>strtol(tmp + e_at + 1, NULL, 10)
    while nd > 1 and dig[nd - 1] == 48:
        nd -= 1
    decpt = e + 1
    a = -v if v < 0 else v
    if single:
        use_exp = not (1e-4 <= a < 1e6)
    else:
        use_exp = decpt <= -4 or decpt > 16
    if v < 0:
        buf_byte(b, 45)
    if use_exp:
        buf_byte(b, dig[0])
        if nd > 1:
            buf_byte(b, 46)
            buf_add(b, dig + 1, nd - 1)
        buf_byte(b, 101)
        buf_byte(b, 45 if e < 0 else 43)
        if -10 < e < 10:
            buf_byte(b, 48)
        buf_int(b, -e if e < 0 else e)
    elif decpt <= 0:
        buf_add(b, b"0.", 2)
        for i in range(-decpt):
            buf_byte(b, 48)
        buf_add(b, dig, nd)
    elif decpt >= nd:
        buf_add(b, dig, nd)
        for i in range(decpt - nd):
            buf_byte(b, 48)
        buf_add(b, b".0", 2)
    else:
        buf_add(b, dig, decpt)
        buf_byte(b, 46)
        buf_add(b, dig + decpt, nd - decpt)
    return True


def float_repr(bytes data, bint single):
    """The native shortest text of a BINARY_FLOAT/DOUBLE value (tests), or None (python)."""
    cdef Buf b
    cdef double v
    b.p = NULL
    b.n = b.cap = 0
    try:
        if not ieee_value(<const uint8_t*>PyBytes_AS_STRING(data), <int>PyBytes_GET_SIZE(data), single, &v):
            return None
        if not shortest_text(&b, v, single):
            return None
        return PyBytes_FromStringAndSize(b.p, b.n)
    finally:
        free(b.p)
