"""The generated cases of ``tests/golden/olr-options`` (the reference OpenLogReplicator's output
on them is the golden): shared by the 1.9 golden test and the 2.0 dialect test."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from replicator.redogen.options_golden import GOLDEN_DIR
from replicator.redogen.reference_check import Case, generate_case

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = json.loads((GOLDEN_DIR / "manifest.json").read_text())

Cases = dict[str, tuple[Path, dict[str, Any], Path]]


def engines() -> list[str]:
    """The engines to run: the native one only where it is built."""
    from replicator.native import available

    return ["python", "native"] if available() else ["python"]


def generate_cases(
    factory: pytest.TempPathFactory, config_of: Callable[[dict[str, Any]], dict[str, Any]] = lambda c: c
) -> Cases:
    """Each case generated once: (case directory, its config passed through ``config_of``, its
    checkpoint directory)."""
    out = {}
    for name, spec in MANIFEST["cases"].items():
        case_dir = factory.mktemp(name)
        gen = generate_case(Case(str(ROOT / spec["source"]), spec["version"], spec["block-size"]), case_dir)
        out[name] = (case_dir, config_of(json.loads(gen.config.read_text())), gen.checkpoint.parent)
    return out
