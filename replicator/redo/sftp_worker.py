"""A reader process of :mod:`replicator.redo.sftp_pool`: ``python -m replicator.redo.sftp_worker``.

It opens its own SSH connection (:class:`replicator.redo.sftp.SftpSource`, with the same
reconnect-and-resume rules), reads the file ranges asked on stdin with ``read-requests``
reads in flight and writes the pieces, its log lines and its coded errors as frames to
the pipe that was its stdout. It ends when its stdin closes or its pipe breaks (the
replicator is gone).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading

from replicator import log
from replicator.redo.sftp_pool import (
    END,
    FAIL,
    LOG,
    READY,
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
        payload = json.dumps({"level": record.levelno, "code": int(getattr(record, "olr_code", 0)),
                              "message": record.getMessage()}).encode()
        with self.frame_lock:
            write_frame(self.fd, LOG, payload)


def serve(out: int) -> None:
    """Answer the requests on stdin with frames on ``out`` until stdin closes."""
    lock = threading.Lock()
    stdin = sys.stdin.buffer
    hello = json.loads(stdin.readline())
    for handler in list(log.logger.handlers):
        log.logger.removeHandler(handler)
    log.logger.addHandler(_FrameHandler(out, lock))
    log.logger.propagate = False
    log.logger.setLevel(int(hello["level"]))
    # Imported here, after main() moved stdout off the frame pipe: nothing an import prints lands among frames.
    from replicator.redo import sftp

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
                handle = src.open(req["path"])
                try:
                    for blocks in handle.piece_blocks(sftp.piece_ranges(req["offset"], req["end"], req["chunk"],
                                                                   req["step"])):
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
    finally:
        src.close()


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
    return 0


if __name__ == "__main__":
    sys.exit(main())
