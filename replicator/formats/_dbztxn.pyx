# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Debezium's transaction metadata for the native Debezium commit (its own extension module).

BEGIN and END (DebeziumFormat.on_begin/on_commit): the envelope/key wrappers are taken once
from the python format (its own _value/_key around a marker payload), the payloads are
written here per transaction, byte for byte what orjson writes for the python dicts.

DebeziumCommitter (_debezium.pyx) holds a TxnMeta and calls its cdef methods
through ``replicator/formats/_dbztxn.pxd`` (the class's fields and methods), the only thing
_debezium takes from this module; it takes nothing from the core. It lives beside
replicator.formats.debezium, whose on_begin/on_commit it mirrors (and imports nothing above
the formats layer).
"""

import orjson as _orjson

from replicator.formats.debezium_schema import field as _dbz_field

_MARK = {"__replicator_marker__": 1}
_MARK_BYTES = b'{"__replicator_marker__":1}'


cdef class TxnMeta:
    """The fixed parts of a Debezium format's transaction metadata messages."""

    # Its fields and cdef methods are declared in _dbztxn.pxd (the core calls them).

    def __init__(self, fmt):
        from replicator.formats.debezium import TXN_SCHEMA

        self.value_head, self.value_tail = fmt.render_value(TXN_SCHEMA, _MARK).split(_MARK_BYTES)
        self.key_head, self.key_tail = fmt.render_key("io.debezium.connector.common.TransactionMetadataKey",
                                                [_dbz_field("id", "string", False)], _MARK).split(_MARK_BYTES)
        self.names = {}

    cdef bytes key(self, bytes xid_json):
        return self.key_head + b'{"id":' + xid_json + b"}" + self.key_tail

    cdef list begin(self, object fmt, object ctx, object pos, bytes xid_json):
        """DebeziumFormat.on_begin (envelope and flatten)."""
        data = (self.value_head + b'{"status":"BEGIN","id":' + xid_json
                + b',"event_count":null,"data_collections":null,"ts_ms":%d}' % (ctx.txn.begin_time * 1000)
                + self.value_tail)
        return [fmt.message(data, pos, ctx, key=self.key(xid_json))]

    cdef list commit(self, object fmt, object ctx, object pos, bytes xid_json):
        """DebeziumFormat.on_commit: the event count per data collection (fmt.orders)."""
        cdef long long total = 0
        orders = fmt.orders if fmt.orders_of is ctx else {}
        parts = []
        names = self.names
        for name, count in orders.items():
            text = names.get(name)
            if text is None:
                if len(names) > 4096:
                    names.clear()
                text = names[name] = _orjson.dumps(name)
            parts.append(b'{"data_collection":' + text + b',"event_count":%d}' % count)
            total += count
        data = (self.value_head + b'{"status":"END","id":' + xid_json + b',"event_count":%d' % total
                + b',"data_collections":[' + b",".join(parts) + b'],"ts_ms":%d}' % (ctx.txn.commit_time * 1000)
                + self.value_tail)
        return [fmt.message(data, pos, ctx, key=self.key(xid_json))]
