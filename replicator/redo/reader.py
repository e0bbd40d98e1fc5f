"""Reading archived redo files in sequence order (batch reader, redo-format.md §1.5, §3).

A file is read in large buffers; each buffer's blocks are verified at once
(:mod:`.blocks`) and their bodies are cut into records and LWNs (:mod:`.records`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from replicator import log
from replicator.errors import RedoLogError, RuntimeFailure
from replicator.redo.blocks import BlockStatus, check_blocks, payload_of, raise_for
from replicator.redo.header import NAB_NONE, RedoHeader, parse_headers
from replicator.redo.records import Lwn, RecordFramer
from replicator.redo.source import LOCAL, RedoHandle, RedoSource

# A buffer's block checks (the native core's check_chunk): (buffer, first block, block size,
# sequence, big-endian, verify checksums) -> (-1, 0) when every block passes, else the first
# bad one's (index, status).
ChunkCheck = Callable[[bytes, int, int, int, bool, bool], tuple[int, int]]
# Buffers a reader thread reads (and checks) ahead of the record loop (redo.readahead): with
# the 2 MiB of a local batch_chunk, 4 MiB waiting at most (and the one being read).
READ_AHEAD_CHUNKS = 2


@dataclass(slots=True)
class RedoFile:
    """A redo file found on disk, with the sequence its name (or header) gives."""

    path: str
    sequence: int
    size: int = -1  # bytes, when the listing knew it (-1: ask the file system)
    thread: int = 1  # redo thread (RAC instance): from %t/%T in the name, else from the header


def read_header(path: str, source: RedoSource = LOCAL, verify_checksum: bool = True) -> RedoHeader | None:
    """Blocks 0 and 1 of a file, or None when it cannot be read (yet, or torn mid-write).

    Here, not in :mod:`replicator.redo.online` (the follower, its main user): a batch run checks
    each file's header and does not import the follower."""
    data = source.read_head(path)
    if data is None:
        return None
    try:
        return parse_headers(data, path, verify_checksum)
    except RedoLogError:
        return None


def archive_format_regex(fmt: str) -> re.Pattern[str]:
    """Compile a ``log-archive-format`` into a regex whose group ``seq`` is the sequence (§8.3),
    ``thr`` the thread and ``rst`` the RESETLOGS_ID (%r)."""
    out: list[str] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == "%" and i + 1 < len(fmt):
            code = fmt[i + 1]
            if code in "sS":
                out.append(r"(?P<seq>\d+)" if "(?P<seq>" not in "".join(out) else r"\d+")
            elif code in "tT":
                out.append(r"(?P<thr>\d+)" if "(?P<thr>" not in "".join(out) else r"\d+")
            elif code == "r":
                out.append(r"(?P<rst>\d+)" if "(?P<rst>" not in "".join(out) else r"\d+")
            elif code in "ad":
                out.append(r"\d+")
            elif code == "h":
                out.append(r"[0-9a-z]+")
            else:
                out.append(re.escape(fmt[i : i + 2]))
            i += 2
            continue
        out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out))


def sequence_from_name(name: str, pattern: re.Pattern[str]) -> int:
    """The sequence a file name carries per the archive format; 0 when it does not match."""
    m = pattern.fullmatch(name)
    if m is None or "seq" not in m.groupdict():
        return 0
    return int(m.group("seq"))


def resetlogs_from_name(name: str, pattern: re.Pattern[str]) -> int | None:
    """The RESETLOGS_ID a file name carries (``%r``), None when the format has none."""
    m = pattern.fullmatch(name)
    if m is None or m.groupdict().get("rst") is None:
        return None
    return int(m.group("rst"))


def list_batch_files(
    entries: list[str], log_archive_format: str, start_seq: int = 0, source: RedoSource = LOCAL
) -> list[RedoFile]:
    """Expand the ``redo-log`` list (files or directories) into files in sequence order (§8.1)."""
    pattern = archive_format_regex(log_archive_format) if log_archive_format else None
    found: list[RedoFile] = []
    for entry in entries:
        kind = source.kind(entry)
        sizes: dict[str, int] = {}
        if kind == "dir":
            files = sorted((e for e in source.scan(entry) if not e.is_dir), key=lambda e: e.name)
            paths = [e.path for e in files]
            sizes = {e.path: e.size for e in files}
        elif kind is not None:
            paths = [entry]
            if source is not LOCAL:
                sizes = {entry: source.size(entry)}
        else:
            raise RuntimeFailure(f"redo log {entry} does not exist", 10001)
        for path in paths:
            seq = sequence_from_name(os.path.basename(path), pattern) if pattern else 0
            if seq == 0:
                seq = _sequence_from_header(path, source)
                if seq == 0 or pattern is not None:
                    if seq == 0:
                        log.warning(
                            60028,
                            f"can't get sequence from file name {path} (log-archive-format"
                            f" {log_archive_format}), skipped",
                        )
                        continue
            if seq < start_seq:
                log.warning(60028, f"file {path} has sequence {seq} below the start sequence {start_seq}, skipped")
                continue
            found.append(
                RedoFile(
                    path, seq, sizes.get(path, -1) if source is not LOCAL else -1, file_thread(path, pattern, source)
                )
            )
    # One list, by thread then sequence; several threads are merged by SCN (redo.merge).
    found.sort(key=lambda f: (f.thread, f.sequence))
    for a, b in zip(found, found[1:]):
        if a.thread == b.thread and b.sequence != a.sequence + 1:
            log.warning(
                60027,
                f"redo sequence gap: {b.sequence} follows {a.sequence}"
                + (f" (thread {a.thread})" if a.thread != 1 or found[-1].thread != 1 else ""),
            )
    return found


def file_thread(path: str, pattern: re.Pattern[str] | None, source: RedoSource = LOCAL) -> int:
    """The redo thread of a file: ``%t`` of the archive format, else block 1 +176."""
    if pattern is not None:
        m = pattern.fullmatch(os.path.basename(path))
        if m is not None and m.groupdict().get("thr"):
            return int(m.group("thr"))
    head = source.read_head(path)
    if head is None:
        return 1
    try:
        return parse_headers(head, path).thread or 1
    except RedoLogError:
        return 1


def _sequence_from_header(path: str, source: RedoSource = LOCAL) -> int:
    head = source.read_head(path)
    if head is None:
        return 0
    try:
        return parse_headers(head, path).sequence
    except RedoLogError:
        return 0


def _check_end_at_nab(f: RedoHandle, header: RedoHeader, size: int, path: str, verify_checksum: bool) -> None:
    """A closed log whose block NAB still holds redo of its sequence has a wrong NAB.

    Block 1's checksum catches a flipped NAB bit; this catches the rest (checksums off, or
    a header rewritten with a wrong NAB), which would silently drop the LWNs past NAB.
    """
    bs, nab = header.block_size, header.nab
    if header.is_current_online or nab in (0, NAB_NONE) or size < (nab + 1) * bs:
        return
    block = f.read(nab * bs, bs)
    check = check_blocks(block, nab, bs, header.sequence, header.endian, verify_checksum)
    if check.good:
        raise RedoLogError(
            f"file {path}: NAB {nab} (block 1 offset 156) ends the log, but block {nab} still "
            f"holds redo of sequence {header.sequence}",
            40002,
        )


def read_lwns(
    path: str,
    verify_checksum: bool = True,
    all_records: bool = False,
    header_out: list[RedoHeader] | None = None,
    start_block: int = 2,
    source: RedoSource = LOCAL,
) -> Iterator[Lwn]:
    """Yield the LWNs of an archived redo file in order, verifying every block up to NAB.

    ``start_block`` must be the first block of an LWN (a checkpointed restart position).
    The file is read from ``source`` (local by default) with its read-ahead.
    """
    headers: list[RedoHeader] = [] if header_out is None else header_out
    framer: RecordFramer | None = None
    for buf, block, count in read_chunks(path, verify_checksum, headers, start_block, source):
        header = headers[-1]
        bs = header.block_size
        if framer is None:
            framer = RecordFramer(bs, header.endian, path, start_block, all_records)
        check = check_blocks(buf, block, bs, header.sequence, header.endian, verify_checksum)
        if check.status is not BlockStatus.OK:
            raise_for(check, path, bs)
        yield from framer.feed(payload_of(buf, bs, count), block)
    if framer is not None:
        yield from framer.finish()


def read_chunks(
    path: str,
    verify_checksum: bool = True,
    header_out: list[RedoHeader] | None = None,
    start_block: int = 2,
    source: RedoSource = LOCAL,
) -> Iterator[tuple[bytes, int, int]]:
    """The data blocks of an archived redo file up to NAB, as (buffer, first block, block count).

    Reads and checks the file header (appended to ``header_out``), the file size against
    NAB and the block at NAB; the blocks themselves are checked by the caller (read_lwns,
    or the native record loop).
    """
    with source.open(path) as f:
        first = f.read(0, 8192)
        header = parse_headers(first, path, verify_checksum)
        if header_out is not None:
            header_out.append(header)
        bs = header.block_size
        size = f.size()
        end_block = header.nab if header.nab else size // bs
        if size < end_block * bs:
            raise RedoLogError(f"file {path}: truncated: {size} bytes, but NAB says {end_block * bs}", 40007)
        _check_end_at_nab(f, header, size, path, verify_checksum)
        chunk_blocks = max(1, source.batch_chunk // bs)
        block = start_block
        for buf in f.stream(block * bs, end_block * bs, chunk_blocks * bs):
            count = min(chunk_blocks, end_block - block)
            if len(buf) < count * bs:
                raise RedoLogError(f"file {path}: short read at block {block}", 40007)
            yield buf, block, count
            block += count
        if block < end_block:
            raise RedoLogError(f"file {path}: short read at block {block}", 40007)


def checked_chunks(
    path: str,
    check: ChunkCheck,
    verify_checksum: bool = True,
    header_out: list[RedoHeader] | None = None,
    start_block: int = 2,
    source: RedoSource = LOCAL,
) -> Iterator[tuple[bytes, int, int, bool]]:
    """:func:`read_chunks` with each buffer's block checks run here, by ``check`` (a reader
    thread's, while the record loop frames the buffers before): (buffer, first block, count,
    passed). A buffer that did not pass is handed over as read: the record loop checks it
    again when it comes to it and raises its error there, after the buffers before it.
    """
    headers: list[RedoHeader] = [] if header_out is None else header_out
    for buf, block, count in read_chunks(path, verify_checksum, headers, start_block, source):
        header = headers[-1]
        bad, _ = check(buf, block, header.block_size, header.sequence, header.endian == ">", verify_checksum)
        yield buf, block, count, bad < 0
