"""Golden files of every non-OLR format over the scenario (insert, update, delete, multi-row,
DDL, begin/commit, heartbeat; every type, NULLs, a keyless table).

Regenerate with ``UPDATE_GOLDEN=1 pytest tests/unit/formats_other`` and review the diff
against the seed documents (docs/formats.md lists the decisions behind each field).
"""

from __future__ import annotations

import os

import pytest
from other_formats_decode import AVRO_FORMATS, GOLDEN, AvroStream, decode_dts, golden_text, strict_json
from other_formats_scenario import CLOCK, options, run

from replicator.formats.registry import _OTHER_FORMATS, create_format

NAMES = sorted(name for name in _OTHER_FORMATS if name != "oms-avro")


def build(name: str, **extra: object):
    """The format ``name`` as the registry builds it, with the fixed test clock."""
    fmt = create_format(options(name, **extra))
    fmt.clock = lambda: CLOCK  # type: ignore[attr-defined]
    return fmt


@pytest.mark.parametrize("name", NAMES)
def test_golden(name: str) -> None:
    text = golden_text(name, run(build(name)))
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", NAMES)
def test_messages_parse_with_standard_tool(name: str) -> None:
    messages = run(build(name))
    assert messages
    stream = AvroStream()
    for message in messages:
        if message.tombstone:
            continue
        if name == "dts-avro":
            assert decode_dts(message.data)["version"] == 1
        elif name == "avro":
            assert stream.decode(message)
        else:
            assert isinstance(strict_json(message.data), dict)
        if message.tag is not None:
            strict_json(message.tag) if name not in ("qlik",) else message.tag.decode("ascii")


def test_oms_avro_is_dts_avro() -> None:
    assert golden_text("dts-avro", run(build("oms-avro"))) == (GOLDEN / "dts-avro.txt").read_text("utf-8")


@pytest.mark.parametrize("name", NAMES)
def test_positions_match_olr_json(name: str) -> None:
    """Every message of an event carries that event's OLR JSON position, or the one before."""
    olr = run(create_format(options("json")))
    olr_positions = [(m.scn, m.idx) for m in olr]
    for message in run(build(name)):
        assert (message.scn, message.idx) in olr_positions


@pytest.mark.parametrize("name", [n for n in NAMES if n not in AVRO_FORMATS])
def test_utf8_and_escapes_survive(name: str) -> None:
    text = "\n".join(str(strict_json(m.data)) for m in run(build(name)) if not m.tombstone)
    if name != "debezium-smt" or "VC" in text:
        assert 'zażółć "q" /' in text and "日本語" in text
