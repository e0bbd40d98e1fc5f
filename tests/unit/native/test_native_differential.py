"""The native engine is byte-identical to the python engine (the readable reference).

Every reference scenario, every workload at a small size, random workloads (seeds) with
random format options, and the real fixtures in ../shared (skipped when absent) go through
both engines; messages, positions, counts, log lines and errors must all be equal.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from native_diff import assert_same, config_of, free23_config, random_workload, run_engine, shared_fixture

from replicator.config.upgrade import upgrade_config
from replicator.native import wiring
from replicator.redogen import Scenario, generate, workloads
from replicator.redogen.demo import demo_scenario

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = sorted((ROOT / "tests" / "scenarios" / "reference").glob("*.yaml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_reference_scenarios(path: Path, tmp_path: Path) -> None:
    result = generate(Scenario.from_file(path), tmp_path / "gen", with_expected=False)
    assert_same(config_of(result), tmp_path)


SMALL_WORKLOADS = {
    "demo": lambda: demo_scenario(),
    "oltp": lambda: workloads.oltp(seed=3, target_bytes=1 << 20),
    "mixed": lambda: workloads.mixed(seed=2),
    "huge-transaction": lambda: workloads.huge_transaction(rows=3000),
    "open-transactions": lambda: workloads.open_transactions(count=500),
    "wide-rows": lambda: workloads.wide_rows(columns=400, rows=10),
    "big-values": lambda: workloads.big_values(size=8000, rows=5),
}


@pytest.mark.parametrize("name", sorted(SMALL_WORKLOADS))
def test_workloads(name: str, tmp_path: Path) -> None:
    sc = SMALL_WORKLOADS[name]()
    if sc is None:
        pytest.skip(f"workload {name} not available")
    result = generate(sc, tmp_path / "gen", with_expected=False)
    assert_same(config_of(result), tmp_path)
    if name in ("oltp", "mixed", "huge-transaction", "wide-rows"):
        assert wiring.last_committer is not None and wiring.last_committer.native_transactions > 0
    if name in ("oltp", "mixed", "wide-rows"):  # the last run had decode workers: they rendered
        assert wiring.last_committer.stage2 is not None and wiring.last_committer.stage2.queued > 0


def random_format(rng: random.Random) -> dict[str, int | str]:
    """A random valid OLR JSON format section."""
    fmt: dict[str, int | str] = {"type": "json"}
    for key, values in {
        "scn": (0, 1),
        "timestamp": tuple(range(16)),
        "timestamp-metadata": tuple(range(16)),
        "timestamp-tz": tuple(range(12)),
        "xid": (0, 1, 2, 3),
        "rid": (0, 1),
        "column": (0, 1, 2),
        "schema": (0, 1, 3, 5, 7),
        "message": (0, 2, 4, 8, 16, 18),
        "db": (0, 1, 3),
        "char": (0, 1, 2, 3),
        "attributes": (0, 1, 7),
        "user-type": (0, 15),
        "scn-type": (0, 1, 2, 4, 8, 15),
        "timestamp-type": (0, 1, 2, 4, 8, 15),
        "unknown-type": (0, 1),
        "redo-thread": (0, 1),
        "interval-dts": tuple(range(11)),
        "interval-ytm": tuple(range(5)),
    }.items():
        if rng.random() < 0.5:
            fmt[key] = rng.choice(values)
    return fmt


@pytest.mark.parametrize("seed", range(10))
def test_random_workloads_and_formats(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    sc = random_workload(rng, seed, 512 << 10)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    fmt = random_format(rng)
    flags = rng.choice((None, 0, 0x40, 0x1000, 0x40000, 0x8000, 0x300, 0x20))
    py = assert_same(config_of(result, fmt, flags), tmp_path)
    assert py["error"] is not None or py["messages"]


@pytest.mark.parametrize("seed", range(100, 104))
def test_random_formats_in_a_20_config(seed: int, tmp_path: Path) -> None:
    """OpenLogReplicator 2.0 configs: the engines agree on every 2.0 option (and the debezium
    preset), and the bytes are those of the same config in the 1.9 dialect."""
    rng = random.Random(seed)
    sc = random_workload(rng, seed, 256 << 10)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    fmt = random_format(rng)
    if seed % 2:
        fmt["type"] = "debezium"
    config_19 = config_of(result, fmt, rng.choice((None, 0x1000, 0x20)))
    config_20, _ = upgrade_config(config_19)
    assert config_20["version"] == "2.0.0"
    py = assert_same(config_20, tmp_path / "v20")
    assert py["error"] is None and py["messages"]
    assert run_engine(config_19, tmp_path / "v19", "native")["messages"] == py["messages"]


def test_real_free23(tmp_path: Path) -> None:
    cfg = free23_config(tmp_path)
    assert assert_same(cfg, tmp_path)["messages"]


def test_real_ora19_schemaless(tmp_path: Path) -> None:
    fixture = shared_fixture("ora19-lob")
    state = tmp_path / "state"
    state.mkdir()
    cfg = {
        "version": "1.9.0",
        "state": {"type": "disk", "path": str(state)},
        "source": [
            {
                "alias": "S1",
                "name": "FST",
                "flags": 2,
                "reader": {
                    "type": "batch",
                    "redo-log": [str(fixture / "o1_mf_1_117_mflqx1vl_.arc")],
                    "log-archive-format": "o1_mf_%t_%s_%h_.arc",
                    "host-timezone": "+00:00",
                },
                "format": {"type": "json", "scn": 1, "timestamp": 7, "timestamp-metadata": 7, "xid": 1},
            }
        ],
        "target": [{"alias": "T1", "source": "S1", "writer": {"type": "file", "output": str(tmp_path / "o.json")}}],
    }
    assert assert_same(cfg, tmp_path)["messages"]


@pytest.mark.parametrize("fmt", ["debezium", "protobuf", "shareplex", "canal", "debezium-envelope"])
def test_other_formats(fmt: str, tmp_path: Path) -> None:
    """Other formats keep the python commit but use the native record dispatch."""
    result = generate(workloads.mixed(seed=4, events=30), tmp_path / "gen", with_expected=False)
    py = assert_same(
        config_of(result, {"type": fmt}), tmp_path, mask=rb'"(posttime|ts|ts_ms|ts_us|ts_ns)":("[^"]*"|[0-9]+)'
    )
    assert py["error"] is not None or py["messages"]


@pytest.mark.parametrize("flags", [0x8000, 0x20, 0x40 | 0x80 | 0x100 | 0x200, 0x40000, 0x800, 0x2, 0x2 | 0x20])
def test_source_flags(flags: int, tmp_path: Path) -> None:
    """Raw hex, DDL, shown hidden/guard/nested/unused columns, NOT NULL copy, system transactions,
    schemaless (unknown tables: COL_<n> hex values)."""
    result = generate(workloads.mixed(seed=6, events=30), tmp_path / "gen", with_expected=False)
    assert assert_same(config_of(result, flags=flags), tmp_path)["messages"]


@pytest.mark.parametrize("name", ["oltp", "wide-rows", "huge-transaction"])
def test_schemaless_workloads(name: str, tmp_path: Path) -> None:
    """Schemaless mode (source flag 2): every table unknown, rendered natively as COL_<n> hex."""
    result = generate(SMALL_WORKLOADS[name](), tmp_path / "gen", with_expected=False)
    py = assert_same(config_of(result, flags=0x2), tmp_path)
    assert py["messages"] and b'"COL_0"' in py["messages"][1][0]
    assert wiring.last_committer is not None and wiring.last_committer.native_transactions > 0
