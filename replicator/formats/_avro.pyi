"""Typed interface of the native Avro encoders (replicator/formats/_avro.pyx).

Checked against the built module by stubtest (tests/unit/test_gates.py, with
tests/unit/stubtest_allowlist.txt). Python reaches it as ``replicator.formats.framework.native_avro()``.
"""

from typing import Any

from typing_extensions import disjoint_base

from replicator.formats._rowvalues import RowImages

@disjoint_base
class ColumnCodes:
    """Per visible column of a table view: how an Avro encoder writes its value."""

    def __init__(self, kinds: list[int], p1: list[int], p2: list[int], extra: list[bytes], fallback: Any) -> None: ...

def avro_envelope(
    rows: RowImages,
    r: int,
    codes: ColumnCodes,
    head: bytes,
    source_a: bytes,
    ts_ms: int,
    source_b: bytes,
    commit_scn: int,
    c_scn: int,
    c_idx: int,
    op: bytes,
    now_ms: int,
) -> bytes:
    """One ``avro`` data message of row ``r``."""

def dts_record(
    rows: RowImages,
    r: int,
    codes: ColumnCodes,
    serial: int,
    time: int,
    safe_txid: bytes,
    operation: int,
    object_name: bytes,
    now_ms: int,
    tags_fields: bytes,
) -> bytes:
    """One DTS Avro Record of row ``r``."""

def present_json(rows: RowImages, r: int, side: int, fragments: list[bytes]) -> bytes:
    """``{`` + the fragments of the columns the image holds + ``}``."""
