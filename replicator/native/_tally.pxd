# The C-level boundary of replicator.native._tally: the two calls the core's commit makes.
#
# _tally cimports only _structs.pxd (phase A's Work) (no class of the core: a plan's table is read through its
# public attribute, once per table and operation of a transaction), so the core can cimport it.

from replicator.native._structs cimport Work


cdef int tally_rows(object tally, Work* w, list tables) except -1
cdef int tally_commit(object tally) except -1
