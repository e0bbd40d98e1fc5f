"""OpenLogReplicator's output for format options, filter rules and source flags, byte for byte.

The goldens in ``tests/golden/olr-options`` are the reference OpenLogReplicator's output on
generated cases (recorded by ``reference_check --record-goldens``; see
:mod:`replicator.redogen.options_golden`). Here each case is generated again (redogen is
deterministic) and ``replicator run`` must write the same bytes under each engine. No reference
binary is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from golden_cases import MANIFEST, Cases, engines, generate_cases

from replicator.redogen.options_golden import GOLDEN_DIR, run_entry


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Cases:
    """Each golden case generated once: (case directory, its config, its checkpoint directory)."""
    return generate_cases(tmp_path_factory)


@pytest.mark.parametrize("engine", engines())
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
