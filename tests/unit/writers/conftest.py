"""Fixtures for writer tests (helpers live in writer_helpers.py)."""

from __future__ import annotations

import pytest
from writer_helpers import Confirmed


@pytest.fixture
def confirmed() -> Confirmed:
    """An on_confirm callback recording (scn, idx) pairs."""
    return Confirmed()
