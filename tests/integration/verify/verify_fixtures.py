"""Helpers of the verify integration tests: generated redo, a config per sink, verify in-process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from replicator.redogen import workloads
from replicator.redogen.generate import GenerationResult, generate
from replicator.verify.command import build_parser, verify
from replicator.verify.report import Report


def generated(root: Path, seed: int = 21, size: int = 1_500_000, log_blocks: int = 0) -> GenerationResult:
    """An OLTP redo set of about ``size`` bytes (several logs with ``log_blocks``)."""
    sc = workloads.oltp(seed=seed, target_bytes=size)
    if log_blocks:
        sc.log_blocks = log_blocks
    return generate(sc, root)


def config_with(
    result: GenerationResult,
    name: str,
    writer: dict[str, Any],
    *,
    offline: bool = False,
    source: dict[str, Any] | None = None,
    fmt: dict[str, Any] | None = None,
) -> Path:
    """``result``'s config (batch, or the offline daemon's) with ``writer``, saved as ``name``."""
    doc = result.offline_config() if offline else json.loads(result.config.read_text())
    doc["target"][0]["writer"] = writer
    doc["source"][0].update(source or {})
    doc["source"][0]["format"].update(fmt or {})
    path = result.config.parent / name
    path.write_text(json.dumps(doc))
    return path


def replicate(config: Path) -> None:
    """``replicator run -f config`` in a child process (batch: to its end)."""
    proc = subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(config)], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]


def check(config: Path, *args: str) -> Report:
    """``replicator verify -f config ARGS`` in this process; its report."""
    return verify(build_parser().parse_args(["-f", str(config), "--max-report", "1000", *args]))


def cli(config: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    """``replicator verify -f config --json ARGS`` as a command: (exit status, document, stderr)."""
    proc = subprocess.run(
        [sys.executable, "-m", "replicator", "verify", "-f", str(config), "--json", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.returncode, json.loads(proc.stdout) if proc.stdout.strip() else {}, proc.stderr


def positions(lines: list[bytes]) -> set[tuple[int, int, str]]:
    """(c_scn, c_idx, xid) of the change messages among ``lines`` (FULL mode not used here)."""
    out = set()
    for line in lines:
        doc = json.loads(line)
        if doc["payload"][0]["op"] != "chkpt":
            out.add((doc["c_scn"], doc["c_idx"], str(doc.get("xid", doc.get("xidn")))))
    return out


def reported(report: Report, kind: str) -> set[tuple[int, int, str]]:
    """(c_scn, c_idx, xid) of the differences of ``kind``."""
    return {(d.c_scn, d.c_idx, d.xid) for d in report.details if d.kind == kind}
