"""Output formats by name: ``json`` and ``debezium`` (JSON with a preset), plus registrations.

The config layer turns the ``format`` section into :class:`FormatOptions`, with the
``debezium`` preset already applied (``replicator.config.format``, olr-interfaces.md §2.8).
:func:`create_format` builds the format; an unknown name is configuration error 30001
listing the valid names.
"""

from __future__ import annotations

from collections.abc import Callable

from replicator.errors import ConfigError
from replicator.formats.base import FLAG_SCHEMALESS, Format, FormatOptions

FormatFactory = Callable[[FormatOptions], Format]

def _json_format(options: FormatOptions) -> Format:
    from replicator.formats.olr_json import OlrJsonFormat

    return OlrJsonFormat(options)


_FACTORIES: dict[str, FormatFactory] = {"json": _json_format, "debezium": _json_format}


def register_format(name: str, factory: FormatFactory) -> None:
    """Make ``factory`` available as format type ``name`` (e.g. protobuf, once written)."""
    _FACTORIES[name] = factory


def format_names() -> list[str]:
    """The registered format type names."""
    return sorted(_FACTORIES)


def create_format(options: FormatOptions) -> Format:
    """Build the format named by ``options.type``; raises :class:`ConfigError` (30001)."""
    factory = _FACTORIES.get(options.type)
    if factory is None:
        expected = ", ".join(f'"{name}"' for name in format_names())
        raise ConfigError(f'bad JSON, invalid "format" value: {options.type}, expected one of: '
                          f"{expected}", 30001)
    if options.message & 1 and options.message & 0xC:
        raise ConfigError(f'bad JSON, invalid "message" value: {options.message}, expected: '
                          "BEGIN/COMMIT skip flags (4/8) unset together with FULL mode (1)", 30001)
    if options.flags & FLAG_SCHEMALESS and options.column != 0:
        raise ConfigError(f'bad JSON, invalid "column" value: {options.column}, expected: not '
                          f"used when flags has set schemaless mode (flags: {options.flags})", 30001)
    return factory(options)
