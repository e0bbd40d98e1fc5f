"""Redo files read over SSH (SFTP, asyncssh), for a replicator that is not on the database host.

asyncssh is asynchronous and the readers are blocking, so the connection lives on its own
event loop in a background thread; every call from a reader is submitted there and
waited for. A read of a file keeps ``read-requests`` pieces of ``read-size-kb`` in flight,
each sent at once as SFTP reads of the largest size the server announces (OpenSSH: 255
KB), so a batch read is not bound by the round-trip time; the pieces are handed on as
the server's replies, without reassembly copies.

A whole archived log is read by ``connections`` reader processes
(:mod:`replicator.redo.sftp_pool`), each with its own SSH connection, taking every
``connections``-th piece: the SSH decryption then runs beside the parser instead of
sharing its interpreter lock, and a slow link gets several TCP streams. Listings,
stats, headers and the polls of a growing online log are asked of a reader process too
(:meth:`ReaderPool.ask`), so with reader processes this process neither imports asyncssh
(imported at first use) nor logs in, unless it reads the first pieces of a stream itself
while the reader processes start; ``connections: 0`` does everything here.

Failure handling: any loss of the connection (server restart, network cut, timeout)
drops the session, waits (``reconnect-delay-ms``, doubled up to ``reconnect-max-delay-ms``),
reconnects and reissues the same read at the same offset, so the reader above sees the same
bytes in the same order: nothing is lost or read twice. After ``reconnect-tries`` failed
tries the run stops with 10210. An unknown or changed host key (10211), a refused login
(10212), an unreadable key (10213) and a server without SFTP (10351) are not retried:
they need an operator.
Secrets (the key passphrase) are never logged.
"""

from __future__ import annotations

import importlib
import itertools
import os
import posixpath
import stat
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from replicator import log
from replicator.errors import ConfigError, RuntimeFailure
from replicator.redo.sftp_early import adopt
from replicator.redo.sftp_libs import quick_library_lookup
from replicator.redo.sftp_pool import ReaderPool
from replicator.redo.sftp_settings import SftpSettings, settings_from_config
from replicator.redo.source import HEAD_BYTES, Entry, RedoHandle, RedoSource, map_prefix

if TYPE_CHECKING:
    from concurrent.futures import Future


class _Lazy:
    """A module imported at its first use: a replicator whose reader processes do every
    remote call (listings, headers, reads) never pays for asyncssh (some 0.1 CPU-s) nor
    asyncio (some 0.02 CPU-s, on the parser's critical path at start)."""

    def __init__(self, name: str):
        self._name = name
        self._module: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._module is None:
            with quick_library_lookup():
                self._module = importlib.import_module(self._name)
        return getattr(self._module, name)


asyncssh: Any = _Lazy("asyncssh")
asyncio: Any = _Lazy("asyncio")

T = TypeVar("T")
OP_TIMEOUT_S = 300.0  # one read; a dead peer is found sooner by the keepalives
KEEPALIVE_S = 5.0
# AES-GCM first: OpenSSL's AES-NI path costs this side about a third less CPU per MB than
# chacha20-poly1305 (asyncssh's default first choice); the server picks from the whole list.
PREFERRED_CIPHERS = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com")
# SFTP requests in flight per connection at most (servers that do not announce a large
# read length, limits@openssh.com, get 16 KB requests: 2 MB pieces would be 128 each).
MAX_SUBREQUESTS = 128
# The most bytes handed to asyncssh's SSH connection at a time (see _feed_in_slices).
FEED_BYTES = 64 * 1024
# A file read by the reader processes: only when it has at least this many pieces (a small
# file is read faster in-process than a process is started for it).
POOL_MIN_PIECES = 4


class _Lost(Exception):
    """The session is gone (or was never there): reconnect and retry."""


def _transient() -> tuple[type[BaseException], ...]:
    """Errors after which a reconnect may help; everything else is reported at once."""
    return (
        _Lost,
        asyncssh.ConnectionLost,
        asyncssh.SFTPConnectionLost,
        asyncssh.SFTPNoConnection,
        asyncssh.DisconnectError,
        ConnectionError,
        TimeoutError,
        asyncio.TimeoutError,
        EOFError,
        OSError,
    )


class SftpSource(RedoSource):
    """Redo files on an SSH server, read with SFTP."""

    follow_read_min = 256 * 1024

    def __init__(self, settings: SftpSettings):
        self.s = settings
        self.label = f"sftp://{settings.user}@{settings.host}:{settings.port}"
        self.batch_chunk = settings.read_size
        self._loop: Any = None  # the asyncio event loop
        self._thread: threading.Thread | None = None
        self._conn: Any = None
        self._sftp: Any = None
        self.generation = 0  # bumped at every new session; open files belong to one
        self.reconnects = 0
        self._lock = threading.Lock()
        self.warned_unknown = False
        self.pool: ReaderPool | None = None
        self._pool_closed = False  # close() ended the reader processes: start them with the next session
        if settings.connections > 0:
            # Started at the very beginning of the run (sftp_early) when the config file asked for these settings.
            self.pool = adopt(settings) or ReaderPool(settings.to_json(), settings.connections, self.label)

    @classmethod
    def from_config(cls, cfg: Any) -> SftpSource:
        """From a validated ``reader.redo-source`` section; its reader processes start at once."""
        src = cls(settings_from_config(cfg))
        if src.pool is not None:
            src.pool.prestart()
        return src

    def warm_up(self) -> None:
        """Log in now (a reader process does, while the replicator still prepares its run)."""
        self._connect()

    def wait_ready(self, timeout: float = 60.0) -> None:
        """Have the reader processes started and logged in, else this process's session (``bench``: warm)."""
        if self.pool is None:
            self._connect()
        else:
            self._pool_closed = False
            self.pool.wait_ready(timeout)

    # ------------------------------------------------------------------ event loop and session
    def _start_loop(self) -> Any:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, name="sftp-source", daemon=True)
            self._thread.start()
        return self._loop

    def submit(self, coro: Awaitable[T]) -> Future[T]:
        """Run ``coro`` on the source's event loop; returns a concurrent future."""
        return asyncio.run_coroutine_threadsafe(coro, self._start_loop())  # type: ignore[arg-type]

    def _known_hosts(self) -> Any:
        path = os.path.expanduser(self.s.known_hosts)
        if self.s.accept_unknown_host_key:
            if not self.warned_unknown:
                self.warned_unknown = True
                log.warning(
                    60212,
                    f"{self.label}: accept-unknown-host-key is set: the server's host key is not "
                    "checked against known-hosts",
                )
            return None
        if not os.path.isfile(path):
            raise ConfigError(
                f"{self.label}: known-hosts file {self.s.known_hosts} does not exist; add the server's "
                "host key to it (ssh-keyscan) or set accept-unknown-host-key to 1",
                30140,
            )
        return path

    def _client_key(self) -> Any:
        path = os.path.expanduser(self.s.key_file)
        try:
            return asyncssh.read_private_key(path, self.s.key_passphrase)
        except OSError as e:
            raise RuntimeFailure(
                f"{self.label}: private key file {self.s.key_file} cannot be read: {e.strerror}", 10213
            ) from e
        except (asyncssh.KeyImportError, asyncssh.KeyEncryptionError) as e:
            raise RuntimeFailure(
                f"{self.label}: private key file {self.s.key_file} cannot be loaded: {e} "
                "(wrong or missing key-passphrase?)",
                10213,
            ) from e

    async def _open_session(self, known_hosts: Any, key: Any) -> tuple[Any, Any]:
        conn = await asyncio.wait_for(
            asyncssh.connect(
                self.s.host,
                self.s.port,
                username=self.s.user,
                client_keys=[key],
                known_hosts=known_hosts,
                agent_path=None,
                config=(),
                preferred_auth="publickey",
                keepalive_interval=KEEPALIVE_S,
                keepalive_count_max=3,
                connect_timeout=self.s.connect_timeout,
                encryption_algs=_ciphers(),
                window=self.s.window,
            ),
            self.s.connect_timeout * 2,
        )
        try:
            sftp = await asyncio.wait_for(conn.start_sftp_client(), self.s.connect_timeout)
        except BaseException:
            conn.close()
            raise
        _feed_in_slices(conn)
        log.debug(
            f"{self.label}: logged in; cipher {conn.get_extra_info('recv_cipher')}, "
            f"SFTP reads of up to {sftp.limits.max_read_len} bytes"
        )
        return conn, sftp

    def _connect(self) -> Any:
        """The SFTP client of the current session, connecting first when there is none."""
        with self._lock:
            if self._sftp is not None:
                return self._sftp
            known_hosts, key = self._known_hosts(), self._client_key()
            if self._pool_closed and self.pool is not None:
                # Used again after close(): the reader processes start (imports, login) while
                # this session logs in, as from_config starts them before the first listing.
                self._pool_closed = False
                self.pool.prestart()
            try:
                self._conn, self._sftp = self.submit(self._open_session(known_hosts, key)).result(
                    self.s.connect_timeout * 3
                )
            except asyncssh.HostKeyNotVerifiable as e:
                raise RuntimeFailure(
                    f"{self.label}: host key refused: {e.reason}; the key must be listed in "
                    f"known-hosts {self.s.known_hosts}",
                    10211,
                ) from e
            except asyncssh.PermissionDenied as e:
                raise RuntimeFailure(
                    f"{self.label}: login refused for user {self.s.user} with key {self.s.key_file}: {e.reason}", 10212
                ) from e
            except asyncssh.ChannelOpenError as e:
                raise RuntimeFailure(
                    f"{self.label}: the server refused the SFTP session: {e.reason} (is the "
                    "sftp subsystem enabled in its sshd_config?)",
                    10351,
                ) from e
            self.generation += 1
            return self._sftp

    def _drop(self) -> None:
        """Forget the session (after a failure or at close)."""
        with self._lock:
            conn, self._conn, self._sftp = self._conn, None, None
        if conn is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(conn.abort)

    def session(self) -> Any:
        """The current SFTP client for a coroutine already on the loop; raises when there is none."""
        sftp = self._sftp
        if sftp is None:
            raise _Lost("no session")
        return sftp

    def call(self, what: str, make: Callable[[Any], Awaitable[T]]) -> T:
        """Run ``make(sftp)`` on the loop; reconnect with backoff and redo it after a lost session."""
        delay = self.s.reconnect_delay
        tries = 0
        while True:
            try:
                sftp = self._connect()
                result = self.submit(make(sftp)).result(OP_TIMEOUT_S)
                if tries:
                    log.warning(
                        60211,
                        f"{self.label}: connection restored after {tries} "
                        f"tr{'y' if tries == 1 else 'ies'}; resuming: {what}",
                    )
                return result
            except asyncssh.SFTPError as e:
                if isinstance(e, (asyncssh.SFTPConnectionLost, asyncssh.SFTPNoConnection)):
                    cause: BaseException = e
                else:
                    raise self._sftp_error(what, e) from e
            except _transient() as e:
                cause = e
            self._drop()
            if tries >= self.s.reconnect_tries:
                raise RuntimeFailure(
                    f"{self.label}: connection lost and not restored after {tries} "
                    f"tr{'y' if tries == 1 else 'ies'} ({_reason(cause)}) during: {what}",
                    10210,
                )
            tries += 1
            self.reconnects += 1
            log.warning(
                60210,
                f"{self.label}: connection lost ({_reason(cause)}) during: {what}; reconnecting in "
                f"{delay:.2f}s (try {tries} of {self.s.reconnect_tries})",
            )
            time.sleep(delay)
            delay = min(delay * 2, self.s.reconnect_max_delay)

    def _sftp_error(self, what: str, e: Any) -> RuntimeFailure:
        if isinstance(e, asyncssh.SFTPNoSuchFile):
            return RuntimeFailure(f"{self.label}: {what}: no such file", 10001)
        return RuntimeFailure(f"{self.label}: {what}: {e.reason}", 10214)

    def remote(self, path: str) -> str:
        """The server's path of a path the readers know (``path-mapping``)."""
        return map_prefix(path, self.s.path_mapping)

    # ------------------------------------------------------------------ RedoSource
    def open(self, path: str) -> SftpHandle:
        return SftpHandle(self, path)

    def ask(self, op: str, path: str, **more: Any) -> Any:
        """A metadata call answered by a reader process (see sftp_pool.ReaderPool.ask)."""
        assert self.pool is not None
        if self.s.accept_unknown_host_key and not self.warned_unknown:
            self._known_hosts()  # says 60212 once, as a session of this process would
        self._pool_closed = False
        return self.pool.ask({"op": op, "path": path, **more})

    def _stat(self, path: str) -> Any:
        async def run(sftp: Any) -> Any:
            try:
                return await sftp.stat(self.remote(path))
            except (asyncssh.SFTPNoSuchFile, asyncssh.SFTPPermissionDenied):
                return None

        return self.call(f"stat {path}", run)

    def kind(self, path: str) -> str | None:
        if self.pool is not None:
            return self.ask("stat", path)["kind"]  # type: ignore[no-any-return]
        attrs = self._stat(path)
        if attrs is None:
            return None
        if attrs.permissions is not None and stat.S_ISDIR(attrs.permissions):
            return "dir"
        return "file" if attrs.permissions is None or stat.S_ISREG(attrs.permissions) else "other"

    def size(self, path: str) -> int:
        if self.pool is not None:
            return int(self.ask("stat", path)["size"])
        attrs = self._stat(path)
        return int(attrs.size or 0) if attrs is not None else 0

    def scan(self, path: str) -> list[Entry]:
        if self.pool is not None:
            return [Entry(p, name, bool(is_dir), int(size)) for p, name, is_dir, size in self.ask("scan", path)]

        async def run(sftp: Any) -> list[Any]:
            try:
                return list(await sftp.readdir(self.remote(path)))
            except (asyncssh.SFTPNoSuchFile, asyncssh.SFTPPermissionDenied, asyncssh.SFTPFailure):
                return []

        out = []
        for item in self.call(f"list {path}", run):
            name = item.filename if isinstance(item.filename, str) else item.filename.decode()
            if name in (".", ".."):
                continue
            mode = item.attrs.permissions or 0
            if stat.S_ISDIR(mode):
                out.append(Entry(posixpath.join(path, name), name, True, 0))
            elif stat.S_ISREG(mode):
                out.append(Entry(posixpath.join(path, name), name, False, int(item.attrs.size or 0)))
        return out

    def read_head(self, path: str, length: int = HEAD_BYTES) -> bytes | None:
        if self.pool is not None:
            return self.ask("head", path, length=length)  # type: ignore[no-any-return]

        async def run(sftp: Any) -> bytes | None:
            try:
                async with sftp.open(self.remote(path), "rb") as f:
                    return bytes(await f.read(length, 0))
            except (asyncssh.SFTPNoSuchFile, asyncssh.SFTPPermissionDenied):
                return None

        return self.call(f"read the header of {path}", run)

    def close(self) -> None:
        """Close the session, the reader processes and the loop thread (a later call reconnects)."""
        if self.pool is not None:
            self.pool.close()
            self._pool_closed = True
        with self._lock:
            conn, self._conn, self._sftp = self._conn, None, None
        loop, self._loop = self._loop, None
        if loop is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(_shutdown(conn), loop).result(10)
        except Exception:  # noqa: BLE001 - closing a broken session: nothing more to release
            pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        loop.close()


async def _shutdown(conn: Any) -> None:
    """Close ``conn`` and let asyncssh's own tasks end before the loop stops."""
    if conn is not None:
        conn.close()
        await conn.wait_closed()
    me = asyncio.current_task()
    others = [t for t in asyncio.all_tasks() if t is not me]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


_tokens = itertools.count(1)


class SftpHandle(RedoHandle):
    """An open remote file; reopened transparently in a new session after a reconnect."""

    def __init__(self, src: SftpSource, path: str):
        self.src = src
        self.path = path
        self._remote = src.remote(path)
        self._file: Any = None
        self._generation = -1
        self._read_len = 0
        self.token = next(_tokens)  # names this open of the file to the reader processes
        if src.pool is None:  # else opened here only if this process reads pieces itself (stream)
            src.call(f"open {path}", self._opened)

    async def _opened(self, sftp: Any) -> Any:
        if self._file is None or self._generation != self.src.generation:
            # block_size 0: each read is one SFTP request; _blocks splits a range itself, into
            # requests of the server's largest read, without asyncssh's reassembly copies.
            self._file = await sftp.open(self._remote, "rb", block_size=0)
            self._read_len = max(4096, int(sftp.limits.max_read_len or 0))
            self._generation = self.src.generation
        return self._file

    async def _read(self, offset: int, length: int) -> bytes:
        return b"".join(await self._blocks(offset, length))

    async def _blocks(self, offset: int, length: int) -> list[bytes]:
        """``[offset, offset + length)`` as the server's reads, all requested at once, in order.

        Shorter than asked only at the end of the file.
        """
        f = await self._opened(self.src.session())
        step = self._read_len
        end = offset + length
        wants = [(at, min(step, end - at)) for at in range(offset, end, step)]
        if len(wants) == 1:
            parts = [await _read_exact(f, offset, length)]
        else:
            parts = await asyncio.gather(*(_read_exact(f, at, n) for at, n in wants))
        out = []
        for part, (_, n) in zip(parts, wants):
            out.append(part)
            if len(part) < n:  # end of file: what follows is empty
                break
        return out

    def read(self, offset: int, length: int) -> bytes:
        if self.src.pool is not None:
            return self.src.ask(
                "read",
                self.path,
                offset=offset,
                length=length,  # type: ignore[no-any-return]
                token=self.token,
            )
        return self._read_here(offset, length)

    def _read_here(self, offset: int, length: int) -> bytes:
        """``read`` over this process's own session."""
        return self.src.call(f"read {self.path} at byte {offset}", lambda _sftp: self._read(offset, length))

    def size(self) -> int:
        if self.src.pool is not None:
            return int(self.src.ask("size", self.path, token=self.token))

        async def run(_sftp: Any) -> int:
            f = await self._opened(self.src.session())
            return int((await f.stat()).size or 0)

        return self.src.call(f"stat {self.path}", run)

    def stream(self, offset: int, end: int, chunk: int) -> Iterator[bytes]:
        """Pieces in order: from the reader processes for a big range, else read here (:meth:`pieces`)."""
        pool = self.src.pool
        if pool is not None and end - offset >= POOL_MIN_PIECES * chunk:
            return pool.stream(self.path, offset, end, chunk, lambda at, stop: self._here(at, stop, chunk))
        return self.pieces(piece_ranges(offset, end, chunk, chunk))

    def _here(self, offset: int, end: int, chunk: int) -> Iterator[bytes]:
        """Pieces read over this process's own session (while the reader processes start)."""
        self.src.call(f"open {self.path}", self._opened)
        return self.pieces(piece_ranges(offset, end, chunk, chunk))

    def pieces(self, ranges: Iterable[tuple[int, int]]) -> Iterator[bytes]:
        """The (offset, length) ``ranges`` in order with ``read-requests`` of them in flight.

        A failed piece is read again (reconnecting with backoff) at the same offset; a piece
        shorter than asked (end of file) is the last one.
        """
        for blocks in self.piece_blocks(ranges):
            yield blocks[0] if len(blocks) == 1 else b"".join(blocks)

    def piece_blocks(self, ranges: Iterable[tuple[int, int]]) -> Iterator[list[bytes]]:
        """:meth:`pieces`, each piece as the list of the server's reads it was made of (not joined)."""
        pending: deque[tuple[int, int, Future[list[bytes]]]] = deque()
        todo = iter(ranges)
        depth = self.src.s.read_requests
        more = True
        try:
            while True:
                while more and len(pending) < self._depth(depth, pending):
                    nxt = next(todo, None)
                    if nxt is None:
                        more = False
                        break
                    pending.append((nxt[0], nxt[1], self.src.submit(self._blocks(*nxt))))
                if not pending:
                    return
                at, n, fut = pending.popleft()
                try:
                    blocks = fut.result(OP_TIMEOUT_S)
                except BaseException as e:  # lost session or a read error: redo it the careful way
                    if not isinstance(e, (*_transient(), asyncssh.SFTPError)):
                        raise
                    # Reissued below in order, after the reconnect this read makes.
                    redo = [(a, m) for a, m, _ in pending]
                    for _, _, other in pending:
                        other.cancel()
                    pending.clear()
                    todo = iter([*redo, *todo])
                    more = True
                    blocks = [self._read_here(at, n)]  # reconnects with backoff, same offset
                yield blocks
                if sum(len(b) for b in blocks) < n:
                    return
        finally:
            for _, _, other in pending:
                other.cancel()

    def _depth(self, depth: int, pending: deque[tuple[int, int, Future[list[bytes]]]]) -> int:
        """Pieces in flight: ``read-requests``, fewer when that would be over MAX_SUBREQUESTS requests."""
        if not pending or not self._read_len:
            return depth
        per_piece = max(1, -(-pending[0][1] // self._read_len))
        return max(1, min(depth, MAX_SUBREQUESTS // per_piece))

    def close(self) -> None:
        f, self._file = self._file, None
        if f is not None and self._generation == self.src.generation and self.src._sftp is not None:
            try:
                self.src.submit(f.close()).result(self.src.s.connect_timeout)
            except Exception:  # noqa: BLE001 - the session may already be gone; nothing to release then
                pass


def piece_ranges(offset: int, end: int, chunk: int, step: int) -> Iterator[tuple[int, int]]:
    """(offset, length) of the pieces of ``[offset, end)`` that start every ``step`` bytes."""
    while offset < end:
        yield offset, min(chunk, end - offset)
        offset += step


async def _read_exact(f: Any, offset: int, length: int) -> bytes:
    """``length`` bytes at ``offset`` (fewer only at the end of the file): a server may answer short."""
    data = await f.read(length, offset)
    while 0 < len(data) < length:
        more = await f.read(length - len(data), offset + len(data))
        if not more:
            break
        data += more
    return data


def _feed_in_slices(conn: Any) -> None:
    """Hand ``conn`` what the socket delivers at most :data:`FEED_BYTES` at a time.

    asyncssh keeps the input it has not parsed yet in one ``bytes`` and slices the rest
    off after each packet: a 256 KB socket read (asyncio's size) holding eight 32 KB
    packets (OpenSSH sends no larger ones) was copied again for each of them. Fed in 64 KB
    slices the rest stays short: measured on loopback, 15 % less CPU per MB for the
    process that reads (a stream protocol takes its bytes in any slicing).
    """
    receive = conn.data_received

    def data_received(data: bytes, datatype: Any = None) -> None:
        if len(data) <= FEED_BYTES:
            receive(data, datatype)
            return
        view = memoryview(data)
        for at in range(0, len(data), FEED_BYTES):
            receive(view[at : at + FEED_BYTES], datatype)

    conn.data_received = data_received


def _ciphers() -> list[str]:
    """asyncssh's default ciphers with :data:`PREFERRED_CIPHERS` moved to the front."""
    default = [alg.decode() for alg in asyncssh.encryption.get_default_encryption_algs()]
    return [*(c for c in PREFERRED_CIPHERS if c in default), *(c for c in default if c not in PREFERRED_CIPHERS)]


def _reason(e: BaseException) -> str:
    text = getattr(e, "reason", "") or str(e) or type(e).__name__
    return text.strip() or type(e).__name__
