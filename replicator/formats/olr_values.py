"""Column value renderers of the OpenLogReplicator JSON format, one per Oracle type.

:func:`value_renderer` picks, once per column, a closure ``bytes -> b'"NAME":value'`` with
every format option already bound (char, timestamp, timestamp-tz, interval codes, unknown,
unknown-type, db time zone). Values OLR cannot decode print as ``"?"`` (and are logged as
warning 60002 with `unknown` = 1); types it does not support are left out unless
`unknown-type` is 1. LOBs are printed only in the after image, as OLR does.
"""

from __future__ import annotations

from collections.abc import Callable

from replicator import log
from replicator.events import (
    TYPE_BINARY_DOUBLE,
    TYPE_BINARY_FLOAT,
    TYPE_BLOB,
    TYPE_BOOLEAN,
    TYPE_CHAR,
    TYPE_CLOB,
    TYPE_DATE,
    TYPE_INTERVAL_DS,
    TYPE_INTERVAL_YM,
    TYPE_JSON,
    TYPE_NUMBER,
    TYPE_RAW,
    TYPE_TIMESTAMP,
    TYPE_TIMESTAMP_LTZ,
    TYPE_TIMESTAMP_TZ,
    TYPE_UROWID,
    TYPE_VARCHAR2,
    Column,
    Table,
)
from replicator.flags import FLAG_EXPERIMENTAL_XMLTYPE
from replicator.formats.base import FormatOptions
from replicator.formats.escape import escape_bytes
from replicator.values.charset import CharsetError, column_charset_name, get_charset
from replicator.values.datetime import decode_timestamp, decode_timestamp_tz
from replicator.values.floats import binary_double_text, binary_float_text
from replicator.values.interval import interval_ds_renderer, interval_ym_renderer
from replicator.values.lob import unavailable
from replicator.values.number import number_text
from replicator.values.raw import boolean_text
from replicator.values.rowid import urowid_text
from replicator.values.timefmt import timestamp_renderer, timestamp_tz_renderer

Fragment = Callable[[bytes], "bytes | None"]
_FLAG_JSON_HEX = 0x20000  # source.flags: output the JSON data type as hex (experimental)


def value_renderer(
    prefix: bytes, column: Column, type_code: int, table: Table, options: FormatOptions, after: bool
) -> Fragment | None:
    """Fragment builder for a non-null value of ``column`` (None: OLR prints nothing).

    ``prefix`` is the ready ``"NAME":``; ``type_code`` is the type after the stored-as-LOB
    mapping; ``after`` says which image the renderer is for (LOBs only print in after).
    """
    unknown = _unknown_fragment(prefix, column.name, options.unknown == 1)
    if type_code in (TYPE_VARCHAR2, TYPE_CHAR):
        return _string(prefix, column, table, options, False)
    if type_code == TYPE_CLOB:
        # OLR picks the character set from the dictionary type: an extended VARCHAR2 stored as
        # a LOB keeps the database set, a real CLOB of form 1 uses the national set.
        is_clob = column.type_code == TYPE_CLOB
        return _lob(_string(prefix, column, table, options, is_clob)) if after else None
    if type_code == TYPE_NUMBER:
        return _decoded(prefix, number_text, unknown, quote=False)
    if type_code == TYPE_RAW:
        return _hex(prefix)
    if type_code == TYPE_BLOB:
        if not after:
            return None
        if column.xml_type and options.flags & FLAG_EXPERIMENTAL_XMLTYPE:
            return _lob(_binary_xml(prefix, f"{table.owner}.{table.name}.{column.name}"))
        return _lob(_hex(prefix))
    if type_code == TYPE_JSON:
        return _lob(_hex(prefix)) if options.flags & _FLAG_JSON_HEX else None
    if type_code in (TYPE_DATE, TYPE_TIMESTAMP, TYPE_TIMESTAMP_LTZ):
        offset = options.db_timezone if type_code == TYPE_TIMESTAMP_LTZ else 0
        return _timestamp(prefix, offset, timestamp_renderer(options.timestamp), unknown)
    if type_code == TYPE_TIMESTAMP_TZ:
        return _timestamp_tz(prefix, timestamp_tz_renderer(options.timestamp_tz), unknown)
    if type_code == TYPE_BINARY_FLOAT:
        return _sized(prefix, 4, binary_float_text, unknown)
    if type_code == TYPE_BINARY_DOUBLE:
        return _sized(prefix, 8, binary_double_text, unknown)
    if type_code == TYPE_INTERVAL_YM:
        return _decoded(prefix, interval_ym_renderer(options.interval_ytm), unknown, quote=False)
    if type_code == TYPE_INTERVAL_DS:
        return _decoded(prefix, interval_ds_renderer(options.interval_dts), unknown, quote=False)
    if type_code == TYPE_BOOLEAN:
        return _decoded(prefix, boolean_text, unknown, quote=False)
    if type_code == TYPE_UROWID:
        return _decoded(prefix, urowid_text, unknown, quote=True)
    # LONG, LONG RAW, XMLTYPE and anything else OLR does not decode.
    return unknown if options.unknown_type == 1 else None


def _lob(render: Fragment) -> Fragment:
    """A LOB value the transaction's redo could not assemble prints nothing (as in OLR)."""
    return lambda data: None if unavailable(data) else render(data)


def _unknown_fragment(prefix: bytes, name: str, dump: bool) -> Fragment:
    """``"NAME":"?"``, logging warning 60002 with the value's hex when `unknown` is 1."""
    fragment = prefix + b'"?"'
    if not dump:
        return lambda data: fragment

    def unknown(data: bytes) -> bytes:
        log.warning(60002, f"unknown value (column: {name}): {len(data)} - {data.hex(' ')}")
        return fragment

    return unknown


def _decoded(prefix: bytes, decode: Callable[[bytes], str | None], unknown: Fragment, quote: bool) -> Fragment:
    """Renderer for decoders returning JSON text (or plain text to quote), None = unknown."""

    def render(data: bytes) -> bytes | None:
        text = decode(data)
        if text is None:
            return unknown(data)
        return prefix + (b'"' + text.encode("ascii") + b'"' if quote else text.encode("ascii"))

    return render


def _sized(prefix: bytes, size: int, decode: Callable[[bytes], str], unknown: Fragment) -> Fragment:
    """Renderer for fixed-size binary numbers; any other size is an unknown value."""
    return lambda data: prefix + decode(data).encode("ascii") if len(data) == size else unknown(data)


def _hex(prefix: bytes) -> Fragment:
    return lambda data: prefix + b'"' + data.hex().encode("ascii") + b'"'


def _binary_xml(prefix: bytes, where: str) -> Fragment:
    """Binary XMLTYPE (CSX in a BLOB) with flag 0x10000: OLR decodes it with the XDB token
    tables; the replicator does not, and prints what OLR prints when decoding fails: the
    raw bytes as hex, after warning 60036 (once per column)."""
    render = _hex(prefix)

    def fragment(data: bytes) -> bytes | None:
        log.warn_once(
            60036, where, f"incorrect XML data: binary XMLTYPE is not decoded, printed as hex (column: {where})"
        )
        return render(data)

    return fragment


def _timestamp(prefix: bytes, offset: int, render: Callable[[int, int], str], unknown: Fragment) -> Fragment:
    def fragment(data: bytes) -> bytes | None:
        decoded = decode_timestamp(data, offset)
        if decoded is None:
            return unknown(data)
        return prefix + render(*decoded).encode("ascii")

    return fragment


def _timestamp_tz(prefix: bytes, render: Callable[[int, int, str], str], unknown: Fragment) -> Fragment:
    def fragment(data: bytes) -> bytes | None:
        decoded = decode_timestamp_tz(data)
        if decoded is None:
            return unknown(data)
        return prefix + render(*decoded).encode("ascii")

    return fragment


def _string(prefix: bytes, column: Column, table: Table, options: FormatOptions, is_clob: bool) -> Fragment:
    """Character data under the `char` option: 1 = no mapping, 2 = hex (never for SYS tables)."""
    as_hex = bool(options.char & 2) and not table.system
    if options.char & 1:
        if as_hex:
            return _hex(prefix)
        return lambda data: prefix + b'"' + escape_bytes(data) + b'"'
    try:
        name = column_charset_name(column.charset_form, column.charset_id, is_clob, table.charset, table.ncharset)
        to_utf8 = get_charset(name).to_utf8
    except CharsetError as error:
        failure = error

        def missing(data: bytes) -> bytes:
            raise failure

        return missing
    if as_hex:
        return lambda data: prefix + b'"' + to_utf8(data).hex().encode("ascii") + b'"'
    return lambda data: prefix + b'"' + escape_bytes(to_utf8(data)) + b'"'
