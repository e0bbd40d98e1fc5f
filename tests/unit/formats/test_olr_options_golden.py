"""OpenLogReplicator's output for format options, filter rules and source flags, byte for byte.

The goldens in ``tests/golden/olr-options`` are the reference OpenLogReplicator's output on
generated cases (recorded by ``reference_check --record-goldens``; see
:mod:`replicator.redogen.options_golden`). Here each case is generated again (redogen is
deterministic) and ``replicator run`` must write the same bytes under each engine. No reference
binary is needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replicator.redogen.options_golden import GOLDEN_DIR, run_entry
from replicator.redogen.reference_check import Case, generate_case

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = json.loads((GOLDEN_DIR / "manifest.json").read_text())


def _engines() -> list[str]:
    from replicator.native import available

    return ["python", "native"] if available() else ["python"]


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, Any], Path]]:
    """Each golden case generated once: (case directory, its config, its checkpoint directory)."""
    out = {}
    for name, spec in MANIFEST["cases"].items():
        case_dir = tmp_path_factory.mktemp(name)
        gen = generate_case(Case(str(ROOT / spec["source"]), spec["version"], spec["block-size"]), case_dir)
        out[name] = (case_dir, json.loads(gen.config.read_text()), gen.checkpoint.parent)
    return out


@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize("entry", MANIFEST["variants"], ids=[f"{v['case']}:{v['label']}" for v in MANIFEST["variants"]])
def test_output_is_olrs(entry: dict[str, Any], engine: str, cases: dict[str, Any], tmp_path: Path) -> None:
    case_dir, config, checkpoint = cases[entry["case"]]
    rc, output, log = run_entry(case_dir, config, checkpoint, entry, engine, tmp_path)
    assert rc == 0, log
    expected = (GOLDEN_DIR / entry["expected"]).read_bytes()
    if output != expected:
        ours, theirs = output.splitlines(), expected.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        pytest.fail(
            f"line {first + 1} differs from OLR's ({len(ours)} lines, OLR {len(theirs)}):\n"
            f"ours {ours[first][:400] if first < len(ours) else b''!r}\n"
            f"olr  {theirs[first][:400] if first < len(theirs) else b''!r}"
        )
