"""Fixtures of the redogen tests; importable helpers live in ``redogen_helpers``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # redocheck.py, redogen_helpers.py

from redogen_helpers import FIXTURE_23  # noqa: E402


@pytest.fixture
def fixture23() -> Path:
    """The real Oracle Free 23 archive set, or skip."""
    if not FIXTURE_23.is_dir():
        pytest.skip(f"shared fixtures not found at {FIXTURE_23}")
    return FIXTURE_23
