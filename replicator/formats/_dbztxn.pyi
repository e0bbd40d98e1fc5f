"""Typed interface of Debezium's native transaction metadata (replicator/formats/_dbztxn.pyx).

Checked against the built module by stubtest (tests/unit/test_gates.py, with
tests/unit/stubtest_allowlist.txt). The core uses TxnMeta through its cdef methods only.
"""

from typing import Any

from typing_extensions import disjoint_base

@disjoint_base
class TxnMeta:
    """The fixed parts of a Debezium format's transaction metadata messages."""

    def __init__(self, fmt: Any) -> None: ...
