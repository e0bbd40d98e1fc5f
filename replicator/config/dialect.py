"""Config dialects: OpenLogReplicator 1.9 (``"version": "1.9.0"``) and 2.0 (``"2.0.0"``).

The 1.9 dialect is what this project has always read: OLR's master after the v1.9.0 tag,
whose schema string is still ``"1.9.0"`` (olr-interfaces.md §1.1). That master already
holds every 2.0 format option (the 2.0.0 release notes list the same entries under 2.0.0,
documentation/release-notes/release-notes.adoc:18-38 of the 2.0.0 tag), so both dialects
accept the same ``format`` keys and values and print the same bytes (docs/formats.md,
"OpenLogReplicator 2.0"). What differs is the version string and where ``memory`` and
``state`` may stand: 1.9 still accepts them inside ``source[0]`` and ignores them, 2.0
reads them at the top level only, and we refuse the old place (error 30150) rather than
ignore a setting the user wrote.

This module is data only (no pydantic): the config models read :data:`ONLY_IN` through
:func:`dialect_keys`, ``check-config`` reads :data:`CHANGES`, and ``config upgrade``
(:mod:`replicator.config.upgrade`) rewrites a file between the dialects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

# The validation-context key holding the dialect of the file being validated.
DIALECT = "dialect"
DIALECT_19: Final = "1.9"
DIALECT_20: Final = "2.0"
VERSIONS: Final[Mapping[str, str]] = {DIALECT_19: "1.9.0", DIALECT_20: "2.0.0"}
DIALECT_OF_VERSION: Final[Mapping[str, str]] = {version: name for name, version in VERSIONS.items()}
DEFAULT_DIALECT: Final = DIALECT_19

# Error codes (docs/errors.md).
WRONG_DIALECT_KEY = 30150
NOT_EXPRESSIBLE = 30151

# Where a 2.0.0 fact was read: files of OLR's documentation at the 2.0.0 tag.
DOC_JSON = "documentation/json/json.adoc"
DOC_NOTES = "documentation/release-notes/release-notes.adoc"


@dataclass(frozen=True, slots=True)
class DialectKey:
    """A key that only one dialect accepts in a section."""

    section: str  # the section's model name in messages: "source[0]"
    key: str
    dialect: str  # the only dialect that accepts it
    reason: str  # why the other one does not
    doc: str  # where the fact comes from (file:line of the 2.0.0 documentation)


ONLY_IN: Final[tuple[DialectKey, ...]] = (
    DialectKey(
        "source[0]",
        "memory",
        DIALECT_19,
        "2.0 reads memory at the top level only",
        f"{DOC_NOTES}:22, {DOC_JSON}:85",
    ),
    DialectKey(
        "source[0]",
        "state",
        DIALECT_19,
        "2.0 reads state at the top level only",
        f"{DOC_NOTES}:22, {DOC_JSON}:93",
    ),
)
# No key is 2.0-only: every 2.0 format key (debezium, xid 3, redo-thread, scn-type and
# timestamp-type bitmasks, user-type, timestamp-metadata) is already read with "1.9.0".


def dialect_of(data: Any) -> str:
    """The dialect a decoded config declares (the default one when it declares none we know;
    the version check then reports the file)."""
    version = data.get("version") if isinstance(data, dict) else None
    return DIALECT_OF_VERSION.get(version, DEFAULT_DIALECT) if isinstance(version, str) else DEFAULT_DIALECT


def dialect_keys(section: str) -> dict[str, DialectKey]:
    """The dialect-bound keys of ``section``, by key."""
    return {item.key: item for item in ONLY_IN if item.section == section}


def wrong_dialect_message(item: DialectKey, dialect: str) -> str:
    """The 30150 message for ``item`` found in a ``dialect`` config."""
    return (
        f'bad JSON, "{item.section}.{item.key}" is a {item.dialect} key, refused in a {dialect} config '
        f'("version": "{VERSIONS[dialect]}"): {item.reason}; `replicator config upgrade` moves it'
    )


@dataclass(frozen=True, slots=True)
class Change:
    """One 1.9 -> 2.0 change of the release notes and what it means for a config."""

    note: str  # the release-notes entry
    doc: str  # file:line of the 2.0.0 documentation
    keys: tuple[str, ...]  # format keys (or values, "type=debezium") that use it
    meaning: str


CHANGES: Final[tuple[Change, ...]] = (
    Change(
        'the schema version is "2.0.0"',
        f"{DOC_JSON}:44",
        (),
        '`config upgrade` writes "version": "2.0.0"; a 2.0 reader refuses "1.9.0" with 30001',
    ),
    Change(
        "memory, metrics, state parameters move to the top level",
        f"{DOC_NOTES}:22, {DOC_JSON}:85-95",
        (),
        "",  # filled in by explain_upgrade from the file
    ),
    Change(
        'format type "debezium" (a preset of format options)',
        f"{DOC_NOTES}:24, documentation/json/4.format.adoc:29-31",
        ("type=debezium",),
        "already read with 1.9.0; same preset and output in 2.0",
    ),
    Change(
        "new XID format (xid 3: LogMiner byte order)",
        f"{DOC_NOTES}:29, documentation/json/4.format.adoc:264",
        ("xid=3",),
        "already read with 1.9.0; same output in 2.0",
    ),
    Change(
        'redo-thread (adds "rth")',
        f"{DOC_NOTES}:34, documentation/json/4.format.adoc:135",
        ("redo-thread",),
        "already read with 1.9.0; same output in 2.0",
    ),
    Change(
        'scn-type is a bitmask, "timestamp-all" removed, "timestamp-type" added',
        f"{DOC_NOTES}:35, documentation/json/4.format.adoc:170-176, 226-232",
        ("scn-type", "timestamp-type"),
        "already read with 1.9.0 (timestamp-all refused by both); same output in 2.0",
    ),
    Change(
        'user-type (adds "usr")',
        f"{DOC_NOTES}:36, documentation/json/4.format.adoc:235-241",
        ("user-type",),
        "already read with 1.9.0; same output in 2.0",
    ),
    Change(
        "new timestamp formats (timestamp 0-15, timestamp-tz 0-11, timestamp-metadata)",
        f"{DOC_NOTES}:31, documentation/json/4.format.adoc:179-205, 208-223",
        ("timestamp", "timestamp-tz", "timestamp-metadata"),
        "already read with 1.9.0; same output in 2.0",
    ),
    Change(
        "unified (lower-case) transaction attribute names",
        f"{DOC_NOTES}:30",
        ("attributes",),
        "already printed so with 1.9.0",
    ),
    Change(
        "service_state gauge",
        f"{DOC_NOTES}:21, documentation/metrics/metrics.adoc:121-150",
        (),
        "served with both dialects when metrics is on",
    ),
)


def _uses(fmt: Mapping[str, Any], keys: tuple[str, ...]) -> list[str]:
    used = []
    for key in keys:
        name, _, value = key.partition("=")
        if name in fmt and (not value or str(fmt[name]) == value):
            used.append(key)
    return used


def explain_upgrade(data: Mapping[str, Any]) -> list[str]:
    """What each 1.9 -> 2.0 change means for the decoded 1.9 config ``data``, one line each."""
    sources = data.get("source")
    source = sources[0] if isinstance(sources, list) and sources and isinstance(sources[0], dict) else {}
    fmt = source.get("format")
    if not isinstance(fmt, dict):
        fmt = {}
    lines = []
    for change in CHANGES:
        meaning = change.meaning
        if not meaning:
            moved = [key for key in ("memory", "state", "metrics") if key in source]
            meaning = (
                f"source[0].{', source[0].'.join(moved)}: ignored (or refused) with 1.9.0, refused with 2.0.0 "
                "(30150); `config upgrade` moves them to the top level"
                if moved
                else "this config has them at the top level already: no change"
            )
        used = _uses(fmt, change.keys)
        if change.keys:
            meaning += f" (this config: {', '.join(used)})" if used else " (not used by this config)"
        lines.append(f"1.9 -> 2.0: {change.note} [{change.doc}]: {meaning}")
    return lines
