"""``source[0].format``: output format options (olr-interfaces.md §1.4, §2).

The ``debezium`` type is JSON with a preset of options (§2.8); a key the user sets
explicitly still wins. :data:`DEBEZIUM_PRESET` and :func:`apply_format_preset` are the
single implementation of that preset in the project; formats receive the effective
values through :class:`replicator.formats.base.FormatOptions`.
"""

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import PrivateAttr, model_validator

from replicator.config.fields import U64, After, OlrModel, choice, in_range, max_len, olr_message

# OpenLogReplicator's types first, then the formats of other CDC tools (docs/formats.md).
OLR_FORMAT_TYPES = ("protobuf", "json", "debezium")
FORMAT_TYPES = (
    *OLR_FORMAT_TYPES,
    "debezium-envelope",
    "debezium-flatten",
    "debezium-smt",
    "canal",
    "shareplex",
    "oms-default",
    "oms-extended",
    "dataworks",
    "qlik",
    "dts-avro",
    "oms-avro",
    "avro",
)

# §2.8: what type "debezium" changes, by attribute name; explicit keys override it.
DEBEZIUM_PRESET: Mapping[str, int] = {
    "column": 2,  # everything present in redo, UPDATE not reduced
    "db": 3,  # container name in begin/DML/commit and DDL
    "interval_dts": 9,  # "D,HH:MM:SS.nnnnnnnnn"
    "interval_ytm": 4,  # "Y-M"
    "message": 2,  # add "num"
    "redo_thread": 1,
    "rid": 1,
    "schema_": 7,  # full column list on first use + repeated + obj
    "scn_type": 14,  # b_scn, scn in every message, e_scn
    "timestamp_metadata": 2,  # header tm in milliseconds
    "timestamp_type": 14,  # b_tm, tm in every message, e_tm
    "user_type": 15,
    "xid": 3,  # LogMiner byte order
}

# message bits (§1.4).
MESSAGE_FULL = 0x1
MESSAGE_SKIP_BEGIN = 0x4
MESSAGE_SKIP_COMMIT = 0x8


def apply_format_preset(format_type: str, values: Mapping[str, int], explicit: set[str]) -> dict[str, int]:
    """Return ``values`` with the ``format_type`` preset applied to non-explicit keys."""
    result = dict(values)
    if format_type == "debezium":
        for name, value in DEBEZIUM_PRESET.items():
            if name not in explicit:
                result[name] = value
    return result


def _message_bits(value: int) -> int:
    if value & MESSAGE_FULL and value & (MESSAGE_SKIP_BEGIN | MESSAGE_SKIP_COMMIT):
        raise olr_message(
            30001,
            f'bad JSON, invalid "message" value: {value}, expected: BEGIN/COMMIT flag is unset '
            f"({MESSAGE_SKIP_BEGIN}/{MESSAGE_SKIP_COMMIT}) together with FULL mode ({MESSAGE_FULL})",
        )
    return value


_FORMAT_TYPE_CHECK = choice(
    "format", FORMAT_TYPES, ", ".join(f'"{name}"' for name in FORMAT_TYPES[:-1]) + f' or "{FORMAT_TYPES[-1]}"'
)
_ONE_OF_0_1 = "one of {0, 1}"
BINARY_HANDLING_MODES = ("bytes", "base64", "base64-url-safe", "hex")
_BINARY_MODE_CHECK = choice(
    "binary-handling-mode", BINARY_HANDLING_MODES, ", ".join(f'"{mode}"' for mode in BINARY_HANDLING_MODES)
)
_NOT_INT_OPTIONS = frozenset({"type", "avro_schema_path", "binary_handling_mode"})
_ONE_OF_0_15 = "one of {0, 15}"  # [quirk] OLR's text for the 0..15 bitmasks below


class FormatConfig(OlrModel):
    """The ``format`` section; attributes hold effective values (preset applied).

    Declared in the order OLR checks the keys, so the first error reported is the same.
    ``explicit_keys`` lists the attributes the user set (before the preset).
    """

    type: Annotated[str, max_len(256), After(_FORMAT_TYPE_CHECK)]
    db: Annotated[int, in_range(0, 3)] = 0
    attributes: Annotated[int, in_range(0, 7)] = 0
    interval_dts: Annotated[int, in_range(0, 10, uint=True)] = 0
    interval_ytm: Annotated[int, in_range(0, 4, uint=True)] = 0
    message: Annotated[int, in_range(0, 31, uint=True), After(_message_bits)] = 0
    rid: Annotated[int, in_range(0, 1, _ONE_OF_0_1, uint=True)] = 0
    redo_thread: Annotated[int, in_range(0, 1, uint=True)] = 0
    xid: Annotated[int, in_range(0, 3, uint=True)] = 0
    timestamp: Annotated[int, in_range(0, 15, uint=True)] = 0
    timestamp_metadata: Annotated[int, in_range(0, 15, uint=True)] = 0
    timestamp_tz: Annotated[int, in_range(0, 11, uint=True)] = 0
    timestamp_type: Annotated[int, in_range(0, 15, _ONE_OF_0_15)] = 0
    user_type: Annotated[int, in_range(0, 15, _ONE_OF_0_15)] = 0
    char: Annotated[int, in_range(0, 3, uint=True)] = 0
    scn: Annotated[int, in_range(0, 1, _ONE_OF_0_1, uint=True)] = 0
    scn_type: Annotated[int, in_range(0, 15, _ONE_OF_0_15)] = 0
    unknown: Annotated[int, in_range(0, 1, _ONE_OF_0_1, uint=True)] = 0
    schema_: Annotated[int, in_range(0, 7, uint=True)] = 0
    column: Annotated[int, in_range(0, 2, uint=True)] = 0
    unknown_type: Annotated[int, in_range(0, 1, _ONE_OF_0_1, uint=True)] = 0
    flush_buffer: U64 = 1048576
    # Extension (not an OLR key): where the `avro` format writes its schema files.
    avro_schema_path: Annotated[str, max_len(4096)] = ""
    # Extensions for the debezium-* formats, after Debezium's `binary.handling.mode` and
    # `tombstones.on.delete` (docs/formats.md).
    binary_handling_mode: Annotated[str, After(_BINARY_MODE_CHECK)] = "bytes"
    tombstones_on_delete: Annotated[int, in_range(0, 1, _ONE_OF_0_1, uint=True)] = 1
    # Extension: checkpoint messages carry the digests of the changes since the previous one
    # (replicator.formats.olr_digest); OpenLogReplicator JSON with source flag 0x1000 only.
    checkpoint_digests: Annotated[int, in_range(0, 1, _ONE_OF_0_1, uint=True)] = 0

    _explicit: frozenset[str] = PrivateAttr(default=frozenset())

    @model_validator(mode="after")
    def _preset(self) -> "FormatConfig":
        self._explicit = frozenset(self.model_fields_set)
        values = apply_format_preset(self.type, self.option_values(), set(self._explicit))
        for name, value in values.items():
            if getattr(self, name) != value:
                setattr(self, name, value)
        return self

    @property
    def explicit_keys(self) -> frozenset[str]:
        """Attribute names given in the file (``schema_`` for ``schema``)."""
        return self._explicit

    def option_values(self) -> dict[str, int]:
        """The integer options by attribute name (everything except ``type``)."""
        return {name: getattr(self, name) for name in type(self).model_fields if name not in _NOT_INT_OPTIONS}

    def to_options_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`~replicator.formats.base.FormatOptions`."""
        values: dict[str, Any] = {name.rstrip("_"): value for name, value in self.option_values().items()}
        values["type"] = self.type
        values["avro_schema_path"] = self.avro_schema_path
        values["binary_handling_mode"] = self.binary_handling_mode
        return values
