"""``replicator client``: a stream client for the network (TCP) and zeromq writers.

Like OpenLogReplicator's StreamClient it sends INFO, then START (server ready) or CONTINUE
(server replicating), prints every data message on its own line (JSON as received,
protobuf as one JSON line) and confirms the last printed position every N messages or T
seconds. With ``--reconnect`` it survives a lost connection: it reconnects with back-off
and continues after the last message it printed, so nothing is printed twice or lost.

    replicator client network 127.0.0.1:5000 ORA1 --start scn:2266634
    replicator client zeromq tcp://127.0.0.1:5001 ORA1 --format protobuf --start next
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import deque
from typing import BinaryIO

from replicator import log
from replicator.cli_args import (
    ArgumentParser,
    non_negative_float,
    non_negative_int,
    positive_float,
)
from replicator.errors import ReplicatorError, RuntimeFailure
from replicator.formats.olr_digest import StreamVerifier
from replicator.proto import olr_pb2 as pb
from replicator.tools.stream_client import (
    StreamClient,
    check_start_mode,
    is_data,
    position_of,
)


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``replicator client``."""
    p = ArgumentParser(
        prog="replicator client",
        description="read a network/zeromq writer's stream",
        epilog="By default it follows the stream until interrupted (Ctrl-C). --count N or --idle-exit S "
        "make it stop by itself: it then confirms the last message printed and exits 0.",
    )
    p.add_argument("kind", choices=("network", "zeromq"), help="writer type")
    p.add_argument("uri", help="host:port (network) or a ZeroMQ endpoint such as tcp://127.0.0.1:5001")
    p.add_argument("database", help="source name (source[0].name) the writer serves")
    p.add_argument(
        "--format", choices=("json", "protobuf"), default="json", help="the writer's format (default: %(default)s)"
    )
    p.add_argument(
        "--start",
        default="now",
        metavar="MODE",
        help="now[,SEQ] | scn:N[,SEQ] | time:'YYYY-MM-DD HH:MM:SS'[,SEQ] | time_rel:S[,SEQ] "
        "| c:SCN,IDX | next (default: %(default)s)",
    )
    p.add_argument(
        "--confirm-every",
        type=non_negative_int,
        default=1000,
        metavar="N",
        help="confirm after N messages (default: %(default)s)",
    )
    p.add_argument(
        "--confirm-interval",
        type=non_negative_float,
        default=10.0,
        metavar="S",
        help="or after S seconds (default: %(default)s)",
    )
    p.add_argument(
        "--count", type=non_negative_int, default=0, help="stop after this many messages (default: %(default)s = never)"
    )
    p.add_argument("--quiet", action="store_true", help="do not print messages (measure only)")
    p.add_argument("--reconnect", action="store_true", help="reconnect after a lost connection")
    p.add_argument(
        "--timeout", type=positive_float, default=10.0, help="seconds to wait for a reply (default: %(default)s)"
    )
    p.add_argument("--token", default=None, help="the writer's auth-token (or env REPLICATOR_TOKEN)")
    p.add_argument("--tls-ca", default=None, metavar="PEM", help="network: connect with TLS, trusting this CA file")
    p.add_argument(
        "--confirm-log",
        default=None,
        metavar="FILE",
        help="append 'MESSAGES C_SCN C_IDX' to FILE after each CONFIRM sent (messages printed so far)",
    )
    p.add_argument(
        "--idle-exit",
        type=non_negative_float,
        default=0.0,
        metavar="S",
        help="stop after S seconds without data (default: %(default)s = never)",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="check the checkpoint digests (format.checkpoint-digests) as messages arrive; "
        "stop with error 10403/10404/10405 on a gap (json format; default: off)",
    )
    return p


RECENT_FRAMES = 20_000  # frames remembered to recognise a restarted writer's re-sends


class _Printer:
    """Prints data frames and tracks when to confirm.

    After a reconnect the writer may re-send messages this client already printed: a
    position (c_scn, c_idx) is not unique (transactions sharing a begin SCN share their
    positions), so the writer cannot always tell where the client's message lies in its
    replay. The leading run of frames identical to recently printed ones is dropped here
    (counted in ``resent``); the first new frame ends it. The position of the last frame is
    read from it only when it is asked for (a CONFIRM, a reconnect), not for every frame.
    """

    def __init__(self, args: argparse.Namespace, out: BinaryIO) -> None:
        self.args, self.out = args, out
        self.count = 0
        self.unconfirmed = 0
        self.last_confirm = time.monotonic()
        self.recent: deque[bytes] = deque(maxlen=RECENT_FRAMES)
        self._printed: set[bytes] | None = None  # the recent frames, while catching up
        self._last_frame: bytes | None = None
        self._last: tuple[int, int] | None = None
        self.resent = 0
        self.confirm_log: BinaryIO | None = open(args.confirm_log, "ab") if args.confirm_log else None  # noqa: SIM115
        self.verifier = StreamVerifier() if args.verify else None  # raises StreamCheckFailed on a gap

    @property
    def last(self) -> tuple[int, int] | None:
        """(c_scn, c_idx) of the last frame printed, None before the first."""
        if self._last_frame is not None:
            self._last = position_of(self._last_frame, self.args.format)
            self._last_frame = None
        return self._last

    @property
    def catching_up(self) -> bool:
        """True after a reconnect until the first frame not printed before."""
        return self._printed is not None

    @catching_up.setter
    def catching_up(self, value: bool) -> None:
        self._printed = set(self.recent) if value else None

    def take(self, frame: bytes) -> None:
        if self._printed is not None:
            if frame in self._printed:
                self.resent += 1
                return
            self._printed = None
        self.recent.append(frame)
        if self.verifier is not None:
            self.verifier.take(frame)
        self._last_frame = frame
        self.count += 1
        self.unconfirmed += 1
        if self.args.quiet:
            return
        if self.args.format == "protobuf":
            frame = protobuf_line(frame)
        self.out.write(frame + b"\n")

    def due(self, now: float) -> bool:
        return self.unconfirmed > 0 and (
            self.unconfirmed >= self.args.confirm_every or now - self.last_confirm >= self.args.confirm_interval
        )

    def confirmed(self) -> None:
        self.unconfirmed = 0
        self.last_confirm = time.monotonic()
        last = self.last
        if self.confirm_log is not None and last is not None:
            self.out.flush()  # the log never names a message the output does not hold yet
            self.confirm_log.write(f"{self.count} {last[0]} {last[1]}\n".encode())
            self.confirm_log.flush()


def protobuf_line(frame: bytes) -> bytes:
    """One JSON line for a protobuf data message (field names as in the .proto file).

    proto3 leaves default values out, so a BEGIN payload (op 0) would print as ``{}``:
    the op is always shown.
    """
    import orjson
    from google.protobuf.json_format import MessageToDict

    doc = MessageToDict(pb.RedoResponse.FromString(frame), preserving_proto_field_name=True)
    for element in doc.get("payload", []):
        element.setdefault("op", "BEGIN")
    return orjson.dumps(doc)


def _session(client: StreamClient, printer: _Printer, args: argparse.Namespace) -> bool:
    """One connection: handshake and read; True when the wanted count was reached."""
    reply = client.start(args.start, printer.last)
    printer.catching_up = printer.last is not None
    if reply.code != pb.REPLICATE:
        raise RuntimeFailure(f"server answered {pb.ResponseCode.Name(reply.code)}, not REPLICATE", 10053)
    idle_since = time.monotonic()
    every = args.confirm_every
    while True:
        frames = client.receive_many(min(1.0, args.confirm_interval))
        now = time.monotonic()
        if not frames and args.idle_exit and now - idle_since >= args.idle_exit:
            return True
        for frame in frames:
            if is_data(frame):
                printer.take(frame)
                idle_since = now
            else:
                code = pb.RedoResponse.FromString(frame).code
                if code == pb.INVALID_COMMAND:  # e.g. a CONFIRM refused by a restarted writer: not streaming any more
                    raise RuntimeFailure(
                        "server refused a request while streaming (restarted?): handshaking again", 10053
                    )
                log.warning(60032, f"server sent {pb.ResponseCode.Name(code)}")
            if printer.unconfirmed and printer.unconfirmed >= every:
                _confirm(client, printer)
            if args.count and printer.count >= args.count:
                return True
        if printer.due(now):
            _confirm(client, printer)


def _confirm(client: StreamClient, printer: _Printer) -> None:
    last = printer.last
    if last is not None:
        client.confirm(last)
        printer.confirmed()


def run(args: argparse.Namespace, out: BinaryIO) -> int:
    """Run the client until ``--count``/``--idle-exit`` or a failure; returns the exit code."""
    printer = _Printer(args, out)
    backoff = 0.1
    while True:
        client = StreamClient(
            args.kind,
            args.uri,
            args.database,
            args.format,
            args.timeout,
            args.token or os.environ.get("REPLICATOR_TOKEN"),
            args.tls_ca,
        )
        try:
            client.open()
            if _session(client, printer, args):
                if printer.resent:
                    log.info(
                        f"{printer.resent} messages the writer re-sent after reconnects were already printed: dropped"
                    )
                if printer.last is not None:
                    client.confirm(printer.last)
                    printer.confirmed()
                    time.sleep(0.05)  # let the CONFIRM leave before the socket closes
                return 0
        except RuntimeFailure as exc:
            if not args.reconnect:
                raise
            log.warning(exc.code, f"{exc.message}; reconnecting in {backoff:.1f}s")
            time.sleep(backoff)
            backoff = min(5.0, backoff * 2)
        finally:
            out.flush()
            client.close()


def client_main(argv: list[str]) -> int:
    """Entry point of ``replicator client``; prints errors as ``ERROR CCCCC message``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.kind == "network":
        host, sep, port = args.uri.rpartition(":")
        if not (sep and host and port.isdigit() and 0 < int(port) < 65536):
            parser.error(f"uri {args.uri!r} is not HOST:PORT")
    try:
        check_start_mode(args.start)
    except RuntimeFailure as exc:
        parser.error(f"--start: {exc.message}")
    if args.verify and args.format != "json":
        parser.error("--verify reads OpenLogReplicator JSON checkpoints (--format json)")
    try:
        return run(args, sys.stdout.buffer)
    except ReplicatorError as exc:
        log.error(exc.code, exc.message)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    log.configure_logging()
    raise SystemExit(client_main(sys.argv[1:]))
