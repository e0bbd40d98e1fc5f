"""Where ``<name>-chkpt.json`` says the confirmed message lies, checked before a restart uses it.

A restart skips every message at or before ``pos`` and cuts the output back to ``output``.
A position that lies beyond the redo would skip everything (the run ends with nothing
output and no warning); an output size that is not where the confirmed message ends would
cut confirmed lines away, or leave a torn one. Both stop the start with 20120/20121 and
say what to do instead.

* ``pos`` (single-thread layout ``[sequence, LWN offset, ...]``): the log of that sequence
  must be found (archived or online), the offset a multiple of its block size inside it.
  RAC positions (``[commit SCN, thread, ...]``) are checked for the thread only.
* ``output``: when the file holds at least ``size`` bytes (less is 10100, the file
  writer's check), the bytes before ``size`` must be the configured new-line, and with
  OpenLogReplicator JSON the message ending there must carry the confirmed ``c_scn``.
"""

from __future__ import annotations

import os
import re
from typing import Final

from replicator.errors import DataError
from replicator.redo.online import LogLocator, read_header
from replicator.runner.position_file import CHECKPOINT_RANK, Confirmed

_C_SCN: Final = re.compile(rb'"c_scn":(\d+)')
_LINE_LIMIT: Final = 1 << 20  # a longer last message is only checked for its new-line
_RESTORE: Final = (
    "restore the files it was saved with, or move it away (the restart then replays from the start checkpoint)"
)


def check_in_redo(confirmed: Confirmed, locator: LogLocator, where: str, threads: list[int]) -> None:
    """The confirmed position names a place in the redo this run can read (20120)."""
    pos = confirmed.pos
    if pos is None or confirmed.confirms_nothing:
        return
    if len(threads) > 1:
        if pos[1] not in threads:
            raise DataError(
                f"{where}: pos names redo thread {pos[1]}, but the redo has threads "
                f"{', '.join(map(str, threads))}; {_RESTORE}",
                20120,
            )
        return
    seq, offset = pos[0], pos[1]
    if pos[2] > CHECKPOINT_RANK:
        raise DataError(
            f"{where}: pos[2] (record rank) {pos[2]} is out of range (at most {CHECKPOINT_RANK}): not a "
            f"position of a single-thread redo; {_RESTORE}",
            20120,
        )
    path = locator.archived(seq) or locator.online(seq)[0]
    if path is None:
        found = sorted({s for s, _ in locator.archive_files()})
        have = f"archived sequences {found[0]}..{found[-1]}" if found else "no archived log"
        raise DataError(
            f"{where}: pos names sequence {seq}, but no redo log of sequence {seq} is in the archive "
            f"directories or online groups ({have}): the position is not in this redo; {_RESTORE}",
            20120,
        )
    header = read_header(path, locator.source, locator.verify_checksum)
    if header is None:
        return  # unreadable now: reading it reports why
    size = (header.blocks + 1) * header.block_size
    if offset % header.block_size or not 2 * header.block_size <= offset < size:
        raise DataError(
            f"{where}: pos names offset {offset} of sequence {seq}, but its log {path} has "
            f"{header.blocks + 1} blocks of {header.block_size} bytes (an LWN starts at a block from "
            f"block 2 on): the position is not in this redo; {_RESTORE}",
            20120,
        )


def check_in_output(confirmed: Confirmed, newline: bytes, olr_json: bool, where: str) -> None:
    """The output size saved with the position ends the confirmed message (20121)."""
    if confirmed.output is None or confirmed.confirms_nothing:
        return
    path, size = confirmed.output
    try:
        actual = os.path.getsize(path)
    except OSError:
        return  # missing: the file writer says what that means (10100, or 60100 for another output)
    if size == 0 or actual < size or not newline:
        return
    with open(path, "rb") as f:
        start = max(0, size - _LINE_LIMIT)
        f.seek(start)
        data = f.read(size - start)
    if not data.endswith(newline):
        raise DataError(
            f"{where}: output names {size} bytes of {path}, but a message does not end there (no "
            f"new-line before byte {size}): the file or the checkpoint was changed; {_RESTORE}",
            20121,
        )
    if not olr_json:
        return
    line_start = data.rfind(b"\n", 0, len(data) - len(newline)) + 1
    if line_start == 0 and start > 0:
        return  # the last message is longer than what was read
    match = _C_SCN.search(data, line_start, min(len(data), line_start + 512))
    if match is not None and int(match[1]) != confirmed.scn:
        raise DataError(
            f"{where}: output names {size} bytes of {path}, but the message ending there has c_scn "
            f"{int(match[1])}, not the confirmed {confirmed.scn}: the file or the checkpoint was "
            f"changed; {_RESTORE}",
            20121,
        )
