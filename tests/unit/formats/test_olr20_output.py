"""OpenLogReplicator 2.0 output: a 2.0 config prints what OLR 2.0.0's documentation says.

Two checks over the generated cases of ``tests/golden/olr-options`` (the reference
OpenLogReplicator's own output, recorded with 1.9 configs):

* every golden variant, its config rewritten by ``config upgrade`` to ``"version": "2.0.0"``,
  must come out byte for byte the same in each engine: the 2.0 dialect changes no output
  byte (replicator.config.dialect), and the python and native engines agree under it;
* :data:`DOC_TABLE` holds one row per documented 2.0 expectation, with the documentation
  file and line it is taken from (OLR's documentation at the 2.0.0 tag), checked field by
  field on the 2.0 output. Where the documentation and OLR's builder disagree, the row says
  so (``deviation``) and pins what the builder prints: those are the bytes a 2.0 consumer
  receives from OLR itself (docs/formats.md, "OpenLogReplicator 2.0").
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from golden_cases import MANIFEST, Cases, engines, generate_cases

from replicator.config.upgrade import upgrade_config
from replicator.redogen.options_golden import GOLDEN_DIR, run_entry

ENTRIES = {(v["case"], v["label"]): v for v in MANIFEST["variants"]}

FORMAT = "documentation/json/4.format.adoc"
NOTES = "documentation/release-notes/release-notes.adoc"
MANUAL = "documentation/user-manual/3.output-format.adoc"

Messages = list[dict[str, Any]]


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Cases:
    """Each case generated once, its config upgraded to 2.0: (directory, config, checkpoints)."""
    return generate_cases(tmp_path_factory, lambda config: upgrade_config(config)[0])


def run_20(cases: dict[str, Any], entry: dict[str, Any], engine: str, work: Path) -> bytes:
    case_dir, config, checkpoint = cases[entry["case"]]
    rc, output, log = run_entry(case_dir, config, checkpoint, entry, engine, work)
    assert rc == 0, log
    assert json.loads((work / "config.json").read_text())["version"] == "2.0.0"
    return output


@pytest.mark.parametrize("engine", engines())
@pytest.mark.parametrize("entry", MANIFEST["variants"], ids=[f"{v['case']}:{v['label']}" for v in MANIFEST["variants"]])
def test_20_config_prints_the_golden_bytes(entry: dict[str, Any], engine: str, cases: Any, tmp_path: Path) -> None:
    expected = (GOLDEN_DIR / entry["expected"]).read_bytes()
    output = run_20(cases, entry, engine, tmp_path)
    if output != expected:
        ours, theirs = output.splitlines(), expected.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
        pytest.fail(f"2.0 config, {engine}: line {first + 1} differs from the golden")


# ---- the documented 2.0 expectations, field by field -------------------------------------


def op(m: dict[str, Any]) -> str:
    return str(m["payload"][0]["op"])


def dml(msgs: Messages) -> Messages:
    return [m for m in msgs if op(m) in ("c", "u", "d")]


def of_op(msgs: Messages, name: str) -> Messages:
    found = [m for m in msgs if op(m) == name]
    assert found, f"no {name} message"
    return found


def row1(msgs: Messages) -> dict[str, Any]:
    """The after image of the first T_ALL insert (ID 1; all-types.yaml)."""
    for m in msgs:
        for p in m["payload"]:
            if p.get("op") == "c" and p["schema"]["table"] == "T_ALL" and p["after"]["ID"] == 1:
                return dict(p["after"])
    raise AssertionError("no insert of ID 1")


def every(msgs: Messages, check: Callable[[dict[str, Any]], bool]) -> bool:
    assert msgs
    return all(check(m) for m in msgs)


def matches(pattern: str, value: object) -> bool:
    return isinstance(value, str) and re.fullmatch(pattern, value) is not None


def logminer(xid: str) -> str:
    """`0xUUUU.SSS.QQQQQQQQ` in LogMiner's RAW byte order (each part little-endian)."""
    usn, slot, sqn = (int(part, 16) for part in xid[2:].split("."))
    return usn.to_bytes(2, "little").hex() + slot.to_bytes(2, "little").hex() + sqn.to_bytes(4, "little").hex()


Out = Callable[[str], Messages]  # the parsed 2.0 output of a variant ("case:label" or "label")
ISO = r"\d{4}-\d\d-\d\d"


@dataclass(frozen=True)
class Expectation:
    doc: str  # file of OLR's 2.0.0 documentation
    line: int  # the line the expectation is read from
    variant: str  # golden variant whose 2.0 output is checked
    says: str  # what the line says
    check: Callable[[Messages, Out], bool]
    deviation: str = ""  # where OLR's builder prints something else than the line (pinned here)


DOC_TABLE: tuple[Expectation, ...] = (
    Expectation(
        FORMAT,
        29,
        "type=debezium",
        "debezium: a preset of the format options, nothing else to set",
        lambda ms, _o: (
            every(dml(ms), lambda m: "rth" in m and "db" in m and matches(r"[0-9a-f]{16}", m["xid"]))
            and every(dml(ms), lambda m: "num" in m["payload"][0] and "rid" in m["payload"][0])
        ),
        "the preset's values are not in the 2.0 documentation; they are OLR's builder's (olr-interfaces.md §2.8)",
    ),
    Expectation(
        FORMAT,
        43,
        "combo=header-all",
        "attributes 0x1: attributes in the begin message",
        lambda ms, _o: every(of_op(ms, "begin"), lambda m: "attrs" in m),
    ),
    Expectation(
        FORMAT,
        44,
        "combo=header-all",
        "attributes 0x2: attributes in every DML message",
        lambda ms, _o: every(dml(ms), lambda m: "attrs" in m),
    ),
    Expectation(
        FORMAT,
        45,
        "combo=header-all",
        "attributes 0x4: attributes in the commit message",
        lambda ms, _o: every(of_op(ms, "commit"), lambda m: "attrs" in m),
    ),
    Expectation(
        NOTES,
        30,
        "combo=header-all",
        "unified transaction attribute names (lower case)",
        lambda ms, _o: every(ms, lambda m: all(k == k.lower() for k in m["attrs"])),
    ),
    Expectation(
        FORMAT,
        63,
        "column=1",
        "column 1: INSERT contains all values",
        lambda ms, o: (
            every(
                [m for m in of_op(ms, "c") if m["payload"][0]["schema"]["table"] == "T_ALL"],
                lambda m: len(set(m["payload"][0]["after"]) | {"C_TSTZ"}) == 19,
            )
            and any(len(m["payload"][0]["after"]) < 18 for m in of_op(o("default=json"), "c"))
        ),
        "a NULL TIMESTAMP WITH TIME ZONE is still left out (OLR's builder, 1.9 and 2.0)",
    ),
    Expectation(
        FORMAT,
        74,
        "combo=header-all",
        "db 0x1: db in DML messages",
        lambda ms, _o: every(dml(ms), lambda m: m["db"] == "ORCLPDB"),
    ),
    Expectation(
        FORMAT,
        75,
        "ddl-timeline:flags=ddl-header",
        "db 0x2: db in DDL messages",
        lambda ms, _o: every(of_op(ms, "ddl"), lambda m: isinstance(m.get("db"), str)),
    ),
    Expectation(
        FORMAT,
        90,
        "default=json",
        "interval-dts 0: nanoseconds",
        lambda ms, _o: row1(ms)["C_IDS"] == 108000123456789,
    ),
    Expectation(
        FORMAT,
        91,
        "interval-dts=1",
        "interval-dts 1: microseconds",
        lambda ms, _o: row1(ms)["C_IDS"] == 108000123457,
    ),
    Expectation(
        FORMAT,
        94,
        "interval-dts=4",
        "interval-dts 4: nanoseconds as a string",
        lambda ms, _o: row1(ms)["C_IDS"] == "108000123456789",
    ),
    Expectation(
        FORMAT,
        98,
        "interval-dts=8",
        'interval-dts 8: "01 06:00:00.123456789"',
        lambda ms, _o: row1(ms)["C_IDS"] == "1 06:00:00.123456789",
        "days are not zero-padded: 1, not 01",
    ),
    Expectation(
        FORMAT,
        100,
        "interval-dts=10",
        'interval-dts 10: "01-06:00:00.123456789"',
        lambda ms, _o: row1(ms)["C_IDS"] == "1-06:00:00.123456789",
        "days are not zero-padded: 1, not 01",
    ),
    Expectation(
        FORMAT,
        107,
        "default=json",
        "interval-ytm 0: months (1 year 8 months = 20)",
        lambda ms, _o: row1(ms)["C_IYM"] == 20,
    ),
    Expectation(
        FORMAT,
        108,
        "interval-ytm=1",
        "interval-ytm 1: months as a string",
        lambda ms, _o: row1(ms)["C_IYM"] == "20",
    ),
    Expectation(
        FORMAT,
        110,
        "interval-ytm=3",
        'interval-ytm 3: "1,8"',
        lambda ms, _o: row1(ms)["C_IYM"] == "1,8",
    ),
    Expectation(
        FORMAT,
        121,
        "message=30",
        "message 0x2: num in each message",
        lambda ms, _o: every(dml(ms), lambda m: isinstance(m["payload"][0]["num"], int)),
    ),
    Expectation(
        FORMAT,
        127,
        "message=30",
        "message 0x10: the redo data offset",
        lambda ms, _o: every(dml(ms), lambda m: isinstance(m["payload"][0]["offset"], int)),
    ),
    Expectation(
        FORMAT,
        131,
        "combo=full-schema-rid",
        "rid 1: a rid field with the row id",
        lambda ms, _o: every(ms, lambda m: all(matches(r"[A-Za-z0-9+/]{18}", p["rid"]) for p in m["payload"])),
    ),
    Expectation(
        FORMAT,
        135,
        "combo=header-all",
        "redo-thread 1: rth with the redo thread",
        lambda ms, _o: every(ms, lambda m: m["rth"] == 1),
    ),
    Expectation(
        FORMAT,
        145,
        "combo=full-schema-rid",
        "schema 0x1: full schema (columns) on a table's first use",
        lambda ms, _o: "columns" in ms[0]["payload"][0]["schema"],
    ),
    Expectation(
        FORMAT,
        154,
        "combo=full-schema-rid",
        "schema 0x4: objn (object id) in the schema",
        lambda ms, _o: every(ms, lambda m: all(isinstance(p["schema"]["obj"], int) for p in m["payload"])),
        f'printed as "obj", as {MANUAL}:96 says',
    ),
    Expectation(
        FORMAT,
        166,
        "default=json",
        "scn 0: decimal scn",
        lambda ms, _o: every(of_op(ms, "begin"), lambda m: isinstance(m["scn"], int)),
    ),
    Expectation(
        FORMAT,
        167,
        "combo=header-all",
        "scn 1: hex text in scns",
        lambda ms, _o: every(ms, lambda m: matches(r"0x[0-9a-f]{16}", m["scns"])),
    ),
    Expectation(
        FORMAT,
        173,
        "combo=header-commit-values",
        "scn-type 0x1: the commit SCN as the DML SCN",
        lambda ms, _o: all(
            m["scn"] == next(c["scn"] for c in ms[i:] if op(c) == "commit") for i, m in enumerate(ms) if m in dml(ms)
        ),
    ),
    Expectation(
        FORMAT,
        174,
        "combo=header-all",
        "scn-type 0x2: bscn/bscns (begin SCN) in every message",
        lambda ms, _o: every(ms, lambda m: matches(r"0x[0-9a-f]{16}", m["b_scns"]) and "bscns" not in m),
        "printed as b_scn/b_scns (OLR's builder, 1.9 and 2.0)",
    ),
    Expectation(
        FORMAT,
        175,
        "combo=header-commit-values",
        "scn-type 0x4: scn in every message",
        lambda ms, _o: every(ms, lambda m: isinstance(m["scn"], int)),
    ),
    Expectation(
        FORMAT,
        176,
        "combo=header-all",
        "scn-type 0x8: cscn/cscns (commit SCN) in every message",
        lambda ms, _o: every(ms, lambda m: m["e_scns"] == m["scns"] and "cscns" not in m),
        "printed as e_scn/e_scns (OLR's builder, 1.9 and 2.0)",
    ),
    Expectation(
        FORMAT,
        183,
        "default=json",
        "timestamp 0: Unix nanoseconds",
        lambda ms, _o: row1(ms)["C_TS9"] == 1749983400999999999,
    ),
    Expectation(
        FORMAT,
        184,
        "timestamp=1",
        "timestamp 1: Unix microseconds",
        lambda ms, _o: row1(ms)["C_TS9"] == 1749983401000000,
    ),
    Expectation(
        FORMAT,
        186,
        "timestamp=3",
        "timestamp 3: Unix seconds",
        lambda ms, _o: row1(ms)["C_TS9"] == 1749983401,
    ),
    Expectation(
        FORMAT,
        188,
        "timestamp=5",
        "timestamp 5: Unix microseconds as a string",
        lambda ms, _o: row1(ms)["C_TS9"] == "1749983401000000",
    ),
    Expectation(
        FORMAT,
        191,
        "timestamp=8",
        "timestamp 8: ISO-8601, nanoseconds, Z",
        lambda ms, _o: row1(ms)["C_TS9"] == "2025-06-15T10:30:00.999999999Z",
    ),
    Expectation(
        FORMAT,
        192,
        "timestamp=9",
        "timestamp 9: ISO-8601, microseconds, Z",
        lambda ms, _o: row1(ms)["C_TS9"] == "2025-06-15T10:30:01.000000Z",
    ),
    Expectation(
        FORMAT,
        194,
        "timestamp=11",
        "timestamp 11: ISO-8601, seconds, Z",
        lambda ms, _o: matches(ISO + r"T\d\d:\d\d:\d\dZ", row1(ms)["C_TS9"]),
    ),
    Expectation(
        FORMAT,
        195,
        "timestamp=12",
        "timestamp 12: ISO-8601 without T and Z, nanoseconds",
        lambda ms, _o: row1(ms)["C_TS9"] == "2025-06-15 10:30:00.999999999",
    ),
    Expectation(
        FORMAT,
        198,
        "timestamp=15",
        "timestamp 15: ISO-8601 without T and Z, seconds",
        lambda ms, _o: matches(ISO + r" \d\d:\d\d:\d\d", row1(ms)["C_TS9"]),
    ),
    Expectation(
        FORMAT,
        204,
        "combo=header-all",
        "timestamp-metadata: the timestamp codes for the message header (8: ISO, ns, Z)",
        lambda ms, _o: every(ms, lambda m: matches(ISO + r"T\d\d:\d\d:\d\d\.000000000Z", m["tms"])),
    ),
    Expectation(
        FORMAT,
        213,
        "timestamp-tz=1",
        "timestamp-tz 1: microseconds, comma, zone",
        lambda ms, _o: row1(ms)["C_TSTZ"] == "1749963600123456,+05:30",
    ),
    Expectation(
        FORMAT,
        216,
        "timestamp-tz=4",
        "timestamp-tz 4: ISO-8601 nanoseconds Z, space, zone",
        lambda ms, _o: row1(ms)["C_TSTZ"] == "2025-06-15T05:00:00.123456000Z +05:30",
    ),
    Expectation(
        FORMAT,
        221,
        "timestamp-tz=9",
        "timestamp-tz 9: without T and Z, microseconds, space, zone",
        lambda ms, _o: row1(ms)["C_TSTZ"] == "2025-06-15 05:00:00.123456 +05:30",
    ),
    Expectation(
        FORMAT,
        223,
        "timestamp-tz=11",
        "timestamp-tz 11: without T and Z, seconds, space, zone",
        lambda ms, _o: row1(ms)["C_TSTZ"] == "2025-06-15 05:00:00 +05:30",
    ),
    Expectation(
        FORMAT,
        229,
        "combo=header-commit-values",
        "timestamp-type 0x1: the commit timestamp as the DML timestamp",
        lambda ms, _o: all(
            m["tms"] == next(c["tms"] for c in ms[i:] if op(c) == "commit") for i, m in enumerate(ms) if m in dml(ms)
        ),
    ),
    Expectation(
        FORMAT,
        230,
        "combo=header-all",
        "timestamp-type 0x2: btm/btms (begin timestamp) in every message",
        lambda ms, _o: every(ms, lambda m: isinstance(m["b_tms"], str) and "btms" not in m),
        "printed as b_tm/b_tms (OLR's builder, 1.9 and 2.0)",
    ),
    Expectation(
        FORMAT,
        231,
        "combo=header-commit-values",
        "timestamp-type 0x4: tm in every message",
        lambda ms, _o: every(ms, lambda m: isinstance(m["tms"], str)),
    ),
    Expectation(
        FORMAT,
        232,
        "combo=header-all",
        "timestamp-type 0x8: ctm/ctms (commit timestamp) in every message",
        lambda ms, _o: every(ms, lambda m: isinstance(m["e_tms"], str) and "ctms" not in m),
        "printed as e_tm/e_tms (OLR's builder, 1.9 and 2.0)",
    ),
    Expectation(
        FORMAT,
        238,
        "combo=header-all",
        "user-type 0x1: usr in begin messages",
        lambda ms, _o: every(of_op(ms, "begin"), lambda m: m["usr"] == "OLR_TEST"),
    ),
    Expectation(
        FORMAT,
        239,
        "combo=header-all",
        "user-type 0x2: usr in every DML message",
        lambda ms, _o: every(dml(ms), lambda m: m["usr"] == "OLR_TEST"),
    ),
    Expectation(
        FORMAT,
        240,
        "combo=header-all",
        "user-type 0x4: usr in commit messages",
        lambda ms, _o: every(of_op(ms, "commit"), lambda m: m["usr"] == "OLR_TEST"),
    ),
    Expectation(
        FORMAT,
        241,
        "ddl-timeline:flags=ddl-header",
        "user-type 0x8: usr in every DDL message",
        lambda ms, _o: (
            every(of_op(ms, "ddl"), lambda m: isinstance(m["usr"], str)) and all("usr" not in m for m in dml(ms))
        ),
    ),
    Expectation(
        FORMAT,
        261,
        "default=json",
        "xid 0: classic hex text 0x0002.012.00004162",
        lambda ms, _o: every(dml(ms), lambda m: matches(r"0x[0-9a-f]{4}\.[0-9a-f]{3}\.[0-9a-f]{8}", m["xid"])),
    ),
    Expectation(
        FORMAT,
        262,
        "combo=header-commit-values",
        "xid 1: dotted decimal 2.18.16738",
        lambda ms, o: (
            [m["xid"] for m in dml(ms)]
            == [".".join(str(int(p, 16)) for p in m["xid"][2:].split(".")) for m in dml(o("default=json"))]
        ),
    ),
    Expectation(
        FORMAT,
        263,
        "combo=header-all",
        "xid 2: a single 64-bit number in xidn",
        lambda ms, o: (
            [m["xidn"] for m in dml(ms)]
            == [
                (int(u, 16) << 48) | (int(s, 16) << 32) | int(q, 16)
                for u, s, q in (m["xid"][2:].split(".") for m in dml(o("default=json")))
            ]
        ),
    ),
    Expectation(
        FORMAT,
        264,
        "xid=3",
        "xid 3: LogMiner format value as a string",
        lambda ms, o: [m["xid"] for m in dml(ms)] == [logminer(m["xid"]) for m in dml(o("default=json"))],
        "the byte order is not in the documentation: usn, slot and sqn each little-endian (OLR's builder)",
    ),
)


# The start of each cited line of 4.format.adoc (2.0.0): checked against a copy of the
# documentation by test_citations_match_the_documentation.
LINE_STARTS: dict[int, str] = {
    29: "`debezium` — Predefined set of all formatting op",
    43: "`0x0001` — add attributes to the transaction beg",
    44: "`0x0002` — add attributes to every DML message.",
    45: "`0x0004` — add attributes to the commit message.",
    63: "`1` — INSERT/DELETE contain all values; UPDATE a",
    74: "`0x0001` — include `db` in DML messages.",
    75: "`0x0002` — include `db` in DDL messages.",
    90: '`0` — Value in nanoseconds - `"val": 12345600000',
    91: "`1` — Value in microseconds (possible data preci",
    94: "`4` — Value in nanoseconds stored as a string -",
    98: "`8` — Value stored in part of _ISO-8601_ format",
    100: "`10` — Value stored in part of _ISO-8601_ format",
    107: '`0` — Value in months - `"val": 20` (1 year, 8 m',
    108: '`1` — Value in months as a string - `"val": "20"',
    110: "`3` — Value in string format, number of years an",
    121: "`0x0002` — add `num` sequence number to each mes",
    127: "`0x0010` — include low-level data offset for deb",
    131: "If set to `1`, add a `rid` field with the Row ID",
    135: "If set to `1`, add a `rth` field with the Redo T",
    145: "`0x0001` — emit full schema (including columns)",
    154: "`0x0004` — include `objn` (object ID) in schema",
    166: "`0` — decimal `scn` field.",
    167: "`1` — hexadecimal text in `scns` field (e.g., `0",
    173: "`0x0001` — use commit SCN as DML SCN (default is",
    174: "`0x0002` — include `bscn/bscns` (begin transacti",
    175: "`0x0004` — include `scn/scns` in every message (",
    176: "`0x0008` — include `cscn/cscns` (commit transact",
    183: '`0` — Unix with nanoseconds - `"tm": 16513848001',
    184: "`1` — Unix with precision to the microsecond (po",
    186: "`3` — Unix with precision to the second  (possib",
    188: "`5` — Unix with microsecond precision stored as",
    191: "`8` — _ISO-8601_ format stored with nanosecond p",
    192: "`9` — _ISO-8601_ format stored with microsecond",
    194: "`11` — _ISO-8601_ format stored second precision",
    195: "`12` — _ISO-8601_ format stored with nanosecond",
    198: "`15` — _ISO-8601_ format stored second precision",
    204: "Format for timestamps for metadata message.",
    213: "`1` — Unix with microsecond precision stored as",
    216: "`4` — _ISO-8601_ format stored with nanosecond p",
    221: "`9` — _ISO-8601_ format stored with microsecond",
    223: "`11` — _ISO-8601_ format stored second precision",
    229: "`0x0001` — use commit timestamp as DML timestamp",
    230: "`0x0002` — include `btm/btms` (begin transaction",
    231: "`0x0004` — include `tm/tms` in every message (de",
    232: "`0x0008` — include `ctm/ctms` (commit transactio",
    238: "`0x0001` — include `usr` in begin messages (only",
    239: "`0x0002` — include `usr` in every DML message (o",
    240: "`0x0004` — include `usr` in commit messages (onl",
    241: "`0x0008` — include `usr` in every DDL message (o",
    261: "`0` — classic hex text, e.g., `0x0002.012.000041",
    262: "`1` — dotted decimal, e.g., `2.18.16738`.",
    263: "`2` — single 64-bit numeric `xidn`.",
    264: "`3` — Logminer format value stored as a string.",
}


@pytest.fixture(scope="module")
def output_20(cases: Any, tmp_path_factory: pytest.TempPathFactory) -> Out:
    """The parsed 2.0 output of a variant, python engine (the first test shows native's is the same)."""
    cache: dict[str, Messages] = {}

    def get(variant: str) -> Messages:
        key = variant if ":" in variant else f"all-types:{variant}"
        if key not in cache:
            entry = ENTRIES[tuple(key.split(":", 1))]  # type: ignore[index]
            data = run_20(cases, entry, "python", tmp_path_factory.mktemp("run"))
            cache[key] = [json.loads(line) for line in data.splitlines()]
        return cache[key]

    return get


@pytest.mark.parametrize("row", DOC_TABLE, ids=[f"{Path(r.doc).name}:{r.line}" for r in DOC_TABLE])
def test_documented_20_expectation(row: Expectation, output_20: Out) -> None:
    assert row.check(output_20(row.variant), output_20), f"{row.doc}:{row.line}: {row.says} ({row.variant})"


def test_the_table_cites_each_documented_option() -> None:
    """Every 2.0 format option of 4.format.adoc has at least one row (and each row a line)."""
    cited = {r.line for r in DOC_TABLE if r.doc == FORMAT}
    # The option table rows of 4.format.adoc (2.0.0): attributes 38, column 58, db 69,
    # interval-dts 84, interval-ytm 102, message 113, rid 129, redo-thread 133, schema 137,
    # scn 162, scn-type 169, timestamp 178, timestamp-metadata 202, timestamp-tz 207,
    # timestamp-type 225, user-type 234, xid 257, and the next table row after each.
    bounds = [24, 38, 47, 58, 69, 77, 84, 102, 113, 129, 133, 137, 162, 169, 178, 202, 207, 225, 234, 243, 257, 266]
    skipped = {47, 77, 243}  # char, flush-buffer, unknown: not changed by 2.0 (the 1.9 goldens cover them)
    for start, end in zip(bounds, bounds[1:]):
        if start not in skipped:
            assert any(start <= line < end for line in cited), f"no row for the option at {FORMAT}:{start}"


def test_citations_match_the_documentation() -> None:
    """With OLR's 2.0.0 documentation at $OLR20_DOCS (the `documentation` folder of the 2.0.0
    tag), each cited line of 4.format.adoc starts as LINE_STARTS says."""
    root = os.environ.get("OLR20_DOCS")
    if not root:
        pytest.skip("OLR20_DOCS not set (the documentation folder of OpenLogReplicator 2.0.0)")
    lines = (Path(root) / "json" / "4.format.adoc").read_text().splitlines()
    assert "2.0.0" in lines[2], "not the 2.0.0 documentation"
    for number, start in LINE_STARTS.items():
        assert lines[number - 1].lstrip("*| ").startswith(start), f"{FORMAT}:{number}: {lines[number - 1]!r}"
    assert {r.line for r in DOC_TABLE if r.doc == FORMAT} == set(LINE_STARTS)
