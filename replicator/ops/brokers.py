"""Whether Kafka brokers answer: the probe ``check-config``, ``run`` and the Spark job share."""

from __future__ import annotations

PROBE_TIMEOUT_S = 2.0


def brokers_answer(bootstrap: str, properties: dict[str, str], timeout: float = PROBE_TIMEOUT_S) -> bool:
    """True when a broker of ``bootstrap`` returned cluster metadata within ``timeout`` seconds."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    # log_level 0: librdkafka's own "connect failed" lines would repeat on stderr every second.
    client = AdminClient({**properties, "bootstrap.servers": bootstrap, "log_level": 0})
    try:
        client.list_topics(timeout=timeout)
        return True
    except KafkaException:
        return False
