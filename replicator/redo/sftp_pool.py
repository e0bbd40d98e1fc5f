"""Reader processes that read whole redo files over SFTP beside the parser.

The SSH client (asyncssh: packet decryption, SFTP replies) is Python and needs the
interpreter lock; in the replicator's own process it would take turns with the parser.
So a whole archived log is read by ``connections`` child processes
(``python -m replicator.redo.sftp_worker``), each with its own SSH connection: for a
stream cut into pieces 0, 1, 2 ... process ``k`` of ``n`` reads pieces ``k, k+n, k+2n``
with its ``read-requests`` reads in flight. This side takes the pieces in order, so the
reader above sees one ordered stream.
A process leaves each piece in a ring of shared memory it shares with this side (a
memfd of ``read-requests`` slots of ``read-size-kb``, at least 2, at most 64 MB in all
unless 2 slots are more) and sends only its place
on its stdout pipe (a SLOT frame); this side copies the piece out and gives the slot
back with one byte on the process's ack pipe. So the parser never waits for a piece that
has arrived: through the pipe (1 MB at most without privileges) a 2 MB piece took two
hand-offs, each waiting for the process to be scheduled (measured on a busy 2-core
machine: 4-7 ms per piece, 0.2-0.3 s per 100 MB; with the ring 0.03-0.05 s, mostly the
first piece of each file). The ring is the bounded buffer: a process runs at most its
in-flight reads plus the ring ahead of the parser, then waits for a slot. Without memfd
(not Linux) the pieces go through the pipe (PIECE frames).

Protocol. Line 1 on a process's stdin is JSON ``{"settings": ..., "ring": ...}`` (the
settings include the key passphrase: a pipe, never argv or the environment); then one
JSON line per file range. A process answers each with frames ``<kind u8><length u32>
<payload>``: SLOT (a piece's place in the ring, ``<QI>`` position and length) or PIECE
(the bytes), LOG (a log line to repeat here, JSON), FAIL (a coded error, JSON), END (the
range is done); READY once, first, when it has logged in.
A line ``{"op": ...}`` asks for one metadata call instead (:meth:`ReaderPool.ask`: a
listing, a stat, a small read such as a file header), answered by one RESULT (JSON) or
PIECE frame, or FAIL: then the replicator itself never imports asyncssh nor logs in
when it has reader processes.
``run`` and ``bench`` start the processes first thing (:mod:`replicator.redo.sftp_early`),
so their start (some 0.3 s of imports and a login) overlaps the replicator's own; a
metadata call waits for its process to be READY. Until every process of a stream is
READY, the stream's first pieces are read in this process, over its own session, so the
start is not waited for. A lost SSH connection is retried inside the
process (warnings 60210/60211 come through as LOG frames); a process that dies is
started again and the stream resumes at the same byte (60350), up to
:data:`MAX_RESTARTS` times per file, then 10350.
"""

from __future__ import annotations

import fcntl
import json
import mmap
import os
import select
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterator
from typing import IO, Any

import replicator
from replicator import log
from replicator.errors import ConfigError, ReplicatorError, RuntimeFailure

FRAME = struct.Struct("<BI")
PIECE, END, FAIL, LOG, READY, RESULT, SLOT = 1, 2, 3, 4, 5, 6, 7
SLOT_PLACE = struct.Struct("<QI")  # a SLOT frame's payload: position in the ring, length
WORKER_MODULE = "replicator.redo.sftp_worker"
MAX_RESTARTS = 3
PIPE_BYTES = 1 << 20  # F_SETPIPE_SZ: fewer wake-ups per MB than the 64 KB default
F_SETPIPE_SZ = 1031
IOV_MAX = 1024
RING_MAX_BYTES = 64 << 20  # a reader process's ring: read-requests slots, but at least 2 and within this


def widen_pipe(fd: int) -> None:
    """Ask for a 1 MB pipe buffer (best effort: the system's pipe-max-size may be lower)."""
    try:
        fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES)
    except OSError:
        pass


def write_frame(fd: int, kind: int, payload: bytes | memoryview = b"") -> None:
    """Write one frame to ``fd`` whole (a pipe may take a large write in parts)."""
    _write_all(fd, FRAME.pack(kind, len(payload)))
    if payload:
        _write_all(fd, payload)


def write_piece(fd: int, blocks: list[bytes]) -> None:
    """Write one PIECE frame made of ``blocks`` whole, without joining them first."""
    parts: list[bytes | memoryview] = [FRAME.pack(PIECE, sum(len(b) for b in blocks)), *blocks]
    while parts:
        done = os.writev(fd, parts[:IOV_MAX])
        while parts and done >= len(parts[0]):
            done -= len(parts[0])
            parts.pop(0)
        if done:
            parts[0] = memoryview(parts[0])[done:]


def _write_all(fd: int, data: bytes | memoryview) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def error_payload(e: BaseException) -> bytes:
    """A FAIL frame's payload for ``e`` (its code, message and class)."""
    if isinstance(e, ReplicatorError):
        return json.dumps({"code": e.code, "message": e.message, "kind": type(e).__name__}).encode()
    return json.dumps(
        {"code": 10350, "message": f"reader process failed: {type(e).__name__}: {e}", "kind": "RuntimeFailure"}
    ).encode()


def _read_exact(fd: int, n: int) -> bytes:
    """``n`` bytes from ``fd``, fewer only at its end."""
    data = os.read(fd, n)
    if len(data) == n or not data:
        return data
    parts = [data]
    got = len(data)
    while got < n:
        more = os.read(fd, n - got)
        if not more:
            break
        parts.append(more)
        got += len(more)
    return b"".join(parts)


def _make_ring(slot: int, slots: int) -> tuple[int, mmap.mmap] | None:
    """A memfd of ``slots`` x ``slot`` bytes and this side's mapping of it; None where there is no memfd."""
    try:
        fd = os.memfd_create("replicator-sftp-ring", getattr(os, "MFD_CLOEXEC", 0))
    except (AttributeError, OSError):
        return None
    try:
        os.ftruncate(fd, slot * slots)
        return fd, mmap.mmap(fd, slot * slots)
    except (OSError, ValueError):
        os.close(fd)
        return None


class _Gone(Exception):
    """The reader process ended (killed, crashed): start another and resume."""


class _Worker:
    """One reader process and its pipes."""

    def __init__(self, hello: dict[str, Any]):
        env = dict(os.environ)
        # The child imports this very package, wherever it was imported from.
        root = os.path.dirname(os.path.dirname(os.path.abspath(replicator.__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        self.ring: mmap.mmap | None = None
        self.ack = -1  # the write end of the process's ack pipe (a slot given back per byte)
        settings = hello["settings"]
        slot = int(settings["read_size"])
        slots = max(2, min(int(settings["read_requests"]), RING_MAX_BYTES // slot))
        made = _make_ring(slot, slots)
        passed: tuple[int, ...] = ()
        if made is not None:
            memfd, self.ring = made
            ack_r, self.ack = os.pipe()
            passed = (memfd, ack_r)
            hello = dict(hello, ring={"fd": memfd, "ack": ack_r, "slot": slot, "slots": slots})
        try:
            # A session of its own: where the kernel schedules by session (autogroup, Linux's
            # default outside a service's cgroup), the process's CPU then does not come out of
            # the parser's share on a busy machine (measured on 2 shared cores: whole-run
            # remote/local 66-74 % instead of 61-64 %). It needs nothing of the terminal (it
            # ignores SIGINT) and ends when its stdin closes, so it cannot outlive the replicator.
            self.proc = subprocess.Popen(
                [sys.executable, "-m", WORKER_MODULE],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                pass_fds=passed,
                start_new_session=True,
            )
        except OSError as e:
            self._release()
            raise RuntimeFailure(f"cannot start an SFTP reader process: {e.strerror or e}", 10350) from e
        finally:
            for fd in passed:  # the child has its own copies
                os.close(fd)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: IO[bytes] = self.proc.stdin
        self.stdout: IO[bytes] = self.proc.stdout
        self.out = self.stdout.fileno()  # read with os.read only (see frame)
        self.ready = False
        widen_pipe(self.out)
        try:
            self.send_line(json.dumps(hello).encode())
        except _Gone:
            self.ready = True  # dead already: its first request fails and the stream starts another

    def take(self, place: bytes) -> bytes:
        """The piece a SLOT frame points at, copied out; its slot is given back at once."""
        assert self.ring is not None
        at, n = SLOT_PLACE.unpack(place)
        data = self.ring[at : at + n]
        try:
            os.write(self.ack, b"\x01")
        except OSError as e:  # the process is gone
            raise _Gone(str(e)) from e
        return data

    def _release(self) -> None:
        """Unmap the ring and close the ack pipe."""
        if self.ring is not None:
            self.ring.close()
            self.ring = None
        if self.ack >= 0:
            os.close(self.ack)
            self.ack = -1

    def poll_ready(self) -> bool:
        """True once the READY frame came (LOG frames before it are repeated); never blocks long."""
        while not self.ready and select.select([self.out], [], [], 0)[0]:
            try:
                kind, data = self.frame()
            except _Gone:
                self.ready = True  # dead: its first request fails and the stream starts another
                break
            if kind == LOG:
                _relay(data)
            elif kind == READY:
                self.ready = True
        return self.ready

    def wait_ready(self) -> None:
        """Block until the READY frame (LOG frames before it are repeated)."""
        while not self.ready:
            kind, data = self.frame()
            if kind == LOG:
                _relay(data)
            elif kind == READY:
                self.ready = True

    def send_line(self, line: bytes) -> None:
        try:
            self.stdin.write(line + b"\n")
            self.stdin.flush()
        except OSError as e:  # the process is gone already
            raise _Gone(str(e)) from e

    def frame(self) -> tuple[int, bytes]:
        """The next frame. Read from the pipe itself, never ahead: select() in
        :meth:`poll_ready` must see every frame not taken yet (a buffered reader that took
        READY along with a LOG frame before it left the process waiting, never READY)."""
        head = _read_exact(self.out, FRAME.size)
        if len(head) < FRAME.size:
            raise _Gone("end of pipe")
        kind, length = FRAME.unpack(head)
        data = _read_exact(self.out, length) if length else b""
        if len(data) < length:
            raise _Gone("end of pipe")
        return kind, data

    def status(self) -> str:
        try:
            rc = self.proc.wait(5)
        except subprocess.TimeoutExpired:
            return "still running"
        return f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"

    def kill(self) -> None:
        """Stop the process at once (it is ours: killed by its own id)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)
        for pipe in (self.stdin, self.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        self._release()

    def close_stdin(self) -> None:
        """Tell the process to end (it ends once it has read every request)."""
        try:
            self.stdin.close()
        except OSError:
            pass

    def close(self) -> None:
        """Let the process end on its own (stdin closed), else kill it."""
        self.close_stdin()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


class ReaderPool:
    """``size`` reader processes started on first use and kept for the following files."""

    def __init__(self, settings: dict[str, Any], size: int, label: str):
        self.settings = dict(settings, connections=0)  # a reader process reads in-process
        self.size = size
        self.label = label
        self.idle: list[_Worker] = []
        self.restarts = 0
        self.pieces = 0  # pieces handed to the parser by the processes
        self.waited = 0.0  # seconds the parser waited for them (the piece had not arrived)
        self._lock = threading.Lock()  # streams of several threads share the idle processes

    def prestart(self) -> None:
        """Start the processes now: their start (imports, SSH login) overlaps the caller's own."""
        with self._lock:
            self._spawn(self.size)

    def _spawn(self, n: int) -> None:
        """At least ``n`` idle processes (the caller holds the lock)."""
        hello = {"settings": self.settings}
        while len(self.idle) < n:
            self.idle.append(_Worker(hello))

    def wait_ready(self, timeout: float) -> None:
        """Start the processes if needed and wait until all of them are logged in (or ``timeout``)."""
        end = time.monotonic() + timeout
        while not self._ready(self.size) and time.monotonic() < end:
            time.sleep(0.005)

    def _ready(self, n: int) -> bool:
        """True when ``n`` idle processes are logged in (started when missing)."""
        with self._lock:
            self._spawn(n)
            return all(w.poll_ready() for w in self.idle[:n])

    def _take(self, n: int) -> list[_Worker]:
        with self._lock:
            self._spawn(n)
            taken, self.idle = self.idle[:n], self.idle[n:]
        return taken

    def ask(self, request: dict[str, Any]) -> Any:
        """One metadata call (``{"op": ...}``, see sftp_worker) answered by a reader process.

        Returns the RESULT's JSON value or a PIECE's bytes; a FAIL is raised as its coded
        error. A process that ends meanwhile is replaced and asked again (60350), up to
        :data:`MAX_RESTARTS` times (then 10350).
        """
        what = f"{request['op']} {request['path']}"
        for restart in range(MAX_RESTARTS + 1):
            [w] = self._take(1)
            healthy = False
            try:
                w.wait_ready()
                w.send_line(json.dumps(request).encode())
                while True:
                    kind, data = w.frame()
                    if kind == LOG:
                        _relay(data)
                        continue
                    healthy = True
                    if kind == RESULT:
                        return json.loads(data)
                    if kind == PIECE:
                        return data
                    if kind == FAIL:
                        raise _failure(data)
                    healthy = False
                    raise RuntimeFailure(
                        f"{self.label}: reader process {w.proc.pid} answered {what} with frame {kind}", 10350
                    )
            except _Gone as e:
                self.restarts += 1
                if restart >= MAX_RESTARTS:
                    raise RuntimeFailure(
                        f"{self.label}: reader process {w.proc.pid} ({w.status()}) ended during "
                        f"{what} ({e}); {MAX_RESTARTS} restarts did not help",
                        10350,
                    ) from e
                log.warning(
                    60350,
                    f"{self.label}: reader process {w.proc.pid} ({w.status()}) ended during {what}; "
                    f"asking another (restart {restart + 1} of {MAX_RESTARTS})",
                )
            finally:
                if healthy:
                    with self._lock:
                        self.idle.insert(0, w)
                else:
                    w.kill()
        raise AssertionError("unreachable")

    def stream(
        self, path: str, offset: int, end: int, chunk: int, here: Callable[[int, int], Iterator[bytes]]
    ) -> Iterator[bytes]:
        """``chunk``-sized pieces of ``[offset, end)`` of ``path`` in order (see the module docstring).

        ``here(offset, end)`` reads pieces in this process: used while the processes start.
        """
        restarts = 0
        local: Iterator[bytes] | None = None
        try:
            while offset < end:
                n = min(self.size, -(-(end - offset) // chunk))
                if not self._ready(n):
                    if local is None:
                        local = here(offset, end)
                    data = next(local, b"")
                    want = min(chunk, end - offset)
                    yield data
                    offset += len(data)
                    if len(data) < want:
                        return
                    continue
                if local is not None:
                    local.close()  # type: ignore[attr-defined]  # cancels its reads in flight
                    local = None
                resume = yield from self._from_workers(path, offset, end, chunk, n, restarts)
                if resume is None:
                    return
                restarts += 1
                offset = resume  # a process ended: new ones go on from the byte reached
        finally:
            if local is not None:
                local.close()  # type: ignore[attr-defined]

    def _from_workers(
        self, path: str, offset: int, end: int, chunk: int, n: int, restarts: int
    ) -> Generator[bytes, None, int | None]:
        """Pieces from ``n`` processes; returns None when done, or the byte to resume at when one ended."""
        workers = self._take(n)
        clean = False
        try:
            for k, w in enumerate(workers):
                w.send_line(
                    json.dumps(
                        {"path": path, "offset": offset + k * chunk, "end": end, "chunk": chunk, "step": n * chunk}
                    ).encode()
                )
            i = 0
            while offset < end:
                data = self._piece(workers[i % n], path)
                want = min(chunk, end - offset)
                yield data
                offset += len(data)
                i += 1
                if len(data) < want:  # end of file: the others stop at their next piece
                    end = offset
            for w in workers:
                self._finish(w, path)
            clean = True
            if restarts:
                log.warning(60351, f"{self.label}: reading {path} resumed in a new reader process")
            return None
        except _Gone as e:
            self.restarts += 1
            who = ", ".join(f"{w.proc.pid} ({w.status()})" for w in workers if w.proc.poll() is not None)
            if restarts + 1 > MAX_RESTARTS:
                raise RuntimeFailure(
                    f"{self.label}: reader process {who or '?'} ended while reading {path} "
                    f"at byte {offset} ({e}); {MAX_RESTARTS} restarts did not help",
                    10350,
                ) from e
            log.warning(
                60350,
                f"{self.label}: reader process {who or '?'} ended while reading {path}; "
                f"starting another at byte {offset} (restart {restarts + 1} of {MAX_RESTARTS})",
            )
            return offset
        finally:
            if clean:
                with self._lock:
                    self.idle.extend(workers)
            else:  # mid-stream (an error, or the reader stopped early): their pipes hold stale pieces
                for w in workers:
                    w.kill()

    def _piece(self, w: _Worker, path: str) -> bytes:
        while True:
            t0 = time.perf_counter()
            kind, data = w.frame()
            self.waited += time.perf_counter() - t0
            if kind == SLOT:
                self.pieces += 1
                return w.take(data)
            if kind == PIECE:
                self.pieces += 1
                return data
            if kind == LOG:
                _relay(data)
            elif kind == FAIL:
                raise _failure(data)
            else:
                raise RuntimeFailure(f"{self.label}: reader process {w.proc.pid} ended {path} too early", 10350)

    def _finish(self, w: _Worker, path: str) -> None:
        """Read up to ``w``'s END (pieces past the end of the file are dropped)."""
        while True:
            kind, data = w.frame()
            if kind == END:
                return
            if kind == SLOT:
                w.take(data)  # past the end of the file: only its slot is given back
            elif kind == LOG:
                _relay(data)
            elif kind == FAIL:
                raise _failure(data)

    def close(self) -> None:
        """End every idle process."""
        with self._lock:
            idle, self.idle = self.idle, []
        for w in idle:
            w.close_stdin()
        for w in idle:
            w.close()


def _relay(data: bytes) -> None:
    rec = json.loads(data)
    log.logger.log(rec["level"], rec["message"], extra={"olr_code": rec["code"]})


def _failure(data: bytes) -> ReplicatorError:
    rec = json.loads(data)
    cls = ConfigError if rec.get("kind") == "ConfigError" else RuntimeFailure
    return cls(rec["message"], rec["code"])
