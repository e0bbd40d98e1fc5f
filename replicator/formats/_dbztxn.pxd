# The C-level boundary of replicator.formats._dbztxn: what replicator.native._debezium cimports.
#
# DebeziumCommitter holds a TxnMeta and calls its cdef methods (a C call through the class's
# vtable, as when both were one module); importing _core imports this module.


cdef class TxnMeta:
    """The fixed parts of a Debezium format's transaction metadata messages (see _dbztxn.pyx)."""

    cdef bytes value_head, value_tail, key_head, key_tail
    cdef dict names    # collection name -> its JSON string

    cdef bytes key(self, bytes xid_json)
    cdef list begin(self, object fmt, object ctx, object pos, bytes xid_json)
    cdef list commit(self, object fmt, object ctx, object pos, bytes xid_json)
