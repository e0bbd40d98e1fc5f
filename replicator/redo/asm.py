"""Redo files read from an ASM disk group through the database (``DBMS_DISKGROUP``).

Most RAC databases keep their online redo in ASM, where no file system path exists. A
session (python-oracledb thin mode, privilege SYSASM or SYSDBA) asks
``DBMS_DISKGROUP.GETFILEATTR`` for the file's block size and block count, ``OPEN`` gives a
handle, ``READ`` returns blocks as a PL/SQL RAW, which is limited to 32 KB: every call
reads at most 63, 31 or 7 blocks for 512, 1024 or 4096-byte blocks (:func:`blocks_per_call`).
One call at a time is slow, so ``parallelism`` sessions each open the file (handles belong to
a session) and read interleaved pieces of every range at once (:func:`plan_calls`).

ASM hands out the redo blocks from block 1 (the redo log header). Block 0, the operating
system file header, is not a redo block there: the handle builds it from the file's
attributes (block size, block count) and the byte order of block 1, exactly as the file
header of a copied log carries them (:func:`file_header_block`). A file has
``blocks + 1`` blocks, block 0 included.

A lost session (instance restart, network) is reopened with backoff and the same call is
made again; other database errors are coded (10220 session, 10221 open, 10222 read).
This module is not exercised against a real ASM instance unless ``REPLICATOR_ORACLE_DSN``
is set (tests/integration/remote/test_asm_source.py); docs/operations.md says how.
"""

from __future__ import annotations

import queue
import struct
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from replicator import log
from replicator.errors import RuntimeFailure
from replicator.redo.source import Entry, RedoHandle, RedoSource, map_prefix

RAW_LIMIT = 32 * 1024  # a PL/SQL RAW holds at most 32767 bytes: every READ stays below 32 KB
BLOCK_MARKERS = {512: 0x22, 1024: 0x22, 4096: 0x82}
RECONNECT_TRIES = 10

SQL_GETFILEATTR = "begin dbms_diskgroup.getfileattr(:name, :ftype, :blocks, :bsize); end;"
SQL_OPEN = "begin dbms_diskgroup.open(:name, 'r', :ftype, :bsize, :handle, :pbsize, :blocks); end;"
SQL_READ = "begin dbms_diskgroup.read(:handle, :block, :length, :buffer); end;"
SQL_CLOSE = "begin dbms_diskgroup.close(:handle); end;"
# Every alias of every mounted disk group with its full path (directories included).
SQL_ALIASES = """
select full_path, alias_directory, bytes from (
  select '+' || g.name || sys_connect_by_path(a.name, '/') full_path, a.alias_directory, f.bytes
  from v$asm_alias a
  join v$asm_diskgroup g on g.group_number = a.group_number
  left join v$asm_file f on f.group_number = a.group_number and f.file_number = a.file_number
                        and f.incarnation = a.file_incarnation
  start with mod(a.parent_index, power(2, 24)) = 0
  connect by prior a.reference_index = a.parent_index)
"""
# python-oracledb error codes of a dead session: reconnect and retry.
LOST_SESSION = (
    "DPY-4011",
    "DPI-1080",
    "ORA-03113",
    "ORA-03114",
    "ORA-03135",
    "ORA-12537",
    "ORA-12541",
    "DPY-6005",
    "ORA-01012",
    "ORA-00028",
)


def blocks_per_call(block_size: int) -> int:
    """Blocks one ``DBMS_DISKGROUP.READ`` may return: the most that stay below 32 KB (63/31/7)."""
    if block_size not in BLOCK_MARKERS:
        raise RuntimeFailure(f"ASM file has an unsupported block size {block_size}", 10221)
    return (RAW_LIMIT - 1) // block_size


def plan_calls(offset: int, length: int, block_size: int, last_block: int) -> list[tuple[int, int]]:
    """The READ calls (first block, block count) covering bytes ``[offset, offset + length)``.

    Whole blocks from the block holding ``offset``; never block 0 (built locally) and
    never past ``last_block`` (the file's last block, inclusive).
    """
    if length <= 0:
        return []
    first = max(1, offset // block_size)
    end = min(last_block + 1, -(-(offset + length) // block_size))
    step = blocks_per_call(block_size)
    return [(b, min(step, end - b)) for b in range(first, end, step)]


def file_header_block(block_size: int, blocks: int, block1: bytes) -> bytes:
    """Block 0 of a redo file with these attributes, in the byte order of ``block1``.

    Byte 1 is the block size marker, offset 20 the block size, 24 the block count and 28
    the byte order magic; the block number in ``block1`` (offset 4, value 1) shows the order.
    """
    endian = ">" if block1[4:8] == b"\x00\x00\x00\x01" else "<"
    out = bytearray(block_size)
    out[1] = BLOCK_MARKERS[block_size]
    struct.pack_into(endian + "III", out, 20, block_size, blocks, 0x7A7B7C7D)
    # A block checksum that holds (the XOR of all 16-bit words is 0): the reader checks block 0 too.
    fold = 0
    for (word,) in struct.iter_unpack("<H", out):
        fold ^= word
    struct.pack_into("<H", out, 14, fold)
    return bytes(out)


@dataclass
class AsmSettings:
    """The ``redo-source`` keys of type asm."""

    server: str
    user: str
    password: str = field(repr=False)
    privilege: str = "sysasm"
    parallelism: int = 4
    path_mapping: list[tuple[str, str]] = field(default_factory=list)


def _is_lost(e: BaseException) -> bool:
    text = str(e)
    return any(code in text for code in LOST_SESSION)


class _Session:
    """One database session and the DBMS_DISKGROUP handles it opened (handles are per session)."""

    def __init__(self, src: AsmSource, number: int):
        self.src = src
        self.number = number
        self.conn: Any = None
        self.handles: dict[str, int] = {}

    def connect(self) -> Any:
        if self.conn is None:
            import oracledb

            mode = {"sysasm": oracledb.AUTH_MODE_SYSASM, "sysdba": oracledb.AUTH_MODE_SYSDBA}.get(
                self.src.s.privilege, oracledb.AUTH_MODE_DEFAULT
            )
            try:
                self.conn = oracledb.connect(
                    user=self.src.s.user, password=self.src.s.password, dsn=self.src.s.server, mode=mode
                )
            except oracledb.Error as e:
                raise RuntimeFailure(
                    f"{self.src.label}: cannot open session {self.number}: {str(e).splitlines()[0]}", 10220
                ) from e
            self.handles = {}
        return self.conn

    def drop(self) -> None:
        conn, self.conn, self.handles = self.conn, None, {}
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - a dead session cannot be closed cleanly
                pass

    def attributes(self, name: str) -> tuple[int, int, int]:
        """(file type, block count, block size) from GETFILEATTR."""
        cur = self.connect().cursor()
        ftype, blocks, bsize = cur.var(int), cur.var(int), cur.var(int)
        cur.execute(SQL_GETFILEATTR, name=name, ftype=ftype, blocks=blocks, bsize=bsize)
        return int(ftype.getvalue()), int(blocks.getvalue()), int(bsize.getvalue())

    def handle(self, name: str) -> int:
        """This session's handle of ``name`` (opened on first use)."""
        if name not in self.handles:
            ftype, _, bsize = self.attributes(name)
            cur = self.connect().cursor()
            handle, pbsize, blocks = cur.var(int), cur.var(int), cur.var(int)
            cur.execute(SQL_OPEN, name=name, ftype=ftype, bsize=bsize, handle=handle, pbsize=pbsize, blocks=blocks)
            self.handles[name] = int(handle.getvalue())
        return self.handles[name]

    def read(self, name: str, block: int, count: int, block_size: int) -> bytes:
        import oracledb

        cur = self.connect().cursor()
        buf = cur.var(oracledb.DB_TYPE_RAW, RAW_LIMIT - 1)
        length = cur.var(int)
        length.setvalue(0, count * block_size)
        cur.execute(SQL_READ, handle=self.handle(name), block=block, length=length, buffer=buf)
        data = buf.getvalue()
        return bytes(data) if data is not None else b""

    def close_file(self, name: str) -> None:
        handle = self.handles.pop(name, None)
        if handle is not None and self.conn is not None:
            try:
                self.conn.cursor().execute(SQL_CLOSE, handle=handle)
            except Exception:  # noqa: BLE001 - closing on a dead session: the handle died with it
                pass


class AsmSource(RedoSource):
    """Redo files in ASM disk groups, read through ``parallelism`` database sessions."""

    follow_read_min = 256 * 1024
    batch_chunk = 2 * 1024 * 1024

    def __init__(self, settings: AsmSettings):
        self.s = settings
        self.label = f"asm {settings.user}@{settings.server}"
        self._sessions: queue.Queue[_Session] = queue.Queue()
        self._all = [_Session(self, i + 1) for i in range(settings.parallelism)]
        for session in self._all:
            self._sessions.put(session)
        self._pool = ThreadPoolExecutor(settings.parallelism, thread_name_prefix="asm-read")
        self._aliases: list[tuple[str, bool, int]] | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, cfg: Any) -> AsmSource:
        """From a validated ``reader.redo-source`` section."""
        return cls(
            AsmSettings(cfg.server, cfg.user, cfg.password, cfg.privilege, cfg.parallelism, cfg.path_mapping_pairs)
        )

    def asm_name(self, path: str) -> str:
        """The ASM file name of a path the readers know (``path-mapping``)."""
        return map_prefix(path, self.s.path_mapping)

    def run(self, what: str, work: Any) -> Any:
        """``work(session)`` on a free session; a lost session is reopened with backoff and retried."""
        import oracledb

        session = self._sessions.get()
        delay = 0.2
        try:
            for tries in range(RECONNECT_TRIES + 1):
                try:
                    result = work(session)
                    if tries:
                        log.warning(60211, f"{self.label}: session {session.number} restored; resuming: {what}")
                    return result
                except oracledb.Error as e:
                    if not _is_lost(e) or tries == RECONNECT_TRIES:
                        raise
                    log.warning(
                        60210,
                        f"{self.label}: session {session.number} lost during: {what} "
                        f"({str(e).splitlines()[0]}); reconnecting in {delay:.1f}s",
                    )
                    session.drop()
                    time.sleep(delay)
                    delay = min(delay * 2, 5.0)
        finally:
            self._sessions.put(session)

    def open(self, path: str) -> RedoHandle:
        return AsmHandle(self, path)

    def _file_attributes(self, path: str) -> tuple[int, int] | None:
        import oracledb

        try:
            _, blocks, bsize = self.run(f"getfileattr {path}", lambda s: s.attributes(self.asm_name(path)))
        except oracledb.Error:
            return None
        return blocks, bsize

    def kind(self, path: str) -> str | None:
        if self._file_attributes(path) is not None:
            return "file"
        name = self.asm_name(path).rstrip("/").upper()
        return "dir" if any(p.upper() == name and d for p, d, _ in self._alias_list()) else None

    def size(self, path: str) -> int:
        attrs = self._file_attributes(path)
        return 0 if attrs is None else (attrs[0] + 1) * attrs[1]

    def _alias_list(self, refresh: bool = False) -> list[tuple[str, bool, int]]:
        import oracledb

        with self._lock:
            if self._aliases is None or refresh:
                try:
                    rows = self.run("list aliases", lambda s: s.connect().cursor().execute(SQL_ALIASES).fetchall())
                except oracledb.Error as e:
                    raise RuntimeFailure(
                        f"{self.label}: V$ASM_ALIAS cannot be read: {str(e).splitlines()[0]}", 10223
                    ) from e
                self._aliases = [(str(p), str(d) == "Y", int(b or 0)) for p, d, b in rows]
            return self._aliases

    def scan(self, path: str) -> list[Entry]:
        prefix = self.asm_name(path).rstrip("/").upper() + "/"
        out = []
        for full, is_dir, size in self._alias_list(refresh=True):
            if full.upper().startswith(prefix) and "/" not in full[len(prefix) :]:
                name = full[len(prefix) :]
                out.append(Entry(path.rstrip("/") + "/" + name, name, is_dir, size))
        return out

    def close(self) -> None:
        for session in self._all:
            session.drop()
        self._pool.shutdown(wait=False)


class AsmHandle(RedoHandle):
    """An ASM file: block 0 built locally, blocks 1.. read in parallel pieces below 32 KB."""

    def __init__(self, src: AsmSource, path: str):
        import oracledb

        self.src = src
        self.path = path
        self.name = src.asm_name(path)
        try:
            _, self.blocks, self.block_size = src.run(f"open {path}", lambda s: s.attributes(self.name))
        except oracledb.Error as e:
            raise RuntimeFailure(f"{src.label}: cannot open {self.name}: {str(e).splitlines()[0]}", 10221) from e
        blocks_per_call(self.block_size)  # 10221 for a block size redo never has
        self._block0: bytes | None = None

    def size(self) -> int:
        return (self.blocks + 1) * self.block_size

    def _call(self, block: int, count: int) -> bytes:
        import oracledb

        try:
            data = self.src.run(
                f"read {self.name} block {block}", lambda s: s.read(self.name, block, count, self.block_size)
            )
        except oracledb.Error as e:
            raise RuntimeFailure(
                f"{self.src.label}: DBMS_DISKGROUP.READ of {self.name} at block {block} failed: "
                f"{str(e).splitlines()[0]}",
                10222,
            ) from e
        if len(data) != count * self.block_size:
            raise RuntimeFailure(
                f"{self.src.label}: DBMS_DISKGROUP.READ of {self.name} at block {block} returned "
                f"{len(data)} bytes, not {count * self.block_size}",
                10222,
            )
        return data

    def read(self, offset: int, length: int) -> bytes:
        bs = self.block_size
        end = min(offset + length, self.size())
        if end <= offset:
            return b""
        calls = plan_calls(offset, end - offset, bs, self.blocks)
        pieces = list(self.src._pool.map(lambda c: self._call(*c), calls))
        data = b"".join(pieces)
        start = max(1, offset // bs) * bs
        if offset < bs:  # block 0 is not an ASM block: build it
            if self._block0 is None:
                block1 = data[:bs] if start == bs and data else self._call(1, 1)
                self._block0 = file_header_block(bs, self.blocks, block1)
            data = self._block0 + data
            start = 0
        return data[offset - start : end - start]

    def close(self) -> None:
        # Each session's handle is closed on that session while no read uses it.
        taken = [self.src._sessions.get() for _ in self.src._all]
        try:
            for session in taken:
                session.close_file(self.name)
        finally:
            for session in taken:
                self.src._sessions.put(session)
