"""librdkafka's own log lines are printed at the level they mean (issue 31 item 8, issue 32 item 10).

A refused connection reaches the logger at syslog's LOG_ERR, and was printed as
``ERROR 60102``: an error line under a warning code, for a condition librdkafka retries by
itself. Now it is ``WARN 60102``. A real librdkafka producer talks to a closed port on
127.0.0.1 (no broker needed).
"""

from __future__ import annotations

import io
import socket
import time

from confluent_kafka import Producer

from replicator import log
from replicator.writers.kafka import library_logger


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_refused_connection_is_a_warning_line() -> None:
    out = io.StringIO()
    log.configure_logging(3, stream=out)
    try:
        producer = Producer(
            {"bootstrap.servers": f"127.0.0.1:{_closed_port()}", "logger": library_logger(), "reconnect.backoff.ms": 10}
        )
        producer.produce("t", b"x")
        deadline = time.monotonic() + 10
        while "Connection refused" not in out.getvalue() and time.monotonic() < deadline:
            producer.poll(0.1)
        producer.purge()
        producer.flush(0)
    finally:
        log.configure_logging(3)
    lines = [line for line in out.getvalue().splitlines() if "rdkafka" in line]
    assert any("Connection refused" in line for line in lines), out.getvalue()
    assert all(" WARN  60102 " in line for line in lines if "Connection refused" in line), lines
    assert not [line for line in lines if " ERROR " in line], lines
