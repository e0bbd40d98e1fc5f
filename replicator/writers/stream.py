"""The stream writers' request protocol (olr-interfaces.md §4.3), shared by TCP and ZeroMQ.

A client sends protobuf ``RedoRequest`` frames; the writer answers with ``RedoResponse``
frames and, while streaming, sends every queued message (JSON text or a serialized
``RedoResponse`` with code PAYLOAD, whatever the format built) in order.

Status READY -> STARTING -> REPLICATING as in OpenLogReplicator: replication starts when a
client sends START, or at once when a checkpoint position was restored. Requests:

* INFO -> READY, STARTING, or REPLICATE with the first data SCN and the confirmed
  position. While streaming, INFO stops the stream (the client must CONTINUE again).
* START -> REPLICATE once the application booted (``connect(boot=...)``), FAILED_START
  if booting failed (the application refuses a position it cannot honour), ALREADY_STARTED
  / STARTING when not READY, INVALID_COMMAND without a starting point.
* CONTINUE (REPLICATING only) -> REPLICATE: delivery restarts at the oldest unconfirmed
  message. The client's position (c_scn, c_idx) is checked against what this writer sent
  and what was confirmed: the confirmed or restored position, or no position, resends
  everything unconfirmed; the position of a queued message that was sent drops the
  messages through it (the client has them); another position sent before drops nothing
  (positions are neither growing nor unique, so "at or below it" cannot tell what the
  client has: it gets duplicates, never a gap). Right after a restart
  (:meth:`StreamProtocol.restore`), before anything was sent, the client may have more
  than the checkpoint says (the previous run sent it): the replay is held until its
  position comes again and only what precedes that very message is dropped
  (:meth:`~replicator.writers.queue.ConfirmQueue.resume_at`; a position that never comes
  holds for at most ``queue-size`` messages or 30 s, then everything is sent). Any other
  position -- one never sent -- is refused with INVALID_COMMAND (WARN 60085) and skips
  nothing.
* CONFIRM (no reply) releases the sent messages up to the one at that position (or the
  leading run at or below it). A position beyond anything ever sent is refused with
  INVALID_COMMAND (WARN 60082) and confirms nothing.

Deliberate differences from OpenLogReplicator (each an upstream bug or hazard): every
c_idx a client sends or receives is the printed index (internal + 1), so echoing the
c_idx of the last message processed releases exactly that message (OLR #325); INFO while
STARTING answers STARTING instead of falling through to REPLICATE; CONTINUE is validated
(OLR takes any position and confirms every queued and later message at or below it, so
one CONTINUE with c_scn 2^63 from any local process silently dropped the whole stream);
CONTINUE while READY is refused (OLR answers REPLICATE and then streams nothing);
CONTINUE without c_idx means index 0, not the writer's old index; CONFIRM never releases
unsent messages, nor messages after the one it names whose (begin-SCN) position is lower
(OLR #330).

The network I/O runs on the writer's own thread (:mod:`replicator.writers.stream_writer`);
this module holds the protocol state, which only that thread touches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from google.protobuf.message import DecodeError

from replicator import log
from replicator.proto import olr_pb2 as pb
from replicator.writers.queue import NO_SCN, ConfirmQueue, Position, client_position, wire_position

MAX_REQUEST = 1024  # bytes: the largest request a client may send (10055 beyond)
AUTH_PREFIX = b"REPLICATOR-AUTH1 "  # network writer with auth-token: a client's first frame is this + token

READY, STARTING, REPLICATING = "ready", "starting", "replicating"


@dataclass(frozen=True, slots=True)
class StartRequest:
    """Where a client's START asked replication to start.

    ``kind`` is ``scn`` (``scn`` set; NO_SCN means "now"), ``time`` (``tms``) or
    ``time_rel`` (``tm_rel`` seconds back). ``seq`` is the optional redo sequence.
    """

    kind: Literal["scn", "time", "time_rel"]
    scn: int | None = None
    tms: str | None = None
    tm_rel: int | None = None
    seq: int | None = None

    @property
    def now(self) -> bool:
        """START from "now" (StreamClient ``now``: scn 2^64-1)."""
        return self.kind == "scn" and self.scn == NO_SCN

    @property
    def first_data_scn(self) -> int:
        """The SCN replication starts from when booting does not say otherwise."""
        if self.kind == "scn" and self.scn is not None and not self.now:
            return self.scn
        return 0


class StreamProtocol:
    """Request handling and status of one stream writer (I/O thread only)."""

    def __init__(self, queue: ConfirmQueue, database: str, reply: Callable[[pb.RedoResponse], None]) -> None:
        self.queue = queue
        self.database = database
        self._reply = reply
        self.status = READY
        self.streaming = False
        self.first_data_scn = 0
        self.pending: StartRequest | None = None  # a start waiting for the app to boot
        self.pending_session = -1
        self.restored: Position | None = None  # the checkpoint position this writer resumed from

    # -- requests ----------------------------------------------------------------------------

    def handle(self, data: bytes, session: int) -> StartRequest | None:
        """Process one request frame; returns a new start request for the app, if any."""
        if len(data) > MAX_REQUEST:
            log.warning(10055, f"message from client exceeds buffer size ({len(data)} > {MAX_REQUEST})")
            self._reply(pb.RedoResponse(code=pb.INVALID_COMMAND))
            return None
        request = pb.RedoRequest()
        try:
            request.ParseFromString(data)
        except DecodeError:
            log.warning(60033, f"request decoder[{len(data)}]: {data[:64].hex(' ')}")
            self._reply(pb.RedoResponse(code=pb.INVALID_COMMAND))
            return None
        code = request.code
        if code == pb.CONFIRM:
            self._confirm(request)
            return None
        if self.database and request.database_name != self.database:
            log.warning(60035, f"unknown database requested, got: {request.database_name}, expected: {self.database}")
            self._reply(pb.RedoResponse(code=pb.INVALID_DATABASE))
            return None
        if code == pb.INFO:
            self._reply(self._info())
            if self.streaming:
                self.stop_streaming()
            return None
        if self.streaming or code not in (pb.START, pb.CONTINUE):
            log.warning(60032, f"unknown request code: {code}" + (" (while streaming)" if self.streaming else ""))
            self._reply(pb.RedoResponse(code=pb.INVALID_COMMAND))
            return None
        if code == pb.START:
            return self._start(request, session)
        self._continue(request)
        return None

    def _info(self) -> pb.RedoResponse:
        if self.status == READY:
            return pb.RedoResponse(code=pb.READY)
        if self.status == STARTING:
            return pb.RedoResponse(code=pb.STARTING)
        return self._positioned(pb.REPLICATE)

    def _positioned(self, code: pb.ResponseCode) -> pb.RedoResponse:
        c_scn, c_idx = wire_position(self.queue.confirmed)
        return pb.RedoResponse(code=code, scn=self.first_data_scn, c_scn=c_scn, c_idx=c_idx)

    def _start(self, request: pb.RedoRequest, session: int) -> StartRequest | None:
        if self.status == REPLICATING:
            self._reply(self._positioned(pb.ALREADY_STARTED))
            return None
        if self.status == STARTING:
            self._reply(pb.RedoResponse(code=pb.STARTING))
            return None
        seq = request.seq if request.HasField("seq") else None
        which = request.WhichOneof("tm_val")
        if which == "scn":
            start = StartRequest("scn", scn=request.scn, seq=seq)
            log.info("client requested to start from " + ("NOW" if request.scn == NO_SCN else f"scn: {request.scn}"))
        elif which == "tms":
            start = StartRequest("time", tms=request.tms, seq=seq)
            log.info(f"client requested to start from time: {request.tms}")
        elif which == "tm_rel":
            start = StartRequest("time_rel", tm_rel=request.tm_rel, seq=seq)
            log.info(f"client requested to start from relative time: {request.tm_rel}")
        else:
            log.warning(60032, "client requested an invalid starting point (no scn, tms or tm_rel)")
            self._reply(pb.RedoResponse(code=pb.INVALID_COMMAND))
            return None
        return self._begin_start(start, session)

    def _continue(self, request: pb.RedoRequest) -> None:
        c_scn = request.c_scn if request.HasField("c_scn") else 0
        c_idx = request.c_idx if request.HasField("c_idx") else 0
        position = None if c_scn in (0, NO_SCN) else client_position(c_scn, c_idx)
        if self.status == STARTING:
            self._reply(pb.RedoResponse(code=pb.STARTING))
            return
        if self.status == READY:
            named = "" if position is None else f" from scn: {c_scn}, idx: {c_idx}"
            log.warning(
                60085 if position else 60032,
                f"client requested to continue{named}, but replication has "
                "not started (nothing was sent or confirmed): it must START",
            )
            self._reply(pb.RedoResponse(code=pb.INVALID_COMMAND))
            return
        log.info(f"client requested scn: {c_scn}, idx: {c_idx}")
        queue = self.queue
        if queue.hold is not None and position in (None, queue.hold):
            queue.resume_at(queue.hold)  # a restored position the replay has not come to yet: still held
        elif position is None or position in (self.restored, queue.client_has):
            queue.resume_after(None)  # the client has exactly what left the queue: send the rest
        elif self.restored is not None and queue.sent_total == 0:
            # Right after a restart the client may hold more than the checkpoint says (and, as
            # positions do not grow, name a lower one): only its message itself can tell.
            queue.resume_at(position)
        elif queue.max_sent is not None and position <= queue.max_sent:
            queue.resume_after(position)  # through its message if queued and sent, else nothing dropped
        else:
            highest = "nothing" if queue.max_sent is None else f"scn: {queue.max_sent[0]}, idx: {queue.max_sent[1] + 1}"
            log.warning(
                60085,
                f"client requested to continue from scn: {c_scn}, idx: {c_idx}, which was never sent "
                f"(highest sent: {highest}); refused, nothing skipped",
            )
            self._reply(pb.RedoResponse(code=pb.INVALID_COMMAND))
            return
        self._reply(self._positioned(pb.REPLICATE))
        self.streaming = True
        log.info("streaming to client")

    def _begin_start(self, start: StartRequest, session: int) -> StartRequest:
        self.status = STARTING
        self.pending = start
        self.pending_session = session
        return start

    def _confirm(self, request: pb.RedoRequest) -> None:
        if self.database and request.database_name != self.database:
            log.warning(60035, f"unknown database confirmed, got: {request.database_name}, expected: {self.database}")
            return
        if not request.HasField("c_scn"):
            log.warning(60035, "missing scn confirmed")
            return
        c_idx = request.c_idx if request.HasField("c_idx") else 0
        position = client_position(request.c_scn, c_idx)
        highest = self.queue.max_sent
        if highest is None or position > highest:
            sent = "nothing" if highest is None else f"scn: {highest[0]}, idx: {highest[1] + 1}"
            log.warning(
                60082,
                f"client confirmed scn: {request.c_scn}, idx: {c_idx}, which was never sent "
                f"(highest sent: {sent}); ignored",
            )
            self._reply(pb.RedoResponse(code=pb.INVALID_COMMAND))
            return
        self.queue.confirm_through(position)

    # -- start / stop ------------------------------------------------------------------------

    def finish_start(self, ok: bool, first_data_scn: int, session: int) -> None:
        """The app booted (or failed to) for the pending start; answer if its client is still here."""
        start, self.pending = self.pending, None
        same_client = session == self.pending_session
        if not ok or start is None:
            self.status = READY
            if same_client:
                self._reply(pb.RedoResponse(code=pb.FAILED_START))
            return
        self.status = REPLICATING
        self.first_data_scn = first_data_scn
        if same_client:
            self._reply(self._positioned(pb.REPLICATE))
            self.queue.rewind()
            self.streaming = True
            log.info("streaming to client")

    def restore(self, position: Position, first_data_scn: int, skip: bool = True) -> None:
        """A checkpoint position exists: replicate at once, drop what the client confirmed.

        ``skip=False`` when the application itself restarts exactly after ``position``
        (the daemon's stream position): then nothing it produces may be skipped here, as
        positions do not grow along the stream and a skip by position would drop or
        re-send the wrong messages.
        """
        self.status = REPLICATING
        self.first_data_scn = first_data_scn
        self.restored = position
        self.queue.confirmed = self.queue.client_has = position
        self.queue.max_sent = position
        self.queue.skip = None
        if skip:
            # The replay comes again through the client's message, but positions do not grow
            # (c_scn is a begin SCN): "at or below it" would drop a transaction that began
            # before it and committed after (OLR #330). Held until exactly that message.
            self.queue.resume_at(position)

    def stop_streaming(self) -> None:
        """The client left or asked INFO: unconfirmed messages will be sent again."""
        self.streaming = False
        self.queue.rewind()

    def idle_allowed(self, session: int) -> bool:
        """A silent client is fine while streaming or while its own start is booting."""
        return self.streaming or (self.pending is not None and session == self.pending_session)
