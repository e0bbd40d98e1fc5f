"""Small generated redo replicated by the batch pipeline, for the digest and verify tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replicator.redogen import workloads
from replicator.redogen.generate import GenerationResult, generate


def generated(root: Path, seed: int = 3, size: int = 600_000) -> GenerationResult:
    """An OLTP redo set of about ``size`` bytes in ``root``."""
    sc = workloads.oltp(seed=seed, target_bytes=size)
    return generate(sc, root, with_expected=False)


def batch_run(
    result: GenerationResult,
    name: str,
    *,
    flags: int = 0,
    fmt: dict[str, Any] | None = None,
    writer: dict[str, Any] | None = None,
) -> tuple[Path, Path]:
    """Replicate ``result`` with the batch runner into ``<name>.json`` beside it; (config, output)."""
    from replicator.runner.batch import run_config

    root = result.config.parent
    doc = json.loads(result.config.read_text())
    source = doc["source"][0]
    source["flags"] = flags
    source["format"].update(fmt or {})
    output = root / f"{name}.json"
    doc["target"][0]["writer"] = {"type": "file", "output": str(output), "new-line": 1, "append": 1, **(writer or {})}
    config = root / f"{name}-config.json"
    config.write_text(json.dumps(doc))
    assert run_config(str(config), progress="off") == 0
    return config, output
