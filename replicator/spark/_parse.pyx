# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""OpenLogReplicator JSON messages -> the Spark job's event columns, in one pass over the bytes.

The python parse (replicator/spark/parse.py parse_batch) decodes each message into dicts with
msgspec, walks them and turns the before/after dicts into Arrow maps. This module reads the
message text itself: the images' names and value texts go straight into Arrow string buffers
(numbers as printed, strings unescaped), the other columns into lists. A message it does not
take (DDL, checkpoints, nested values, anything unusual or malformed) is left to the python
parse through a callback, whose rows are added in their place (add_row), so the events come
out in the same order as the python parse makes them. It lives beside parse.py and imports
nothing of the package (standalone: replicator.native.spark_events() loads it).
"""

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8, PyUnicode_AsUTF8AndSize
from libc.stdlib cimport realloc, free
from libc.string cimport memcpy, memcmp
from libc.stdint cimport int32_t, int64_t, uint8_t


cdef struct Buf:
    char* data
    Py_ssize_t len
    Py_ssize_t cap


cdef int buf_grow(Buf* b, Py_ssize_t extra) except -1:
    cdef Py_ssize_t cap = b.cap * 2 if b.cap else 65536
    cdef char* p
    while cap < b.len + extra:
        cap *= 2
    p = <char*>realloc(b.data, cap)
    if p == NULL:
        raise MemoryError()
    b.data = p
    b.cap = cap
    return 0


cdef inline int buf_put(Buf* b, const char* s, Py_ssize_t n) except -1:
    if b.len + n > b.cap:
        buf_grow(b, n)
    memcpy(b.data + b.len, s, n)
    b.len += n
    return 0


cdef inline int buf_byte(Buf* b, char c) except -1:
    if b.len + 1 > b.cap:
        buf_grow(b, 1)
    b.data[b.len] = c
    b.len += 1
    return 0


cdef inline int buf_i32(Buf* b, Py_ssize_t v) except -1:
    cdef int32_t x
    if v > 2147483647:
        raise OverflowError("event strings over 2 GiB in one batch")
    x = <int32_t>v
    return buf_put(b, <const char*>&x, 4)


cdef bytes buf_bytes(Buf* b):
    return PyBytes_FromStringAndSize(b.data, b.len)


# A string column (Arrow string: int32 offsets, data, one validity byte per value).
cdef struct StrCol:
    Buf data
    Buf offsets
    Buf valid
    Py_ssize_t n


cdef int col_init(StrCol* c) except -1:
    buf_i32(&c.offsets, 0)
    return 0


cdef inline int col_end(StrCol* c, bint valid) except -1:
    buf_i32(&c.offsets, c.data.len)
    buf_byte(&c.valid, 1 if valid else 0)
    c.n += 1
    return 0


cdef inline void col_truncate(StrCol* c, Py_ssize_t n):
    cdef int32_t end = (<int32_t*>c.offsets.data)[n]
    c.n = n
    c.offsets.len = (n + 1) * 4
    c.valid.len = n
    c.data.len = end


cdef void col_free(StrCol* c):
    free(c.data.data)
    free(c.offsets.data)
    free(c.valid.data)


# A map<string, string> column: one offset and validity byte per event, the entries' names and values.
cdef struct MapCol:
    StrCol names
    StrCol items
    Buf offsets
    Buf valid
    Py_ssize_t n


cdef int map_init(MapCol* m) except -1:
    col_init(&m.names)
    col_init(&m.items)
    buf_i32(&m.offsets, 0)
    return 0


cdef inline int map_end(MapCol* m, bint valid) except -1:
    buf_i32(&m.offsets, m.names.n)
    buf_byte(&m.valid, 1 if valid else 0)
    m.n += 1
    return 0


cdef inline void map_truncate(MapCol* m, Py_ssize_t n):
    cdef int32_t entries = (<int32_t*>m.offsets.data)[n]
    m.n = n
    m.offsets.len = (n + 1) * 4
    m.valid.len = n
    col_truncate(&m.names, entries)
    col_truncate(&m.items, entries)


cdef void map_free(MapCol* m):
    col_free(&m.names)
    col_free(&m.items)
    free(m.offsets.data)
    free(m.valid.data)


# ---------------------------------------------------------------------------------- JSON scanning
# Each returns the index after what it read, or -1 when the text is not what the fast path takes
# (the message then goes to the python parse, which decodes it or says why it cannot).


cdef inline Py_ssize_t ws(const char* s, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    while i < n and (s[i] == 32 or s[i] == 10 or s[i] == 13 or s[i] == 9):
        i += 1
    return i


cdef inline int hexval(char c) noexcept nogil:
    if 48 <= c <= 57:
        return c - 48
    if 97 <= c <= 102:
        return c - 87
    if 65 <= c <= 70:
        return c - 55
    return -1


cdef inline int hex4(const char* p) noexcept nogil:
    cdef int a = hexval(p[0]), b = hexval(p[1]), c = hexval(p[2]), d = hexval(p[3])
    if a < 0 or b < 0 or c < 0 or d < 0:
        return -1
    return (a << 12) | (b << 8) | (c << 4) | d


cdef Py_ssize_t str_end(const char* s, Py_ssize_t i, Py_ssize_t n, bint* esc) noexcept nogil:
    """``i``: after the opening quote; the index of the closing quote (escapes checked)."""
    cdef unsigned char c
    esc[0] = False
    while i < n:
        c = <unsigned char>s[i]
        if c == 34:
            return i
        if c == 92:
            esc[0] = True
            if i + 1 >= n:
                return -1
            c = <unsigned char>s[i + 1]
            if c == 117:  # \uXXXX
                if i + 6 > n or hex4(s + i + 2) < 0:
                    return -1
                i += 6
                continue
            if c != 34 and c != 92 and c != 47 and c != 98 and c != 102 and c != 110 and c != 114 and c != 116:
                return -1
            i += 2
            continue
        if c < 32:
            return -1
        i += 1
    return -1


cdef int put_utf8(Buf* b, unsigned int cp) except -1:
    cdef char out[4]
    if cp < 0x80:
        return buf_byte(b, <char>cp)
    if cp < 0x800:
        out[0] = <char>(0xC0 | (cp >> 6))
        out[1] = <char>(0x80 | (cp & 0x3F))
        return buf_put(b, out, 2)
    if cp < 0x10000:
        out[0] = <char>(0xE0 | (cp >> 12))
        out[1] = <char>(0x80 | ((cp >> 6) & 0x3F))
        out[2] = <char>(0x80 | (cp & 0x3F))
        return buf_put(b, out, 3)
    out[0] = <char>(0xF0 | (cp >> 18))
    out[1] = <char>(0x80 | ((cp >> 12) & 0x3F))
    out[2] = <char>(0x80 | ((cp >> 6) & 0x3F))
    out[3] = <char>(0x80 | (cp & 0x3F))
    return buf_put(b, out, 4)


cdef int put_str(Buf* b, const char* s, Py_ssize_t i, Py_ssize_t end, bint esc) except -2:
    """The content of a JSON string (``s[i:end]``, escapes already checked by str_end) as UTF-8;
    -1 for a lone surrogate (the python parse decides)."""
    cdef Py_ssize_t j
    cdef char c
    cdef int cp, lo
    if not esc:
        buf_put(b, s + i, end - i)
        return 0
    while i < end:
        j = i
        while j < end and s[j] != 92:
            j += 1
        if j > i:
            buf_put(b, s + i, j - i)
        if j >= end:
            break
        c = s[j + 1]
        i = j + 2
        if c == 117:
            cp = hex4(s + j + 2)
            i = j + 6
            if 0xD800 <= cp < 0xDC00:
                if i + 6 <= end and s[i] == 92 and s[i + 1] == 117:
                    lo = hex4(s + i + 2)
                    if 0xDC00 <= lo < 0xE000:
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                        i += 6
                    else:
                        return -1
                else:
                    return -1
            elif 0xDC00 <= cp < 0xE000:
                return -1
            put_utf8(b, <unsigned int>cp)
        elif c == 110:
            buf_byte(b, 10)
        elif c == 116:
            buf_byte(b, 9)
        elif c == 114:
            buf_byte(b, 13)
        elif c == 98:
            buf_byte(b, 8)
        elif c == 102:
            buf_byte(b, 12)
        else:  # " \ /
            buf_byte(b, c)
    return 0


cdef Py_ssize_t num_end(const char* s, Py_ssize_t i, Py_ssize_t n, bint* integer) noexcept nogil:
    """A JSON number's end (its grammar checked); ``integer``: no fraction, no exponent."""
    integer[0] = True
    if i < n and s[i] == 45:
        i += 1
    if i >= n:
        return -1
    if s[i] == 48:
        i += 1
    elif 49 <= s[i] <= 57:
        while i < n and 48 <= s[i] <= 57:
            i += 1
    else:
        return -1
    if i < n and s[i] == 46:
        integer[0] = False
        i += 1
        if i >= n or not (48 <= s[i] <= 57):
            return -1
        while i < n and 48 <= s[i] <= 57:
            i += 1
    if i < n and (s[i] == 101 or s[i] == 69):
        integer[0] = False
        i += 1
        if i < n and (s[i] == 43 or s[i] == 45):
            i += 1
        if i >= n or not (48 <= s[i] <= 57):
            return -1
        while i < n and 48 <= s[i] <= 57:
            i += 1
    return i


cdef inline int64_t small_int(const char* s, Py_ssize_t i, Py_ssize_t e) noexcept nogil:
    """An integer token of at most 18 characters (no overflow)."""
    cdef int64_t v = 0
    cdef bint negative = s[i] == 45
    if negative:
        i += 1
    while i < e:
        v = v * 10 + (s[i] - 48)
        i += 1
    return -v if negative else v


cdef inline bint word(const char* s, Py_ssize_t i, Py_ssize_t n, const char* w, Py_ssize_t k) noexcept nogil:
    return i + k <= n and memcmp(s + i, w, k) == 0


cdef Py_ssize_t skip(const char* s, Py_ssize_t i, Py_ssize_t n, int depth) noexcept nogil:
    """Past one JSON value (checked, not kept)."""
    cdef bint esc, integer
    cdef Py_ssize_t e
    cdef char c
    if depth > 100:
        return -1
    i = ws(s, i, n)
    if i >= n:
        return -1
    c = s[i]
    if c == 34:
        e = str_end(s, i + 1, n, &esc)
        return -1 if e < 0 else e + 1
    if c == 123 or c == 91:
        i = ws(s, i + 1, n)
        if i < n and s[i] == (125 if c == 123 else 93):
            return i + 1
        while True:
            if c == 123:
                if i >= n or s[i] != 34:
                    return -1
                e = str_end(s, i + 1, n, &esc)
                if e < 0:
                    return -1
                i = ws(s, e + 1, n)
                if i >= n or s[i] != 58:
                    return -1
                i += 1
            i = skip(s, i, n, depth + 1)
            if i < 0:
                return -1
            i = ws(s, i, n)
            if i >= n:
                return -1
            if s[i] == 44:
                i = ws(s, i + 1, n)
                continue
            if s[i] == (125 if c == 123 else 93):
                return i + 1
            return -1
    if c == 116:
        return i + 4 if word(s, i, n, b"true", 4) else -1
    if c == 102:
        return i + 5 if word(s, i, n, b"false", 5) else -1
    if c == 110:
        return i + 4 if word(s, i, n, b"null", 4) else -1
    return num_end(s, i, n, &integer)


cdef bint ascii_only(const char* s, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    cdef unsigned char acc = 0
    for i in range(n):
        acc |= <unsigned char>s[i]
    return acc < 128


cdef inline bint is_key(const char* s, Py_ssize_t a, Py_ssize_t b, const char* name, Py_ssize_t k) noexcept nogil:
    return b - a == k and memcmp(s + a, name, k) == 0


_MISSING = object()
# The header fields the fast path reads (header_key: the index of a key's name here, or -1).
_HEADER = ("c_scn", "c_idx", "xid", "xidn", "e_scn", "e_scns", "scn", "scns", "e_tm", "e_tms", "tm", "tms")
_OPS = ("c", "u", "d", "begin", "commit")


cdef int header_key(const char* s, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef Py_ssize_t k = b - a
    if k == 5:
        if memcmp(s + a, b"c_scn", 5) == 0:
            return 0
        if memcmp(s + a, b"c_idx", 5) == 0:
            return 1
        if memcmp(s + a, b"e_scn", 5) == 0:
            return 4
        if memcmp(s + a, b"e_tms", 5) == 0:
            return 9
    elif k == 3:
        if memcmp(s + a, b"xid", 3) == 0:
            return 2
        if memcmp(s + a, b"scn", 3) == 0:
            return 6
        if memcmp(s + a, b"tms", 3) == 0:
            return 11
    elif k == 4:
        if memcmp(s + a, b"xidn", 4) == 0:
            return 3
        if memcmp(s + a, b"scns", 4) == 0:
            return 7
        if memcmp(s + a, b"e_tm", 4) == 0:
            return 8
    elif k == 6:
        if memcmp(s + a, b"e_scns", 6) == 0:
            return 5
    elif k == 2:
        if memcmp(s + a, b"tm", 2) == 0:
            return 10
    return -1


cdef int op_code(const char* s, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """The index of an element's op in _OPS (no escapes), or -1."""
    cdef Py_ssize_t k = b - a
    if k == 1:
        if s[a] == 99:
            return 0
        if s[a] == 117:
            return 1
        if s[a] == 100:
            return 2
    elif k == 5 and memcmp(s + a, b"begin", 5) == 0:
        return 3
    elif k == 6 and memcmp(s + a, b"commit", 6) == 0:
        return 4
    return -1


cdef class EventBuilder:
    """The event columns of one batch of Kafka records (see the module's docstring).

    ``key_columns(key)``: the column names in a Kafka key (or None); ``times(e_tm, tm)``: a
    message's commit time in microseconds from its header times (None when absent);
    ``value_text(v)``: a decoded JSON value as text (for the rows of :meth:`add_row`);
    ``columns_text(raw)``: a schema's column list (its JSON bytes) as the python parse prints it;
    ``sparse``: the names of the columns set on a few rows (:attr:`sparse`: name -> {row: value})."""

    cdef StrCol rid
    cdef MapCol before
    cdef MapCol after
    cdef Buf scratch
    cdef public list kind, fmt, tbl, op, commit_scn, c_scn, c_idx, elem, xid, commit_ts, full, parent
    cdef public dict sparse
    cdef public set seen, keyed
    cdef dict names
    cdef dict last_columns
    cdef dict key_names  # the names of tag fragment keys -> key_columns' answer
    cdef object key_columns, times, value_text, columns_text
    cdef bint scn_is_commit, tm_is_commit, every_full
    cdef object last_etm, last_tm, last_us
    cdef list undo  # (set, mark) added by the message being read
    cdef Py_ssize_t _count

    def __cinit__(self):
        col_init(&self.rid)
        map_init(&self.before)
        map_init(&self.after)

    def __dealloc__(self):
        col_free(&self.rid)
        map_free(&self.before)
        map_free(&self.after)
        free(self.scratch.data)

    def __init__(
        self, bint scn_is_commit, bint tm_is_commit, bint every_full, key_columns, times, value_text, columns_text, sparse
    ):
        self.scn_is_commit, self.tm_is_commit, self.every_full = scn_is_commit, tm_is_commit, every_full
        self.key_columns, self.times, self.value_text = key_columns, times, value_text
        self.columns_text = columns_text
        self.kind, self.fmt, self.tbl, self.op = [], [], [], []
        self.commit_scn, self.c_scn, self.c_idx, self.elem = [], [], [], []
        self.xid, self.commit_ts, self.full, self.parent = [], [], [], []
        self.sparse = {name: {} for name in sparse}
        self.seen, self.keyed = set(), set()
        self.names, self.last_columns, self.key_names = {}, {}, {}
        self.last_etm = self.last_tm = self.last_us = _MISSING
        self.undo = []

    @property
    def count(self):
        """Events so far."""
        return len(self.kind)

    # ------------------------------------------------------------------ rows of the python parse

    cdef int _put_value(self, MapCol* m, object name, object value) except -1:
        cdef Py_ssize_t k
        cdef const char* p
        p = PyUnicode_AsUTF8AndSize(name, &k)
        buf_put(&m.names.data, p, k)
        col_end(&m.names, True)
        if value is not None and value.__class__ is not str:
            value = self.value_text(value)
        if value is None:
            col_end(&m.items, False)
            return 0
        p = PyUnicode_AsUTF8AndSize(value, &k)
        buf_put(&m.items.data, p, k)
        col_end(&m.items, True)
        return 0

    cdef int _put_image(self, MapCol* m, object image) except -1:
        if image is None:
            return map_end(m, False)
        if isinstance(image, dict):
            for name, value in (<dict>image).items():
                self._put_value(m, name, value)
        else:
            for name, value in image:
                self._put_value(m, name, value)
        return map_end(m, True)

    def add_row(self, dict row, Py_ssize_t j):
        """One event row made by the python parse (a dict of event columns) for record ``j``."""
        cdef Py_ssize_t r = len(self.kind), k
        cdef const char* p
        self.kind.append(row.get("kind"))
        self.fmt.append(row.get("fmt"))
        self.tbl.append(row.get("tbl"))
        self.op.append(row.get("op"))
        self.commit_scn.append(row.get("commit_scn"))
        self.c_scn.append(row.get("c_scn"))
        self.c_idx.append(row.get("c_idx"))
        self.elem.append(row.get("elem"))
        self.xid.append(row.get("xid"))
        self.commit_ts.append(row.get("commit_ts"))
        self.full.append(row.get("full"))
        self.parent.append(j)
        rid = row.get("rid")
        if rid is None:
            col_end(&self.rid, False)
        else:
            p = PyUnicode_AsUTF8AndSize(rid, &k)
            buf_put(&self.rid.data, p, k)
            col_end(&self.rid, True)
        self._put_image(&self.before, row.get("before"))
        self._put_image(&self.after, row.get("after"))
        for name, at in self.sparse.items():
            v = row.get(name)
            if v is not None:
                at[r] = v

    # ------------------------------------------------------------------ the fast path

    cdef object _text(self, const char* s, Py_ssize_t a, Py_ssize_t b, bint esc):
        """A JSON string's content as str (None: a lone surrogate or invalid UTF-8)."""
        if not esc:
            try:
                return PyUnicode_DecodeUTF8(s + a, b - a, NULL)
            except UnicodeDecodeError:
                return None
        self.scratch.len = 0
        if put_str(&self.scratch, s, a, b, True) < 0:
            return None
        try:
            return PyUnicode_DecodeUTF8(self.scratch.data, self.scratch.len, NULL)
        except UnicodeDecodeError:
            return None

    cdef Py_ssize_t _scalar(self, const char* s, Py_ssize_t i, Py_ssize_t n, list out):
        """A header value as msgspec decodes it (str, int, float text, bool, None) -> ``out[0]``."""
        cdef bint esc, integer
        cdef Py_ssize_t e
        cdef char c = s[i]
        if c == 34:
            e = str_end(s, i + 1, n, &esc)
            if e < 0:
                return -1
            v = self._text(s, i + 1, e, esc)
            if v is None:
                return -1
            out[0] = v
            return e + 1
        if c == 110:
            out[0] = None
            return i + 4 if word(s, i, n, b"null", 4) else -1
        if c == 116:
            out[0] = True
            return i + 4 if word(s, i, n, b"true", 4) else -1
        if c == 102:
            out[0] = False
            return i + 5 if word(s, i, n, b"false", 5) else -1
        e = num_end(s, i, n, &integer)
        if e < 0:
            return -1
        if integer and e - i <= 18:
            out[0] = small_int(s, i, e)
            return e
        text = PyUnicode_DecodeUTF8(s + i, e - i, NULL)
        out[0] = int(text) if integer else text
        return e

    cdef Py_ssize_t _image(self, MapCol* m, const char* s, Py_ssize_t i, Py_ssize_t n) except -2:
        """A before/after value: an object -> its entries; anything else -> a null image."""
        cdef bint esc, integer
        cdef Py_ssize_t e
        cdef char c
        if s[i] != 123:
            i = skip(s, i, n, 0)
            if i >= 0:
                map_end(m, False)
            return i
        i = ws(s, i + 1, n)
        if i < n and s[i] == 125:
            map_end(m, True)
            return i + 1
        while True:
            if i >= n or s[i] != 34:
                return -1
            e = str_end(s, i + 1, n, &esc)
            if e < 0 or put_str(&m.names.data, s, i + 1, e, esc) < 0:
                return -1
            col_end(&m.names, True)
            i = ws(s, e + 1, n)
            if i >= n or s[i] != 58:
                return -1
            i = ws(s, i + 1, n)
            if i >= n:
                return -1
            c = s[i]
            if c == 34:
                e = str_end(s, i + 1, n, &esc)
                if e < 0 or put_str(&m.items.data, s, i + 1, e, esc) < 0:
                    return -1
                col_end(&m.items, True)
                i = e + 1
            elif c == 110:
                if not word(s, i, n, b"null", 4):
                    return -1
                col_end(&m.items, False)
                i += 4
            elif c == 116:
                if not word(s, i, n, b"true", 4):
                    return -1
                buf_put(&m.items.data, b"true", 4)
                col_end(&m.items, True)
                i += 4
            elif c == 102:
                if not word(s, i, n, b"false", 5):
                    return -1
                buf_put(&m.items.data, b"false", 5)
                col_end(&m.items, True)
                i += 5
            else:  # a number as printed; nested values are the python parse's (value_text)
                e = num_end(s, i, n, &integer)
                if e < 0:
                    return -1
                buf_put(&m.items.data, s + i, e - i)
                col_end(&m.items, True)
                i = e
            i = ws(s, i, n)
            if i >= n:
                return -1
            if s[i] == 44:
                i = ws(s, i + 1, n)
                continue
            if s[i] == 125:
                map_end(m, True)
                return i + 1
            return -1

    cdef object _columns_text(self, object name, const char* s, Py_ssize_t a, Py_ssize_t b):
        """The column list's JSON text as the python parse prints it (``columns_text``): the same
        object as the table's last one when the bytes are the same (no decoding, and the marks
        hash a cached str)."""
        last = self.last_columns.get(name)
        if last is not None:
            raw = <bytes>last[0]
            if PyBytes_GET_SIZE(raw) == b - a and memcmp(PyBytes_AS_STRING(raw), s + a, b - a) == 0:
                return last[1]
        raw = PyBytes_FromStringAndSize(s + a, b - a)
        try:
            text = self.columns_text(raw)
        except (UnicodeDecodeError, ValueError):
            return None
        self.last_columns[name] = (raw, text)
        return text

    cdef object _name(self, const char* s, Py_ssize_t oa, Py_ssize_t ob, bint oesc, bint has_owner,
                      Py_ssize_t ta, Py_ssize_t tb, bint tesc, bint has_table):
        """``OWNER.TABLE`` as the python parse names it (cached by the raw text); None: not taken."""
        self.scratch.len = 0
        buf_byte(&self.scratch, b"1"[0] if has_owner else b"0"[0])
        buf_byte(&self.scratch, b"1"[0] if has_table else b"0"[0])
        if has_owner:
            buf_put(&self.scratch, s + oa, ob - oa)
        buf_byte(&self.scratch, 0)
        if has_table:
            buf_put(&self.scratch, s + ta, tb - ta)
        raw = PyBytes_FromStringAndSize(self.scratch.data, self.scratch.len)
        name = self.names.get(raw)
        if name is not None:
            return name
        owner = self._text(s, oa, ob, oesc) if has_owner else None
        table = self._text(s, ta, tb, tesc) if has_table else None
        if (has_owner and owner is None) or (has_table and table is None):
            return None
        name = f"{owner}.{table}" if owner else str(table)
        self.names[raw] = name
        return name

    cdef Py_ssize_t _element(self, const char* s, Py_ssize_t i, Py_ssize_t n, Py_ssize_t index,
                             object key, list looked, object commit_scn, object xid) except -2:
        """One payload element (``s[i]`` is its ``{``) -> one event; -1: not taken."""
        cdef bint esc, seen_before = False, seen_after = False, seen_rid = False
        cdef bint has_owner = False, has_table = False, oesc = False, tesc = False
        cdef Py_ssize_t a, e, oa = 0, ob = 0, ta = 0, tb = 0, ca = -1, cb = -1
        cdef Py_ssize_t r = len(self.kind)
        op = None
        i = ws(s, i + 1, n)
        if i < n and s[i] == 125:
            return -1  # no op
        while True:
            if i >= n or s[i] != 34:
                return -1
            a = i + 1
            e = str_end(s, a, n, &esc)
            if e < 0:
                return -1
            i = ws(s, e + 1, n)
            if i >= n or s[i] != 58:
                return -1
            i = ws(s, i + 1, n)
            if i >= n:
                return -1
            if esc:  # an escaped key (the python parse's)
                return -1
            elif is_key(s, a, e, b"op", 2):
                if op is not None or s[i] != 34:
                    return -1
                e = str_end(s, i + 1, n, &esc)
                if e < 0 or esc or op_code(s, i + 1, e) < 0:
                    return -1  # other operations (DDL, checkpoints) are the python parse's
                op = _OPS[op_code(s, i + 1, e)]
                i = e + 1
            elif is_key(s, a, e, b"before", 6):
                if seen_before:
                    return -1
                seen_before = True
                i = self._image(&self.before, s, i, n)
            elif is_key(s, a, e, b"after", 5):
                if seen_after:
                    return -1
                seen_after = True
                i = self._image(&self.after, s, i, n)
            elif is_key(s, a, e, b"rid", 3):
                if seen_rid:
                    return -1
                seen_rid = True
                if s[i] == 34:
                    e = str_end(s, i + 1, n, &esc)
                    if e < 0 or put_str(&self.rid.data, s, i + 1, e, esc) < 0:
                        return -1
                    i = e + 1
                elif word(s, i, n, b"null", 4):
                    seen_rid = False
                    i += 4
                else:
                    return -1
            elif is_key(s, a, e, b"schema", 6):
                if word(s, i, n, b"null", 4):
                    i += 4
                elif s[i] != 123:
                    return -1
                else:
                    i = ws(s, i + 1, n)
                    if i < n and s[i] == 125:
                        i += 1
                    else:
                        while True:
                            if i >= n or s[i] != 34:
                                return -1
                            a = i + 1
                            e = str_end(s, a, n, &esc)
                            if e < 0:
                                return -1
                            i = ws(s, e + 1, n)
                            if i >= n or s[i] != 58:
                                return -1
                            i = ws(s, i + 1, n)
                            if i >= n:
                                return -1
                            if esc:
                                return -1
                            if (is_key(s, a, e, b"owner", 5) or is_key(s, a, e, b"table", 5)):
                                if s[i] == 34:
                                    e = str_end(s, i + 1, n, &esc)
                                    if e < 0:
                                        return -1
                                    if s[a] == 111:
                                        has_owner, oa, ob, oesc = True, i + 1, e, esc
                                    else:
                                        has_table, ta, tb, tesc = True, i + 1, e, esc
                                    i = e + 1
                                elif word(s, i, n, b"null", 4):
                                    if s[a] == 111:
                                        has_owner = False
                                    else:
                                        has_table = False
                                    i += 4
                                else:
                                    return -1
                            elif is_key(s, a, e, b"columns", 7):
                                ca = i
                                i = skip(s, i, n, 0)
                                cb = i
                            else:
                                i = skip(s, i, n, 0)
                            if i < 0:
                                return -1
                            i = ws(s, i, n)
                            if i >= n:
                                return -1
                            if s[i] == 44:
                                i = ws(s, i + 1, n)
                                continue
                            if s[i] == 125:
                                i += 1
                                break
                            return -1
            else:
                i = skip(s, i, n, 0)
            if i < 0:
                return -1
            i = ws(s, i, n)
            if i >= n:
                return -1
            if s[i] == 44:
                i = ws(s, i + 1, n)
                continue
            if s[i] == 125:
                i += 1
                break
            return -1
        if op is None:
            return -1
        if not seen_before:
            map_end(&self.before, False)
        if not seen_after:
            map_end(&self.after, False)
        if op == "begin" or op == "commit":
            # begin/commit carry no table, rowid or images (as the python parse leaves them)
            map_truncate(&self.before, r)
            map_truncate(&self.after, r)
            map_end(&self.before, False)
            map_end(&self.after, False)
            col_truncate(&self.rid, r)
            col_end(&self.rid, False)
            self.kind.append(op)
            self.tbl.append(None)
        else:
            col_end(&self.rid, seen_rid)
            name = self._name(s, oa, ob, oesc, has_owner, ta, tb, tesc, has_table)
            if name is None:
                return -1
            if ca >= 0:  # one copy of a column list per table and transaction is enough
                text = self._columns_text(name, s, ca, cb)
                if text is None:
                    return -1
                mark = (name, commit_scn, text)
                if mark not in self.seen:
                    self.sparse["columns"][r] = text
                    self.seen.add(mark)
                    self.undo.append((self.seen, mark))
            if key:
                mark = (name, commit_scn, xid)
                if mark not in self.keyed:
                    if not looked[0]:
                        looked[1] = self._key_names(key)
                        looked[0] = True
                    if looked[1]:
                        self.sparse["key_cols"][r] = looked[1]
                        self.keyed.add(mark)
                        self.undo.append((self.keyed, mark))
            self.kind.append("dml")
            self.tbl.append(name)
        self.op.append(op)
        self.elem.append(index)
        return i

    cdef object _key_names(self, object key):
        """key_columns(key), cached by the names of an OLR tag fragment key (``"ID":1,"X":"a"``);
        other keys (JSON objects, Debezium's) are key_columns' every time."""
        cdef const char* s
        cdef Py_ssize_t n, i, e
        cdef bint esc
        if key.__class__ is not bytes:
            return self.key_columns(key)
        s, n = PyBytes_AS_STRING(key), PyBytes_GET_SIZE(key)
        i = ws(s, 0, n)
        if i >= n or s[i] != 34 or not ascii_only(s, n):
            return self.key_columns(key)
        self.scratch.len = 0
        while True:
            e = str_end(s, i + 1, n, &esc)
            if e < 0 or esc:
                return self.key_columns(key)
            buf_put(&self.scratch, s + i + 1, e - i - 1)
            buf_byte(&self.scratch, 0)
            i = ws(s, e + 1, n)
            if i >= n or s[i] != 58:
                return self.key_columns(key)
            i = skip(s, i + 1, n, 0)
            if i < 0:
                return self.key_columns(key)
            i = ws(s, i, n)
            if i >= n:
                break
            if s[i] != 44:
                return self.key_columns(key)
            i = ws(s, i + 1, n)
            if i >= n or s[i] != 34:
                return self.key_columns(key)
        raw = PyBytes_FromStringAndSize(self.scratch.data, self.scratch.len)
        names = self.key_names.get(raw, _MISSING)
        if names is _MISSING:
            names = self.key_names[raw] = self.key_columns(key)
        return names

    cdef int _rollback(self, Py_ssize_t r) except -1:
        """Forget what a message not taken after all added (events from ``r`` on, its marks)."""
        for col in (self.kind, self.fmt, self.tbl, self.op, self.commit_scn, self.c_scn, self.c_idx,
                    self.elem, self.xid, self.commit_ts, self.full, self.parent):
            del col[r:]
        col_truncate(&self.rid, r)
        map_truncate(&self.before, r)
        map_truncate(&self.after, r)
        for at in self.sparse.values():
            for k in [k for k in at if k >= r]:
                del at[k]
        for marks, mark in self.undo:
            marks.discard(mark)
        self.undo.clear()
        return 0

    cdef Py_ssize_t _payload(self, const char* s, Py_ssize_t i, Py_ssize_t n, object key,
                             object commit_scn, object xid) except -2:
        """The payload array (``s[i]`` is its ``[``) -> events (their number in ``_count``); the
        index after it, or -1."""
        cdef Py_ssize_t count = 0
        looked = [False, None]
        self._count = 0
        i = ws(s, i + 1, n)
        if i < n and s[i] == 93:
            return i + 1
        while True:
            if i >= n or s[i] != 123:
                return -1
            i = self._element(s, i, n, count, key, looked, commit_scn, xid)
            if i < 0:
                return -1
            count += 1
            self._count = count
            i = ws(s, i, n)
            if i >= n:
                return -1
            if s[i] == 44:
                i = ws(s, i + 1, n)
                continue
            if s[i] == 93:
                return i + 1
            return -1

    cdef object _commit_us(self, object etm, object tm):
        if etm is self.last_etm and tm is self.last_tm:
            return self.last_us
        if self.last_etm is not _MISSING and etm == self.last_etm and tm == self.last_tm \
                and etm.__class__ is self.last_etm.__class__ and tm.__class__ is self.last_tm.__class__:
            self.last_etm, self.last_tm = etm, tm
            return self.last_us
        us = self.times(etm, tm)
        self.last_etm, self.last_tm, self.last_us = etm, tm, us
        return us

    cdef int _olr(self, bytes value, object key, Py_ssize_t j) except -2:
        """One record by the fast path: 1 when taken, 0 when left to the python parse."""
        cdef const char* s = PyBytes_AS_STRING(value)
        cdef Py_ssize_t n = PyBytes_GET_SIZE(value)
        cdef Py_ssize_t i, a, e, k, pat = -1, count = -1, r = len(self.kind)
        cdef bint esc, late = False
        cdef list out = [None]
        hdr = {}
        self.undo.clear()
        if not ascii_only(s, n):  # msgspec rejects invalid UTF-8 anywhere in the message
            try:
                PyUnicode_DecodeUTF8(s, n, NULL)
            except UnicodeDecodeError:
                return 0
        i = ws(s, 0, n)
        if i >= n or s[i] != 123:
            return 0
        i = ws(s, i + 1, n)
        if i < n and s[i] == 125:
            return 0
        while True:
            if i >= n or s[i] != 34:
                return self._fail(r)
            a = i + 1
            e = str_end(s, a, n, &esc)
            if e < 0:
                return self._fail(r)
            i = ws(s, e + 1, n)
            if i >= n or s[i] != 58:
                return self._fail(r)
            i = ws(s, i + 1, n)
            if i >= n:
                return self._fail(r)
            if esc:  # an escaped key (the python parse's)
                return self._fail(r)
            elif is_key(s, a, e, b"payload", 7):
                if pat >= 0 or s[i] != 91:
                    return self._fail(r)
                pat = i
                found = self._header(hdr)
                if found is None:  # read once the header is whole
                    i = skip(s, i, n, 0)
                else:
                    i = self._payload(s, i, n, key, found[0], found[3])
                    if i < 0:
                        return self._fail(r)
                    count = self._count
            elif header_key(s, a, e) >= 0:
                i = self._scalar(s, i, n, out)
                if i < 0:
                    return self._fail(r)
                name = _HEADER[header_key(s, a, e)]
                if name in hdr:
                    return self._fail(r)  # a repeated key: the python parse's
                hdr[name] = out[0]
                if count >= 0:
                    late = True
            else:
                i = skip(s, i, n, 0)
            if i < 0:
                return self._fail(r)
            i = ws(s, i, n)
            if i >= n:
                return self._fail(r)
            if s[i] == 44:
                i = ws(s, i + 1, n)
                continue
            if s[i] == 125:
                i += 1
                break
            return self._fail(r)
        if ws(s, i, n) != n or pat < 0:
            return self._fail(r)
        if count < 0 or late:
            found = self._header(hdr)
            if found is None:
                return self._fail(r)  # the header came after the payload: read it again with the whole header
            self._rollback(r)
            if self._payload(s, pat, n, key, found[0], found[3]) < 0:
                return self._fail(r)
            count = self._count
        commit_scn, c_scn, c_idx, xid, commit_us = found
        full = self.every_full or count > 1
        parent = j
        for k in range(count):
            self.fmt.append("olr")
            self.commit_scn.append(commit_scn)
            self.c_scn.append(c_scn)
            self.c_idx.append(c_idx)
            self.xid.append(xid)
            self.commit_ts.append(commit_us)
            self.full.append(full)
            self.parent.append(parent)
        self.undo.clear()
        return 1

    cdef int _fail(self, Py_ssize_t r) except -1:
        self._rollback(r)
        return 0

    cdef object _header(self, dict hdr):
        """(commit SCN, c_scn, c_idx, xid, commit time) as parse._olr_fields makes them; None
        when the commit SCN or the position is missing or unreadable."""
        try:
            commit_scn = _scn(hdr, "e_scn")
            if commit_scn is None and self.scn_is_commit:
                commit_scn = _scn(hdr, "scn")
            if commit_scn is None or "c_scn" not in hdr or "c_idx" not in hdr:
                return None
            c_scn, c_idx = int(hdr["c_scn"]), int(hdr["c_idx"])
        except (TypeError, ValueError):
            return None
        xid = hdr.get("xid", hdr.get("xidn"))
        if xid is not None and xid.__class__ is not str:
            xid = str(xid)
        try:
            us = self._commit_us(
                hdr.get("e_tm", hdr.get("e_tms")), hdr.get("tm", hdr.get("tms")) if self.tm_is_commit else None
            )
        except (TypeError, ValueError):
            return None
        return commit_scn, c_scn, c_idx, xid, us

    def add_batch(self, list keys, list values, general):
        """Every record: by the fast path, else ``general(j)`` (which calls :meth:`add_row`)."""
        cdef Py_ssize_t j
        for j in range(len(values)):
            value = values[j]
            if value.__class__ is not bytes or not self._olr(<bytes>value, keys[j], j):
                general(j)

    def finish(self):
        """The columns: lists by name, and the buffers of ``rid``, ``before`` and ``after``
        (data, int32 offsets, one validity byte per value; a map's offsets count entries)."""
        out = {
            "kind": self.kind, "fmt": self.fmt, "tbl": self.tbl, "op": self.op,
            "commit_scn": self.commit_scn, "c_scn": self.c_scn, "c_idx": self.c_idx, "elem": self.elem,
            "xid": self.xid, "commit_ts": self.commit_ts, "full": self.full, "parent": self.parent,
            "rid": (buf_bytes(&self.rid.data), buf_bytes(&self.rid.offsets), buf_bytes(&self.rid.valid)),
        }
        out["before"] = _map_buffers(&self.before)
        out["after"] = _map_buffers(&self.after)
        return out


cdef tuple _map_buffers(MapCol* m):
    return (
        buf_bytes(&m.offsets), buf_bytes(&m.valid),
        buf_bytes(&m.names.data), buf_bytes(&m.names.offsets),
        buf_bytes(&m.items.data), buf_bytes(&m.items.offsets), buf_bytes(&m.items.valid),
    )


cdef object _scn(dict hdr, str name):
    if name in hdr:
        v = hdr[name]
        if v is None or v.__class__ is bool:
            raise TypeError(name)
        return int(v)
    hexed = hdr.get(name + "s")
    return int(hexed, 16) if hexed is not None else None
