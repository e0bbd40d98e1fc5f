"""What a batch run did (files, bytes, LWNs, transactions, rows, time), for the CLI summary and
the benchmark; filled by :class:`~replicator.runner.pipeline.Pipeline` and the RAC merge."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RunStats:
    """What a run did, for the CLI summary and the benchmark."""

    files: int = 0
    bytes_read: int = 0
    lwns: int = 0
    transactions: int = 0
    rows: int = 0
    messages: int = 0
    seconds: float = 0.0
    last_scn: int = 0
    per_file: list[tuple[str, int]] = field(default_factory=list)
    stopped: bool = False  # ended early by StopRun (a signal), not at the end of its files
