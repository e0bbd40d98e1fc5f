"""The ``kafka`` writer with a native producer: MessageRuns produced whole (issue 28).

:func:`kafka_writer_class` picks the kafka writer once, when the registry builds it:
:class:`KafkaRunWriter` where the native core is built and the librdkafka of the
confluent-kafka wheel is found, else :class:`~replicator.writers.kafka.KafkaWriter`
(confluent-kafka's per-message ``produce``). :class:`KafkaRunWriter` produces through
librdkafka's C API (``KafkaRuns`` in replicator/writers/_kafka.pyx):

* a native ``MessageRun`` (a transaction's messages in one buffer) is produced from its
  buffer in C, its delivery reports are counted per run in C, and it is confirmed once
  (``confirm_run``), in order, when all its messages are delivered: one hand-off, one
  confirmation entry and one durable-position step per run, no object per message;
* a Message (a checkpoint, a format without runs, a run with keys: see below) is one
  item of one message, produced the same way.

The guarantees are :class:`~replicator.writers.kafka.KafkaWriter`'s, with the same codes:
``queue-size`` bounds the produced but unconfirmed messages (a run waits until it fits; a
run longer than ``queue-size`` goes message by message so the bound holds), a retriable
delivery failure rebuilds the producer and produces every unconfirmed item again, a
message too large is 10092, another permanent failure 10057, a rejected produce 10060, and
the durable position follows the confirmations (``DURABLE_EVERY`` / ``DURABLE_LAG``).

Runs whole need no per-message key: with ``key-by-pk`` a run is produced message by
message (each Message keyed from its JSON), so ``writes_runs_whole`` is False then.
Per-table topics work on the run path (a run's table slots map to topics). Without the
native core or the library the registry builds the base class: no run path at all.
"""

from __future__ import annotations

import glob
import logging
import os
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaError

from replicator import log
from replicator.errors import RuntimeFailure
from replicator.events import Message
from replicator.writers.capabilities import WholeRunWriter
from replicator.writers.durable import DurableLag
from replicator.writers.kafka import (
    DURABLE_EVERY,
    DURABLE_INTERVAL_S,
    DURABLE_LAG,
    PERMANENT,
    TOO_LARGE,
    KafkaWriter,
    library_logger,
)
from replicator.writers.kafka_routing import describe

# Producer settings for throughput, unless ``properties`` sets them: bigger batches that wait
# a little longer to fill (fewer produce requests per message; tansu's and a broker's cost is
# per request and per batch), compressed (JSON shrinks ~3x with lz4 at little CPU).
THROUGHPUT_DEFAULTS = {
    "linger.ms": "20",
    "batch.num.messages": "100000",
    "batch.size": str(4 << 20),
    "compression.codec": "lz4",
}
# syslog level of a librdkafka log line -> python level (as confluent-kafka maps them)
_LEVELS = (
    logging.CRITICAL,
    logging.CRITICAL,
    logging.CRITICAL,
    logging.ERROR,
    logging.WARNING,
    logging.INFO,
    logging.INFO,
    logging.DEBUG,
)


def library_path() -> str | None:
    """The librdkafka the confluent-kafka package uses (its wheel bundles one), or None."""
    import confluent_kafka

    package = os.path.dirname(confluent_kafka.__file__)
    found = sorted(glob.glob(os.path.join(package + ".libs", "librdkafka*.so*")))
    if found:
        return found[0]
    try:  # a build against a system librdkafka: the copy cimpl has loaded
        import confluent_kafka.cimpl  # noqa: F401

        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                path = line.split()[-1]
                if "/librdkafka" in path and os.path.exists(path):
                    return path
    except OSError:
        pass
    return None


def native_producer() -> tuple[Any, str] | None:
    """(the native producer's module, librdkafka's path) when the native producer can run, else None."""
    from replicator import native

    if not native.available():
        return None
    path = library_path()
    return (native.kafka(), path) if path else None


def kafka_writer_class() -> type[KafkaWriter]:
    """The kafka writer's class (the registry's ``kafka`` entry): the native run writer where
    the native producer can run, else confluent-kafka's writer."""
    return KafkaRunWriter if native_producer() is not None else KafkaWriter


@dataclass(slots=True, eq=False)
class _Item:
    """A produced (or silent) Message or MessageRun, unconfirmed yet."""

    serial: int  # its slot in the producer's ledger; -1: silent (confirmed unwritten)
    item: Any  # Message or MessageRun
    count: int  # messages (0 when silent)
    sent_at: float = 0.0


class KafkaRunWriter(KafkaWriter, WholeRunWriter):
    """The kafka writer on the native producer, taking runs whole (module docstring); built
    only where :func:`native_producer` finds it (:func:`kafka_writer_class`)."""

    def __init__(self, config: Any, on_confirm: Any, **kwargs: Any) -> None:
        super().__init__(config, on_confirm, **kwargs)
        found = native_producer()
        if found is None:
            raise RuntimeError("KafkaRunWriter needs the native core and librdkafka (kafka_writer_class)")
        self._core: Any = found[0]  # the native producer module (replicator.writers._kafka)
        self._library = found[1]
        #: runs are produced and confirmed whole unless each message needs its key (module docstring)
        self.writes_runs_whole = not self.config.key_by_pk
        self._native: Any = None  # the current KafkaRuns
        self._items: deque[_Item] = deque()
        self._serial = 0  # of the next produced item
        self._unconfirmed = 0  # messages of the produced items in _items
        self._delivered_seen = 0  # the producer's successful reports at the last service

    def producer_config(self) -> dict[str, Any]:
        """The base configuration with the throughput defaults added."""
        conf = super().producer_config()
        for name, value in THROUGHPUT_DEFAULTS.items():
            conf.setdefault(name, value)
        return conf

    # -- Writer API --------------------------------------------------------------------------

    def connect(self) -> None:
        """Create the producer (10058 for a configuration librdkafka rejects)."""
        conf = self.producer_config()
        if "bootstrap.servers" not in conf and "metadata.broker.list" not in conf:
            raise RuntimeFailure("Kafka property 'bootstrap.servers' is missing in writer.properties", 10058)
        self._native = self._new_native(self._serial)

    def _new_native(self, start: int) -> Any:
        conf = [(k, v) for k, v in self.producer_config().items() if isinstance(v, str)]  # not the callbacks
        conf.append(("log.queue", "true"))  # log lines come out of poll, on the writer's thread
        try:
            producer = self._core.KafkaRuns(
                self._library, conf, self.config.queue_size, self._on_native_error, self._on_native_log
            )
        except ValueError as exc:
            raise RuntimeFailure(f"Kafka producer configuration rejected: {exc}", 10058) from exc
        producer.start_at(start)
        self._delivered_seen = 0
        self._start_producer_id_requests()
        return producer

    def unreachable(self, timeout: float) -> str | None:
        """None once a broker answered a metadata request within ``timeout`` seconds, else why not."""
        if self._native is None:
            self.connect()
        err = self._native.metadata(timeout)
        return None if err == 0 else self._core.kafka_error_text(err)

    def write(self, batch: list[Message]) -> None:
        """Produce ``batch`` in order; waits (polling) while ``queue-size`` messages are unconfirmed."""
        if self._gave_up:
            return
        if self._native is None:
            self.connect()
        for message in batch:
            if not self.must_send(message):
                self._items.append(_Item(-1, message, 0))
                continue
            if not self._take(message, 1):
                return
        self._service(0)

    def write_runs(self, batch: list[Any]) -> None:
        """Pipeline.native_runs: Messages and native MessageRuns in order; a run is produced
        whole where :attr:`writes_runs_whole`, else as its Messages."""
        whole = self.writes_runs_whole
        if self._native is None and whole:
            self.connect()
        for item in batch:
            if self._gave_up:
                return
            if type(item) is Message:
                self.write([item])
            elif not whole or len(item) > self.queue.capacity:
                self.write(list(item))  # keys from each message, or a run longer than queue-size
            elif len(item):
                self._take(item, len(item))
        if whole:
            self._service(0)

    def flush(self) -> None:
        """Serve delivery reports, recover from failures, report confirmations."""
        if self._native is not None:
            self._service(0)

    def close(self) -> None:
        """Wait up to ``close_timeout_s`` for every delivery report, then release the producer."""
        if self._native is None:
            return
        deadline = time.monotonic() + self.close_timeout_s
        while self._items and time.monotonic() < deadline:
            self._service(min(self._poll_s, 0.1))
        left = self.undelivered = self._unconfirmed
        if left:
            log.warning(
                60083,
                f"{left} Kafka messages were not confirmed before shutdown; they are produced again after a restart",
            )
        self._native.flush(0)
        self._native.close()
        self._native = None
        if self._durable is not None:
            self._durable.close()

    # -- producing ---------------------------------------------------------------------------

    def _take(self, item: Any, count: int) -> bool:
        """Queue ``item`` (``count`` messages) once it fits, and produce it; False when a stop
        ended the wait for room instead (see _stopped_waiting)."""
        capacity = self.queue.capacity
        while self._unconfirmed and self._unconfirmed + count > capacity:
            if not self._waiting_logged:
                log.warning(60031, f"Kafka queue full ({capacity} unconfirmed messages), waiting for delivery reports")
                self._waiting_logged = True
            self._service(self._poll_s)
            if self._stopped_waiting():
                return False
        if self._unconfirmed < capacity // 2:
            self._waiting_logged = False
        if self._durable is not None:  # last: what lies beyond the saved position stays bounded
            self._durable.wait_room()
        entry = _Item(self._serial, item, count)
        self._serial += 1
        self._items.append(entry)
        self._unconfirmed += count
        self._produce_item(entry)
        return True

    def _produce_item(self, entry: _Item) -> None:
        """Produce ``entry`` (an _Item) whole with the current producer; librdkafka's queue
        full: serve reports and go on (a rebuild meanwhile produced it again: stop)."""
        item, producer, generation, at = entry.item, self._native, self._generation, 0
        is_run = type(item) is not Message
        if is_run:
            topic = producer.topic(self.router.topic)
            slots = None
            if self.router.per_table is not None:
                slots = [producer.topic(self.router.table_topic(t)) for t in self._core.run_tables(item)]
        else:
            topic = producer.topic(self.router.topic_for(item))
        while True:
            if is_run:
                at = producer.produce_run(item, entry.serial, at, topic, slots)
                err = 0 if at == entry.count else producer.last_err
            else:
                err = producer.produce_message(
                    entry.serial,
                    topic,
                    None if item.tombstone else item.data,
                    self.router.key_for(item),
                    item.headers,
                )
            if err == 0:
                break
            if err != KafkaError._QUEUE_FULL:
                self._item_failed(entry, at, KafkaError(err, self._core.kafka_error_text(err)))
                return
            self._service(self._poll_s)
            if self._generation != generation:
                return  # the rebuilt producer has it
        entry.sent_at = time.monotonic()
        self.messages_sent += entry.count
        self.bytes_sent += item.body_bytes if is_run else len(item.data)

    def _message_of(self, entry: _Item, offset: int) -> Message:
        """The Message of ``entry`` whose body starts at ``offset`` in its buffer."""
        item = entry.item
        if type(item) is Message:
            return item
        at = self._core.run_message_at(item, offset)
        return item.message(min(at, len(item) - 1))  # type: ignore[no-any-return]

    def _item_failed(self, entry: _Item, at: int, err: KafkaError) -> None:
        """librdkafka refused message ``at`` of ``entry``: as the base class's _produce_failed."""
        message = entry.item if type(entry.item) is Message else entry.item.message(at)
        if err.code() in TOO_LARGE:
            raise RuntimeFailure(self._too_large(message, err), 10092)
        if err.code() == KafkaError._FATAL:
            self._request_rebuild(f"fatal producer error: {err.str()}")
            return
        raise RuntimeFailure(f"Kafka produce failed for {describe(message)}: {err.str()}", 10060)

    def _delivery_failed(self, serial: int, code: int, offset: int) -> None:
        """A failed delivery report (the earliest of the last poll): as the base class's."""
        entry = next((e for e in self._items if e.serial == serial), None)
        err = KafkaError(code, self._core.kafka_error_text(code))
        if entry is None:
            self._request_rebuild(f"delivery failed: {err.str()}")
            return
        message = self._message_of(entry, offset)
        if code in TOO_LARGE:
            self._failure = RuntimeFailure(self._too_large(message, err), 10092)
        elif code in PERMANENT:
            self._failure = RuntimeFailure(f"Kafka delivery failed for {describe(message)}: {err.str()}", 10057)
        else:
            log.warning(70008, f"Kafka delivery failed for {describe(message)}: {err.str()}; will retry")
            self._request_rebuild(f"delivery failed: {err.str()}")

    def _on_native_error(self, code: int, reason: str) -> None:
        """librdkafka's error callback, as confluent-kafka hands it to the base class."""
        fatal = code == KafkaError._FATAL
        if fatal and self._native is not None:
            found = self._native.fatal_error()
            if found is not None:
                code, reason = found
        self._on_error(KafkaError(code, reason, fatal=fatal))

    def _on_native_log(self, level: int, facility: str, text: str) -> None:
        library_logger().log(_LEVELS[min(max(level, 0), 7)], "%s [%s] %s", facility, "replicator#producer", text)

    # -- servicing and recovery --------------------------------------------------------------

    def _service(self, timeout: float) -> None:
        """Poll for reports; rebuild when needed; confirm delivered items; raise a permanent failure."""
        producer = self._native
        if self._producer_id_request_due():
            self._ask_producer_id(producer.metadata)
        producer.poll(timeout)
        if self._rebuilding:
            return  # called from inside a rebuild (librdkafka queue full): just let reports in
        failed = producer.failure()
        if failed is not None:
            self._delivery_failed(*failed)
        if producer.delivered != self._delivered_seen:
            self._delivered_seen = producer.delivered
            self._delivery_progress(True)  # the counter is the current producer's
        self._check_recovery()
        if self._rebuild_reason:
            self._rebuild()
        head = self._native.take_done()
        items, confirmed = self._items, 0
        while items and items[0].serial < head:
            entry = items.popleft()
            if type(entry.item) is Message:
                self.confirm(entry.item)
            else:
                self.confirm_run(entry.item)
            confirmed += entry.count
        self._unconfirmed -= confirmed
        if self._durable is None and self.persist_confirmed is not None:
            self._durable = DurableLag(self.persist_confirmed, DURABLE_EVERY, DURABLE_LAG, DURABLE_INTERVAL_S)
        if self._durable is not None:  # counted after confirm(): a save then covers them
            self._durable.confirmed(confirmed)
        if self._failure is not None:
            raise self._failure

    def _oldest_sent_at(self) -> float | None:
        if self._native is None:  # closed (the daemon's last report comes after close)
            return None
        for entry in self._items:
            if entry.serial >= 0 and not self._native.done(entry.serial):
                return entry.sent_at or None
        return None

    def _waiting(self) -> int:
        return self._unconfirmed

    def _rebuild(self) -> None:
        """Replace the producer and produce every undelivered item again, in order."""
        reason, self._rebuild_reason = self._rebuild_reason, ""
        self._backoff = min(self.max_backoff_s, max(0.5, self._backoff * 2))
        log.warning(
            70008,
            f"Kafka producer restarted in {self._backoff:.1f}s ({reason}); "
            f"{self._unconfirmed} unconfirmed messages will be produced again",
        )
        old = self._native
        self._generation += 1
        old.purge()
        deadline = time.monotonic() + self._backoff
        while time.monotonic() < deadline:  # reports of the old producer still count real deliveries
            old.poll(min(0.1, max(0.0, deadline - time.monotonic())))
        produced = [e for e in self._items if e.serial >= 0]
        delivered = {e.serial for e in produced if old.done(e.serial)}
        old.close()
        self._rebuild_reason = ""  # errors of the old producer do not ask for another rebuild
        self._native = self._new_native(produced[0].serial if produced else self._serial)
        self.rebuilds += 1
        self._fresh_producer_state()
        self._rebuilding = True  # a failure meanwhile waits for the next _service: no nested resend
        try:
            for entry in produced:
                if entry.serial in delivered:
                    self._native.settled(entry.serial)
                else:
                    self._produce_item(entry)
        finally:
            self._rebuilding = False
