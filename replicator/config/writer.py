"""``target[0].writer``: one model per writer type (olr-interfaces.md §1.9, §4).

Every type accepts the same 13 keys (OLR checks one list for all of them) and ignores the
ones that belong to other types. The pure parts of each writer's start-up checks live
here so a bad config fails before anything is opened: the file writer's output pattern
(30005/30006/30007), Kafka's property rules (30009/30010), the network ``host:port``
form (30008).
"""

import string
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from replicator.config.fields import (
    U64,
    Before,
    OlrModel,
    bad_value,
    empty_dict,
    in_range,
    max_len,
    olr_error,
    olr_message,
)
from replicator.errors import ConfigPathError

WRITER_TYPES = ("file", "kafka", "zeromq", "network", "discard")
WRITER_KEYS = frozenset(
    {
        "append",
        "max-file-size",
        "max-message-mb",
        "new-line",
        "output",
        "poll-interval-us",
        "properties",
        "queue-size",
        "timestamp-format",
        "topic",
        "type",
        "uri",
        "write-buffer-flush-size",
        # Extensions (not OpenLogReplicator keys): Kafka topic per table and key by primary key;
        # the stream writers' shared-token authentication, the network writer's TLS.
        "topic-per-table",
        "key-by-pk",
        "auth-token",
        "tls-cert",
        "tls-key",
    }
)
# Stream extensions and the writer types that read them. Another type refuses them (20003)
# instead of ignoring them as OLR's own keys are: a token on a writer that cannot check it,
# or TLS on ZeroMQ, would only look safe.
STREAM_EXTENSIONS = {"auth-token": ("network", "zeromq"), "tls-cert": ("network",), "tls-key": ("network",)}
MIN_TOKEN = 16  # characters of an auth-token: a guessable one protects nothing
MAX_KAFKA_MESSAGE_MB = 953


class WriterConfig(OlrModel):
    """Keys common to every writer."""

    EXTRA_KEYS: ClassVar[frozenset[str]] = WRITER_KEYS

    type: str
    poll_interval_us: Annotated[int, in_range(100, 3600000000)] = 100000
    queue_size: Annotated[int, in_range(1, 1000000)] = 65536

    @classmethod
    def allowed_keys(cls) -> frozenset[str]:
        """All writer types share OLR's single list of writer keys."""
        return WRITER_KEYS

    @model_validator(mode="before")
    @classmethod
    def _stream_extensions(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, owners in STREAM_EXTENSIONS.items():
                if key in data and data.get("type") not in owners:
                    raise olr_message(
                        20003,
                        f"'{key}' is read by the {' and '.join(owners)} writer only, not by type {data.get('type')}",
                        key,
                    )
        return data


def _auth_token(value: Any) -> Any:
    """``auth-token``: absent or null (no authentication), or a string of 16..256 characters."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise olr_error("not_string")
    if not MIN_TOKEN <= len(value) <= 256 or len(value.encode()) > 256:
        raise bad_value(
            "auth-token",
            "<hidden>",
            f"{MIN_TOKEN} to 256 characters (a long random string, e.g. from `openssl rand -hex 24`)",
        )
    return value


AuthToken = Annotated[str | None, Before(_auth_token)]


def zeromq_endpoint(uri: str) -> tuple[str, str, str]:
    """``(scheme, host, port)`` of a zeromq ``uri``: ``tcp://HOST:PORT`` or ``("ipc", PATH, "")``.

    ``HOST`` may be ``*`` (every interface) or ``[v6 address]``; ``PORT`` ``*`` (any free
    one) or a number. Raises ValueError for anything else (the writer speaks ZMTP over TCP
    and Unix sockets only).
    """
    if uri.startswith("ipc://") and uri[6:] and uri[6:] != "*":
        return "ipc", uri[6:], ""
    if uri.startswith("tcp://"):
        host, sep, port = uri[6:].rpartition(":")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        if sep and host and (port == "*" or (port.isdigit() and int(port) < 65536)):
            return "tcp", host, port
    raise ValueError(f"uri must be tcp://HOST:PORT (HOST may be *, PORT may be *) or ipc://PATH, not {uri!r}")


@dataclass(frozen=True, slots=True)
class OutputPattern:
    """A parsed file writer ``output``: ``directory/prefix<placeholder>suffix``.

    ``mode`` is ``num`` (%i, %Ni; ``fill`` digits), ``timestamp`` (%t), ``sequence``
    (%s) or ``fixed`` (no placeholder). ``directory`` is ``.`` when output has no ``/``.
    """

    directory: str
    prefix: str
    suffix: str
    mode: Literal["num", "timestamp", "sequence", "fixed"]
    fill: int = 0

    def name(self, middle: str = "") -> str:
        """The file path for a placeholder value (as OLR joins it: ``dir + "/" + name``)."""
        return f"{self.directory}/{self.prefix}{middle}{self.suffix}"


# Checked in this order; the first one found in the file name wins (§4.1).
_PLACEHOLDERS: tuple[tuple[str, str, int], ...] = (
    ("%i", "num", 0),
    *((f"%{n}i", "num", n) for n in range(2, 11)),
    ("%t", "timestamp", 0),
    ("%s", "sequence", 0),
)


def parse_output_pattern(output: str, append: int, max_file_size: int) -> OutputPattern:
    """Split ``output`` and check OLR's rules; raises ConfigPathError 30005/30006/30007."""
    directory, slash, mask = output.rpartition("/")
    if not slash:
        directory = "."
    pattern: OutputPattern | None = None
    for token, mode, fill in _PLACEHOLDERS:
        pos = mask.find(token)
        if pos >= 0:
            pattern = OutputPattern(directory, mask[:pos], mask[pos + len(token) :], mode, fill)  # type: ignore[arg-type]
            break
    if pattern is None:
        if "%" in mask:
            raise ConfigPathError(f"invalid value for 'output': {output}", 30005, path="output")
        if append == 0:
            raise ConfigPathError(
                f"output file is with no rotation: {output} - 'append' must be set to 1", 30006, path="append"
            )
        return OutputPattern(directory, mask, "", "fixed")
    if pattern.mode in ("num", "timestamp") and max_file_size == 0:
        raise ConfigPathError(
            f"output file is with no max file size: {output} - 'max-file-size' must be defined "
            "for output with rotation",
            30007,
            path="max-file-size",
        )
    return pattern


class FileWriterConfig(WriterConfig):
    """``type: file`` (§4.1). ``output`` absent or empty means stdout."""

    type: Literal["file"]
    output: Annotated[str | None, max_len(256)] = None
    max_file_size: U64 = 0
    timestamp_format: Annotated[str, max_len(256)] = "%F_%T"
    new_line: Annotated[int, in_range(0, 2)] = 1
    append: Annotated[int, in_range(0, 1, "one of {0, 1}")] = 1
    write_buffer_flush_size: Annotated[int, in_range(0, 1048576, uint=True)] = 1048576

    @model_validator(mode="after")
    def _output_rules(self) -> "FileWriterConfig":
        if self.output is None and self.max_file_size > 0:
            raise bad_value("output", "", f'to be set when "max-file-size" is set ({self.max_file_size})')
        if self.output:
            try:
                parse_output_pattern(self.output, self.append, self.max_file_size)
            except ConfigPathError as exc:
                raise olr_message(exc.code, exc.message, exc.path) from None
        return self

    @property
    def pattern(self) -> OutputPattern | None:
        """The parsed ``output``, or None for stdout."""
        if not self.output:
            return None
        return parse_output_pattern(self.output, self.append, self.max_file_size)

    @property
    def newline_bytes(self) -> bytes:
        """What is written after each message."""
        return (b"", b"\n", b"\r\n")[self.new_line]


def _properties(value: Any) -> Any:
    if not isinstance(value, dict):
        raise olr_error("not_object")
    for key in getattr(value, "duplicates", ()):
        raise olr_message(30009, f"Kafka property '{key}' is defined multiple times")
    for key, item in value.items():
        if not isinstance(item, str):
            raise olr_error("not_string", field=key)
    if "message.max.bytes" in value:
        raise olr_message(
            30010, "Kafka property 'message.max.bytes' is defined, but it is not allowed to be set by user"
        )
    return dict(value)


def _topic_template(value: Any) -> Any:
    """``topic-per-table``: a topic name with only ``{owner}`` and ``{table}`` placeholders."""
    if not isinstance(value, str):
        raise olr_error("not_string")
    try:
        names = {name for _, name, spec, conv in string.Formatter().parse(value) if name is not None}
        value.format(owner="O", table="T")
    except (ValueError, IndexError, KeyError):
        names = {"?"}
    if not value or names - {"owner", "table"}:
        raise bad_value("topic-per-table", value, "a topic name using only {owner} and {table} placeholders")
    return value


class KafkaWriterConfig(WriterConfig):
    """``type: kafka`` (§4.2): one topic, librdkafka ``properties``.

    Extensions: ``topic-per-table`` (e.g. ``cdc.{owner}.{table}``) sends row changes of
    each table to their own topic (begin/commit/DDL/checkpoint messages stay on
    ``topic``); ``key-by-pk`` 1 keys row messages by their primary key columns when the
    table has no filter ``tag``, so all changes of a row land in one partition, in order.
    """

    type: Literal["kafka"]
    max_message_mb: Annotated[int, in_range(1, MAX_KAFKA_MESSAGE_MB)] = 100
    topic: Annotated[str, max_len(256)]
    properties: Annotated[dict[str, str], Before(_properties)] = Field(default_factory=empty_dict)
    topic_per_table: Annotated[str | None, max_len(256), Before(_topic_template)] = None
    key_by_pk: Annotated[int, in_range(0, 1, "one of {0, 1}")] = 0

    def librdkafka_config(self) -> dict[str, str]:
        """The producer configuration OLR builds from ``properties``.

        Adds ``message.max.bytes`` = max-message-mb MiB; [quirk] a user-set ``client.id``
        or ``group.id`` is replaced with ``OpenLogReplicator``.
        """
        conf = dict(self.properties)
        conf["message.max.bytes"] = str(self.max_message_mb * 1024 * 1024)
        for key in ("client.id", "group.id"):
            if key in conf:
                conf[key] = "OpenLogReplicator"
        return conf


class NetworkWriterConfig(WriterConfig):
    """``type: network`` (§4.3): a TCP server at ``host:port``."""

    type: Literal["network"]
    uri: Annotated[str, max_len(256)]
    # Extension: clients must send this token in their first frame (see writers/network.py).
    auth_token: AuthToken = None
    # Extension: serve TLS with this certificate chain and key (PEM files).
    tls_cert: Annotated[str | None, max_len(4096)] = None
    tls_key: Annotated[str | None, max_len(4096)] = None

    @model_validator(mode="after")
    def _host_port(self) -> "NetworkWriterConfig":
        if ":" not in self.uri:
            raise olr_message(30008, f"uri is missing ':' in parameter: {self.uri}", "uri")
        return self

    @property
    def host(self) -> str:
        """The part before the first ``:``; an empty one means 127.0.0.1 (OLR: every interface)."""
        return self.uri.split(":", 1)[0] or "127.0.0.1"

    @property
    def port(self) -> str:
        """The part after the first ``:`` (a service name or number)."""
        return self.uri.split(":", 1)[1]


class ZeroMQWriterConfig(WriterConfig):
    """``type: zeromq`` (§4.3): a ZMQ_PAIR peer served at ``uri`` (``tcp://HOST:PORT`` or ``ipc://PATH``)."""

    type: Literal["zeromq"]
    uri: Annotated[str, max_len(256)]
    # Extension: clients must send this token as their ZMTP PLAIN password (see writers/zeromq.py).
    auth_token: AuthToken = None

    @model_validator(mode="after")
    def _endpoint(self) -> "ZeroMQWriterConfig":
        try:
            zeromq_endpoint(self.uri)
        except ValueError as exc:
            raise olr_message(30008, str(exc), "uri") from None
        return self


class DiscardWriterConfig(WriterConfig):
    """``type: discard`` (§4.4): formats everything and confirms it at once."""

    type: Literal["discard"]


AnyWriterConfig = Annotated[
    FileWriterConfig | KafkaWriterConfig | NetworkWriterConfig | ZeroMQWriterConfig | DiscardWriterConfig,
    Field(discriminator="type"),
]


def check_writer_object(value: Any) -> Any:
    """Before the union picks a model: ``writer`` must be an object with a known ``type``."""
    if not isinstance(value, dict):
        raise olr_error("not_object")
    if "type" not in value:
        raise olr_error("not_found", field="type")
    kind = value["type"]
    if not isinstance(kind, str):
        raise olr_error("not_string", field="type")
    if kind not in WRITER_TYPES:
        raise olr_error(
            "range",
            field="type",
            at="type",
            value=kind,
            expected='one of {"file", "kafka", "zeromq", "network", "discard"}',
        )
    return value
