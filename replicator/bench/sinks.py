"""Sinks the benchmarks hand to the pipeline in place of a writer: count, or write one file."""

from __future__ import annotations

from replicator.errors import RuntimeFailure
from replicator.events import Message


class CountingSink:
    """A discard writer that counts what it is given (bytes and messages)."""

    def __init__(self) -> None:
        self.messages = 0
        self.bytes = 0

    def write(self, batch: list[Message]) -> None:
        self.messages += len(batch)
        self.bytes += sum(len(m.data) for m in batch)

    def write_runs(self, batch: list) -> None:
        """Pipeline.native_runs: ``batch`` holds Messages and native MessageRuns (one buffer each)."""
        for item in batch:
            if type(item) is Message:
                self.messages += 1
                self.bytes += len(item.data)
            else:
                self.messages += len(item)
                self.bytes += item.body_bytes

    def flush(self) -> None:
        pass


class FileSink(CountingSink):
    """Writes messages to one file, one per line (the file writer's default layout)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        try:
            self._f = open(path, "wb", buffering=1 << 20)
        except OSError as exc:
            raise RuntimeFailure(f"cannot open {path} for writing: {exc.strerror or exc}", 10006) from None

    def write(self, batch: list[Message]) -> None:
        super().write(batch)
        self._f.write(b"".join(m.data + b"\n" for m in batch))

    def write_runs(self, batch: list) -> None:
        """As write; a MessageRun's buffer already has the one-per-line layout."""
        super().write_runs(batch)
        self._f.write(b"".join(item.data + b"\n" if type(item) is Message else item.data for item in batch))

    def flush(self) -> None:
        self._f.flush()

    def close(self) -> None:
        self._f.close()
