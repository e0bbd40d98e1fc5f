"""Fixtures of the verify integration tests; importable helpers live in ``verify_fixtures``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # verify_fixtures.py
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "daemon"))  # crash_kills.py
