"""Typed interface of the Spark job's compiled OLR JSON parse (replicator/spark/_parse.pyx).

Checked against the built module by stubtest (tests/unit/test_gates.py, with
tests/unit/stubtest_allowlist.txt). Called by replicator/spark/parse.py (_compiled_batch).
"""

from collections.abc import Callable, Iterable
from typing import Any

from typing_extensions import disjoint_base

@disjoint_base
class EventBuilder:
    """The event columns of one batch of Kafka records."""

    kind: list[Any]
    fmt: list[Any]
    tbl: list[Any]
    op: list[Any]
    commit_scn: list[Any]
    c_scn: list[Any]
    c_idx: list[Any]
    elem: list[Any]
    xid: list[Any]
    commit_ts: list[Any]
    full: list[Any]
    parent: list[Any]
    sparse: dict[str, dict[int, Any]]
    seen: set[tuple[Any, Any, Any]]
    keyed: set[tuple[Any, Any, Any]]
    def __init__(
        self,
        scn_is_commit: bool,
        tm_is_commit: bool,
        every_full: bool,
        key_columns: Callable[[bytes | None], list[str] | None],
        times: Callable[[Any, Any], int | None],
        value_text: Callable[[Any], str | None],
        columns_text: Callable[[bytes], str],
        sparse: Iterable[str],
    ) -> None: ...
    @property
    def count(self) -> int: ...
    def add_row(self, row: dict[str, Any], j: int) -> None: ...
    def add_batch(
        self, keys: list[bytes | None], values: list[bytes | None], general: Callable[[int], None]
    ) -> None: ...
    def finish(self) -> dict[str, Any]: ...
