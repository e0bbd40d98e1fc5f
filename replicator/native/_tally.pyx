# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The metrics tally of a natively committed transaction (the core calls it through _tally.pxd)."""

# The metrics tally of a natively committed transaction
#
# The python engine counts every output change of a transaction into the daemon's
# replicator.ops.metrics_tally.Tally (Tally.transaction: one dml_ops entry per row keyed by
# (type, "out", owner, table), the rows total, then the commit). A native commit has no
# change objects: its rows are counted here per (table slot, operation) in a C array, and
# only the distinct counts reach the tally's dicts, once per transaction.
#
# A module of its own (setup.py MODULES, docs/native-engine.md "Native modules"): what it
# shares with the other native modules crosses through .pxd files (_structs.pxd, _core.pxd, _tally.pxd).

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memcpy, memmove, memcmp, memset, strlen
from libc.stdio cimport snprintf
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t

from replicator.native._structs cimport *

include "_defs.pxi"


_DML_TYPES = (None, "insert", "update", "delete")  # by OP_INSERT, OP_UPDATE, OP_DELETE


cdef int tally_rows(object tally, Work* w, list tables) except -1:
    """Add the rows of ``w`` (their table slots index ``tables``) to ``tally`` as Tally.change."""
    cdef Py_ssize_t nslots = len(tables)
    cdef Py_ssize_t r, i
    cdef int op
    cdef long long* counts
    cdef long long n
    if w.nrows == 0:
        return 0
    counts = <long long*> calloc(nslots * 4 + 4, sizeof(long long))
    if counts == NULL:
        raise MemoryError()
    try:
        for r in range(w.nrows):
            op = w.rows[r].op
            if 0 < op < 4 and 0 <= w.rows[r].table < nslots:
                counts[w.rows[r].table * 4 + op] += 1
        dml = tally.dml
        mode = tally.tag_names
        for i in range(nslots * 4):
            n = counts[i]
            if n == 0:
                continue
            key = _dml_key(mode, tables[i // 4].table, i % 4)  # a plan's public table: per (table, op), not per row
            dml[key] = dml.get(key, 0) + n
        tally.rows += w.nrows
    finally:
        free(counts)
    return 0


cdef object _dml_key(str mode, object table, int op):
    """Tally._names + the dml key of a row of ``table`` (None: a table the dictionary lacks)."""
    owner = name = ""
    if mode != "none" and table is not None:
        if mode == "all" or mode == ("sys" if table.system else "filter"):
            owner, name = table.owner, table.name
    return (_DML_TYPES[op], "out", owner, name)


cdef int tally_commit(object tally) except -1:
    """Tally.count_transaction("commit", "out") of an output transaction."""
    transactions = tally.transactions
    key = ("commit", "out")
    transactions[key] = transactions.get(key, 0) + 1
    return 0
