"""The writer registry and the discard writer."""

from __future__ import annotations

import pytest
from writer_helpers import Confirmed, msg, writer_config

from replicator.config import ConfigError
from replicator.writers import Writer, create_writer, register_writer, writer_class
from replicator.writers.discard import DiscardWriter
from replicator.writers.file import FileWriter
from replicator.writers.kafka_runs import native_producer


def test_create_file_and_discard(confirmed: Confirmed) -> None:
    assert isinstance(create_writer(writer_config(), confirmed), FileWriter)
    assert isinstance(create_writer(writer_config(type="discard"), confirmed), DiscardWriter)


@pytest.mark.parametrize(
    ("config", "class_name"),
    [
        ({"type": "kafka", "topic": "t"}, "KafkaRunWriter" if native_producer() is not None else "KafkaWriter"),
        ({"type": "network", "uri": "h:1"}, "NetworkWriter"),
        ({"type": "zeromq", "uri": "tcp://h:1"}, "ZeroMQWriter"),
    ],
)
def test_stream_and_kafka_writers_registered(confirmed: Confirmed, config: dict[str, str], class_name: str) -> None:
    writer = create_writer(writer_config(**config), confirmed)  # built, not connected: nothing opens
    assert type(writer).__name__ == class_name


def test_unknown_type() -> None:
    with pytest.raises(ConfigError) as info:
        writer_class("s3")
    assert info.value.code == 30001


def test_register_writer(confirmed: Confirmed) -> None:
    register_writer("kafka", "replicator.writers.discard:DiscardWriter")
    try:
        cls: type[Writer] = writer_class("kafka")
        assert cls is DiscardWriter
        register_writer("kafka", None)
        with pytest.raises(ConfigError) as info:
            writer_class("kafka")
        assert "writer type kafka not available yet" in info.value.message
    finally:
        register_writer("kafka", "replicator.writers.kafka_runs:kafka_writer_class()")


def test_discard_confirms_everything(confirmed: Confirmed) -> None:
    writer = create_writer(writer_config(type="discard"), confirmed, show_checkpoints=False)

    writer.connect()
    writer.write([msg(b"a", 1, 0), msg(b"chk", 1, 1, checkpoint=True), msg(b"b", 2, 0)])
    writer.flush()
    writer.close()
    assert confirmed == [(1, 0), (1, 1), (2, 0)]
    assert writer.messages_sent == 2 and writer.messages_confirmed == 3


def test_kafka_writer_class_is_chosen_when_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """The registry picks confluent-kafka's writer where the native producer cannot run, once."""
    from replicator.writers import kafka_runs
    from replicator.writers.kafka import KafkaWriter

    monkeypatch.setattr(kafka_runs, "native_producer", lambda: None)
    assert writer_class("kafka") is KafkaWriter
    with pytest.raises(RuntimeError):
        kafka_runs.KafkaRunWriter(writer_config(type="kafka", topic="t"), lambda scn, idx: None)
