"""Reading a sink back: the :class:`SinkReader` protocol and the readers of this release.

A reader streams what the sink holds into a :class:`ChangeOut`: OpenLogReplicator JSON
messages (:meth:`ChangeOut.message` decodes and digests them), or changes it digested
itself (:meth:`ChangeOut.change`, for a sink that keeps decoded rows, such as a lake's
change log), with a *place* -- an integer only the reader interprets, handed back to
:meth:`SinkReader.locate` for the report. It tells which changes the sink claims to hold
everything up to (:meth:`ChangeOut.claim`: the last message of a file series, of each
Kafka partition) and reports what is wrong beyond single changes (:meth:`ChangeOut.finding`:
a rotation file missing, a torn or unreadable message).

Readers here: :class:`FileSink` (a file writer's output, ``%i`` rotation included, and a
``replicator client`` capture, both one message per line) and :class:`KafkaSink` (every
partition of one or more topics); the Spark job's Delta lake is :class:`replicator.verify.delta.DeltaSink`.
Formats: OpenLogReplicator JSON (``json``, ``debezium``) only; anything else is refused with error 10401.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from replicator.errors import RuntimeFailure
from replicator.formats.olr_digest import KIND_DDL, KIND_ROW, KIND_TXN, Change, ChangeId

UNSUPPORTED = 10401
UNREADABLE = 10402
ALL_KINDS = frozenset({KIND_TXN, KIND_ROW, KIND_DDL})
_READ = 4 << 20  # bytes per read of an output file
_LINE_BITS = 40  # a file place is (file number << 40) | line number


class ChangeOut(Protocol):
    """Where a reader puts what the sink holds."""

    def message(self, body: bytes, place: int) -> ChangeId | None:
        """An OpenLogReplicator JSON message: the identity of its last change (None for a
        checkpoint message); ValueError (or KeyError, TypeError) when it is not such a message."""
        ...

    def change(self, change: Change, place: int) -> None:
        """A change the reader digested itself (formats.olr_digest.change_digest)."""
        ...

    def claim(self, cid: ChangeId) -> None:
        """The sink holds every change of the stream up to this one (its last message)."""
        ...

    def finding(self, kind: str, text: str, where: str) -> None:
        """Something wrong that is not one change: ``kind`` is rotation, torn or unreadable."""
        ...


@dataclass(slots=True)
class Located:
    """Where a change is in the sink and the message (or row) holding it, for the report."""

    where: str
    doc: dict[str, Any]


@dataclass(slots=True)
class SinkStats:
    """What reading the sink took."""

    messages: int = 0
    bytes: int = 0
    seconds: float = 0.0
    checkpoints: int = 0
    parts: list[str] = field(default_factory=list)  # files or topic partitions read


class SinkReader(Protocol):
    """A sink read back for ``replicator verify``."""

    label: str  # what is read ("file /out/cdc-%i.json", "kafka topic cdc")
    kinds: frozenset[int]  # the change kinds it holds (olr_digest.KIND_*): the redo is compared on these
    part_shift: int  # places of one part (a file series, a partition) grow in sink order; part = place >> part_shift

    def scan(self, out: ChangeOut) -> SinkStats:
        """Stream everything the sink holds into ``out``."""
        ...

    def locate(self, places: set[int]) -> dict[int, Located]:
        """Where the messages at ``places`` are, and their decoded documents."""
        ...


def _take(out: ChangeOut, body: bytes, place: int, where: Callable[[], str], stats: SinkStats) -> ChangeId | None:
    """``body`` into ``out``: the identity of its last change; None for a checkpoint message
    or an unreadable one (which becomes a finding)."""
    try:
        last = out.message(body, place)
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        out.finding("unreadable", f"not an OpenLogReplicator JSON message ({type(exc).__name__}: {exc})", where())
        return None
    stats.messages += 1
    if last is None:
        stats.checkpoints += 1
    return last


# -- files ----------------------------------------------------------------------------------------


def output_files(pattern: Any) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The files of a file writer ``output`` pattern (config.writer.OutputPattern) in write
    order, and findings about them: a ``%i`` number missing between the first and the last
    file is a removed rotation file."""
    if pattern.mode == "fixed":
        return [pattern.name()], []
    try:
        entries = os.listdir(pattern.directory)
    except OSError as exc:
        raise RuntimeFailure(
            f"output directory {pattern.directory}: cannot be read: {exc.strerror}", UNREADABLE
        ) from exc
    start, end = len(pattern.prefix), len(pattern.suffix)
    found: dict[str, str] = {}
    for entry in entries:
        if len(entry) <= start + end or not entry.startswith(pattern.prefix) or not entry.endswith(pattern.suffix):
            continue
        middle = entry[start : len(entry) - end]
        path = os.path.join(pattern.directory, entry)
        if (pattern.mode == "timestamp" or (middle.isdigit() and middle.isascii())) and os.path.isfile(path):
            found[middle] = path
    if pattern.mode == "timestamp":  # strftime names of one format sort in time order
        return [found[k] for k in sorted(found)], []
    numbers = sorted((int(k), p) for k, p in found.items())
    findings = []
    if pattern.mode == "num":
        present = {n for n, _ in numbers}
        for n in range(numbers[0][0] + 1, numbers[-1][0]) if numbers else ():
            if n not in present:
                missing = pattern.name(str(n).zfill(pattern.fill))
                findings.append(
                    (
                        "rotation",
                        f"rotation file {missing} is missing (the files numbered "
                        f"{numbers[0][0]} to {numbers[-1][0]} are there)",
                        missing,
                    )
                )
    return [p for _, p in numbers], findings


class FileSink:
    """Files holding one message per line: a file writer's output (with its rotation) or what
    ``replicator client`` printed. ``newline`` is the separator (``\\n``; ``\\r\\n`` for
    new-line 2). The last message of each file is a claim (with ``%s`` names the stream's
    last message may be in any file)."""

    kinds = ALL_KINDS
    part_shift = _LINE_BITS  # a file per part

    def __init__(
        self, files: list[str], label: str, newline: bytes = b"\n", findings: list[tuple[str, str, str]] | None = None
    ) -> None:
        if not files:
            raise RuntimeFailure(f"{label}: no output file found", UNREADABLE)
        self.files = files
        self.label = label
        self.newline = newline
        self._findings = findings or []

    def _lines(self, path: str, stats: SinkStats | None = None) -> Iterator[tuple[int, bytes, bool]]:
        """(line number, body, complete) of one file; ``complete`` is False for a last line
        without its newline."""
        sep = self.newline
        try:
            f = open(path, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise RuntimeFailure(f"output file {path}: cannot be read: {exc.strerror}", UNREADABLE) from exc
        with f:
            rest = b""
            line = 0
            while True:
                chunk = f.read(_READ)
                if stats is not None:
                    stats.bytes += len(chunk)
                if not chunk:
                    break
                parts = (rest + chunk).split(sep)
                rest = parts.pop()
                for body in parts:
                    line += 1
                    yield line, body, True
            if rest:
                yield line + 1, rest, False

    def scan(self, out: ChangeOut) -> SinkStats:
        stats = SinkStats(parts=list(self.files))
        started = time.perf_counter()
        for kind, text, where in self._findings:
            out.finding(kind, text, where)
        for number, path in enumerate(self.files):
            last: ChangeId | None = None
            for line, body, complete in self._lines(path, stats):
                if not complete:
                    out.finding(
                        "torn", f"the last message of {path} has no line end (written partly?)", f"{path} line {line}"
                    )
                if not body:
                    out.finding("unreadable", "empty line", f"{path} line {line}")
                    continue
                cid = _take(out, body, (number << _LINE_BITS) | line, lambda: f"{path} line {line}", stats)  # noqa: B023 - called at once
                if cid is not None:
                    last = cid
            if last is not None:  # %s names: a file is reopened when an older sequence's transaction commits
                out.claim(last)
        stats.seconds = time.perf_counter() - started
        return stats

    def locate(self, places: set[int]) -> dict[int, Located]:
        from replicator.formats.olr_digest import decode

        found: dict[int, Located] = {}
        by_file: dict[int, set[int]] = {}
        for place in places:
            by_file.setdefault(place >> _LINE_BITS, set()).add(place & ((1 << _LINE_BITS) - 1))
        for number, lines in sorted(by_file.items()):
            path = self.files[number]
            last = max(lines)
            for line, body, _ in self._lines(path):
                if line in lines:
                    try:
                        doc = decode(body)
                    except ValueError:
                        doc = {"unreadable": body[:200].decode("utf-8", "replace")}
                    found[(number << _LINE_BITS) | line] = Located(f"{path} line {line}", doc)
                if line >= last:
                    break
        return found


# -- Kafka ----------------------------------------------------------------------------------------

_CONSUMER_KEYS = re.compile(
    r"(bootstrap\.servers|metadata\.broker\.list|security\.protocol|sasl\..*|ssl\..*"
    r"|socket\..*|broker\.address\.family|client\.rack)$"
)
_PART_BITS = 44  # a Kafka place is (partition number in this reader << 44) | offset


def consumer_config(properties: dict[str, str]) -> dict[str, str]:
    """The kafka writer's ``properties`` a consumer needs (brokers, security), plus ours."""
    conf = {k: v for k, v in properties.items() if _CONSUMER_KEYS.match(k)}
    conf.update(
        {
            "group.id": "replicator-verify",
            "enable.auto.commit": "false",
            "enable.partition.eof": "true",
            "auto.offset.reset": "earliest",
            "session.timeout.ms": "6000",
        }
    )
    return conf


class KafkaSink:
    """Every partition of ``topics`` (names, or a compiled regular expression matched
    against the broker's topic list), read from the start to the end they have now. A
    ``timeout`` without progress before every partition reached its end is error 10402."""

    kinds = ALL_KINDS
    part_shift = _PART_BITS  # a partition per part

    def __init__(
        self, topics: list[str], conf: dict[str, str], timeout: float = 30.0, pattern: re.Pattern[str] | None = None
    ) -> None:
        self.topics = topics
        self.pattern = pattern
        self.conf = conf
        self.timeout = timeout
        shown = ", ".join(topics) + (f" and topics matching {pattern.pattern}" if pattern is not None else "")
        self.label = f"kafka topic {shown} at {conf.get('bootstrap.servers', conf.get('metadata.broker.list', '?'))}"
        self._parts: list[tuple[str, int]] = []

    def _consumer(self) -> Any:
        from confluent_kafka import Consumer

        return Consumer(self.conf)

    def _partitions(self, consumer: Any) -> list[tuple[str, int]]:
        metadata = consumer.list_topics(timeout=self.timeout)
        names = [t for t in self.topics if t in metadata.topics]
        missing = [t for t in self.topics if t not in metadata.topics]
        if missing:
            raise RuntimeFailure(
                f"kafka: topic {', '.join(missing)} does not exist at {self.conf.get('bootstrap.servers')}", UNREADABLE
            )
        if self.pattern is not None:
            names += sorted(t for t in metadata.topics if t not in names and self.pattern.fullmatch(t))
        return [(t, p) for t in names for p in sorted(metadata.topics[t].partitions)]

    def scan(self, out: ChangeOut) -> SinkStats:
        from confluent_kafka import OFFSET_BEGINNING, KafkaError, TopicPartition

        started = time.perf_counter()
        consumer = self._consumer()
        try:
            self._parts = self._partitions(consumer)
            stats = SinkStats(parts=[f"{t}[{p}]" for t, p in self._parts])
            index = {part: n for n, part in enumerate(self._parts)}
            consumer.assign([TopicPartition(t, p, OFFSET_BEGINNING) for t, p in self._parts])
            at_end: set[tuple[str, int]] = set()
            last: dict[tuple[str, int], ChangeId] = {}
            quiet_since = time.monotonic()
            while len(at_end) < len(self._parts):
                batch = consumer.consume(num_messages=10000, timeout=0.5)
                if batch:
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since > self.timeout:
                    left = ", ".join(f"{t}[{p}]" for t, p in self._parts if (t, p) not in at_end)
                    raise RuntimeFailure(
                        f"kafka: {left} not read to the end within {self.timeout:g}s without progress", UNREADABLE
                    )
                for record in batch:
                    part = (record.topic(), record.partition())
                    error = record.error()
                    if error is not None:
                        if error.code() == KafkaError._PARTITION_EOF:
                            at_end.add(part)
                            continue
                        raise RuntimeFailure(f"kafka: reading {part[0]}[{part[1]}] failed: {error}", UNREADABLE)
                    value = record.value()
                    if value is None:
                        continue  # a tombstone: no message
                    at_end.discard(part)
                    stats.bytes += len(value)
                    offset = record.offset()
                    cid = _take(
                        out,
                        value,
                        (index[part] << _PART_BITS) | offset,
                        lambda: f"topic {part[0]} partition {part[1]} offset {offset}",  # noqa: B023 - called at once
                        stats,
                    )
                    if cid is not None:
                        last[part] = cid
            for cid in last.values():
                out.claim(cid)
        finally:
            consumer.close()
        stats.seconds = time.perf_counter() - started
        return stats

    def locate(self, places: set[int]) -> dict[int, Located]:
        from confluent_kafka import TopicPartition

        from replicator.formats.olr_digest import decode

        found: dict[int, Located] = {}
        consumer = self._consumer()
        try:
            for place in sorted(places):
                topic, partition = self._parts[place >> _PART_BITS]
                offset = place & ((1 << _PART_BITS) - 1)
                consumer.assign([TopicPartition(topic, partition, offset)])
                deadline = time.monotonic() + self.timeout
                while time.monotonic() < deadline:
                    record = consumer.poll(0.5)
                    if record is None or record.error() is not None:
                        continue
                    if record.offset() == offset and record.value() is not None:
                        found[place] = Located(
                            f"topic {topic} partition {partition} offset {offset}", decode(record.value())
                        )
                    break
        finally:
            consumer.close()
        return found
