"""Typed interface of stage 2 (replicator/native/_stage2.pyx): the decode/format workers.

``replicator.native.stage2().Stage2`` is handed to the core's JsonCommitter, which creates it
for a run with decode workers. Checked by stubtest (tests/unit/test_gates.py).
"""

from typing import Any

from typing_extensions import disjoint_base

from replicator.native._core import JsonCommitter

@disjoint_base
class Stage2:
    """Decode/format worker threads of a JsonCommitter and the ordered merge (_stage2.pyx)."""

    workers: int
    queued: int
    rerendered: int

    def __init__(self, committer: JsonCommitter, pipeline: Any, workers: int) -> None: ...
    def commit(self, parser: Any, txn: Any, record: Any) -> bool:
        """JsonCommitter.commit with stage 2 in the workers."""

    def barrier(self) -> None:
        """Hand every queued transaction to the pipeline, in commit order."""
    def finish(self) -> None:
        """barrier, then stop the worker threads."""
