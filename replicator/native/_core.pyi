"""Typed interface of the compiled core (replicator/native/_core.pyx).

Checked against the built module by stubtest (tests/unit/test_gates.py; what stubtest cannot
see in Cython is in tests/unit/stubtest_allowlist.txt). Every ``cdef class`` with fields of
its own is a ``@disjoint_base``: its instance layout is C's.
"""

from typing import Any

from typing_extensions import disjoint_base

# Oracle type codes and the flag bit the column plans test (module constants of _core.pyx)
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
class JsonCommitter:
    """Commits transactions for the OpenLogReplicator JSON format natively."""

    native_transactions: int
    python_transactions: int
    runs: bool  # hand a transaction's messages over as one MessageRun (else a list)
    tally: Any
    stage2: Any  # replicator.native._stage2.Stage2, or None

    def __init__(self, fmt: Any, pipeline: Any, stage2: Any = None) -> None: ...
    def commit(self, parser: Any, txn: Any, record: Any) -> bool:
        """Output ``txn``; False when the python engine must process it instead."""

@disjoint_base
class MessageRun:
    """A committed transaction's messages in one buffer; the sequence of Messages it stands for."""

    data: bytes
    scn: int
    seq: int
    xid: int
    @property
    def body_bytes(self) -> int: ...
    @property
    def last_idx(self) -> int: ...
    def message(self, i: int) -> Any: ...
    def __len__(self) -> int: ...
    def __getitem__(self, i: Any, /) -> Any: ...
    def __iter__(self) -> Any: ...

def native_version() -> str: ...
def value_text(kind: int, param: int, offset: int, data: bytes) -> bytes | None:
    """The native text of one value (tests), None when the python renderer is used; ``kind``
    indexes VALUE_KINDS."""

VALUE_KINDS: tuple[str, ...]
