"""Shared helpers of the redogen tests: fixture location, pipeline availability, checker import."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # redocheck.py

# The shared data folder sits beside the repository root.
SHARED = HERE.parents[2].parent / "shared"
FIXTURE_23 = SHARED / "fixtures" / "redo" / "free23-basic"
FIXTURE_19 = SHARED / "fixtures" / "redo" / "ora19-lob"


def pipeline_missing() -> str | None:
    """Why `replicator run` cannot be used in-process yet, or None when it can."""
    try:
        from replicator import cli

        parser = cli.build_parser()
        parser.parse_args(["run", "-f", "x.json"])
        import replicator.app  # noqa: F401  (the pipeline behind `run`)
    except Exception as exc:  # the CLI is being written concurrently
        return f"replicator.cli has no working `run` yet: {exc!r}"
    return None


@pytest.fixture
def fixture23() -> Path:
    """The real Oracle Free 23 archive set, or skip."""
    if not FIXTURE_23.is_dir():
        pytest.skip(f"shared fixtures not found at {FIXTURE_23}")
    return FIXTURE_23


def run_pipeline(config: Path) -> int:
    """`replicator run -f config` in-process."""
    from replicator.cli import main

    return main(["run", "-f", str(config)])
