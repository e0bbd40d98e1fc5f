"""The ``discard`` writer: every message is built and confirmed at once (olr-interfaces.md §4.4).

Useful to measure the parser and formats without a sink, and to run a batch job whose
only product is the checkpoint/schema files. Like OLR's, it starts replication by itself.
"""

from __future__ import annotations

from typing import Any

from replicator.events import Message
from replicator.writers.base import Writer
from replicator.writers.capabilities import WholeRunWriter


class DiscardWriter(Writer, WholeRunWriter):
    """Drops the bytes and confirms each message immediately (checkpoints included)."""

    type_name = "discard"
    writes_runs_whole = True  # write_runs confirms each run whole

    def write(self, batch: list[Message]) -> None:
        """Confirm the whole batch in order; nothing is written anywhere."""
        for message in batch:
            if self.must_send(message):
                self.messages_sent += 1
                self.bytes_sent += len(message.data)
            self.confirm(message)

    def write_runs(self, batch: list[Any]) -> None:
        """Pipeline.native_runs: Messages and native MessageRuns (counted whole) in order."""
        for item in batch:
            if type(item) is Message:
                self.write([item])
            else:
                self.messages_sent += len(item)
                self.bytes_sent += item.body_bytes
                self.confirm_run(item)

    def send(self, message: Message) -> None:
        """Count and confirm one message."""
        self.messages_sent += 1
        self.bytes_sent += len(message.data)
        self.confirm(message)
