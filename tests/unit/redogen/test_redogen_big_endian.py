"""``redogen --endian big``: every scenario and workload, read in both byte orders, gives one output.

Each case is generated twice (little-endian as on Linux x86, big-endian as on AIX / Solaris
SPARC / HP-UX); ``replicator run`` on each must produce the same bytes, equal to the
expected output. The big-endian files really are big-endian: block 0 carries the
reversed magic and every block header's number reads back in that order.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from redogen_helpers import run_pipeline

from replicator.redogen import Scenario, workloads
from replicator.redogen.byteorder import big_endian
from replicator.redogen.generate import generate

SCENARIO_DIR = Path(__file__).resolve().parents[2] / "scenarios" / "reference"
SCENARIOS = sorted(p.stem for p in SCENARIO_DIR.glob("*.yaml"))
WORKLOADS = {
    "oltp": lambda: workloads.oltp(seed=2, target_bytes=1 << 20),
    "mixed": lambda: workloads.mixed(3, 120),
    "mixed-11.2": lambda: workloads.mixed(4, 80, version="11.2"),
    "mixed-23-4k": lambda: workloads.mixed(5, 80, version="23", block_size=4096),
    "huge-transaction": lambda: workloads.huge_transaction(2000),
    "open-transactions": lambda: workloads.open_transactions(300),
    "wide-rows": lambda: workloads.wide_rows(300, 10),
    "big-values": lambda: workloads.big_values(20000, 4),
}
assert set(workloads.WORKLOADS) <= set(WORKLOADS)  # every workload is covered


def _both(make, tmp_path: Path) -> None:
    outputs = []
    for big in (False, True):
        with big_endian(big):
            result = generate(make(), tmp_path / ("big" if big else "little"))
        head = result.logs[0].path.read_bytes()[:1024]
        assert head[28:32] == (b"\x7a\x7b\x7c\x7d" if big else b"\x7d\x7c\x7b\x7a")
        bs = struct.unpack_from(">I" if big else "<I", head, 20)[0]
        block2 = result.logs[0].path.read_bytes()[2 * bs : 3 * bs]
        assert struct.unpack_from(">I" if big else "<I", block2, 4)[0] == 2  # block number in platform order
        assert run_pipeline(result.config) == 0
        outputs.append(result.output.read_bytes())
        assert outputs[-1] == result.expected.read_bytes()
    assert outputs[0] == outputs[1] and outputs[0]


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_in_both_byte_orders(name: str, tmp_path: Path) -> None:
    _both(lambda: Scenario.from_file(SCENARIO_DIR / f"{name}.yaml"), tmp_path)


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_workload_in_both_byte_orders(name: str, tmp_path: Path) -> None:
    _both(WORKLOADS[name], tmp_path)


def test_reference_check_matrix_has_a_byte_order_dimension(tmp_path: Path) -> None:
    """``reference_check --endian big|both``: each case once per order, generated in that order."""
    from replicator.redogen.reference_check import Case, generate_case, matrix

    little, big = matrix(quick=True), matrix(quick=True, endians=("big",))
    assert [c.name + "-be" for c in little] == [c.name for c in big]
    assert len(matrix(quick=True, endians=("little", "big"))) == 2 * len(little)
    result = generate_case(Case("demo", endian="big"), tmp_path / "demo")
    first = sorted((tmp_path / "demo" / "redo").iterdir())[0].read_bytes()
    assert first[28:32] == b"\x7a\x7b\x7c\x7d"  # big-endian magic (little: 7d7c7b7a)
    assert result.checkpoint.exists()
