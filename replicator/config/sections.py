"""The global sections of OpenLogReplicator.json: ``memory``, ``metrics`` and ``state``.

All three are checked for unknown keys before ``disable-checks`` is read, so their key
check is always strict (olr-interfaces.md §1.0). Their defaults are the code-side values
(§5.1, §6, §7).
"""

from typing import Annotated, Any, ClassVar

from pydantic import model_validator

from replicator.config.fields import (
    U64,
    After,
    OlrModel,
    bad_value,
    choice,
    int_or,
    max_len,
    olr_error,
    olr_message,
    without,
)

MEMORY_CHUNK_MIN_MB = 32


class MemoryConfig(OlrModel):
    """``memory``: the transaction/buffer memory pool in MB (docs/operations.md, sizing memory).

    After validation every attribute holds its effective value: defaults that depend on
    ``max-mb`` (read-buffer-max, write-buffer-max, swap) are recomputed when ``max-mb``
    is given and they are not.
    """

    STRICT_KEYS: ClassVar[bool] = True

    min_mb: U64 = 32
    max_mb: U64 = 2048
    unswap_buffer_min_mb: U64 = 4
    swap_mb: U64 = 2048 * 3 // 4
    read_buffer_min_mb: U64 = 4
    read_buffer_max_mb: U64 = 128
    write_buffer_min_mb: U64 = 4
    write_buffer_max_mb: U64 = 2048
    swap_path: Annotated[str | None, max_len(256)] = "."

    @classmethod
    def prune(cls, data: dict[str, Any]) -> dict[str, Any]:
        """``swap-path`` is only read when swapping is on."""
        if int_or(data.get("swap-mb"), 1) == 0:
            return without(data, "swap-path")
        return data

    @model_validator(mode="after")
    def _limits(self) -> "MemoryConfig":
        # OLR checks in this order and only what was given; a default derived from max-mb
        # is never range-checked (e.g. read-buffer-max-mb may end below read-buffer-min-mb).
        given = set(self.model_fields_set)
        if self.min_mb < MEMORY_CHUNK_MIN_MB:
            raise bad_value("min-mb", self.min_mb, f"at least {MEMORY_CHUNK_MIN_MB}")
        if "max_mb" in given:
            if self.max_mb < self.min_mb:
                raise bad_value("max-mb", self.max_mb, f'at least like "min-mb" value ({self.min_mb})')
            if "read_buffer_max_mb" not in given:
                self.read_buffer_max_mb = min(self.max_mb // 8, 128)
            if "write_buffer_max_mb" not in given:
                self.write_buffer_max_mb = min(self.max_mb, 2048)
            if "swap_mb" not in given:
                self.swap_mb = self.max_mb * 3 // 4
        if "swap_mb" in given and self.swap_mb > self.max_mb - 4:
            raise olr_message(
                30001,
                f'bad JSON, invalid "swap-mb" value: {self.swap_mb}, expected maximum '
                f'"max-mb"-1 value ({self.max_mb - 4})',
                "swap-mb",
            )
        self._buffer_pair("read", given)
        self._buffer_pair("write", given)
        total = self.unswap_buffer_min_mb + self.read_buffer_min_mb + self.write_buffer_min_mb + 4
        if total > self.max_mb:
            raise olr_message(
                30001,
                'bad JSON, invalid "unswap-buffer-min-mb" + "read-buffer-min-mb" + "write-buffer-min-mb" + 4 '
                f"({self.unswap_buffer_min_mb} + {self.read_buffer_min_mb} + {self.write_buffer_min_mb} + 4) "
                f'is greater than "max-mb" value ({self.max_mb})',
                "unswap-buffer-min-mb",
            )
        return self

    def _buffer_pair(self, kind: str, given: set[str]) -> None:
        low_name, high_name = f"{kind}-buffer-min-mb", f"{kind}-buffer-max-mb"
        low: int = getattr(self, f"{kind}_buffer_min_mb")
        high: int = getattr(self, f"{kind}_buffer_max_mb")
        if f"{kind}_buffer_min_mb" in given:
            if low > self.max_mb:
                raise bad_value(low_name, low, f'not greater than "max-mb" value ({self.max_mb})')
            if low < 4:
                raise bad_value(low_name, low, "at least: 4")
        if f"{kind}_buffer_max_mb" in given:
            if high > self.max_mb:
                raise bad_value(high_name, high, f'not greater than "max-mb" value ({self.max_mb})')
            if high < low:
                raise bad_value(high_name, high, f'at least: "{low_name}" value ({low})')


def _metrics_type(value: str | None) -> str | None:
    if value is not None and value != "prometheus":
        raise olr_message(30001, f'bad JSON, invalid "type" value: "{value}", expected: one of {{"prometheus"}}')
    return value


def _bind_address(value: str | None) -> str | None:
    # OLR only fails when the exposer starts; checking here lets check-config say why.
    if value is None:
        return value
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise olr_error("range", field="bind", value=value, expected='"host:port" with a port of 0 .. 65535')
    return value


class MetricsConfig(OlrModel):
    """``metrics``: Prometheus exposition; disabled unless ``type`` is given (§7)."""

    STRICT_KEYS: ClassVar[bool] = True

    type: Annotated[str | None, max_len(256), After(_metrics_type)] = None
    bind: Annotated[str | None, max_len(256), After(_bind_address)] = None
    tag_names: Annotated[
        str,
        max_len(256),
        After(choice("tag-names", ("none", "filter", "sys", "all"), 'one of {"all", "filter", "none", "sys"}')),
    ] = "none"

    @classmethod
    def prune(cls, data: dict[str, Any]) -> dict[str, Any]:
        """Without ``type`` OLR reads nothing else of the section."""
        return data if "type" in data else {}

    @model_validator(mode="after")
    def _bind_needed(self) -> "MetricsConfig":
        if self.type is not None and self.bind is None:
            raise olr_error("not_found", field="bind")
        return self

    @property
    def enabled(self) -> bool:
        """True when metrics are to be served."""
        return self.type is not None


class StateConfig(OlrModel):
    """``state``: where checkpoint files live and how often they are written (§5.1)."""

    STRICT_KEYS: ClassVar[bool] = True

    type: Annotated[str, max_len(256), After(choice("type", ("disk",), 'one of {"disk"}'))] = "disk"
    path: Annotated[str, max_len(2048)] = "checkpoint"
    interval_s: U64 = 600
    interval_mb: U64 = 500
    keep_checkpoints: U64 = 100
    schema_force_interval: U64 = 20

    @classmethod
    def prune(cls, data: dict[str, Any]) -> dict[str, Any]:
        """[quirk] ``path`` is only read when ``type`` is given too."""
        return data if "type" in data else without(data, "path")
