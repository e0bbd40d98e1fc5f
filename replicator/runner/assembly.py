"""The pieces the batch and daemon runners share, built from a config's source section.

Schema checkpoint -> dictionary -> table map and dictionary tracker -> parser options;
format options -> format object; memory section -> memory pool. Both runners assemble their
pipeline from these functions, so a config means the same thing in either mode.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Any

from replicator import log
from replicator.errors import ConfigError, RuntimeFailure
from replicator.events import Table
from replicator.flags import FLAG_DDL, FLAG_SCHEMALESS
from replicator.formats.base import Format, FormatOptions
from replicator.formats.olr_digest import CheckpointDigests
from replicator.redo.parser import ParserOptions
from replicator.redo.reader import RedoFile
from replicator.redo.source import LOCAL, RedoSource
from replicator.txn.pool import MemoryPool


def _local_offset() -> int:
    return -time.altzone if time.daylight and time.localtime().tm_isdst else -time.timezone


def filter_rules(source: Any) -> list[Any]:
    """``source``'s ``filter.table`` as the schema layer's rules."""
    from replicator.schema.filter import TableRule

    return [TableRule(r.owner, r.table, r.key, r.tag, r.condition) for r in source.filter.table]


def table_map(source: Any, dictionary: Any, cp: Any) -> dict[int, Table]:
    """The replicated tables of ``source``'s filter, keyed by every obj# redo can carry."""
    from replicator.schema.filter import build_table_map, check_patterns, check_users

    rules = filter_rules(source)
    check_patterns(rules)
    check_users(cp.users, rules, checkpoint=f"schema checkpoint {source.name}-chkpt-{cp.scn}.json")
    return build_table_map(
        dictionary, rules, source.filter.separator, source.flags, cp.nls_character_set, cp.nls_nchar_character_set
    )


def dictionary_tracker(source: Any, dictionary: Any, cp: Any) -> Any:
    """The tracker that keeps ``dictionary`` and the table map current from SYS redo DML."""
    from replicator.flags import FLAG_ADAPTIVE_SCHEMA
    from replicator.schema.tracking import DictionaryTracker

    return DictionaryTracker(
        dictionary,
        lambda d: table_map(source, d, cp),
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


def start_checkpoint(config: Any, source: Any) -> Any:
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


def source_facts(config: Any, source: Any, cp: Any = None) -> tuple[ParserOptions, FormatOptions, str, Any]:
    """Parser and format options for ``source``: loads the schema unless schemaless.

    ``cp`` is the schema checkpoint to use; when None it is looked up as OpenLogReplicator
    does (largest SCN not above ``start-scn``). Returns (parser options, format options,
    archive name format, dictionary or None).
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
            dictionary = Dictionary.from_checkpoint(cp)
            tables = table_map(source, dictionary, cp)
            tracker = dictionary_tracker(source, dictionary, cp)
            if not flags & FLAG_ADAPTIVE_SCHEMA:  # adaptive mode replicates every table: no rule can miss
                for line in unmatched_rules(dictionary, filter_rules(source)):
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
    fmt = replace(fmt, flags=flags, db_timezone=db_tz, con_name=con_name, database=source.name)
    return parser, fmt, archive_format, dictionary


def checkpoint_digests(threads: int, checkpoint: Any) -> CheckpointDigests:
    """format.checkpoint-digests for a run that starts at the schema checkpoint ``checkpoint``
    (None: schemaless, from the first file): its position is where the previous checkpoint
    of the stream was. One redo thread only (ConfigError 30001 otherwise)."""
    if threads > 1:
        raise ConfigError("format.checkpoint-digests is not supported with several redo threads (RAC) yet", 30001)
    return CheckpointDigests((checkpoint.seq, checkpoint.offset) if checkpoint is not None else (0, 0))


def memory_pool(memory: Any) -> MemoryPool:
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
