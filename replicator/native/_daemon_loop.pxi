# The daemon's record loop (included by _core.pyx): RecordLoop fed block by block.
#
# The daemon's reader thread (replicator.redo.online.RedoFollower with raw=True) hands over
# whole blocks as it reads them: an archived log in large buffers, a growing online log
# whatever was written since the last poll (only blocks that passed the block checks). The
# parser thread feeds them to one BlockLoop per sequence, which checks, frames and analyses
# them exactly as RecordLoop does for a batch file; a sequence that moves from its online
# log to the archived copy (the group was reused) goes on in the same loop at the next block.
# Instead of a python callback per LWN, the loop keeps what the engine's per-LWN bookkeeping
# needs (LWNs, their blocks, the last LWN's SCN and time) for the engine to read after a feed.


cdef class BlockLoop(RecordLoop):
    """RecordLoop for the daemon: blocks fed as the reader delivers them, LWN totals kept.

    ``lwns`` (RecordLoop's) counts the LWNs analysed, ``lwn_blocks`` the blocks they span;
    ``last_scn`` and ``last_time`` are the SCN and raw redo time of the last one.
    """

    cdef public long long lwn_blocks
    cdef uint64_t _last_scn
    cdef uint32_t _last_time

    def __init__(self, parser, header, str path, bint verify_checksum, long long first_block):
        RecordLoop.__init__(self, parser, header, path, verify_checksum, first_block, None)
        self.lwn_blocks = 0

    cdef _analyse(self):
        RecordLoop._analyse(self)
        self.lwn_blocks += self.lwn_end_block - self.lwn_first
        self._last_scn = self.lwn_scn
        self._last_time = self.lwn_time

    @property
    def last_scn(self):
        """SCN of the last LWN analysed."""
        return self._last_scn

    @property
    def last_time(self):
        """Raw redo time of the last LWN analysed."""
        return self._last_time

    def set_path(self, str path):
        """The file the next blocks come from (named in errors): an online log's archived copy."""
        self.path = path
