"""A sink that keeps what a pipeline hands over, Messages and native MessageRuns as they are
(tests of the run path compare them with what writers put on disk or on the wire)."""

from __future__ import annotations

from typing import Any

from replicator.events import Message


class RunSink:
    """Keeps what the pipeline hands over (Messages and MessageRuns)."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def write(self, batch: list[Message]) -> None:
        self.items.extend(batch)

    def write_runs(self, batch: list[Any]) -> None:
        self.items.extend(batch)

    def flush(self) -> None:
        pass
