"""``replicator bench-writers`` runs every writer for real: both paths of the Kafka writer
(messages one by one and native runs whole) against a tansu broker, every message confirmed."""

from __future__ import annotations

import re

import pytest
from kafka_broker import Broker

from replicator import native
from replicator.bench import writers


def test_bench_writers_kafka_prints_both_paths(broker: Broker, capsys: pytest.CaptureFixture[str]) -> None:
    assert writers.main(["--writers", "kafka", "--count", "3000", "--bootstrap", broker.bootstrap]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^kafka msgs +[\d,]+ msg/s", out, re.M), out
    if native.available():
        assert re.search(r"^kafka runs +[\d,]+ msg/s", out, re.M), out


def test_bench_writers_local_and_stream_writers(capsys: pytest.CaptureFixture[str]) -> None:
    assert writers.main(["--writers", "discard,file,network,zeromq", "--count", "2000"]) == 0
    out = capsys.readouterr().out
    for kind in ("discard", "file", "network", "zeromq"):
        assert re.search(rf"^{kind} msgs +[\d,]+ msg/s", out, re.M), out
        if native.available():
            assert re.search(rf"^{kind} runs +[\d,]+ msg/s", out, re.M), out
