"""Prometheus metrics: OpenLogReplicator's series (olr-interfaces.md §7) and our own.

Every collector lives in the registry of one :class:`Metrics` object (never the global
one), served on ``metrics.bind`` by :meth:`Metrics.start_server`. The hot loop never
touches a collector: it bumps a :class:`~replicator.ops.metrics_tally.Tally` and the run
calls :meth:`Metrics.publish` about once a second (or once per LWN batch), which adds the
differences to the counters and sets the gauges.

Compatibility notes (documented in docs/operations.md):

* Counters carry the ``_total`` suffix in the exposition (``bytes_read_total``):
  prometheus-client enforces the OpenMetrics rule, OLR's prometheus-cpp does not. PromQL
  written for OLR needs ``bytes_read`` -> ``bytes_read_total``; names are otherwise OLR's.
* [quirk kept] transactions are counted under ``dml_ops`` with ``type=commit|rollback``
  and ``filter=out|partial|skip``, as OLR registers them (its docs call them
  ``transactions``). With ``tag-names`` their ``owner``/``table`` labels are empty.
* [quirk dropped] OLR registers ``memory_used_total_mb`` twice; it exists once here.
* ``memory_used_mb`` has OLR's six ``type`` labels; the pool fills ``transactions``, the
  others stay 0 unless the caller measures them. ``process_*`` series give the real RSS.

Our own series start with ``replicator_``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    ProcessCollector,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.exposition import start_http_server

from replicator import __version__
from replicator.errors import RuntimeFailure
from replicator.ops.metrics_tally import DDL_TYPES, Tally

SERVICE_STATES = ("initializing", "ready", "starting", "replicating", "finishing", "aborting")
MEMORY_TYPES = ("builder", "misc", "parser", "reader", "transactions", "writer")
METRICS_BIND_ERROR = 10073

# The `*_created` series (counter creation times) only double the exposition; OLR has none.
disable_created_metrics()  # type: ignore[no-untyped-call]


def parse_bind(bind: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` too) -> (host, port); ValueError when malformed."""
    host, sep, port = bind.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f'"{bind}" is not host:port with a port of 0 .. 65535')
    return host.strip("[]"), int(port)


class Metrics:
    """The collectors of one process, with OLR's names; see the module docstring.

    ``tag_names`` is ``metrics.tag-names`` (``none``, ``filter``, ``sys``, ``all``): any
    value but ``none`` adds ``owner`` and ``table`` labels to ``dml_ops``.
    """

    def __init__(self, tag_names: str = "none", *, process_collector: bool = True) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.tag_names = tag_names
        # (name, type, labels, help) of every series family, for docs/metrics.md.
        self.catalogue: list[tuple[str, str, tuple[str, ...], str]] = []
        dml_labels = ("type", "filter") + (("owner", "table") if tag_names != "none" else ())
        self._dml_width = len(dml_labels)
        c, g = Counter, Gauge
        self.bytes_confirmed = self._make(c, "bytes_confirmed", "bytes confirmed by the output")
        self.bytes_parsed = self._make(c, "bytes_parsed", "redo bytes parsed")
        self.bytes_read = self._make(c, "bytes_read", "redo bytes read")
        self.bytes_sent = self._make(c, "bytes_sent", "bytes sent to the output")
        self.messages_confirmed = self._make(c, "messages_confirmed", "messages confirmed by the output")
        self.messages_sent = self._make(c, "messages_sent", "messages sent to the output")
        self.checkpoints = self._make(
            c, "checkpoints", "checkpoint records emitted (out) or skipped before the start SCN (skip)", ("filter",)
        )
        self.checkpoint_lag = self._make(g, "checkpoint_lag", "seconds: now minus the redo time of the LWN just read")
        self.ddl_ops = self._make(c, "ddl_ops", "DDL operations seen", ("type",))
        self.dml_ops = self._make(
            c,
            "dml_ops",
            "DML rows (type insert/update/delete) and, [quirk] as in OLR, "
            "transactions (type commit/rollback); filter out/skip/partial",
            dml_labels,
        )
        self.log_switches = self._make(c, "log_switches", "redo log switches", ("type",))
        self.log_switches_lag = self._make(
            g,
            "log_switches_lag",
            "seconds between the last redo time of a log and the end of its processing",
            ("type",),
        )
        self.memory_allocated_mb = self._make(g, "memory_allocated_mb", "memory chunks allocated, MB")
        self.memory_used_total_mb = self._make(g, "memory_used_total_mb", "memory chunks in use, MB")
        self.memory_used_mb = self._make(g, "memory_used_mb", "memory chunks in use by purpose, MB", ("type",))
        self.service_state = self._make(g, "service_state", "1 for the current state", ("state",))
        self.swap_operations_mb = self._make(c, "swap_operations_mb", "transaction chunks swapped, MB", ("type",))
        self.swap_usage_mb = self._make(g, "swap_usage_mb", "transaction chunks on disk, MB")
        # Ours.
        self.reader_lag = self._make(
            g,
            "replicator_reader_lag_seconds",
            "now minus the redo time of the newest LWN read, computed at scrape time (grows while the reader stalls)",
        )
        self.checkpoint_age = self._make(
            g,
            "replicator_checkpoint_age_seconds",
            "seconds since the last checkpoint file was written (NaN before the first), computed at scrape time",
        )
        self.checkpoint_scn = self._make(g, "replicator_checkpoint_scn", "SCN of the last checkpoint written")
        self.scn = self._make(g, "replicator_scn", "SCN of the LWN just read")
        self.sequence = self._make(g, "replicator_redo_sequence", "redo log sequence being read")
        self.thread_sequence = self._make(
            g, "replicator_thread_sequence", "RAC: redo log sequence being read, per redo thread", ("thread",)
        )
        self.thread_scn = self._make(
            g, "replicator_thread_scn", "RAC: SCN of the last LWN analysed, per redo thread", ("thread",)
        )
        self.thread_lag = self._make(
            g,
            "replicator_thread_lag_seconds",
            "RAC: now minus the redo time of the last LWN analysed, per redo thread (an idle thread's grows)",
            ("thread",),
        )
        self.queue_depth = self._make(g, "replicator_queue_depth", "items waiting in an internal queue", ("queue",))
        self.writer_messages = self._make(c, "replicator_writer_messages", "messages sent, per writer", ("writer",))
        self.writer_retries = self._make(c, "replicator_writer_retries", "writer reconnects and resends", ("writer",))
        self.container_skips = self._make(
            c,
            "replicator_container_vectors_skipped",
            "CDB: change vectors of containers the run does not replicate (warning 60041), per CON_ID",
            ("con_id",),
        )
        info = self._make(Gauge, "replicator_info", "version of the running replicator", ("version",))
        info.labels(version=__version__).set(1)
        if process_collector:
            ProcessCollector(registry=self.registry)
        self._redo_time = 0.0
        self._checkpoint_wall = 0.0
        self.reader_lag.set_function(lambda: time.time() - self._redo_time if self._redo_time else 0.0)
        self.checkpoint_age.set_function(
            lambda: time.time() - self._checkpoint_wall if self._checkpoint_wall else float("nan")
        )
        for kind in ("out", "skip"):
            self.checkpoints.labels(filter=kind)
        for mem in MEMORY_TYPES:
            self.memory_used_mb.labels(type=mem).set(0)
        for ddl in DDL_TYPES:
            self.ddl_ops.labels(type=ddl)
        self._published: dict[Hashable, float] = {}
        self._lock = threading.Lock()  # publish may be called from more than one task
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.set_state("initializing")

    def _make(self, kind: type[Any], name: str, doc: str, labels: tuple[str, ...] = ()) -> Any:
        self.catalogue.append((name, "counter" if kind is Counter else "gauge", labels, doc))
        return kind(name, doc, labels, registry=self.registry)

    # ------------------------------------------------------------------ state and events
    def set_state(self, state: str) -> None:
        """Make ``state`` (one of :data:`SERVICE_STATES`) the only one set to 1."""
        if state not in SERVICE_STATES:
            raise ValueError(f"unknown service state {state!r}")
        for name in SERVICE_STATES:
            self.service_state.labels(state=name).set(1 if name == state else 0)

    def checkpoint_written(self, scn: int, wall_time: float | None = None) -> None:
        """A checkpoint file for ``scn`` was written (drives the checkpoint age)."""
        self.checkpoint_scn.set(scn)
        self._checkpoint_wall = time.time() if wall_time is None else wall_time

    # ------------------------------------------------------------------ publishing
    def _add(self, key: Hashable, child: Any, value: float) -> None:
        """Increment ``child`` by what ``value`` (cumulative) grew since the last publish."""
        last = self._published.get(key, 0)
        delta = value - last if value >= last else value  # a new tally started from 0
        if delta > 0:
            child.inc(delta)
        self._published[key] = value

    def publish(
        self,
        tally: Tally | None = None,
        *,
        pool: Any = None,
        writers: Iterable[Any] = (),
        parser: Any = None,
        queues: Mapping[str, int] | None = None,
        memory_mb: Mapping[str, float] | None = None,
    ) -> None:
        """Fold cumulative figures into the collectors; cheap enough for once a second.

        ``pool`` is a :class:`~replicator.txn.pool.MemoryPool`; ``writers`` are writer
        objects (``messages_sent``, ``bytes_sent``, ``messages_confirmed`` and optionally
        ``bytes_confirmed``, ``retries``, ``type_name``); ``parser`` has ``stats.rollbacks``
        (a :class:`~replicator.redo.parser.Parser`); ``queues`` maps queue names to depths;
        ``memory_mb`` gives MB in use for the other ``memory_used_mb`` types.
        """
        with self._lock:
            if tally is not None:
                self._publish_tally(tally)
            if parser is not None:
                self._add(("rollback",), self._dml("rollback", "out"), parser.stats.rollbacks)
                for con_id, count in list(parser.stats.other_containers.items()):
                    self._add(("container", con_id), self.container_skips.labels(con_id=str(con_id)), count)
            if pool is not None:
                self._publish_pool(pool, memory_mb or {})
            elif memory_mb:
                for kind, mb in memory_mb.items():
                    self.memory_used_mb.labels(type=kind).set(mb)
            self._publish_writers(writers)
            for name, depth in (queues or {}).items():
                self.queue_depth.labels(queue=name).set(depth)

    def _dml(self, kind: str, filter_: str, owner: str = "", table: str = "") -> Any:
        values = (kind, filter_, owner, table)[: self._dml_width]
        return self.dml_ops.labels(*values)

    def _publish_tally(self, t: Tally) -> None:
        self._add("bytes_read", self.bytes_read, t.bytes_read)
        self._add("bytes_parsed", self.bytes_parsed, t.bytes_parsed)
        self._add(("checkpoints", "out"), self.checkpoints.labels(filter="out"), t.checkpoints_out)
        self._add(("checkpoints", "skip"), self.checkpoints.labels(filter="skip"), t.checkpoints_skip)
        for key, count in list(t.dml.items()):
            self._add(("dml",) + key, self._dml(*key), count)
        for (kind, filter_), count in list(t.transactions.items()):
            self._add(("txn", kind, filter_), self._dml(kind, filter_), count)
        for kind, count in list(t.ddl.items()):
            self._add(("ddl", kind), self.ddl_ops.labels(type=kind), count)
        for kind, count in list(t.log_switches.items()):
            self._add(("switch", kind), self.log_switches.labels(type=kind), count)
        for kind, lag in list(t.log_switch_lag.items()):
            self.log_switches_lag.labels(type=kind).set(lag)
        if t.redo_time:
            self._redo_time = t.redo_time
            self.checkpoint_lag.set(max(0.0, time.time() - t.redo_time))
        self.scn.set(t.scn)
        self.sequence.set(t.sequence)
        now = time.time()
        for thread, (seq, scn, redo_time) in list(t.threads.items()):
            self.thread_sequence.labels(thread=str(thread)).set(seq)
            self.thread_scn.labels(thread=str(thread)).set(scn)
            self.thread_lag.labels(thread=str(thread)).set(max(0.0, now - redo_time) if redo_time else 0.0)

    def _publish_pool(self, pool: Any, other_mb: Mapping[str, float]) -> None:
        used = int(pool.in_memory)
        # Freed chunks kept for reuse (up to min-mb) are still allocated.
        allocated = used + len(getattr(pool, "free_chunks", ()))
        self.memory_used_mb.labels(type="transactions").set(used)
        for kind, mb in other_mb.items():
            self.memory_used_mb.labels(type=kind).set(mb)
        extra = sum(mb for kind, mb in other_mb.items() if kind != "transactions")
        self.memory_used_total_mb.set(used + extra)
        self.memory_allocated_mb.set(allocated + extra)
        self.swap_usage_mb.set(pool.swapped)
        self._add(("swap", "write"), self.swap_operations_mb.labels(type="write"), pool.swap_writes_mb)
        self._add(("swap", "read"), self.swap_operations_mb.labels(type="read"), pool.swap_reads_mb)
        self._add(
            ("swap", "discard"), self.swap_operations_mb.labels(type="discard"), getattr(pool, "swap_discards_mb", 0)
        )

    def _publish_writers(self, writers: Iterable[Any]) -> None:
        totals = {"sent": 0, "bytes": 0, "confirmed": 0, "bytes_confirmed": 0}
        for i, w in enumerate(writers):
            name = getattr(w, "type_name", "") or f"writer{i}"
            sent, size, confirmed = w.messages_sent, w.bytes_sent, w.messages_confirmed
            # Writers that confirm right after sending (file, discard) need not count
            # confirmed bytes: then everything sent is confirmed.
            confirmed_bytes = getattr(w, "bytes_confirmed", size if confirmed >= sent else 0)
            totals["sent"] += sent
            totals["bytes"] += size
            totals["confirmed"] += confirmed
            totals["bytes_confirmed"] += confirmed_bytes
            self._add(("wmsg", name), self.writer_messages.labels(writer=name), sent)
            self._add(("wretry", name), self.writer_retries.labels(writer=name), getattr(w, "retries", 0))
        self._add("messages_sent", self.messages_sent, totals["sent"])
        self._add("bytes_sent", self.bytes_sent, totals["bytes"])
        self._add("messages_confirmed", self.messages_confirmed, totals["confirmed"])
        self._add("bytes_confirmed", self.bytes_confirmed, totals["bytes_confirmed"])

    # ------------------------------------------------------------------ exposition
    def render(self) -> str:
        """The text exposition, as a scrape of ``/metrics`` would return it."""
        return generate_latest(self.registry).decode("utf-8")

    def start_server(self, bind: str) -> tuple[str, int]:
        """Serve ``/metrics`` on ``host:port`` in a daemon thread; returns the bound address.

        Port 0 picks a free port (tests). A bind failure is RuntimeFailure 10073.
        """
        try:
            host, port = parse_bind(bind)
            self._server, self._thread = start_http_server(port, host, registry=self.registry)
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise RuntimeFailure(f"metrics: cannot listen on {bind}: {reason}", METRICS_BIND_ERROR) from None
        address = self._server.server_address
        return str(address[0]), int(address[1])

    def stop_server(self) -> None:
        """Stop serving (idempotent)."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None


def metrics_from_config(config: Any) -> Metrics | None:
    """A :class:`Metrics` for a validated config's ``metrics`` section, or None when off."""
    section = config.metrics
    return Metrics(section.tag_names) if section.enabled else None
