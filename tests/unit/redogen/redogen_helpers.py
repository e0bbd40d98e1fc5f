"""Helpers the redogen tests import by name (a unique module name: ``conftest`` is ambiguous
when several test folders are collected in one run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# The shared data folder sits beside the repository root.
SHARED = HERE.parents[2].parent / "shared"
FIXTURE_23 = SHARED / "fixtures" / "redo" / "free23-basic"
FIXTURE_19 = SHARED / "fixtures" / "redo" / "ora19-lob"


def pipeline_missing() -> str | None:
    """Why `replicator run` cannot be used in-process, or None when it can."""
    try:
        import replicator.runner.batch  # noqa: F401  (the pipeline behind `run`)
        from replicator import cli

        cli.build_parser().parse_args(["run", "-f", "x.json"])
    except Exception as exc:
        return f"replicator.cli has no working `run`: {exc!r}"
    return None


def run_pipeline(config: Path) -> int:
    """`replicator run -f config` in-process."""
    from replicator.cli import main

    return main(["run", "-f", str(config)])


def run_checked(scenario: Any, out: Path) -> list[dict]:
    """Generate ``scenario``, check every file's structure, replicate it and require the
    output to equal redogen's expected output byte for byte; returns the messages."""
    from redocheck import check_file

    from replicator.redogen.generate import generate

    result = generate(scenario, out)
    for log in result.logs:
        check_file(log.path)
    assert run_pipeline(result.config) == 0
    got = result.output.read_bytes() if result.output.exists() else b""
    assert result.expected is not None and got == result.expected.read_bytes()
    return [json.loads(line) for line in got.decode().splitlines()]


def row_payloads(messages: list[dict]) -> list[dict]:
    """The row changes (c/u/d payload elements) of ``messages``, in order."""
    return [p for m in messages for p in m["payload"] if p["op"] in ("c", "u", "d")]


TEN_MB = 10 * 1024 * 1024


def ten_megabyte_img(make_scenario: Any, out: Path) -> str:
    """Insert one 10 MiB value into DOCS.IMG (4 KiB blocks) through :func:`run_checked`, with
    ``make_scenario(timeline, **extra)`` of the calling test; the hex string output for it."""
    rows = row_payloads(
        run_checked(
            make_scenario(
                [
                    {"insert": "DOCS", "values": {"ID": 7, "IMG": {"repeat": "0123456789abcdef", "length": TEN_MB}}},
                    {"commit": 1},
                ],
                block_size=4096,
                log_blocks=8000,
            ),
            out,
        )
    )
    return str(rows[0]["after"]["IMG"])
