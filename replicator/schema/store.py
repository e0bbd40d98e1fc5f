"""Schema checkpoint files ``<name>-chkpt-<scn>.json`` in the state directory (spec §5).

Reading follows OLR's restart rule (§5.3): take the largest checkpoint SCN not above the
first data SCN, fall back to lower ones when a file fails to load, and follow
``schema-ref-scn`` to the file that holds the dictionary rows. Writing is atomic (temp
file, fsync, rename), unlike OLR, which rewrites the file in place.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

import orjson

from replicator import log
from replicator.errors import DataError, ReplicatorError, RuntimeFailure
from replicator.fsutil import atomic_write
from replicator.schema.document import (
    Incarnation,
    MinTran,
    OnlineRedo,
    SchemaCheckpoint,
    format_schema_checkpoint,
    parse_schema_checkpoint,
    parse_timezone,
)

__all__ = [
    "Incarnation",
    "MinTran",
    "OnlineRedo",
    "SchemaCheckpoint",
    "checkpoint_path",
    "find_schema_checkpoint",
    "format_schema_checkpoint",
    "list_schema_checkpoints",
    "load_best_schema_checkpoint",
    "load_schema_checkpoint",
    "parse_schema_checkpoint",
    "parse_timezone",
    "write_schema_checkpoint",
]


MAX_SCHEMA_FILE_SIZE: Final = 2 * 1024 * 1024 * 1024  # OLR's read limit for schema files


def checkpoint_path(state_dir: str | os.PathLike[str], name: str, scn: int) -> Path:
    """Path of the schema checkpoint of source ``name`` taken at ``scn``."""
    return Path(state_dir) / f"{name}-chkpt-{scn}.json"


def list_schema_checkpoints(state_dir: str | os.PathLike[str], name: str) -> list[tuple[int, Path]]:
    """Every ``<name>-chkpt-<N>.json`` regular file, as (N, path) sorted by N.

    Names whose middle part is not a decimal number are ignored, so the writer position
    file ``<name>-chkpt.json`` never matches. An unreadable directory is error 10012.
    """
    prefix, found = f"{name}-chkpt-", []
    try:
        entries = list(os.scandir(state_dir))
    except OSError as exc:
        raise RuntimeFailure(f"state directory {state_dir} cannot be read: {exc}", 10012) from exc
    for entry in entries:
        middle = entry.name[len(prefix) : -len(".json")]
        if (
            entry.name.startswith(prefix)
            and entry.name.endswith(".json")
            and middle.isdigit()
            and middle.isascii()
            and entry.is_file()
        ):
            found.append((int(middle), Path(entry.path)))
    return sorted(found)


def _candidates(state_dir: str | os.PathLike[str], name: str, first_data_scn: int) -> list[Path]:
    # OLR loads nothing when no start SCN is known (first_data_scn 0): the schema then comes
    # from the database (online) or the start fails (offline/batch, 10040/10052).
    if first_data_scn <= 0:
        return []
    found = list_schema_checkpoints(state_dir, name)
    return [path for scn, path in reversed(found) if scn <= first_data_scn]


def find_schema_checkpoint(state_dir: str | os.PathLike[str], name: str, first_data_scn: int) -> Path | None:
    """The checkpoint with the largest SCN ≤ ``first_data_scn``, or None (also for SCN 0)."""
    candidates = _candidates(state_dir, name, first_data_scn)
    return candidates[0] if candidates else None


def load_schema_checkpoint(path: str | os.PathLike[str], database: str | None = None) -> SchemaCheckpoint:
    """Read and validate one schema checkpoint file.

    Raises RuntimeFailure 10001/10004 for an unreadable or oversized file, and DataError
    20001 (bad JSON, or ``database`` differs from the expected one), 20003, 20005, 20006.
    """
    where = f"file: {path}"
    try:
        size = os.stat(path).st_size
        if size > MAX_SCHEMA_FILE_SIZE:
            raise RuntimeFailure(f"{where} - size {size} exceeds {MAX_SCHEMA_FILE_SIZE}", 10004)
        data = Path(path).read_bytes()
    except OSError as exc:
        raise RuntimeFailure(f"{where} - cannot be read: {exc}", 10001) from exc
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise DataError(f"{where} - parse error: {exc}", 20001) from exc
    cp = parse_schema_checkpoint(doc, where)
    if database is not None and cp.database != database:
        raise DataError(
            f'{where} - parse error of field "database", invalid value: {cp.database}, expected value: {database}',
            20001,
        )
    return cp


def load_best_schema_checkpoint(
    state_dir: str | os.PathLike[str], name: str, first_data_scn: int
) -> SchemaCheckpoint | None:
    """Load the checkpoint to restart from, with its dictionary rows resolved.

    Candidates are tried from the largest SCN ≤ ``first_data_scn`` downwards; a file that
    fails to load is logged and skipped. A file holding only ``schema-ref-scn`` gets the
    rows (and ``schema_scn``) of the referenced file; if that one is missing or unusable,
    WARN 60019 is logged and the next lower candidate is tried. None if nothing loads.
    """
    for path in _candidates(state_dir, name, first_data_scn):
        try:
            cp = load_schema_checkpoint(path, name)
        except ReplicatorError as exc:
            log.error(exc.code, exc.message)
            continue
        if cp.schema_ref_scn is None:
            return cp
        ref_path = checkpoint_path(state_dir, name, cp.schema_ref_scn)
        try:
            ref = load_schema_checkpoint(ref_path, name)
        except ReplicatorError as exc:
            log.warning(
                60019,
                f"file: {path} - load checkpoint failed, reference schema {ref_path.name} unusable ({exc.message})",
            )
            continue
        if ref.schema_scn is None:
            log.warning(60019, f"file: {path} - reference schema {ref_path.name} holds no schema")
            continue
        cp.schema_scn, cp.rows = ref.schema_scn, ref.rows
        return cp
    return None


def write_schema_checkpoint(state_dir: str | os.PathLike[str], cp: SchemaCheckpoint) -> Path:
    """Write ``cp`` as ``<database>-chkpt-<scn>.json`` atomically and return its path.

    The text goes to a hidden temp file that is fsynced and renamed over the target, so a
    crash leaves either the old file or the new one. Failures raise RuntimeFailure 10006;
    the caller turns them into WARN 60018 as OLR does.
    """
    target = checkpoint_path(state_dir, cp.database, cp.scn)
    atomic_write(target, format_schema_checkpoint(cp).encode("utf-8"))
    return target
