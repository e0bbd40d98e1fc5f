"""Typed interface of the native protobuf renderer (replicator/native/_protobuf.pyx).

Checked against the built module by stubtest (tests/unit/test_gates.py, with
tests/unit/stubtest_allowlist.txt). Python reaches it as ``replicator.native.protobuf()``.
"""

from typing_extensions import disjoint_base

from replicator.native._core import JsonCommitter

# Oracle type codes and the flag bit the column plans test (module constants of _protobuf.pyx)
TYPE_VARCHAR2: int
TYPE_NUMBER: int
TYPE_DATE: int
TYPE_RAW: int
TYPE_CHAR: int
TYPE_TIMESTAMP: int
TYPE_TIMESTAMP_LTZ: int
TYPE_TIMESTAMP_TZ: int
TYPE_INTERVAL_YM: int
TYPE_INTERVAL_DS: int
TYPE_BINARY_FLOAT: int
TYPE_BINARY_DOUBLE: int
FLAG_RAW_HEX: int  # replicator.flags.FLAG_RAW_HEX, imported

@disjoint_base
class ProtobufCommitter(JsonCommitter):
    """Commits transactions for the protobuf format natively (RedoResponse wire bytes)."""
