# The C-level boundary of replicator.native._core: what the other native modules cimport.
#
# Cython reads this file when it compiles _core.pyx (the declarations below are the ones of
# _core's own MessageRun, not repeated in the .pyx) and when a module does
# ``from replicator.native._core cimport MessageRun`` (_kafka.pyx, _runframes.pyx): that module
# reads a run's C arrays directly (no call, no Python object per message), and importing it
# imports _core. Declare here only what crosses a module boundary; a change to this file
# rebuilds every module that cimports it (setup.py).

from libc.stdint cimport int64_t


cdef class MessageRun:
    """A committed transaction's messages rendered into one buffer (see _core.pyx)."""

    cdef readonly bytes data
    cdef readonly object scn
    cdef readonly object seq
    cdef readonly object xid
    cdef list tables        # table of each slot in tabs
    cdef int64_t* ends      # end of message i's body in data (its newline is at ends[i])
    cdef int64_t* idxs
    cdef int* tabs          # slot in tables, -1: no table (begin, commit, FULL)
    cdef Py_ssize_t n

    cpdef message(self, Py_ssize_t i)
