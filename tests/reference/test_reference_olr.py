"""Development check against the reference OpenLogReplicator (never required by CI).

Skipped unless ``REPLICATOR_OLR_BINARY`` names an OpenLogReplicator binary built from its
source (see the shared reference-olr notes). Then every case of
:func:`replicator.redogen.reference_check.matrix` (every reference scenario and workload ×
versions 11.2–23 × block sizes 512/1024/4096, 20 seeds of ``mixed`` and ``oltp``, online
runs) is generated, read by both programs with the same config, and must give byte-identical
output with no ERROR or unexpected WARN in OLR's log. ``REPLICATOR_OLR_ENDIAN`` picks the byte
order of the generated redo: ``little`` (default), ``big`` (as AIX or SPARC write it; case names
end in ``-be``) or ``both``. ``REPLICATOR_OLR_CASES`` (a regular expression on case names)
narrows the set; ``python -m replicator.redogen.reference_check``
runs the same matrix with a summary of the counts.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from replicator.redogen.reference_check import ENDIANS, ENV_BINARY, Case, matrix, run_case

BINARY = os.environ.get(ENV_BINARY, "")
PATTERN = os.environ.get("REPLICATOR_OLR_CASES", "")
ENDIAN = os.environ.get("REPLICATOR_OLR_ENDIAN", "little")
ORDERS = ENDIANS if ENDIAN == "both" else (ENDIAN,)
CASES = [c for c in matrix(endians=ORDERS) if re.search(PATTERN, c.name)] if BINARY else []

pytestmark = pytest.mark.skipif(
    not BINARY,
    reason=f"reference OpenLogReplicator not configured: set {ENV_BINARY} to its binary to run this development check",
)


@pytest.mark.parametrize("case", CASES or [None], ids=[c.name for c in CASES] or ["no-binary"])
def test_olr_reads_generated_redo_as_we_do(case: Case | None, tmp_path: Path) -> None:
    """Both programs write the same bytes for the case, and OLR reports no error."""
    assert case is not None
    binary = Path(BINARY)
    if not binary.is_file():
        pytest.fail(f"{ENV_BINARY}={BINARY}: no such file")
    result = run_case(case, tmp_path, binary, keep=True)
    problems = []
    if not result.identical:
        problems.append(f"outputs differ: {result.detail}")
    problems += [f"OLR: {line}" for line in result.olr_errors + result.olr_warnings]
    assert not problems, f"{case.name} ({tmp_path / case.name}):\n" + "\n".join(problems)
