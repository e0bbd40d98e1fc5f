"""The natively rendered formats other than OLR JSON are byte-identical to the python engine.

Debezium (envelope, flatten, smt, with every binary-handling-mode and tombstone setting) over
the reference scenarios, the small workloads, random workloads with random options, and the
real fixtures in ../shared. The formats' wall clock (``ts_ms``) is replaced by a counter so
that the bytes, and the number of clock reads, must match exactly.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from types import SimpleNamespace

import pytest
from native_diff import assert_same, config_of, free23_config, random_workload, shared_fixture

from replicator.formats import framework
from replicator.native import wiring
from replicator.redogen import Scenario, generate, workloads

ROOT = Path(__file__).resolve().parents[3]
SCENARIOS = sorted((ROOT / "tests" / "scenarios" / "reference").glob("*.yaml"))
DEBEZIUM = ("debezium-envelope", "debezium-flatten", "debezium-smt")


@pytest.fixture(autouse=True)
def counting_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every format built from here on reads a clock that ticks 1 ms per call."""

    def make() -> SimpleNamespace:
        ticks = itertools.count(1_700_000_000_000)
        return SimpleNamespace(time=lambda: next(ticks) / 1000)

    original = framework.EventFormat.__init__

    def init(self, options, clock=None):  # type: ignore[no-untyped-def]
        original(self, options, clock or make().time)

    monkeypatch.setattr(framework.EventFormat, "__init__", init)


def _native_share() -> tuple[int, int]:
    committer = wiring.last_committer
    assert committer is not None, "no native committer was attached"
    return committer.native_transactions, committer.python_transactions


@pytest.mark.parametrize("mode", DEBEZIUM)
@pytest.mark.parametrize("name", ["oltp", "mixed", "huge", "wide"])
def test_debezium_workloads(mode: str, name: str, tmp_path: Path) -> None:
    sc = {
        "oltp": lambda: workloads.oltp(seed=5, target_bytes=1 << 20),
        "mixed": lambda: workloads.mixed(seed=4, events=40),
        "huge": lambda: workloads.huge_transaction(rows=2000),
        "wide": lambda: workloads.wide_rows(columns=300, rows=8),
    }[name]()
    result = generate(sc, tmp_path / "gen", with_expected=False)
    py = assert_same(config_of(result, {"type": mode}), tmp_path)
    assert py["messages"]
    assert _native_share()[0] > 0


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_debezium_reference_scenarios(path: Path, tmp_path: Path) -> None:
    result = generate(Scenario.from_file(path), tmp_path / "gen", with_expected=False)
    mode = DEBEZIUM[sum(path.stem.encode()) % 3]
    assert_same(config_of(result, {"type": mode}), tmp_path)


def random_debezium(rng: random.Random) -> dict[str, int | str]:
    """A random Debezium format section (mode, binary mode, tombstones, begin/commit skips)."""
    fmt: dict[str, int | str] = {"type": rng.choice(DEBEZIUM)}
    for key, values in {
        "binary-handling-mode": ("bytes", "base64", "base64-url-safe", "hex"),
        "tombstones-on-delete": (0, 1),
        "message": (0, 4, 8, 12),
        "unknown": (0, 1),
        "unknown-type": (0, 1),
    }.items():
        if rng.random() < 0.5:
            fmt[key] = rng.choice(values)
    return fmt


@pytest.mark.parametrize("seed", range(12))
def test_debezium_random(seed: int, tmp_path: Path) -> None:
    rng = random.Random(1000 + seed)
    sc = random_workload(rng, seed, 384 << 10)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    flags = rng.choice((None, 0, 0x40, 0x1000, 0x8000, 0x300, 0x20, 0x40000))
    py = assert_same(config_of(result, random_debezium(rng), flags), tmp_path)
    assert py["error"] is not None or py["messages"]


@pytest.mark.parametrize("mode", DEBEZIUM)
def test_debezium_real_free23(mode: str, tmp_path: Path) -> None:
    cfg = free23_config(tmp_path)
    cfg["source"][0]["format"] = {"type": mode}
    assert assert_same(cfg, tmp_path)["messages"]


def ora19_config(tmp_path: Path, fmt: str) -> dict:
    """The real 19c LOB archive (../shared) with format ``fmt``."""
    fixture = shared_fixture("ora19-lob")
    state = tmp_path / "state"
    state.mkdir()
    return {
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
                "format": {"type": fmt},
            }
        ],
        "target": [{"alias": "T1", "source": "S1", "writer": {"type": "file", "output": str(tmp_path / "o.json")}}],
    }


@pytest.mark.parametrize("mode", DEBEZIUM)
def test_debezium_real_ora19(mode: str, tmp_path: Path) -> None:
    assert_same(ora19_config(tmp_path, mode), tmp_path)


@pytest.mark.parametrize("message", [1, 3, 17, 19])
@pytest.mark.parametrize("name", ["oltp", "mixed"])
def test_olr_json_full_mode(message: int, name: str, tmp_path: Path) -> None:
    """OLR JSON with `message` bit 1 (one message per transaction) is native too."""
    sc = workloads.oltp(seed=7, target_bytes=512 << 10) if name == "oltp" else workloads.mixed(seed=8, events=40)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    fmt = {"type": "json", "message": message, "scn": 1, "xid": 1, "rid": 1, "schema": 3}
    assert assert_same(config_of(result, fmt), tmp_path)["messages"]
    assert _native_share()[0] > 0


@pytest.mark.parametrize("seed", range(6))
def test_olr_json_full_random(seed: int, tmp_path: Path) -> None:
    from test_native_differential import random_format

    rng = random.Random(2000 + seed)
    sc = workloads.mixed(seed=seed, events=40, version=rng.choice(("19", "23", "12.1")))
    result = generate(sc, tmp_path / "gen", with_expected=False)
    fmt = random_format(rng)
    fmt["message"] = rng.choice((1, 3, 17, 19))
    flags = rng.choice((None, 0, 0x40, 0x1000, 0x40000, 0x8000, 0x300, 0x20))
    py = assert_same(config_of(result, fmt, flags), tmp_path)
    assert py["error"] is not None or py["messages"]


# Formats fed through the typed row-image interface (RowImages, on_native_row).
ROW_IMAGE_FORMATS = ("canal", "shareplex", "dataworks", "oms-default", "qlik", "oms-extended", "dts-avro", "avro")


@pytest.mark.parametrize("fmt", ROW_IMAGE_FORMATS)
@pytest.mark.parametrize("name", ["oltp", "mixed", "wide"])
def test_row_image_formats_workloads(fmt: str, name: str, tmp_path: Path) -> None:
    sc = {
        "oltp": lambda: workloads.oltp(seed=9, target_bytes=768 << 10),
        "mixed": lambda: workloads.mixed(seed=10, events=40),
        "wide": lambda: workloads.wide_rows(columns=300, rows=8),
    }[name]()
    result = generate(sc, tmp_path / "gen", with_expected=False)
    assert assert_same(config_of(result, {"type": fmt}), tmp_path)["messages"]
    assert _native_share()[0] > 0


@pytest.mark.parametrize("seed", range(16))
def test_row_image_formats_random(seed: int, tmp_path: Path) -> None:
    rng = random.Random(3000 + seed)
    sc = random_workload(rng, seed, 384 << 10)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    fmt: dict[str, int | str] = {"type": ROW_IMAGE_FORMATS[seed % len(ROW_IMAGE_FORMATS)]}
    for key, values in {"message": (0, 4, 8), "unknown": (0, 1), "unknown-type": (0, 1)}.items():
        if rng.random() < 0.5:
            fmt[key] = rng.choice(values)
    flags = rng.choice((None, 0, 0x40, 0x1000, 0x8000, 0x300, 0x20, 0x40000))
    py = assert_same(config_of(result, fmt, flags), tmp_path)
    assert py["error"] is not None or py["messages"]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_row_image_formats_reference_scenarios(path: Path, tmp_path: Path) -> None:
    result = generate(Scenario.from_file(path), tmp_path / "gen", with_expected=False)
    fmt = ROW_IMAGE_FORMATS[sum(path.stem.encode()) % len(ROW_IMAGE_FORMATS)]
    assert_same(config_of(result, {"type": fmt}), tmp_path)


@pytest.mark.parametrize("fmt", ROW_IMAGE_FORMATS)
def test_row_image_formats_real(fmt: str, tmp_path: Path) -> None:
    cfg = free23_config(tmp_path)
    cfg["source"][0]["format"] = {"type": fmt}
    assert assert_same(cfg, tmp_path)["messages"]


# The formats whose bodies the native engine writes itself from the row images (_avro.pyx):
# every reference scenario through each of them.
ENCODED_FORMATS = ("oms-extended", "dts-avro", "avro")


@pytest.mark.parametrize("fmt", ENCODED_FORMATS)
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_encoded_formats_reference_scenarios(fmt: str, path: Path, tmp_path: Path) -> None:
    result = generate(Scenario.from_file(path), tmp_path / "gen", with_expected=False)
    assert_same(config_of(result, {"type": fmt}), tmp_path)


@pytest.mark.parametrize("fmt", ENCODED_FORMATS)
def test_encoded_formats_real_ora19(fmt: str, tmp_path: Path) -> None:
    assert_same(ora19_config(tmp_path, fmt), tmp_path)


class _Probe(framework.EventFormat):
    """Records every decoded value: RowValues (python) or RowImages (native), to compare."""

    seen: list[object] = []

    def on_row(self, ctx, pos, row):  # type: ignore[no-untyped-def]
        self.seen.append(
            (
                pos.scn,
                pos.idx,
                row.op,
                row.change.scn,
                row.change.time,
                row.view.table.obj,
                row.before,
                row.after,
                set(row.modified),
            )
        )
        return []

    def on_native_row(self, ctx, pos, rows, r):  # type: ignore[no-untyped-def]
        view = rows.view(r)
        missing = object()
        images = []
        for side in (0, 1):
            if not rows.has_image(r, side):
                images.append(None)
                continue
            image = {}
            for v, column in enumerate(view.columns):
                value = rows.get(r, side, v, missing)
                if value is not missing:
                    image[column.index] = value
            images.append(image)
        modified = {c.index for v, c in enumerate(view.columns) if rows.modified(r, v)}
        self.seen.append(
            (pos.scn, pos.idx, rows.op(r), rows.scn(r), rows.time(r), view.table.obj, images[0], images[1], modified)
        )
        return []


@pytest.mark.parametrize("name", ["oltp", "mixed"])
def test_row_images_values_equal_row_values(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RowImages' typed cells give the python decoders' values, images and modified sets."""
    from native_diff import run_engine

    from replicator.formats import registry

    monkeypatch.setitem(registry._FACTORIES, "canal", lambda options: _Probe(options))  # the probe as "canal"
    sc = workloads.oltp(seed=11, target_bytes=512 << 10) if name == "oltp" else workloads.mixed(seed=12, events=40)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    cfg = config_of(result, {"type": "canal"})
    seen = {}
    for which in ("python", "native"):
        _Probe.seen = []
        run = run_engine(cfg, tmp_path, which)
        assert run["error"] is None
        seen[which] = _Probe.seen
    assert _native_share()[0] > 0
    assert seen["python"] and seen["python"] == seen["native"]


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_olr_json_full_reference_scenarios(path: Path, tmp_path: Path) -> None:
    result = generate(Scenario.from_file(path), tmp_path / "gen", with_expected=False)
    assert_same(config_of(result, {"type": "json", "message": 1 + 2 * (len(path.stem) % 2), "scn": 1}), tmp_path)


def test_olr_json_full_real_free23(tmp_path: Path) -> None:
    cfg = free23_config(tmp_path)
    cfg["source"][0]["format"] = dict(cfg["source"][0].get("format", {"type": "json"}), message=1)
    assert assert_same(cfg, tmp_path)["messages"]


@pytest.mark.parametrize("fmt", ["json-full"])
def test_huge_transactions_stay_python(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the streaming size these formats take the python engine's stream (same output);
    the smaller transactions stay native."""
    from replicator.redo import parser as parser_module
    from replicator.txn import pool as pool_module

    monkeypatch.setattr(pool_module, "CHUNK", 8 << 10)
    monkeypatch.setattr(parser_module, "STREAM_BYTES", 16 << 10)
    result = generate(workloads.mixed(seed=21, events=40), tmp_path / "gen", with_expected=False)
    section = {"type": "json", "message": 1} if fmt == "json-full" else {"type": fmt}
    assert assert_same(config_of(result, section), tmp_path)["messages"]
    native, python = _native_share()
    assert native > 0 and python > 0


# Protobuf (ProtobufCommitter): the OLR JSON column selection, protobuf wire bytes.
def random_protobuf(rng: random.Random) -> dict[str, int | str]:
    """A random protobuf format section: every option the protobuf format reads."""
    fmt: dict[str, int | str] = {"type": "protobuf"}
    for key, values in {
        "scn": (0, 1),
        "timestamp": (0, 1, 2, 3, 4, 5, 6, 7, 8, 15),
        "xid": (0, 1, 2, 3),
        "rid": (0, 1),
        "column": (0, 1, 2),
        "schema": (0, 1, 3, 5, 7),
        "message": (0, 1, 2, 3),
        "db": (0, 1, 3),
        "char": (0, 1, 2, 3),
        "scn-type": (0, 1),
        "unknown-type": (0, 1),
        "interval-dts": tuple(range(11)),
        "interval-ytm": tuple(range(5)),
    }.items():
        if rng.random() < 0.5:
            fmt[key] = rng.choice(values)
    return fmt


@pytest.mark.parametrize("name", ["oltp", "mixed", "wide", "huge"])
def test_protobuf_workloads(name: str, tmp_path: Path) -> None:
    sc = {
        "oltp": lambda: workloads.oltp(seed=5, target_bytes=1 << 20),
        "mixed": lambda: workloads.mixed(seed=4, events=40),
        "huge": lambda: workloads.huge_transaction(rows=2000),
        "wide": lambda: workloads.wide_rows(columns=300, rows=8),
    }[name]()
    result = generate(sc, tmp_path / "gen", with_expected=False)
    assert assert_same(config_of(result, {"type": "protobuf", "rid": 1, "schema": 1}), tmp_path)["messages"]
    assert _native_share()[0] > 0


@pytest.mark.parametrize("message", [0, 1, 2, 3])
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_protobuf_reference_scenarios(path: Path, message: int, tmp_path: Path) -> None:
    result = generate(Scenario.from_file(path), tmp_path / "gen", with_expected=False)
    assert_same(config_of(result, {"type": "protobuf", "message": message}), tmp_path)


@pytest.mark.parametrize("seed", range(16))
def test_protobuf_random(seed: int, tmp_path: Path) -> None:
    rng = random.Random(4000 + seed)
    sc = random_workload(rng, seed, 384 << 10)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    flags = rng.choice((None, 0, 0x40, 0x1000, 0x8000, 0x300, 0x20, 0x40000, 0x800, 0x2))
    py = assert_same(config_of(result, random_protobuf(rng), flags), tmp_path)
    assert py["error"] is not None or py["messages"]


def test_protobuf_real_free23(tmp_path: Path) -> None:
    cfg = free23_config(tmp_path)
    cfg["source"][0]["format"] = {"type": "protobuf", "schema": 1, "rid": 1}
    assert assert_same(cfg, tmp_path)["messages"]


def test_protobuf_real_ora19(tmp_path: Path) -> None:
    assert_same(ora19_config(tmp_path, "protobuf"), tmp_path)


@pytest.mark.parametrize("message", [0, 1, 2])
@pytest.mark.parametrize("name", ["mixed", "huge"])
def test_protobuf_streamed(name: str, message: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the streaming size protobuf is rendered chunk by chunk natively (FULL mode: the
    python engine's stream), with the python stream's batches."""
    from replicator.redo import parser as parser_module
    from replicator.txn import pool as pool_module

    monkeypatch.setattr(pool_module, "CHUNK", 8 << 10)
    monkeypatch.setattr(parser_module, "STREAM_BYTES", 16 << 10)
    sc = workloads.mixed(seed=21, events=40) if name == "mixed" else workloads.huge_transaction(rows=3000)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    assert assert_same(config_of(result, {"type": "protobuf", "message": message}), tmp_path)["messages"]
    native, python = _native_share()
    assert (python > 0) == (message == 1) and (native > 0 or name == "huge")


@pytest.mark.needs_no_native
def test_dts_control_record_is_fastavros() -> None:
    """The BEGIN/COMMIT Record written directly equals fastavro's bytes for the same datum."""
    from replicator.formats.base import FormatOptions
    from replicator.formats.dts_avro import DtsAvroFormat, control_record
    from replicator.formats.framework import Position

    rng = random.Random(7)
    fmt = DtsAvroFormat(FormatOptions())
    edge = (0, 1, 63, 64, -1, -64, -65, 2**40, -(2**50))
    for _ in range(300):
        pos = Position(rng.randrange(2**40), rng.randrange(100_000))
        time, now = (rng.choice((*edge, rng.randrange(-(2**52), 2**52))) for _ in range(2))
        scn, safe = str(rng.randrange(2**48)), str(rng.randrange(2**48))
        txid = rng.choice(("1.2.3", "", "65535.65535.4294967295", "é"))
        op = rng.choice(("BEGIN", "COMMIT"))
        fmt.now_ms = lambda now=now: now  # type: ignore[method-assign]
        expected = fmt._record(pos, op, time, scn, safe, txid)
        assert control_record(pos.serial, time, scn, safe, txid, 4 if op == "BEGIN" else 5, now) == expected


@pytest.mark.parametrize("message", [0, 12])
@pytest.mark.parametrize("fmt", ROW_IMAGE_FORMATS + DEBEZIUM)
def test_formats_streamed(fmt: str, message: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the streaming size the row-image and Debezium formats decode and format chunk by
    chunk natively, handing messages over where the python engine's stream drains."""
    from replicator.redo import parser as parser_module
    from replicator.runner import driver as driver_module
    from replicator.txn import pool as pool_module

    monkeypatch.setattr(pool_module, "CHUNK", 8 << 10)
    monkeypatch.setattr(parser_module, "STREAM_BYTES", 16 << 10)
    monkeypatch.setattr(driver_module, "FLUSH_MESSAGES", 37)  # drains inside the streamed transactions
    sc = workloads.huge_transaction(rows=1500) if message else workloads.mixed(seed=21, events=40)
    result = generate(sc, tmp_path / "gen", with_expected=False)
    assert assert_same(config_of(result, {"type": fmt, "message": message}), tmp_path)["messages"]
    native, python = _native_share()
    assert native > 0
