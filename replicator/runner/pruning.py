"""Which schema checkpoints a restart may start from, and so which ones pruning must keep.

One rule decides both (:func:`may_restart_from`), so pruning can never delete the file a
restart picks. Given the position saved in ``<name>-chkpt.json``:

* our stream position ``pos``: a checkpoint taken at or before the LWN of the confirmed
  message (RAC: a checkpoint SCN below the confirmed commit SCN);
* an OpenLogReplicator file (no ``pos``): a checkpoint SCN not above its ``scn``;
* the record of a first start (``pos`` all zero) or no file: the checkpoint SCN not above
  the start SCN (the record's ``scn``, else ``reader.start-scn``; without either, any).

The restart starts from the newest checkpoint the rule allows, at its ``min-tran``
position (where the oldest transaction open at that checkpoint began), so that file
covers the oldest open transaction too. Pruning (:func:`kept`) keeps the newest
``keep-checkpoints`` files, that restart checkpoint, the start checkpoint (the newest not
above ``reader.start-scn``, or without it the oldest file: the one the user supplied) and
the full-schema file each kept file refers to (``schema-ref-scn``); it deletes the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from replicator.runner.position_file import Confirmed

_HEAD = re.compile(rb'"seq":(\d+),"offset":(\d+)')  # the top-level keys come before min-tran's
_REF = re.compile(rb'"schema-ref-scn":(\d+)\}\s*$')  # a reference file ends with it
_HEAD_BYTES = 4096
_TAIL_BYTES = 64


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What the restart rule and pruning need of one schema checkpoint file."""

    seq: int
    offset: int
    rac: bool  # it holds per-thread positions (a RAC restart point)
    ref: int | None  # schema-ref-scn: the file holding its dictionary, or None (it holds it)


def may_restart_from(scn: int, facts: FileFacts, saved: Confirmed | None, start_scn: int) -> bool:
    """Whether a restart with ``saved`` (``<name>-chkpt.json``) may start from this checkpoint."""
    if saved is not None and saved.pos is not None and not saved.confirms_nothing:
        if facts.rac:  # positions are (commit SCN, thread, ...); commits before the checkpoint are below its SCN
            return scn < saved.pos[0]
        return (facts.seq, facts.offset) <= (saved.pos[0], saved.pos[1])
    if saved is None:
        bound = start_scn
    elif saved.pos is None:  # OpenLogReplicator's file: its scn
        bound = saved.scn
    else:  # a first start's record: the checkpoint it started from (older records: the start SCN)
        bound = saved.scn or start_scn
    return not bound or scn <= bound


def peek_facts(path: Path) -> FileFacts | None:
    """The facts of a file written by another process, from its first and last bytes (None
    when they are not laid out as OpenLogReplicator writes them: load the file instead)."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD_BYTES)
            size = f.seek(0, 2)
            f.seek(max(0, size - _TAIL_BYTES))
            tail = f.read()
    except OSError:
        return None
    match = _HEAD.search(head)
    if match is None:
        return None
    ref = _REF.search(tail)
    return FileFacts(int(match[1]), int(match[2]), b'"threads":[' in head, int(ref[1]) if ref else None)


def restart_scn(
    files: Iterable[tuple[int, Path]],
    facts_of: Callable[[int, Path], FileFacts | None],
    saved: Confirmed | None,
    start_scn: int,
) -> int | None:
    """The SCN of the newest checkpoint a restart may start from (``files`` sorted by SCN)."""
    for scn, path in sorted(files, reverse=True):
        facts = facts_of(scn, path)
        if facts is not None and may_restart_from(scn, facts, saved, start_scn):
            return scn
    return None  # (an unreadable file is skipped, as a restart skips it)


def start_point_scn(scns: list[int], start_scn: int) -> int | None:
    """The checkpoint the user started from: the newest not above ``start_scn``, or the oldest."""
    if not scns:
        return None
    if not start_scn:
        return min(scns)
    below = [s for s in scns if s <= start_scn]
    return max(below) if below else None


def kept(
    files: list[tuple[int, Path]],
    keep: int,
    pins: Iterable[int | None],
    facts_of: Callable[[int, Path], FileFacts | None],
) -> set[int]:
    """SCNs of the files pruning keeps: the newest ``keep``, the pinned ones, and the file
    each of these refers to for its dictionary."""
    paths = dict(files)
    newest = sorted(paths, reverse=True)[: max(1, keep)]
    keep_set = {s for s in (*newest, *pins) if s is not None and s in paths}
    todo = list(keep_set)
    while todo:  # (a reference to a reference, written by older versions, is followed)
        scn = todo.pop()
        facts = facts_of(scn, paths[scn])
        if facts is None:
            return set(paths)  # a file we cannot read: delete nothing
        if facts.ref is not None and facts.ref in paths and facts.ref not in keep_set:
            keep_set.add(facts.ref)
            todo.append(facts.ref)
    return keep_set
