"""Output formats by name: ``json`` and ``debezium`` (JSON with a preset), the formats of other
CDC tools (Debezium, Canal, SharePlex, OMS, DataWorks, Qlik, DTS Avro, Avro; docs/formats.md),
plus registrations.

The config layer turns the ``format`` section into :class:`FormatOptions`, with the
``debezium`` preset already applied (``replicator.config.format``, olr-interfaces.md §2.8).
:func:`create_format` builds the format; an unknown name is configuration error 30001
listing the valid names.
"""

from __future__ import annotations

from collections.abc import Callable

from replicator.errors import ConfigError
from replicator.flags import FLAG_SCHEMALESS
from replicator.formats.base import Format, FormatOptions

FormatFactory = Callable[[FormatOptions], Format]


def _json_format(options: FormatOptions) -> Format:
    from replicator.formats.olr_json import OlrJsonFormat

    return OlrJsonFormat(options)


def _protobuf_format(options: FormatOptions) -> Format:
    from replicator.formats.protobuf import ProtobufFormat

    return ProtobufFormat(options)


_FACTORIES: dict[str, FormatFactory] = {"json": _json_format, "debezium": _json_format, "protobuf": _protobuf_format}

# The formats of other CDC tools (docs/formats.md): type name -> (module, class, keyword args).
# Imported only when selected, so fastavro loads only for the Avro formats.
_OTHER_FORMATS: dict[str, tuple[str, str, dict[str, object]]] = {
    "debezium-envelope": ("debezium", "DebeziumFormat", {"mode": "envelope"}),
    "debezium-flatten": ("debezium", "DebeziumFormat", {"mode": "flatten"}),
    "debezium-smt": ("debezium", "DebeziumFormat", {"mode": "smt"}),
    "canal": ("canal", "CanalFormat", {}),
    "shareplex": ("shareplex", "SharePlexFormat", {}),
    "oms-default": ("oms_default", "OmsDefaultFormat", {}),
    "oms-extended": ("oms_default", "OmsDefaultFormat", {"extended": True}),
    "dataworks": ("dataworks", "DataWorksFormat", {}),
    "qlik": ("qlik", "QlikFormat", {}),
    "dts-avro": ("dts_avro", "DtsAvroFormat", {}),
    "oms-avro": ("dts_avro", "DtsAvroFormat", {}),
    "avro": ("avro", "AvroFormat", {}),
}


def _other_format(name: str) -> FormatFactory:
    module_name, class_name, kwargs = _OTHER_FORMATS[name]

    def factory(options: FormatOptions) -> Format:
        import importlib

        module = importlib.import_module(f"replicator.formats.{module_name}")
        return getattr(module, class_name)(options, **kwargs)  # type: ignore[no-any-return]

    return factory


for _name in _OTHER_FORMATS:
    _FACTORIES[_name] = _other_format(_name)


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
        raise ConfigError(f'bad JSON, invalid "format" value: {options.type}, expected one of: {expected}', 30001)
    if options.message & 1 and options.message & 0xC:
        raise ConfigError(
            f'bad JSON, invalid "message" value: {options.message}, expected: '
            "BEGIN/COMMIT skip flags (4/8) unset together with FULL mode (1)",
            30001,
        )
    if options.flags & FLAG_SCHEMALESS and options.column != 0:
        raise ConfigError(
            f'bad JSON, invalid "column" value: {options.column}, expected: not '
            f"used when flags has set schemaless mode (flags: {options.flags})",
            30001,
        )
    return factory(options)
