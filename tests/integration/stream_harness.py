"""Helpers for the stream writer tests: a writer fed by a producer thread, and its messages."""

from __future__ import annotations

import threading
import time
from typing import Any

import orjson

from replicator.config.writer import NetworkWriterConfig, ZeroMQWriterConfig
from replicator.errors import RuntimeFailure
from replicator.events import Message
from replicator.proto import olr_pb2 as pb
from replicator.tools.stream_client import StreamClient, is_data, position_of
from replicator.writers.network import NetworkWriter
from replicator.writers.stream_writer import StreamWriter
from replicator.writers.zeromq import ZeroMQWriter

DATABASE = "DB"
PER_SCN = 5  # messages per c_scn


def position(n: int) -> tuple[int, int]:
    """Internal (c_scn, idx) of message number ``n``."""
    return 1000 + n // PER_SCN, n % PER_SCN


def message(n: int) -> Message:
    """Message ``n`` as the JSON format would print it (c_idx = internal + 1)."""
    scn, idx = position(n)
    data = orjson.dumps({"c_scn": scn, "c_idx": idx + 1, "payload": [{"op": "c", "n": n}]})
    return Message(data=data, scn=scn, idx=idx)


def number_of(frame: bytes) -> int:
    """The ``n`` a data frame carries."""
    return int(orjson.loads(frame)["payload"][0]["n"])


def make_writer(kind: str, confirmed: list[tuple[int, int]], **kwargs: Any) -> StreamWriter:
    """A writer on 127.0.0.1 with an ephemeral port; ``kwargs`` go to the config or the writer."""
    config_keys = {
        k.replace("_", "-"): kwargs.pop(k)
        for k in ("queue_size", "poll_interval_us", "auth_token", "tls_cert", "tls_key")
        if k in kwargs
    }
    on_confirm = lambda scn, idx: confirmed.append((scn, idx))
    if kind == "network":
        config = NetworkWriterConfig.model_validate({"type": "network", "uri": "127.0.0.1:0", **config_keys})
        return NetworkWriter(config, on_confirm, database=DATABASE, **kwargs)
    config = ZeroMQWriterConfig.model_validate({"type": "zeromq", "uri": "tcp://127.0.0.1:*", **config_keys})
    return ZeroMQWriter(config, on_confirm, database=DATABASE, **kwargs)


class Producer:
    """Runs connect() and then writes ``count`` messages in batches on its own thread."""

    def __init__(self, writer: StreamWriter, count: int, batch: int = 50, close: bool = True) -> None:
        self.writer, self.count, self.batch, self.close = writer, count, batch, close
        self.error: BaseException | None = None
        self.written = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Producer:
        """Start the thread."""
        self.thread.start()
        return self

    def _run(self) -> None:
        try:
            self.writer.connect(timeout=20)
            for first in range(0, self.count, self.batch):
                self.writer.write([message(n) for n in range(first, min(self.count, first + self.batch))])
                self.written = min(self.count, first + self.batch)
        except BaseException as exc:  # noqa: BLE001 - re-raised by join()
            self.error = exc
        finally:
            if self.close:
                self.writer.close()

    def join(self, timeout: float = 30.0) -> None:
        """Wait for the thread; re-raise its failure."""
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "producer thread did not finish"
        if self.error is not None:
            raise self.error


def client(kind: str, writer: StreamWriter, timeout: float = 5.0) -> StreamClient:
    """An opened client for ``writer``."""
    result = StreamClient(kind, writer.address, DATABASE, "json", timeout)
    result.open()
    return result


def started_client(
    kind: str,
    writer: StreamWriter,
    mode: str = "now",
    position: tuple[int, int] | None = None,
    deadline_s: float = 15.0,
) -> tuple[StreamClient, Any]:
    """A client whose START/CONTINUE was answered: (client, reply).

    Retried until ``deadline_s``: the writer turns a client away (or, over ZeroMQ's single
    PAIR peer, does not answer it) while it is still dropping the previous connection.
    """
    end = time.monotonic() + deadline_s
    while True:
        stream = None
        try:
            stream = client(kind, writer, timeout=1.0)  # short: a turned-away ZeroMQ client just hears nothing
            reply = stream.start(mode, position)
            if reply.code == pb.READY and time.monotonic() < end:
                # START/CONTINUE is never answered READY: this is the answer to INFO that ZeroMQ's
                # PAIR socket queued for a peer that timed out and went; start again.
                stream.close()
                continue
            stream.timeout = 5.0
            return stream, reply
        except RuntimeFailure:  # turned away, or (on a loaded machine) the connect itself timed out
            if stream is not None:
                stream.close()
            if time.monotonic() > end:
                raise


def read_data(stream: StreamClient, count: int, confirm_every: int = 0, timeout: float = 10.0) -> list[bytes]:
    """The next ``count`` data frames (each within ``timeout`` s), confirming every
    ``confirm_every``-th one and the last (0: none)."""
    frames: list[bytes] = []
    while len(frames) < count:
        frame = stream.receive(timeout)
        assert frame is not None, f"only {len(frames)} of {count} messages arrived"
        assert is_data(frame), pb.RedoResponse.FromString(frame)
        frames.append(frame)
        if confirm_every and (len(frames) % confirm_every == 0 or len(frames) == count):
            stream.confirm(position_of(frame, "json"))
    return frames
