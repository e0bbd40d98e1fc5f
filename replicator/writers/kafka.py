"""The ``kafka`` writer: a librdkafka producer (confluent-kafka), olr-interfaces.md §4.2.

Every message is produced in order and kept in the bounded
:class:`~replicator.writers.queue.ConfirmQueue` until its delivery report succeeds; only
then is it confirmed, in order, so the checkpoint never passes an undelivered message.
``queue-size`` bounds the unconfirmed messages (``write`` waits and polls beyond it).

Defaults added unless ``properties`` sets them: ``enable.idempotence=true`` with
``acks=all`` (no duplicates or reordering from librdkafka's own retries) and
``message.timeout.ms=0`` (retry for ever: a broker that is down only delays delivery).

Failures, beyond OpenLogReplicator (which logs 70008 and stops advancing):

* a failed delivery report with a retriable error (unknown topic, timeout), a fatal
  idempotence error, every broker down with messages unconfirmed (a broker back without the
  producer id would take its retries for duplicates and drop them), or no delivery progress
  for ``stall_timeout_s`` after broker errors: the producer is rebuilt after a
  growing back-off and every unconfirmed message is produced again, in order. Messages
  the old producer had in flight may then arrive twice (at-least-once, as after an
  OpenLogReplicator restart; consumers dedup by c_scn/c_idx);
* a message too large for librdkafka or the broker: RuntimeFailure 10092 naming the
  transaction; other permanent errors (authorization, invalid topic): 10057.

The durable position follows the delivery reports (:mod:`~replicator.writers.durable`):
once ``DURABLE_EVERY`` messages were confirmed since the last save (or
``DURABLE_INTERVAL_S`` passed) the position is saved (``persist_confirmed``, set by the
daemon) by a thread of its own, and nothing more is produced while ``DURABLE_LAG``
confirmations are unsaved. So at any moment at most ``queue-size`` produced-but-unconfirmed
plus ``DURABLE_LAG - 1`` confirmed-but-unsaved messages lie beyond the saved position, and
a SIGKILL re-sends at most ``queue-size + DURABLE_LAG - 1`` messages (docs/operations.md).
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer

from replicator import log
from replicator.config.writer import KafkaWriterConfig
from replicator.errors import ReplicatorError, RuntimeFailure
from replicator.events import Message
from replicator.writers.base import ConfirmCallback, Writer
from replicator.writers.capabilities import DeliveryShortfall
from replicator.writers.durable import DurableLag
from replicator.writers.kafka_routing import Router, describe
from replicator.writers.queue import ConfirmQueue, Entry

TOO_LARGE = {KafkaError.MSG_SIZE_TOO_LARGE, KafkaError.RECORD_LIST_TOO_LARGE}
PERMANENT = {
    KafkaError.TOPIC_AUTHORIZATION_FAILED,
    KafkaError.CLUSTER_AUTHORIZATION_FAILED,
    KafkaError.TOPIC_EXCEPTION,
    KafkaError.INVALID_RECORD,
    KafkaError._INVALID_ARG,
    KafkaError.UNSUPPORTED_VERSION,
    KafkaError.INVALID_REQUIRED_ACKS,
}
_BROKER_TROUBLE = {
    KafkaError._TRANSPORT,
    KafkaError._ALL_BROKERS_DOWN,
    KafkaError._RESOLVE,
    KafkaError.NETWORK_EXCEPTION,
}
CLOSE_TIMEOUT_S = 60.0  # how long close() waits for the last delivery reports
LIBRARY_LOG_CODE = 60102  # librdkafka's own warning lines (they carry no code of ours)
DURABLE_EVERY = 256  # confirmed messages after which the writer has the position saved (fsync)
DURABLE_INTERVAL_S = 0.25  # ... or this long after the first confirmation not yet saved
DURABLE_LAG = 1024  # production waits while this many confirmed messages are not saved yet
DEGRADED_AFTER_S = 5.0  # undelivered this long while the broker is unreachable: the daemon reports "degraded"


LIBRARY_REPEAT_S = 30.0  # the same librdkafka line (numbers aside) is logged at most this often


class _LibraryCode(logging.Filter):
    """Print librdkafka's log records at the level they mean, and let a line that only repeats
    (a broker refusing connections, several per second) through once per ``LIBRARY_REPEAT_S``,
    saying how many were left out.

    librdkafka logs a refused connection or a broker going away at syslog's LOG_ERR, yet it
    retries them itself, and what is fatal reaches the writer as an error callback or a failed
    delivery report, which stop the run with a code of ours (10057, 10060, 10092). So its
    lines are at most warnings (WARN 60102: not an ERROR line under a warning code); its
    notices and debug lines are INFO/DEBUG lines without a code."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: dict[str, tuple[float, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        if not hasattr(record, "olr_code"):
            record.olr_code = LIBRARY_LOG_CODE if record.levelno >= logging.WARNING else 0
        key = re.sub(r"\d+", "#", record.getMessage())
        now = time.monotonic()
        last, skipped = self._seen.get(key, (-LIBRARY_REPEAT_S, 0))
        if now - last < LIBRARY_REPEAT_S:
            self._seen[key] = (last, skipped + 1)
            return False
        if len(self._seen) > 1000:
            self._seen.clear()
        self._seen[key] = (now, 0)
        if skipped:
            record.msg, record.args = f"{record.getMessage()} ({skipped} more like it in {now - last:.0f}s)", ()
        return True


def library_logger() -> logging.Logger:
    """The logger librdkafka writes to (its lines in our format, with code 60102)."""
    logger = logging.getLogger("replicator.kafka")
    if not any(isinstance(f, _LibraryCode) for f in logger.filters):
        logger.addFilter(_LibraryCode())
    return logger


# librdkafka's idempotent producer asks for its producer id when a metadata reply arrives or at
# its 500 ms retry timer. When the broker the first reply names (a connection of its own) comes up
# after that reply, nothing asks again before the timer (debug=eos: "WaitTransport" for 500 ms),
# so every run's first deliveries waited half a second. A metadata request once that connection
# is up runs the producer's state machine at once: asked every PID_KICK_S until the first
# confirmation, at most PID_KICKS times.
PID_KICK_S = 0.05
PID_KICKS = 8


class KafkaWriter(Writer, DeliveryShortfall):
    """Produces messages to Kafka and confirms them from delivery reports."""

    type_name = "kafka"
    keeps_tombstones = True  # a tombstone is a record with a key and a null value

    def __init__(
        self,
        config: KafkaWriterConfig,
        on_confirm: ConfirmCallback,
        *,
        show_checkpoints: bool = True,
        stall_timeout_s: float = 30.0,
        close_timeout_s: float | None = None,
        max_backoff_s: float = 30.0,
    ) -> None:
        super().__init__(config, on_confirm, show_checkpoints=show_checkpoints)
        self.config: KafkaWriterConfig = config
        self.queue = ConfirmQueue(config.queue_size)
        self.router = Router(config.topic, config.topic_per_table, bool(config.key_by_pk))
        self.stall_timeout_s = stall_timeout_s
        self.close_timeout_s = CLOSE_TIMEOUT_S if close_timeout_s is None else close_timeout_s
        self.undelivered = 0  # messages still unconfirmed when close() gave up (a batch run fails on them)
        self.max_backoff_s = max_backoff_s
        self.rebuilds = 0  # producers rebuilt after failures (a metric)
        self._poll_s = config.poll_interval_us / 1_000_000
        self._producer: Any = None
        self._generation = 0
        self._rebuild_reason = ""
        self._failure: ReplicatorError | None = None
        self._broker_trouble = False
        # The current producer had a delivery acknowledged: it holds a producer id and sequence
        # numbers the broker knew. Once every broker went down after that, a broker that comes back
        # without that state (restarted empty, or a failed-over cluster) can answer the producer's
        # retries with DUPLICATE_SEQUENCE_NUMBER, which librdkafka reports as delivered: messages
        # lost though confirmed. So the first service after such an outage with anything
        # unconfirmed replaces the producer (new id, everything unconfirmed produced again).
        self._acknowledged = False
        self._outage_after_ack = False
        self._last_progress = time.monotonic()
        self._backoff = 0.0
        self._waiting_logged = False
        # Set by the daemon (its stop event): a write waiting for room in a full queue gives up
        # when it is set, and from then on nothing more is produced (see _stopped_waiting).
        self._gave_up = False
        self._rebuilding = False
        self._durable: DurableLag | None = None  # once the daemon set persist_confirmed
        self._pid_kicks, self._pid_kick_at = PID_KICKS, 0.0  # producer-id requests left (PID_KICK_S)

    def producer_config(self) -> dict[str, Any]:
        """The librdkafka configuration: OLR's properties plus this writer's defaults."""
        conf: dict[str, Any] = dict(self.config.librdkafka_config())
        conf.setdefault("enable.idempotence", "true")
        conf.setdefault("acks", "all")
        conf.setdefault("message.timeout.ms", "0")
        conf.setdefault("queue.buffering.max.messages", str(max(100000, self.config.queue_size)))
        conf["error_cb"] = self._on_error
        conf.setdefault("logger", library_logger())  # librdkafka lines in our log format, coded
        return conf

    # -- Writer API --------------------------------------------------------------------------

    def connect(self) -> None:
        """Create the producer (10058 for a configuration librdkafka rejects)."""
        conf = self.producer_config()
        if "bootstrap.servers" not in conf and "metadata.broker.list" not in conf:
            raise RuntimeFailure("Kafka property 'bootstrap.servers' is missing in writer.properties", 10058)
        self._producer = self._new_producer()

    def _new_producer(self) -> Any:
        try:
            producer = Producer(self.producer_config())
        except KafkaException as exc:
            raise RuntimeFailure(f"Kafka producer configuration rejected: {exc.args[0].str()}", 10058) from exc
        self._start_producer_id_requests()
        return producer

    def _start_producer_id_requests(self) -> None:
        """A new producer: ask for its producer id until it delivers (PID_KICK_S), if idempotent."""
        idempotent = str(self.producer_config().get("enable.idempotence", "")).lower() == "true"
        self._pid_kicks = 0 if idempotent else PID_KICKS
        self._pid_kick_at = time.monotonic() + PID_KICK_S

    def _producer_id_request_due(self) -> bool:
        return self._pid_kicks < PID_KICKS and time.monotonic() >= self._pid_kick_at

    def _ask_producer_id(self, metadata: Callable[[float], object]) -> None:
        """One metadata request (``metadata(timeout)``), until the first confirmation."""
        if self.messages_confirmed:
            self._pid_kicks = PID_KICKS  # the producer id came: nothing more to ask
            return
        self._pid_kicks += 1
        self._pid_kick_at = time.monotonic() + PID_KICK_S
        metadata(PID_KICK_S)

    def _metadata_request(self, timeout: float) -> None:
        try:
            self._producer.list_topics(timeout=timeout)
        except KafkaException:
            pass  # no broker answer yet: the producer's own timer still runs

    def unreachable(self, timeout: float) -> str | None:
        """None once a broker answered a metadata request within ``timeout`` seconds, else why not
        (the daemon waits for it before it reports READY; ops/readiness.py)."""
        if self._producer is None:
            self.connect()
        try:
            self._producer.list_topics(timeout=timeout)
        except KafkaException as exc:
            return exc.args[0].str() if exc.args and isinstance(exc.args[0], KafkaError) else str(exc)
        return None

    def delivery_problem(self) -> str | None:
        """While the broker is unreachable and messages wait (longer than ``DEGRADED_AFTER_S``: a
        reachable broker acknowledges in milliseconds): how many, and since when."""
        oldest = self._oldest_sent_at()
        waited = time.monotonic() - oldest if oldest is not None else 0.0
        if not self._broker_trouble or waited < DEGRADED_AFTER_S:
            return None
        return f"Kafka broker unreachable, {self._waiting()} messages waiting for delivery for {waited:.0f}s"

    def _stopped_waiting(self) -> bool:
        """While a write waits for room: True once a stop asks it to give up. Then, and at every
        later write, nothing more is produced: those messages are neither delivered nor
        confirmed, so the confirmed position stays before them and a restart produces them
        again. (Producing a later one after that gap would let its delivery confirm the gap.)"""
        if not self._gave_up and self.stopping is not None and self.stopping.is_set():
            self._gave_up = True
            log.info(
                f"stopping with the Kafka queue full ({self.queue.capacity} unconfirmed messages): the "
                "messages not produced are read from the redo again after a restart"
            )
        return self._gave_up

    def write(self, batch: list[Message]) -> None:
        """Produce ``batch`` in order; waits (polling) while ``queue-size`` messages are unconfirmed."""
        if self._gave_up:
            return
        if self._producer is None:
            self.connect()
        for message in batch:
            entry = Entry(message, silent=not self.must_send(message))
            if entry.silent:
                self.queue.put(entry)
                continue
            while len(self.queue) >= self.queue.capacity:
                if not self._waiting_logged:
                    log.warning(
                        60031,
                        f"Kafka queue full ({self.queue.capacity} unconfirmed messages), waiting for delivery reports",
                    )
                    self._waiting_logged = True
                self._service(self._poll_s)
                if self._stopped_waiting():
                    return
            if self._durable is not None:  # last: what lies beyond the saved position stays bounded
                self._durable.wait_room()
            self.queue.put(entry)
            self._produce(entry)
        if len(self.queue) < self.queue.capacity // 2:
            self._waiting_logged = False
        self._service(0)

    def send(self, message: Message) -> None:
        """Produce one message (see :meth:`write`)."""
        self.write([message])

    def flush(self) -> None:
        """Serve delivery reports, recover from failures, report confirmations."""
        if self._producer is not None:
            self._service(0)

    def close(self) -> None:
        """Wait up to ``close_timeout_s`` for every delivery report, then release the producer."""
        if self._producer is None:
            return
        deadline = time.monotonic() + self.close_timeout_s
        while len(self.queue) and time.monotonic() < deadline:
            self._service(min(self._poll_s, 0.1))
        left = self.undelivered = len(self.queue)
        if left:
            log.warning(
                60083,
                f"{left} Kafka messages were not confirmed before shutdown; they are produced again after a restart",
            )
        self._guarded(self._producer.flush, 0)
        self._producer = None
        if self._durable is not None:
            self._durable.close()

    # -- producing ---------------------------------------------------------------------------

    def _produce(self, entry: Entry) -> None:
        message = entry.message
        generation = self._generation

        def delivered(err: KafkaError | None, _msg: Any) -> None:
            self._delivered(entry, generation, err)

        while True:
            try:
                self._producer.produce(
                    self.router.topic_for(message),
                    value=None if message.tombstone else message.data,
                    key=self.router.key_for(message),
                    headers=message.headers,
                    on_delivery=delivered,
                )
                break
            except BufferError:  # librdkafka's own queue is full: serve reports and retry
                self._service(self._poll_s)
            except KafkaException as exc:
                self._produce_failed(entry, exc.args[0])
                return
        entry.sent_at = time.monotonic()
        self.messages_sent += 1
        self.bytes_sent += len(message.data)

    def _produce_failed(self, entry: Entry, err: KafkaError) -> None:
        if err.code() in TOO_LARGE:
            raise RuntimeFailure(self._too_large(entry.message, err), 10092)
        if err.fatal() or err.code() == KafkaError._FATAL:
            self._request_rebuild(f"fatal producer error: {err.str()}")
            return
        raise RuntimeFailure(f"Kafka produce failed for {describe(entry.message)}: {err.str()}", 10060)

    def _too_large(self, message: Message, err: KafkaError) -> str:
        return (
            f"Kafka rejected {describe(message)}: message of {len(message.data)} bytes is too large "
            f"({err.str()}); max-message-mb is {self.config.max_message_mb}, the broker's "
            "message.max.bytes / the topic's max.message.bytes may be lower"
        )

    def _delivered(self, entry: Entry, generation: int, err: KafkaError | None) -> None:
        """Delivery report (runs inside poll on the caller's thread)."""
        if err is None:
            self.queue.mark_done(entry)
            self._delivery_progress(generation == self._generation)
            return
        if generation != self._generation:
            return  # a report of a producer already replaced: the message was produced again
        if err.code() in TOO_LARGE:
            self._failure = RuntimeFailure(self._too_large(entry.message, err), 10092)
        elif err.code() in PERMANENT:
            self._failure = RuntimeFailure(f"Kafka delivery failed for {describe(entry.message)}: {err.str()}", 10057)
        else:
            log.warning(70008, f"Kafka delivery failed for {describe(entry.message)}: {err.str()}; will retry")
            self._request_rebuild(f"delivery failed: {err.str()}")

    def _on_error(self, err: KafkaError) -> None:
        """librdkafka error callback: note broker trouble; fatal errors force a rebuild."""
        if err.fatal():
            self._request_rebuild(f"fatal producer error: {err.str()}")
            return
        if err.code() in _BROKER_TROUBLE:
            self._broker_trouble = True
        if err.code() == KafkaError._ALL_BROKERS_DOWN and self._acknowledged:
            self._outage_after_ack = True
        log.warn_once(70009, err.str(), f"Kafka error: {err.str()}")

    # -- servicing and recovery --------------------------------------------------------------

    def _service(self, timeout: float) -> None:
        """Poll for reports; rebuild when needed; report confirmations; raise a permanent failure."""
        if self._producer_id_request_due():
            self._ask_producer_id(self._metadata_request)
        self._guarded(self._producer.poll, timeout)
        if self._rebuilding:
            return  # called from inside a rebuild (librdkafka queue full): just let reports in
        self._check_recovery()
        if self._rebuild_reason:
            self._rebuild()
        confirmed = self.queue.take_confirmed()
        for message in confirmed:
            self.confirm(message)
        if self._durable is None and self.persist_confirmed is not None:
            self._durable = DurableLag(self.persist_confirmed, DURABLE_EVERY, DURABLE_LAG, DURABLE_INTERVAL_S)
        if self._durable is not None:  # counted after confirm(): a save then covers them
            self._durable.confirmed(len(confirmed))
        if self._failure is not None:
            raise self._failure

    @property
    def saves(self) -> int:
        """Confirmed positions saved at this writer's request (a metric, and for the bench)."""
        return self._durable.saves if self._durable is not None else 0

    def _oldest_sent_at(self) -> float | None:
        """When the oldest message still waiting for its delivery report was produced."""
        return self.queue.oldest_sent_at()

    def _waiting(self) -> int:
        """Messages produced and not yet confirmed."""
        return len(self.queue)

    def _check_recovery(self) -> None:
        """Ask for a rebuild after an outage that may have lost the producer's id, or a stall."""
        if self._rebuild_reason:
            return
        if self._outage_after_ack and self._waiting():
            self._request_rebuild(
                "every broker went down: a broker back without this producer's id could drop its retries"
            )
        elif self._stalled():
            self._request_rebuild(f"no delivery progress for {self.stall_timeout_s:.0f}s after broker errors")

    def _delivery_progress(self, current: bool) -> None:
        """A delivery succeeded (``current``: the current producer's, whose id the broker now knows)."""
        self._acknowledged |= current
        self._last_progress = time.monotonic()
        self._broker_trouble = False
        self._backoff = 0.0

    def _fresh_producer_state(self) -> None:
        """A rebuilt producer starts with no broker state: no trouble, no acknowledged id."""
        self._broker_trouble = False
        self._acknowledged = self._outage_after_ack = False
        self._last_progress = time.monotonic()

    def _stalled(self) -> bool:
        oldest = self._oldest_sent_at() if self._broker_trouble else None
        now = time.monotonic()
        return (
            oldest is not None
            and now - oldest > self.stall_timeout_s
            and now - self._last_progress > self.stall_timeout_s
        )

    def _guarded(self, call: Any, *args: Any) -> Any:
        """Call the producer; a fatal KafkaError raised out of it (confluent-kafka raises one that
        is not an Exception subclass, so only a bare except sees it) requests a rebuild."""
        try:
            return call(*args)
        except:  # noqa: E722 - see the docstring; anything else is re-raised
            error = sys.exc_info()[1]
            if isinstance(error, KafkaException):
                error = error.args[0]
            if not isinstance(error, KafkaError):
                raise
            self._request_rebuild(f"fatal producer error: {error.str()}")
            return None

    def _request_rebuild(self, reason: str) -> None:
        if not self._rebuild_reason:
            self._rebuild_reason = reason

    def _rebuild(self) -> None:
        """Replace the producer and produce every unconfirmed message again, in order."""
        reason, self._rebuild_reason = self._rebuild_reason, ""
        self._backoff = min(self.max_backoff_s, max(0.5, self._backoff * 2))
        log.warning(
            70008,
            f"Kafka producer restarted in {self._backoff:.1f}s ({reason}); "
            f"{len(self.queue)} unconfirmed messages will be produced again",
        )
        old = self._producer
        self._generation += 1
        self._guarded(old.purge, True, True, False)
        deadline = time.monotonic() + self._backoff
        while time.monotonic() < deadline:  # reports of the old producer still confirm real deliveries
            self._guarded(old.poll, min(0.1, max(0.0, deadline - time.monotonic())))
        self._rebuild_reason = ""  # errors of the old producer do not ask for another rebuild
        self._producer = self._new_producer()
        self.rebuilds += 1
        self._fresh_producer_state()
        self._rebuilding = True  # a failure meanwhile waits for the next _service: no nested resend
        try:
            for entry in self.queue.unconfirmed():
                assert isinstance(entry, Entry)  # this writer queues Messages only (runs: KafkaRuns' own ledger)
                self._produce(entry)
        finally:
            self._rebuilding = False
