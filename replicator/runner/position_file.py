"""``<name>-chkpt.json``: the confirmed output position, read as strictly as the config.

OpenLogReplicator's keys are ``database``, ``scn``, ``idx`` (c_scn and internal index of
the last confirmed message), ``resetlogs`` and ``activation``. We add ``pos``, the stream
position ``[sequence, LWN byte offset, record rank, message index]`` of that message
(RAC: ``[commit SCN, thread, record rank, message index]``), and for the file writer
``output``, ``[file, size]`` holding exactly the confirmed messages. A file without
``pos`` and ``output`` was written by OpenLogReplicator and keeps its meaning.

Every key is checked for its type and range; a key we do not know, an ``output`` without
``pos``, a ``pos`` of another length: error 20003 naming the field (OLR's code for a field
of the wrong type), never a guess at another layout. The file is at most
:data:`MAX_POSITION_FILE_SIZE` bytes (10004 otherwise, as OLR says for its 1 KiB limit:
ours holds an output path, up to 4 KiB on Linux). Where the position lies is checked
against the redo and the output by the daemon (runner/daemon.py), which knows both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from replicator.errors import DataError, RuntimeFailure
from replicator.schema.rows import Kind, check_value

Position = tuple[int, int, int, int]  # (sequence, LWN byte offset, record rank, message index)
POSITION_ZERO: Position = (0, 0, 0, 0)
CHECKPOINT_RANK: Final = 1 << 30  # a checkpoint message sorts after every record of its LWN
MAX_POSITION_FILE_SIZE: Final = 16384
_KEYS: Final = frozenset(("database", "scn", "idx", "resetlogs", "activation", "pos", "output"))


@dataclass(slots=True)
class Confirmed:
    """The content of ``<name>-chkpt.json``.

    ``pos`` :data:`POSITION_ZERO` is the record saved at a first start, before anything
    is confirmed: ``scn`` then names the schema checkpoint the run started from (so a
    restart before any confirmation starts from it again) and ``output`` where the output
    stood (so a restart cuts back what the first run wrote).
    """

    database: str
    scn: int  # c_scn of the last confirmed message (OLR key)
    idx: int  # its internal index (OLR key)
    resetlogs: int
    activation: int
    pos: Position | None = None  # our stream position (None in files written by OLR)
    output: tuple[str, int] | None = None  # file writer: (file, size) holding exactly the confirmed messages

    @property
    def confirms_nothing(self) -> bool:
        """The record of a first start: nothing was confirmed yet."""
        return self.pos == POSITION_ZERO


def read_confirmed(path: Path, name: str) -> Confirmed | None:
    """Read and validate ``path`` (None when it does not exist)."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    except OSError as e:
        raise RuntimeFailure(f"file: {path} - get metadata returned: {e.strerror}", 10003) from e
    if size == 0 or size > MAX_POSITION_FILE_SIZE:
        raise RuntimeFailure(
            f"file: {path} - wrong size: {size} (a confirmed position file holds 1 to {MAX_POSITION_FILE_SIZE} bytes)",
            10004,
        )
    try:
        data = path.read_bytes()
    except OSError as e:
        raise RuntimeFailure(f"file: {path} - read returned: {e.strerror}", 10001) from e
    try:
        doc = json.loads(data)
    except ValueError as e:
        raise DataError(f"file: {path} - parse error: {e}", 20001) from e
    return parse_confirmed(doc, f"file: {path}", name)


def parse_confirmed(doc: Any, where: str, name: str) -> Confirmed:
    """Validate a decoded ``<name>-chkpt.json`` document (``where`` prefixes every error)."""
    if not isinstance(doc, dict):
        raise DataError(f"{where} - parse error: the document is not a JSON object", 20001)
    unknown = sorted(set(doc) - _KEYS)
    if unknown:
        raise DataError(f"{where} - parse error, field {unknown[0]} not expected", 20003)
    for key in ("database", "scn", "resetlogs", "activation"):
        if key not in doc:
            raise DataError(f"{where} - parse error, field {key} not found", 20003)
    database = check_value(Kind.STR, doc["database"], "database", where)
    if database != name:
        raise DataError(f"{where} - invalid database name: {database!r}, expected {name!r}", 20001)
    scn = check_value(Kind.U64, doc["scn"], "scn", where)
    idx = check_value(Kind.U64, doc["idx"], "idx", where) if "idx" in doc else 0
    resetlogs = check_value(Kind.U32, doc["resetlogs"], "resetlogs", where)
    activation = check_value(Kind.U32, doc["activation"], "activation", where)
    pos = _position(doc["pos"], where) if "pos" in doc else None
    output = _output(doc["output"], where) if "output" in doc else None
    if output is not None and pos is None:
        raise DataError(f"{where} - parse error, field output without field pos (both are written together)", 20003)
    return Confirmed(database, scn, idx, resetlogs, activation, pos, output)


def _position(value: Any, where: str) -> Position:
    layout = "[sequence, LWN byte offset, record rank, message index]"
    if not isinstance(value, list) or len(value) != 4:
        raise DataError(f"{where} - parse error, field pos is not an array of 4 unsigned numbers {layout}", 20003)
    rank = value[2]  # RAC packs (sequence, LWN offset, rank) into it: up to 128 bits
    if type(rank) is not int or not 0 <= rank < 1 << 128:
        raise DataError(f"{where} - parse error, field pos[2] is not an unsigned 128-bit number", 20003)
    return (
        check_value(Kind.U64, value[0], "pos[0]", where),
        check_value(Kind.U64, value[1], "pos[1]", where),
        rank,
        check_value(Kind.U64, value[3], "pos[3]", where),
    )


def _output(value: Any, where: str) -> tuple[str, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise DataError(f"{where} - parse error, field output is not an array [file, size]", 20003)
    path = check_value(Kind.STR, value[0], "output[0]", where)
    if not path:
        raise DataError(f"{where} - parse error, field output[0] is an empty file name", 20003)
    return path, check_value(Kind.U64, value[1], "output[1]", where)


def format_confirmed(c: Confirmed) -> bytes:
    """One line, OLR's keys first."""
    doc: dict[str, Any] = {
        "database": c.database,
        "scn": c.scn,
        "idx": c.idx,
        "resetlogs": c.resetlogs,
        "activation": c.activation,
    }
    if c.pos is not None:
        doc["pos"] = list(c.pos)
    if c.output is not None:
        doc["output"] = list(c.output)
    return json.dumps(doc, separators=(",", ":")).encode()
