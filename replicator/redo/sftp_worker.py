"""A reader process of :mod:`replicator.redo.sftp_pool`: ``python -m replicator.redo.sftp_worker``.

It opens its own SSH connection (:class:`replicator.redo.sftp.SftpSource`, with the same
reconnect-and-resume rules), reads the file ranges asked on stdin with ``read-requests``
reads in flight, leaves the pieces in the ring of shared memory the replicator gave it
(:class:`RingWriter`; through the pipe when there is none) and writes their places, its
log lines and its coded errors as frames to the pipe that was its stdout. It ends when its stdin closes or its pipe breaks (the
replicator is gone).
"""

from __future__ import annotations

import json
import logging
import mmap
import os
import signal
import sys
import threading
from typing import Any

from replicator import log
from replicator.redo.sftp_pool import (
    END,
    FAIL,
    LOG,
    PIECE,
    READY,
    RESULT,
    SLOT,
    SLOT_PLACE,
    error_payload,
    widen_pipe,
    write_frame,
    write_piece,
)


class _FrameHandler(logging.Handler):
    """Send each log record to the replicator as a LOG frame."""

    def __init__(self, fd: int, lock: threading.Lock):
        super().__init__()
        self.fd = fd
        self.frame_lock = lock  # not ``lock``: that is logging.Handler's own, held around emit()

    def emit(self, record: logging.LogRecord) -> None:
        payload = json.dumps(
            {"level": record.levelno, "code": int(getattr(record, "olr_code", 0)), "message": record.getMessage()}
        ).encode()
        with self.frame_lock:
            write_frame(self.fd, LOG, payload)


class RingWriter:
    """This side of the shared ring of :mod:`replicator.redo.sftp_pool`: ``slots`` slots of
    ``slot`` bytes used in turn, each taken when the replicator has given it back (one
    byte on the ack pipe per slot; all of them are free at the start)."""

    def __init__(self, spec: dict[str, int]):
        self.slot, self.slots, self.ack = spec["slot"], spec["slots"], spec["ack"]
        self.ring = mmap.mmap(spec["fd"], self.slot * self.slots)
        os.close(spec["fd"])  # the mapping keeps the memory
        self.free = self.slots
        self.next = 0

    def put(self, out: int, blocks: list[bytes], lock: threading.Lock) -> bool:
        """Leave a piece in the next slot and send its place; False when it is larger than a slot."""
        n = sum(len(b) for b in blocks)
        if n > self.slot:
            return False
        while not self.free:
            given = os.read(self.ack, 4096)  # blocks until the replicator has taken a piece
            if not given:
                raise BrokenPipeError("the replicator closed the ack pipe")
            self.free += len(given)
        at = pos = self.next * self.slot
        for block in blocks:
            self.ring[at : at + len(block)] = block
            at += len(block)
        self.free -= 1
        self.next = (self.next + 1) % self.slots
        with lock:
            write_frame(out, SLOT, SLOT_PLACE.pack(pos, n))
        return True


def answer(src: Any, req: dict[str, Any]) -> tuple[int, bytes]:
    """The frame answering a metadata request of :meth:`replicator.redo.sftp_pool.ReaderPool.ask`."""
    op, path = req["op"], req["path"]
    if op == "scan":
        return RESULT, json.dumps([[e.path, e.name, e.is_dir, e.size] for e in src.scan(path)]).encode()
    if op == "stat":
        return RESULT, json.dumps({"kind": src.kind(path), "size": src.size(path)}).encode()
    if op == "head":
        data = src.read_head(path, req["length"])
        return (RESULT, b"null") if data is None else (PIECE, data)
    if op == "read":  # a small read of a file the replicator has open (a header, a poll of an online log)
        return PIECE, _handle(src, path, req["token"]).read(req["offset"], req["length"])
    if op == "size":
        return RESULT, json.dumps(_handle(src, path, req["token"]).size()).encode()
    raise ValueError(f"unknown request {op!r}")


_open: dict[str, Any] = {}  # the last file asked for: its token and handle


def _handle(src: Any, path: str, token: int) -> Any:
    """The handle of the replicator's open file ``token``: kept while the following requests
    are for the same one (the polls of an online log), so a read is one SFTP request, not
    an open, a read and a close; another token (another open of the file) opens it again.
    """
    if _open.get("token") != token:
        old = _open.pop("handle", None)
        _open.clear()
        if old is not None:
            old.close()
        _open["handle"] = src.open(path)
        _open["token"] = token
    return _open["handle"]


def serve(out: int) -> None:
    """Answer the requests on stdin with frames on ``out`` until stdin closes."""
    lock = threading.Lock()
    stdin = sys.stdin.buffer
    hello = json.loads(stdin.readline())
    for handler in list(log.logger.handlers):
        log.logger.removeHandler(handler)
    log.logger.addHandler(_FrameHandler(out, lock))
    log.logger.propagate = False
    # Every record goes back: the replicator filters by its own level, which its config may
    # set after this process started (the early start reads no log-level).
    log.logger.setLevel(logging.DEBUG)
    # Imported here, after main() moved stdout off the frame pipe: nothing an import prints lands among frames.
    from replicator.redo import sftp

    ring = RingWriter(hello["ring"]) if "ring" in hello else None
    src = sftp.SftpSource(sftp.SftpSettings.from_json(hello["settings"]))
    src.warned_unknown = True  # the replicator's own session says it once
    try:
        try:
            src.warm_up()
        except Exception:  # noqa: BLE001 - the first request retries and reports it with its code
            pass
        with lock:
            write_frame(out, READY)
        for line in stdin:
            req = json.loads(line)
            try:
                if "op" in req:
                    kind, payload = answer(src, req)
                    with lock:
                        write_frame(out, kind, payload)
                    continue
                handle = src.open(req["path"])
                try:
                    for blocks in handle.piece_blocks(
                        sftp.piece_ranges(req["offset"], req["end"], req["chunk"], req["step"])
                    ):
                        if ring is None or not ring.put(out, blocks, lock):
                            with lock:
                                write_piece(out, blocks)
                finally:
                    handle.close()
                with lock:
                    write_frame(out, END)
            except (BrokenPipeError, KeyboardInterrupt):
                raise
            except Exception as e:  # noqa: BLE001 - every failure goes back as a coded error
                with lock:
                    write_frame(out, FAIL, error_payload(e))
    except BaseException:
        src.close()
        raise
    # stdin closed: the replicator is done with this process and waits for its exit. It
    # leaves at once (main): the kernel closes the SSH socket; closing the session politely
    # (a round trip, then the interpreter's shutdown) only made the replicator wait longer.


def main() -> int:
    """Entry point of a reader process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the replicator's to handle
    out = os.dup(1)
    os.dup2(2, 1)  # a stray print must not land among the frames
    widen_pipe(out)
    try:
        serve(out)
    except BrokenPipeError:  # the replicator stopped reading: it is gone or killed us
        pass
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
