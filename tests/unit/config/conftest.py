"""Fixtures for config tests: a minimal valid document to mutate."""

from __future__ import annotations

import copy
from typing import Any

import pytest

MINIMAL: dict[str, Any] = {
    "version": "1.9.0",
    "source": [
        {
            "alias": "S1",
            "name": "TEST",
            "reader": {
                "type": "batch",
                "redo-log": ["a.dbf"],
                "log-archive-format": "arch%t_%s_%r.dbf",
                "start-scn": 1,
            },
            "format": {"type": "json"},
            "filter": {"table": [{"owner": "OLR_TEST", "table": ".*"}]},
        }
    ],
    "target": [{"alias": "T1", "source": "S1", "writer": {"type": "file", "output": "out.json"}}],
}


@pytest.fixture
def doc() -> dict[str, Any]:
    """A fresh deep copy of a minimal valid configuration."""
    return copy.deepcopy(MINIMAL)
