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

@disjoint_base
class RecordDispatcher:
    """Parser._dispatch in C for one record or an LWN's records (the (5.1, 11.x) pairs stored natively)."""

    def __init__(self) -> None: ...  # stubtest sees (*args, **kwargs): see the allowlist
    def dispatch(self, parser: Any, record: Any) -> bool:
        """Process ``record``; False (nothing done) when the python parser must process it."""
    def dispatch_records(self, parser: Any, records: list[Any]) -> None:
        """Process an LWN's records in order (each natively, else by ``parser.process_record``)."""

@disjoint_base
class RecordLoop(RecordDispatcher):
    """Block checks, record framing, LWNs and dispatch of one archived redo file, in C."""

    lwns: int

    def __init__(
        self, parser: Any, header: Any, path: str, verify_checksum: bool, first_block: int, on_lwn: Any = None
    ) -> None: ...
    def feed(self, buf: bytes, first_block: int, count: int, checked: bool = False) -> None:
        """Check ``count`` blocks read from ``first_block`` on (unless ``checked``: _framing's check_chunk
        passed them); analyse every LWN they complete."""
    def finish(self) -> None:
        """The end of the valid data: analyse the last LWN."""

def native_version() -> str: ...
def value_text(kind: int, param: int, offset: int, data: bytes) -> bytes | None:
    """The native text of one value (tests), None when the python renderer is used; ``kind``
    indexes VALUE_KINDS."""

VALUE_KINDS: tuple[str, ...]

def vector_passes(data: bytes, start: int, header_size: int, endian: str, compat: int) -> bool:
    """The C field checks on one vector (tests): True when it passes, as invariants.check_vector."""
