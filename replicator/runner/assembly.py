"""The pieces the batch and daemon runners share, built from a config's source section.

Schema checkpoint -> dictionary -> table map and dictionary tracker -> parser options;
format options -> format object; memory section -> memory pool. Both runners assemble their
pipeline from these functions, so a config means the same thing in either mode.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from replicator import log
from replicator.errors import ConfigError, RuntimeFailure
from replicator.events import Table
from replicator.flags import FLAG_DDL, FLAG_SCHEMALESS
from replicator.formats.base import Format, FormatOptions
from replicator.redo.parser import ParserOptions
from replicator.redo.reader import RedoFile
from replicator.redo.source import LOCAL, RedoSource
from replicator.txn.pool import MemoryPool

if TYPE_CHECKING:
    from replicator.config.model import Config
    from replicator.config.sections import MemoryConfig
    from replicator.config.source import SourceConfig
    from replicator.formats.olr_digest import CheckpointDigests
    from replicator.schema.dictionary import Dictionary
    from replicator.schema.document import SchemaCheckpoint
    from replicator.schema.filter import TableRule
    from replicator.schema.tracking import DictionaryTracker


def _local_offset() -> int:
    return -time.altzone if time.daylight and time.localtime().tm_isdst else -time.timezone


def filter_rules(source: SourceConfig) -> list[TableRule]:
    """``source``'s ``filter.table`` as the schema layer's rules."""
    from replicator.schema.filter import TableRule

    return [TableRule(r.owner, r.table, r.key, r.tag, r.condition) for r in source.filter.table]


def table_map(
    source: SourceConfig, dictionary: Dictionary, cp: SchemaCheckpoint, users: Iterable[str] | None = None
) -> dict[int, Table]:
    """The replicated tables of ``source``'s filter, keyed by every obj# redo can carry.

    ``users``: the owners the checkpoints were made for (several containers: all of theirs;
    default ``cp.users``)."""
    from replicator.schema.filter import build_table_map, check_patterns, check_users

    rules = filter_rules(source)
    check_patterns(rules)
    check_users(
        cp.users if users is None else users, rules, checkpoint=f"schema checkpoint {source.name}-chkpt-{cp.scn}.json"
    )
    return build_table_map(
        dictionary, rules, source.filter.separator, source.flags, cp.nls_character_set, cp.nls_nchar_character_set
    )


def dictionary_tracker(
    source: SourceConfig, dictionary: Dictionary, cp: SchemaCheckpoint, users: Iterable[str] | None = None
) -> DictionaryTracker:
    """The tracker that keeps ``dictionary`` and the table map current from SYS redo DML."""
    from replicator.flags import FLAG_ADAPTIVE_SCHEMA
    from replicator.schema.tracking import DictionaryTracker

    return DictionaryTracker(
        dictionary,
        lambda d: table_map(source, d, cp, users),
        users=cp.users,
        adaptive=bool(source.flags & FLAG_ADAPTIVE_SCHEMA),
        schema_scn=cp.schema_scn or cp.scn,
    )


def require_state_dir(path: str) -> None:
    """The state folder must exist (10012): checkpoints are read from and written to it."""
    if not os.path.isdir(path):
        what = "is not a directory" if os.path.exists(path) else "does not exist"
        raise RuntimeFailure(
            f"state directory {path} {what} (state.path): create it and put the schema "
            f"checkpoint (<name>-chkpt-<scn>.json) in it",
            10012,
        )


def start_checkpoint(config: Config, source: SourceConfig) -> SchemaCheckpoint:
    """The schema checkpoint a batch run starts from: the largest SCN not above ``start-scn``."""
    from replicator.schema.store import list_schema_checkpoints, load_best_schema_checkpoint

    state_dir = config.state.path
    start_scn = source.reader.start_scn or 0
    require_state_dir(state_dir)
    cp = load_best_schema_checkpoint(state_dir, source.name, start_scn) if start_scn else None
    if cp is None:
        found = list_schema_checkpoints(state_dir, source.name)
        held = ", ".join(path.name for _, path in found[:5]) + (" ..." if len(found) > 5 else "")
        if not start_scn:
            fix = "set reader.start-scn to select one" + (f" (found: {held})" if found else "")
        elif found:
            fix = (
                f"reader.start-scn {start_scn} selects the largest SCN not above it, and every one found is "
                f"above it or unreadable (found: {held})"
            )
        else:
            fix = (
                f"none is there: put the one for reader.start-scn {start_scn} there "
                f"({source.name}-chkpt-<scn>.json, <scn> at most {start_scn})"
            )
        raise RuntimeFailure(f"schema checkpoint for database {source.name} not found in {state_dir}: {fix}", 10052)
    return cp


def source_facts(
    config: Config,
    source: SourceConfig,
    cp: SchemaCheckpoint | None = None,
    containers: list[tuple[str, SchemaCheckpoint]] | None = None,
) -> tuple[ParserOptions, FormatOptions, str, Dictionary | None]:
    """Parser and format options for ``source``: loads the schema unless schemaless.

    ``cp`` is the schema checkpoint to use; when None it is looked up as OpenLogReplicator
    does (largest SCN not above ``start-scn``). ``containers``: the other PDBs' checkpoints
    (``source.containers``) when the caller chose them (the daemon); None: chosen as ``cp``
    is (:func:`container_checkpoints`). Returns (parser options, format options, archive
    name format, dictionary or None).
    """
    from replicator.flags import FLAG_ADAPTIVE_SCHEMA, FLAG_EXPERIMENTAL_XMLTYPE
    from replicator.schema.dictionary import Dictionary
    from replicator.schema.filter import check_xml_context, unmatched_rules

    reader = source.reader
    flags = source.flags
    start_scn = reader.start_scn or 0
    fmt = config.format_options(source)
    archive_format = reader.log_archive_format or ""
    tables: dict[int, Table] = {}
    dictionary = None
    tracker = None
    others: list[tuple[str, SchemaCheckpoint]] = []
    users: set[str] | None = None
    con_id, con_name, db_tz = 0, "", 0
    if cp is None and not flags & FLAG_SCHEMALESS:
        cp = start_checkpoint(config, source)
    if flags & FLAG_SCHEMALESS and flags & FLAG_EXPERIMENTAL_XMLTYPE:
        # OLR looks for its XML context even without a schema (50069 when there is none).
        check_xml_context(cp.rows.get("xdb-ttset", []) if cp is not None else [])
    if cp is not None:
        archive_format = archive_format or cp.log_archive_format
        con_id, con_name, db_tz = cp.con_id, cp.con_name, cp.db_timezone_offset
        if not flags & FLAG_SCHEMALESS:
            if containers is not None:
                others = containers
            elif source.containers:
                others = container_checkpoints(source, cp)
            users = set(cp.users).union(*(o.users for _, o in others)) if others else None
            dictionary = Dictionary.from_checkpoint(cp)
            tables = table_map(source, dictionary, cp, users)
            tracker = dictionary_tracker(source, dictionary, cp, users)
            if not flags & FLAG_ADAPTIVE_SCHEMA:  # adaptive mode replicates every table: no rule can miss
                missed = unmatched_rules(dictionary, filter_rules(source))
                for _, other in others:  # several containers: a rule misses when it misses in every one
                    in_other = set(unmatched_rules(Dictionary.from_checkpoint(other), filter_rules(source)))
                    missed = [line for line in missed if line in in_other]
                for line in missed:
                    log.warning(60110, line)
    if reader.db_timezone is not None:
        db_tz = reader.db_timezone
    host_tz = reader.host_timezone if reader.host_timezone is not None else _local_offset()
    parser = ParserOptions(
        tables=tables,
        schemaless=bool(flags & FLAG_SCHEMALESS),
        flags=flags,
        con_id=con_id,
        con_name=con_name,
        first_data_scn=start_scn,
        host_tz=host_tz,
        skip_xids=frozenset(source.filter.skip_xid_values()),
        emit_ddl=bool(flags & FLAG_DDL),
        tracker=tracker,
        dictionary_pos=(cp.seq, cp.offset) if cp is not None else (0, 0),
    )
    if others:
        parser = replace(parser, containers=container_options(source, parser, others, users))
    fmt = replace(fmt, flags=flags, db_timezone=db_tz, con_name=con_name, database=source.name)
    return parser, fmt, archive_format, dictionary


def container_checkpoints(
    source: SourceConfig, cp: SchemaCheckpoint, at_scn: int | None = None
) -> list[tuple[str, SchemaCheckpoint]]:
    """``source.containers``: (state folder, schema checkpoint) of each PDB beside the first
    container's checkpoint ``cp``, each chosen by ``reader.start-scn`` as that one was; with
    ``at_scn`` (the daemon: the SCN of the first container's restart checkpoint), the one
    written at that very SCN, which must exist (10123).

    Every container must be another PDB of the same database (30161 otherwise)."""
    from replicator.schema.store import load_best_schema_checkpoint

    start_scn = source.reader.start_scn or 0
    seen = {cp.con_id: "state.path"}
    found: list[tuple[str, SchemaCheckpoint]] = []
    for i, c in enumerate(source.containers):
        where = f"source[0].containers[{i}].state-path"
        require_state_dir(c.state_path)
        if at_scn is not None:
            other = load_best_schema_checkpoint(c.state_path, source.name, at_scn)
            if other is None or other.scn != at_scn:
                raise RuntimeFailure(
                    f"schema checkpoint {source.name}-chkpt-{at_scn}.json not found (or unusable) in "
                    f"{c.state_path} ({where}): the run restarts from that SCN (the checkpoint chosen in "
                    f"state.path), and every container's dictionary must be the one written with it; "
                    f"restore the file, or move away state.path's checkpoints above an SCN that every "
                    f"container's folder holds",
                    10123,
                )
        else:
            other = load_best_schema_checkpoint(c.state_path, source.name, start_scn) if start_scn else None
        if other is None:
            raise RuntimeFailure(
                f"schema checkpoint for database {source.name} not found in {c.state_path} ({where}): put the "
                f"PDB's {source.name}-chkpt-<scn>.json there, <scn> at most reader.start-scn {start_scn}",
                10052,
            )
        if not other.con_id or other.con_id in seen:
            raise ConfigError(
                f"{where}: its schema checkpoint is of container CON_ID {other.con_id} ({other.con_name or 'no name'}), "
                + (f"as the one of {seen[other.con_id]}" if other.con_id in seen else "not a PDB of a CDB")
                + ": each container of a run is another PDB",
                30161,
            )
        if (other.resetlogs, other.activation) != (cp.resetlogs, cp.activation):
            raise ConfigError(
                f"{where}: its schema checkpoint is of another database or incarnation than the first container's "
                f"(resetlogs {other.resetlogs}, activation {other.activation}; "
                f"state.path: {cp.resetlogs}, {cp.activation})",
                30161,
            )
        seen[other.con_id] = where
        found.append((c.state_path, other))
    return found


def container_options(
    source: SourceConfig,
    parser: ParserOptions,
    others: list[tuple[str, SchemaCheckpoint]],
    users: Iterable[str] | None,
) -> dict[int, ParserOptions]:
    """The parser options of each container of ``source.containers`` (CON_ID -> options; ``others``
    from :func:`container_checkpoints`): its own dictionary, table map, tracker and name, the
    rest as the first container's."""
    from replicator.schema.dictionary import Dictionary

    out: dict[int, ParserOptions] = {}
    for _, other in others:
        dictionary = Dictionary.from_checkpoint(other)
        out[other.con_id] = replace(
            parser,
            tables=table_map(source, dictionary, other, users),
            con_id=other.con_id,
            con_name=other.con_name,
            tracker=dictionary_tracker(source, dictionary, other, users),
            dictionary_pos=(other.seq, other.offset),
            containers={},
        )
    return out


def checkpoint_digests(threads: int, checkpoint: SchemaCheckpoint | None) -> CheckpointDigests:
    """format.checkpoint-digests for a run that starts at the schema checkpoint ``checkpoint``
    (None: schemaless, from the first file): its position is where the previous checkpoint
    of the stream was. One redo thread only (ConfigError 30001 otherwise)."""
    if threads > 1:
        raise ConfigError("format.checkpoint-digests is not supported with several redo threads (RAC) yet", 30001)
    from replicator.formats.olr_digest import CheckpointDigests

    return CheckpointDigests((checkpoint.seq, checkpoint.offset) if checkpoint is not None else (0, 0))


def memory_pool(memory: MemoryConfig | None) -> MemoryPool:
    """The transaction memory pool for a config's ``memory`` section (defaults when None)."""
    if memory is None:
        return MemoryPool()
    return MemoryPool(memory.max_mb, memory.swap_mb, memory.swap_path or ".", memory.min_mb)


def create_format_for(options: FormatOptions) -> Format:
    """The format object for the options (a single registry lives in replicator.formats)."""
    from replicator.formats.registry import create_format

    return create_format(options)


def file_size(redo: RedoFile, source: RedoSource = LOCAL) -> int:
    """Bytes of a listed redo file (known from the listing, or asked of its source)."""
    return redo.size if redo.size >= 0 else source.size(redo.path)
