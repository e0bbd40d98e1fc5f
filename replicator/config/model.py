"""The top level of OpenLogReplicator.json (olr-interfaces.md §1.1, §1.8)."""

from typing import Annotated, Any, ClassVar

from pydantic import Field, field_validator, model_validator

from replicator.config.dialect import DIALECT_OF_VERSION, VERSIONS
from replicator.config.fields import (
    After,
    Before,
    OlrModel,
    bad_value,
    in_range,
    int_or,
    max_len,
    olr_error,
    olr_message,
    without,
)
from replicator.config.sections import MemoryConfig, MetricsConfig, StateConfig
from replicator.config.source import SourceConfig
from replicator.config.writer import AnyWriterConfig, check_writer_object
from replicator.formats.base import FormatOptions

SCHEMA_VERSION = VERSIONS["1.9"]  # the version this project has always read (config dialect 1.9)


def _version(value: str) -> str:
    if value not in DIALECT_OF_VERSION:
        expected = " or ".join(VERSIONS.values())
        raise olr_message(30001, f'bad JSON, invalid "version" value: {value}, expected: {expected}')
    return value


class TargetConfig(OlrModel):
    """``target[0]``: names the source it serves and holds the writer. Its own keys are not checked."""

    CHECK_KEYS: ClassVar[bool] = False

    alias: Annotated[str, max_len(256)]
    source: Annotated[str, max_len(256)]
    writer: Annotated[AnyWriterConfig, Before(check_writer_object)]


def _exactly_one(field: str) -> Any:
    def check(value: Any) -> Any:
        if not isinstance(value, list):
            raise olr_error("not_array")
        if len(value) != 1:
            raise olr_message(30001, f'bad JSON, invalid "{field}" value: {len(value)} elements, expected: 1 element')
        return value

    return check


class Config(OlrModel):
    """A validated OpenLogReplicator.json.

    Attributes mirror the JSON keys in snake case (``log-level`` -> ``log_level``);
    ``source`` and ``target`` are lists of exactly one element, and :attr:`writer` is
    ``target[0].writer``.
    """

    STRICT_KEYS: ClassVar[bool] = True

    version: Annotated[str, max_len(256), After(_version)]
    dump_redo_log: Annotated[int, in_range(0, 2)] = 0
    dump_path: Annotated[str, max_len(256)] = "."
    dump_raw_data: Annotated[int, in_range(0, 1, "one of {0, 1}")] = 0
    log_level: Annotated[int, in_range(0, 4)] = 3
    trace: Annotated[int, in_range(0, 1048575)] = 0
    memory: MemoryConfig = Field(default_factory=MemoryConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    state: StateConfig = Field(default_factory=StateConfig)
    source: list[SourceConfig]
    target: list[TargetConfig]

    @classmethod
    def prune(cls, data: dict[str, Any]) -> dict[str, Any]:
        """``dump-path`` and ``dump-raw-data`` are only read when ``dump-redo-log`` > 0."""
        if int_or(data.get("dump-redo-log"), 0) == 0:
            return without(data, "dump-path", "dump-raw-data")
        return data

    @field_validator("source", mode="before")
    @classmethod
    def _one_source(cls, value: Any) -> Any:
        return _exactly_one("source")(value)

    @field_validator("target", mode="before")
    @classmethod
    def _one_target(cls, value: Any) -> Any:
        return _exactly_one("target")(value)

    @model_validator(mode="after")
    def _links(self) -> "Config":
        source = self.source[0]
        if source.transaction_max_mb > self.memory.max_mb:
            raise bad_value(
                "transaction-max-mb",
                source.transaction_max_mb,
                f'smaller than "max-mb" ({self.memory.max_mb})',
                "source[0].transaction-max-mb",
            )
        if self.target[0].source != source.alias:
            raise bad_value("source", self.target[0].source, 'value used earlier in "source" field', "target[0].source")
        return self

    @property
    def dialect(self) -> str:
        """The config dialect, "1.9" or "2.0" (replicator.config.dialect), from ``version``."""
        return DIALECT_OF_VERSION[self.version]

    @property
    def writer(self) -> AnyWriterConfig:
        """The writer of the single target."""
        return self.target[0].writer

    def format_options(self, source: SourceConfig | None = None) -> FormatOptions:
        """The :class:`FormatOptions` for ``source`` (default: the only source).

        Holds the effective format values (debezium preset applied), ``source.flags``,
        the database name and the ``reader.db-timezone`` offset when configured (the
        pipeline replaces it with the checkpoint's value otherwise); ``con_name`` is
        left empty for the pipeline to fill from the schema checkpoint.
        """
        src = self.source[0] if source is None else source
        return FormatOptions(
            **src.format.to_options_kwargs(),
            flags=src.flags,
            db_timezone=src.reader.db_timezone or 0,
            database=src.name,
        )
