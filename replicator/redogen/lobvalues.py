"""LOB values of scenario rows before they become locators (the locators and pages: lobs.py).

Below the column types (coltypes.py parses a LOB type name and encodes a scenario value with
these), so the redo emission in lobs.py can build on the column types without a circle.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

from replicator import events as ev
from replicator.errors import ConfigError
from replicator.redogen.encode import encode_text

MULTIBYTE_CHARSETS: Final = frozenset({871, 873})  # UTF8, AL32UTF8: CLOB data is stored as AL16UTF16
EMPTY_MARKERS: Final = frozenset({"EMPTY_CLOB()", "EMPTY_BLOB()"})
SECUREFILE, BASICFILE, BASICFILE_OUT_OF_ROW = 0, 1, 2  # ColumnType.lob_storage


class LobData(bytes):
    """A LOB value as stored (AL16UTF16 / raw bytes), before it becomes a locator."""


_STORAGE: Final = {
    "": SECUREFILE,
    "SECUREFILE": SECUREFILE,
    "BASICFILE": BASICFILE,
    "BASICFILE ENABLE STORAGE IN ROW": BASICFILE,
    "BASICFILE DISABLE STORAGE IN ROW": BASICFILE_OUT_OF_ROW,
}


def parse_lob_type(base: str, text: str) -> tuple[int, int, int, int] | None:
    """(type code, COL$ length, charset form, storage) of a LOB type name, None for other types.

    The name may be followed by ``SECUREFILE`` (the default), ``BASICFILE`` or
    ``BASICFILE DISABLE STORAGE IN ROW``.
    """
    name, _, rest = base.partition(" ")
    found = {"CLOB": (ev.TYPE_CLOB, 4000, 1), "NCLOB": (ev.TYPE_CLOB, 4000, 2), "BLOB": (ev.TYPE_BLOB, 4000, 0)}.get(
        name
    )
    storage = _STORAGE.get(rest)
    if found is None or storage is None:
        return None
    return (*found, storage)


def _expand(value: Any, blob: bool) -> Any:
    """``{prefix: P, repeat: X, length: N}`` builds big values like SQL ``RPAD(P, N, X)``.

    Lengths count characters, or bytes for a BLOB (whose P and X are hex).
    """
    if isinstance(value, dict):
        pattern, length, prefix = value.get("repeat"), value.get("length"), value.get("prefix", "")
        if pattern is None or not isinstance(length, int) or length < 0 or set(value) - {"prefix", "repeat", "length"}:
            raise ConfigError(f"LOB value {value!r}: expected {{prefix: ..., repeat: ..., length: N}}")
        if blob:
            return _rpad(bytes.fromhex(prefix), bytes.fromhex(pattern), length)
        return _rpad(str(prefix), str(pattern), length)
    return value


_Text = TypeVar("_Text", str, bytes)


def _rpad(head: _Text, unit: _Text, length: int) -> _Text:
    """SQL ``RPAD(head, length, unit)``."""
    if not unit:
        raise ConfigError("LOB value: `repeat` must not be empty")
    return (head + unit * ((length - len(head)) // len(unit) + 1))[:length]


def encode_lob(
    type_code: int, charset_form: int, value: Any, charsets: tuple[int, int], db_multibyte: bool
) -> bytes | None:
    """A scenario value of a LOB column of ``type_code`` and ``charset_form`` -> :class:`LobData`
    (None for NULL and for '' as Oracle does)."""
    blob = type_code == ev.TYPE_BLOB
    value = _expand(value, blob)
    if isinstance(value, str) and value.upper() in EMPTY_MARKERS:
        return LobData(b"")
    if blob:
        raw = bytes.fromhex(value) if isinstance(value, str) else bytes(value)
        return LobData(raw) if raw else None
    text = str(value)
    if not text:
        return None
    if charset_form == 2 or db_multibyte:
        return LobData(encode_text(text, 2000 if charset_form != 2 else charsets[1]))
    return LobData(encode_text(text, charsets[0]))
