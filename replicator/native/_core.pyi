"""Typed interface of the compiled core (replicator/native/_core.pyx)."""

from typing import Any

class JsonCommitter:
    """Commits transactions for the OpenLogReplicator JSON format natively."""

    native_transactions: int
    python_transactions: int

    def __init__(self, fmt: Any, pipeline: Any) -> None: ...
    def commit(self, parser: Any, txn: Any, record: Any) -> bool:
        """Output ``txn``; False when the python engine must process it instead."""

def native_version() -> str: ...
def vector_passes(data: bytes, start: int, header_size: int, endian: str, compat: int) -> bool:
    """The C field checks on one vector (tests): True when it passes, as invariants.check_vector."""
