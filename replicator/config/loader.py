"""Reading and validating OpenLogReplicator.json, and OLR-style error messages.

:func:`parse_config` is pure (a dict in, a :class:`Config` or a
:class:`~replicator.errors.ConfigPathError` out). :func:`load_config` reads the file with
OLR's size and syntax rules. :func:`explain_config` lists every problem it can find, for
``replicator check-config``. No pydantic error text ever reaches the user: each error is
rebuilt from its ``olr`` context (see :mod:`replicator.config.fields`).
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from replicator.config.dialect import DIALECT, DIALECT_19, DIALECT_OF_VERSION, dialect_of, explain_upgrade
from replicator.config.fields import KEYS
from replicator.config.model import Config
from replicator.config.writer import WRITER_TYPES
from replicator.errors import ConfigError, ConfigPathError, RuntimeFailure
from replicator.flags import DISABLE_CHECKS_JSON_TAGS

CONFIG_FILE_MAX_SIZE = 1048576
DEFAULT_NAME = "OpenLogReplicator.json"

# Messages of OLR's typed getters, by error kind (all 20003).
_FIELD_MESSAGES = {
    "not_found": "not found",
    "not_u64": "is not an unsigned 64-bit number",
    "not_uint": "is not an unsigned number",
    "not_string": "is not a string",
    "not_object": "is not an object",
    "not_array": "is not an array",
}
# pydantic's own error types that can still occur, mapped to the kinds above.
_PYDANTIC_KINDS = {
    "missing": "not_found",
    "model_type": "not_object",
    "model_attributes_type": "not_object",
    "dict_type": "not_object",
    "list_type": "not_array",
    "string_type": "not_string",
    "int_type": "not_u64",
    "literal_error": "not_string",
}


class _JsonObject(dict[str, Any]):
    """A JSON object that remembers duplicated keys (kept: the first, like rapidjson)."""

    duplicates: tuple[str, ...] = ()


# Keys holding credentials: their values are left out of every error message.
SECRET_WORDS = ("password", "passphrase", "secret")


def _object_pairs(pairs: list[tuple[str, Any]]) -> _JsonObject:
    obj = _JsonObject()
    dups: list[str] = []
    for key, value in pairs:
        if key in obj:
            dups.append(key)
        else:
            obj[key] = value
    obj.duplicates = tuple(dups)
    return obj


def _no_constant(name: str) -> Any:
    raise ValueError(f"Invalid value {name}")


def _key_mode(data: Any) -> str:
    """'relaxable' when reader.disable-checks has bit 8 (a peek before validation)."""
    try:
        checks = data["source"][0]["reader"]["disable-checks"]
    except (KeyError, IndexError, TypeError):
        return "strict"
    if (
        isinstance(checks, int)
        and not isinstance(checks, bool)
        and 0 <= checks <= 15
        and checks & DISABLE_CHECKS_JSON_TAGS
    ):
        return "relaxable"
    return "strict"


def validation_context(data: Any, keys: str) -> dict[str, str]:
    """The pydantic context a decoded config is validated with: the key mode and its dialect."""
    return {KEYS: keys, DIALECT: dialect_of(data)}


def _path(loc: tuple[int | str, ...]) -> str:
    parts: list[str] = []
    for i, item in enumerate(loc):
        if isinstance(item, int):
            parts.append(f"[{item}]")
        elif i > 0 and loc[i - 1] == "writer" and item in WRITER_TYPES:
            continue  # the discriminated union adds the writer type to the location
        else:
            parts.append(("." if parts else "") + item)
    return "".join(parts)


def _join(path: str, key: str | None) -> str:
    if not key or path == key or path.endswith("." + key):
        return path
    return f"{path}.{key}" if path else key


def convert_error(err: ErrorDetails, filename: str = DEFAULT_NAME) -> ConfigPathError:
    """Turn one pydantic error into OLR's message, code and the key path."""
    ctx: dict[str, Any] = dict(err.get("ctx") or {})
    kind = ctx.get("kind") if err["type"] == "olr" else _PYDANTIC_KINDS.get(err["type"], "message")
    loc = tuple(err["loc"])
    path = _path(loc)
    name = ctx.get("field")
    if name is None:
        name = f"{_path(loc[-2:-1])}[{loc[-1]}]" if loc and isinstance(loc[-1], int) else str(loc[-1]) if loc else ""
    prefix = f"file: {filename} - parse error, "
    if kind == "unexpected":
        key = ctx["keys"][0]
        full = _join(path, key)
        return ConfigPathError(f"{prefix}attribute {full} not expected", 20003, path=full)
    if kind == "range":
        field = ctx.get("field", name)
        return ConfigPathError(
            f'bad JSON, invalid "{field}" value: {ctx["value"]}, expected: {ctx["expected"]}',
            30001,
            path=_join(path, ctx.get("at")),
        )
    if kind == "message" and "code" in ctx:
        return ConfigPathError(ctx["message"], ctx["code"], path=_join(path, ctx.get("at")))
    if kind == "too_big":
        return ConfigPathError(f"{prefix}field {name} is too big ({ctx['value']})", 20003, path=path)
    if kind == "too_long":
        return ConfigPathError(
            f"{prefix}field {name} is too long ({ctx['length']}, max: {ctx['max']})", 20003, path=path
        )
    if kind in _FIELD_MESSAGES:
        if not loc and kind == "not_object":
            return ConfigPathError(f"{prefix}the document is not a JSON object", 20003)
        return ConfigPathError(
            f"{prefix}field {name} {_FIELD_MESSAGES[kind]}", 20003, path=_join(path, ctx.get("field"))
        )
    # Should not happen: every check raises an "olr" error; keep the message human anyway.
    return ConfigPathError(f"bad JSON, invalid value at {path or 'document'}", 30001, path=path)


def parse_config(data: Any, *, filename: str = DEFAULT_NAME) -> Config:
    """Validate a decoded OpenLogReplicator.json; raise ConfigPathError (first problem).

    ``filename`` only appears in messages. Nothing is opened.
    """
    try:
        return Config.model_validate(data, context=validation_context(data, _key_mode(data)))
    except ValidationError as exc:
        raise convert_error(exc.errors()[0], filename) from None


def read_config_text(path: str | os.PathLike[str]) -> Any:
    """Read and decode the file: 10001 unreadable, 10004 bad size, 20001 JSON syntax."""
    name = os.fspath(path)
    try:
        raw = Path(name).read_bytes()
    except OSError as exc:
        raise RuntimeFailure(f"file: {name} - open for read returned: {exc.strerror}", 10001) from None
    return decode_config_bytes(raw, name)


def decode_config_bytes(raw: bytes, name: str) -> Any:
    """Decode a config file's bytes (read once: a reload parses exactly what it hashed)."""
    if not 0 < len(raw) <= CONFIG_FILE_MAX_SIZE:
        raise ConfigError(f"file: {name} - wrong size: {len(raw)}", 10004)
    try:
        text = raw.decode("utf-8")
        return json.loads(text, object_pairs_hook=_object_pairs, parse_constant=_no_constant)
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"file: {name} offset: {exc.start} - parse error: Invalid encoding in string.", 20001
        ) from None
    except (json.JSONDecodeError, ValueError) as exc:
        pos = getattr(exc, "pos", 0)
        offset = len(text[:pos].encode("utf-8"))
        reason = getattr(exc, "msg", str(exc))
        raise ConfigError(f"file: {name} offset: {offset} - parse error: {reason}", 20001) from None


def load_config(path: str | os.PathLike[str]) -> Config:
    """Read, decode and validate a config file (the lock is the daemon's business)."""
    return parse_config(read_config_text(path), filename=os.fspath(path))


def _describe(err: ErrorDetails, filename: str) -> str:
    problem = convert_error(err, filename)
    ctx = err.get("ctx") or {}
    # The key path already says where; the file name prefix would only repeat it.
    message = problem.message.removeprefix(f"file: {filename} - parse error, ")
    text = f"{problem.path or '(document)'}: {message} [{problem.code:05d}]"
    if err["type"] == "olr" and ctx.get("kind") == "unexpected":
        keys = ", ".join(ctx["keys"])
        text = (
            f"{problem.path}: attribute(s) not expected: {keys}; allowed: {', '.join(ctx['allowed'])} "
            f"[{problem.code:05d}]"
        )
    elif "input" in err and err["type"] == "olr" and ctx.get("kind") not in ("range", "message", "not_found"):
        if _is_secret(err.get("loc", ())):
            text += " (value not shown: a secret)"
        else:
            text += f" (value: {json.dumps(err['input'], default=str)[:80]})"
    return text


def _is_secret(loc: tuple[int | str, ...]) -> bool:
    """True for a key whose value must never be shown (a password or key passphrase)."""
    return any(isinstance(part, str) and any(word in part.lower() for word in SECRET_WORDS) for part in loc)


def _drop_keys(data: Any, loc: tuple[int | str, ...], keys: list[str]) -> None:
    """Remove ``keys`` from the object at ``loc`` (a copy made by the caller)."""
    node = data
    for i, item in enumerate(loc):
        if i > 0 and loc[i - 1] == "writer" and item in WRITER_TYPES:
            continue
        node = node[item]
    for key in keys:
        node.pop(key, None)


def _unknown_key_errors(data: Any, mode: str) -> list[ErrorDetails]:
    """Every unknown-key error, at every depth: an unknown key stops the check of its
    object's children, so found keys are removed and the document checked again."""
    found: list[ErrorDetails] = []
    work = copy.deepcopy(data)
    for _ in range(16):  # deeper than any config; guards against a loop
        try:
            Config.model_validate(work, context=validation_context(work, mode))
            return found
        except ValidationError as exc:
            new = [e for e in exc.errors() if e["type"] == "olr" and (e.get("ctx") or {}).get("kind") == "unexpected"]
            if not new:
                return found
            for err in new:
                found.append(err)
                _drop_keys(work, tuple(err["loc"]), list(err["ctx"]["keys"]))
    return found


def explain_config(path: str | os.PathLike[str]) -> list[str]:
    """Every problem found in the file, one line each (empty when the config is valid).

    Each line names the key path, OLR's message (which carries the value and the allowed
    range for range errors) and the code. Unknown keys and value errors are collected in
    separate passes so one does not hide the other.
    """
    name = os.fspath(path)
    try:
        data = read_config_text(name)
    except (ConfigError, RuntimeFailure) as exc:
        return [f"(file): {exc.message} [{exc.code:05d}]"]
    errors = _unknown_key_errors(data, _key_mode(data))
    try:
        Config.model_validate(data, context=validation_context(data, "off"))
    except ValidationError as exc:
        errors.extend(exc.errors())
    lines: list[str] = []
    for err in errors:
        line = _describe(err, name)
        if line not in lines:
            lines.append(line)
    return lines


def explain_dialect(path: str | os.PathLike[str]) -> list[str]:
    """check-config's first lines: the file's config dialect and, for a 1.9 file, what each
    1.9 -> 2.0 change means for it. Empty when the file is unreadable or of no known version
    (:func:`explain_config` then says why)."""
    try:
        data = read_config_text(path)
    except (ConfigError, RuntimeFailure):
        return []
    version = data.get("version") if isinstance(data, dict) else None
    if not isinstance(version, str) or version not in DIALECT_OF_VERSION:
        return []
    dialect = DIALECT_OF_VERSION[version]
    lines = [f'dialect: OpenLogReplicator {dialect} ("version": "{version}")']
    if dialect == DIALECT_19:
        lines.extend(explain_upgrade(data))
    return lines
