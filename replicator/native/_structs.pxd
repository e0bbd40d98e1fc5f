# Phase A's C structures, shared by the native engine's modules (a .pxd without a module).
#
# The modules that walk phase A's pairs and rows cimport this file
# (``from replicator.native._structs cimport ...``): the structs are plain C layouts, so nothing
# here is a call across modules or an import at run time. The byte buffer and the inline byte
# and value helpers are replicator/values/_buf.pxd (cimported on their own: the layers below
# native use them too). A change rebuilds every module that cimports it (setup.py MODULES).

from libc.stdint cimport uint8_t, uint32_t, uint64_t

from replicator.values._buf cimport Val  # a column value in an image (read by the renderers too)


# ----------------------------------------------------------------------------- structures
cdef struct CV:
    const uint8_t* p        # vector start
    int opcode
    int nf                  # field count
    Py_ssize_t fi           # first field in the field arena


cdef struct Kdo:
    bint valid
    int op
    bint rowdeps
    bint kdom2
    uint32_t bdba
    int slot
    int fb
    int cc
    int size_delt
    const uint8_t* nulls
    int nulls_len
    int nrow                # QMI/QMD: rows, and their slots (NULL when the field is short)
    const uint8_t* slots


cdef struct Supp:
    bint valid
    int fb
    int cc
    int before
    int after
    uint32_t bdba
    int slot
    const uint8_t* nums     # NULL: no values
    const uint8_t* lens
    int first_value


cdef struct Pair:
    CV u
    CV r
    bint big
    uint32_t obj
    uint32_t data_obj
    uint64_t scn
    uint32_t time
    uint64_t offset
    Kdo uk
    Kdo rk
    Supp supp
    int ufirst
    const uint8_t* unums    # URP column numbers of the undo, NULL = None


cdef struct Row:
    int op
    int pair                # first pair of the row (obj, offset)
    uint32_t obj
    uint32_t data_obj
    uint64_t scn
    uint32_t time
    uint32_t bdba
    int slot
    uint64_t offset
    int table               # index into the transaction's table list
    int ncols
    Py_ssize_t img          # before image at img, after at img + ncols


cdef struct Field:
    int off
    int len


cdef struct Work:
    # Everything phase A builds, freed by work_free.
    Pair* pairs
    Py_ssize_t npairs
    Py_ssize_t cap_pairs
    Field* fields
    Py_ssize_t nfields
    Py_ssize_t cap_fields
    Row* rows
    Py_ssize_t nrows
    Py_ssize_t cap_rows
    Val* vals
    Py_ssize_t nvals
    Py_ssize_t cap_vals


cdef struct Grouping:
    # rows.group_rows state: the open row group carries over from one chunk to the next.
    int* idx                # pair indexes of the group, in row order
    int len
    int cap
    int op
    Val* scratch            # build_row's supplemental images
    Py_ssize_t scratch_cap
    uint32_t last_obj       # the last object's table slot (rows of one table come in runs)
    int last_slot           # -1: none yet
