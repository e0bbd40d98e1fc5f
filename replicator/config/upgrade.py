"""``replicator config upgrade``: rewrite a config between the 1.9 and 2.0 dialects.

1.9 -> 2.0 writes ``"version": "2.0.0"`` and moves ``memory``, ``state`` (and the
v1.9.0-release ``metrics``) out of ``source[0]`` to the top level, where 2.0 reads them
(replicator.config.dialect). A section found in both places is dropped from the source
when the two are equal and refused (30151) when they differ: 2.0 has one of each, and
picking one silently would change what the user configured. 2.0 -> 1.9 writes
``"1.9.0"``. The result is validated in the target dialect; a config that would not pass
there is refused with 30151 naming the first problem, and nothing is written.
"""

from __future__ import annotations

import json
from typing import Any

from replicator.config.dialect import DIALECT_20, DIALECT_OF_VERSION, NOT_EXPRESSIBLE, VERSIONS
from replicator.config.loader import parse_config
from replicator.errors import ConfigError, ConfigPathError

# Sections 2.0 reads at the top level only; v1.9.0 (the release) read them in source[0].
MOVED_SECTIONS = ("memory", "metrics", "state")


def _copy(data: Any) -> Any:
    return json.loads(json.dumps(data))


def _with_version(data: dict[str, Any], version: str) -> dict[str, Any]:
    """``data`` with ``version`` replaced in place in the key order (first when absent)."""
    if "version" not in data:
        return {"version": version, **data}
    return {key: (version if key == "version" else value) for key, value in data.items()}


def _move_sections(data: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    sources = data.get("source")
    if not (isinstance(sources, list) and sources and isinstance(sources[0], dict)):
        return data
    source = sources[0]
    lifted: dict[str, Any] = {}
    for key in MOVED_SECTIONS:
        if key not in source:
            continue
        value = source.pop(key)
        if key not in data:
            lifted[key] = value
            notes.append(f"moved source[0].{key} to the top level (1.9.0 ignores it there, 2.0.0 applies it)")
        elif data[key] == value:
            notes.append(f"dropped source[0].{key}: the same as the top-level {key}")
        else:
            raise ConfigPathError(
                f"source[0].{key} and the top-level {key} differ: a 2.0 config has one {key} section "
                f"(at the top level); keep the one you mean and run the upgrade again",
                NOT_EXPRESSIBLE,
                path=f"source[0].{key}",
            )
    if not lifted:
        return data
    # The lifted sections go just before "source", where a reader of the file expects them.
    result: dict[str, Any] = {}
    for key, value in data.items():
        if key == "source":
            result.update(lifted)
        result[key] = value
    return result


def upgrade_config(
    data: Any, to: str = DIALECT_20, *, filename: str = "OpenLogReplicator.json"
) -> tuple[Any, list[str]]:
    """Return ``data`` (a decoded config) rewritten for dialect ``to`` and notes on what changed.

    Raises :class:`~replicator.errors.ConfigError` 30151 when the result cannot be expressed
    in ``to`` (or the input declares no dialect this project knows).
    """
    if to not in VERSIONS:
        raise ConfigError(f"unknown config dialect {to!r}, expected one of: {', '.join(VERSIONS)}", 30002)
    version = data.get("version") if isinstance(data, dict) else None
    if not isinstance(version, str) or version not in DIALECT_OF_VERSION:
        raise ConfigError(
            f'file: {filename} - "version" is {json.dumps(version)}, expected one of: '
            f"{', '.join(VERSIONS.values())}: no dialect to convert from",
            NOT_EXPRESSIBLE,
        )
    notes: list[str] = []
    result = _copy(data)
    if DIALECT_OF_VERSION[version] == to:
        notes.append(f'already a {to} config ("version": "{version}")')
    else:
        result = _with_version(result, VERSIONS[to])
        notes.append(f'"version": "{version}" -> "{VERSIONS[to]}"')
    if to == DIALECT_20:  # a 2.0 file with sections in source[0] is mended too
        result = _move_sections(result, notes)
    try:
        parse_config(result, filename=filename)
    except ConfigPathError as exc:
        where = f" at {exc.path}" if exc.path else ""
        raise ConfigPathError(
            f"file: {filename} - cannot be expressed as a {to} config{where}: {exc.message} [{exc.code:05d}]",
            NOT_EXPRESSIBLE,
            path=exc.path,
        ) from None
    return result, notes


def render_config(data: Any) -> str:
    """The config as written by ``config upgrade`` (2-space JSON, keys in their order)."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
