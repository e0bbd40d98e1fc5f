"""A batch run to a Kafka nobody listens on fails with a code (issue 15, fault 6).

It used to exit 0 after hundreds of ``ERROR 00000`` lines from librdkafka and a warning
that messages were not confirmed. Real librdkafka, a closed port on 127.0.0.1.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from fixture_configs import free23_batch_config, write_config

from replicator.cli import main
from replicator.writers import kafka as kafka_module


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the with block ends: connections are refused


def test_batch_to_unreachable_kafka_exits_non_zero(
    free23: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(kafka_module, "CLOSE_TIMEOUT_S", 3.0)  # the run's end waits this long for reports
    cfg = free23_batch_config(free23, tmp_path)
    cfg["target"][0]["writer"] = {
        "type": "kafka",
        "topic": "cdc",
        "properties": {"bootstrap.servers": f"127.0.0.1:{_closed_port()}"},
    }
    rc = main(["run", "-f", str(write_config(tmp_path, cfg))])
    assert rc != 0
    err = capfd.readouterr().err
    assert "ERROR 10101 3 of 3 messages were not delivered" in err
    coded = [line for line in err.splitlines() if " ERROR " in line or " WARN " in line]
    assert coded and not [line for line in coded if " 00000 " in line], err[-3000:]
    refused = [line for line in coded if "Connection refused" in line]
    assert 1 <= len(refused) <= 4, f"{len(refused)} repeated librdkafka lines: not rate-limited"
