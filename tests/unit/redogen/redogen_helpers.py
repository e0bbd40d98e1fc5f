"""Helpers the redogen tests import by name (a unique module name: ``conftest`` is ambiguous
when several test folders are collected in one run)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
# The shared data folder sits beside the repository root.
SHARED = HERE.parents[2].parent / "shared"
FIXTURE_23 = SHARED / "fixtures" / "redo" / "free23-basic"
FIXTURE_19 = SHARED / "fixtures" / "redo" / "ora19-lob"


def pipeline_missing() -> str | None:
    """Why `replicator run` cannot be used in-process, or None when it can."""
    try:
        import replicator.app  # noqa: F401  (the pipeline behind `run`)
        from replicator import cli

        cli.build_parser().parse_args(["run", "-f", "x.json"])
    except Exception as exc:
        return f"replicator.cli has no working `run`: {exc!r}"
    return None


def run_pipeline(config: Path) -> int:
    """`replicator run -f config` in-process."""
    from replicator.cli import main

    return main(["run", "-f", str(config)])
