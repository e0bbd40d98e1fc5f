"""The native engine's tests: skipped as a whole when the extension is not built."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # native_diff.py

from replicator import native  # noqa: E402


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if native.available():
        return
    reason = f"native engine not built: {native.unavailable_reason()}"
    here = str(Path(__file__).resolve().parent)
    for item in items:
        if str(item.fspath).startswith(here) and "needs_no_native" not in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))
