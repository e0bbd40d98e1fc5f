"""Batch-run tests share one generated demo redo set per worker."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_helpers import demo_set


@pytest.fixture(scope="session")
def demo_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo scenario's config (its redo, schema checkpoint and expected output beside it)."""
    return demo_set(tmp_path_factory.mktemp("demo"))
