"""OpenLogReplicator.json: pydantic models, validation with OLR's codes, and loading.

``parse_config(dict)`` is pure; ``load_config(path)`` reads the file first;
``explain_config(path)`` lists every problem for ``replicator check-config``.
The debezium format preset lives in :mod:`replicator.config.format` (the only copy).
"""

from replicator.config.filter import FilterConfig, TableRule, parse_xid
from replicator.config.format import DEBEZIUM_PRESET, FormatConfig, apply_format_preset
from replicator.config.loader import (
    CONFIG_FILE_MAX_SIZE,
    convert_error,
    explain_config,
    explain_dialect,
    load_config,
    parse_config,
    read_config_text,
)
from replicator.config.model import SCHEMA_VERSION, Config, TargetConfig
from replicator.config.sections import MemoryConfig, MetricsConfig, StateConfig
from replicator.config.source import DebugConfig, ReaderConfig, SourceConfig
from replicator.config.writer import (
    AnyWriterConfig,
    DiscardWriterConfig,
    FileWriterConfig,
    KafkaWriterConfig,
    NetworkWriterConfig,
    OutputPattern,
    WriterConfig,
    ZeroMQWriterConfig,
    parse_output_pattern,
)
from replicator.errors import ConfigError, ConfigPathError

__all__ = [
    "CONFIG_FILE_MAX_SIZE",
    "DEBEZIUM_PRESET",
    "SCHEMA_VERSION",
    "AnyWriterConfig",
    "Config",
    "ConfigError",
    "ConfigPathError",
    "DebugConfig",
    "DiscardWriterConfig",
    "FileWriterConfig",
    "FilterConfig",
    "FormatConfig",
    "KafkaWriterConfig",
    "MemoryConfig",
    "MetricsConfig",
    "NetworkWriterConfig",
    "OutputPattern",
    "ReaderConfig",
    "SourceConfig",
    "StateConfig",
    "TableRule",
    "TargetConfig",
    "WriterConfig",
    "ZeroMQWriterConfig",
    "apply_format_preset",
    "convert_error",
    "explain_config",
    "explain_dialect",
    "load_config",
    "parse_config",
    "parse_output_pattern",
    "parse_xid",
    "read_config_text",
]
