"""The Spark job's pure-Python parts: message parsing, times, DDL, types, keys, the oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replicator.spark.coltypes import sql_type
from replicator.spark.ddl import apply_ddl, type_spec
from replicator.spark.debezium import parse_debezium
from replicator.spark.jsontext import decode_json
from replicator.spark.options import FormatHints, JobOptions, apply_olr_config
from replicator.spark.parse import key_columns, parse_message
from replicator.spark.tableschema import TableSchema
from replicator.spark.timeparse import header_time_us, iso_to_us

META = {"k_partition": 0, "k_offset": 7, "k_ts": None}
BEGIN = (
    b'{"scn":100,"e_scn":105,"tm":1772847880000000000,"c_scn":100,"c_idx":1,"xid":"0x0001.002.00000003",'
    b'"payload":[{"op":"begin"}]}'
)


def _rows(value: bytes, hints: FormatHints | None = None, key: bytes | None = None) -> list[dict]:
    return parse_message(value, key, hints or FormatHints(), META)


def test_olr_dml_keeps_value_text_and_reads_positions() -> None:
    msg = (
        b'{"e_scns":"0x0000000000000069","e_tms":"2026-03-07T01:44:40.000000000Z","c_scn":100,"c_idx":2,'
        b'"xidn":281483566645251,"payload":[{"op":"u","schema":{"owner":"A","table":"T","columns":[{"name":"ID",'
        b'"type":"number","precision":-1,"scale":-1,"nullable":false}]},"num":0,"rid":"AAARwWAAHAAAAEBAAA",'
        b'"before":{"ID":1,"N":123456789012345678901234567890.123},"after":{"ID":1,"N":null,"F":inf}}]}'
    )
    (row,) = _rows(msg, key=b'"ID":1')
    assert row["kind"] == "dml" and row["op"] == "u" and row["tbl"] == "A.T"
    assert (row["commit_scn"], row["c_scn"], row["c_idx"], row["elem"]) == (105, 100, 2, 0)
    assert row["xid"] == "281483566645251"
    assert row["commit_ts"] == iso_to_us("2026-03-07T01:44:40Z")
    assert dict(row["before"])["N"] == "123456789012345678901234567890.123"  # exact, not a float
    assert dict(row["after"]) == {"ID": "1", "N": None, "F": "Infinity"}
    assert json.loads(row["columns"])[0]["name"] == "ID"
    assert row["key_cols"] == ["ID"] and row["rid"] == "AAARwWAAHAAAAEBAAA"


def test_scn_type_1_uses_scn_and_missing_commit_scn_is_a_clear_error() -> None:
    msg = b'{"scn":500,"c_scn":400,"c_idx":3,"xid":"1.2.3","payload":[{"op":"commit"}]}'
    assert _rows(msg, FormatHints(scn_type=5))[0]["commit_scn"] == 500
    (err,) = _rows(msg)
    assert err["kind"] == "error" and "scn-type to 8" in err["error"]


def test_full_mode_checkpoint_and_garbage() -> None:
    full = (
        b'{"scn":9,"e_scn":12,"c_scn":9,"c_idx":1,"xid":"1.2.3","payload":[{"op":"c","schema":{"owner":"A",'
        b'"table":"T"},"after":{"ID":1}},{"op":"d","schema":{"owner":"A","table":"T"},"before":{"ID":2}}]}'
    )
    rows = _rows(full)
    assert [r["elem"] for r in rows] == [0, 1] and all(r["full"] for r in rows)
    chk = _rows(b'{"scn":77,"c_scn":77,"c_idx":1,"payload":[{"op":"chkpt","seq":1,"offset":512}]}')
    assert chk[0]["kind"] == "chkpt" and chk[0]["commit_scn"] == 77
    assert _rows(b"not json")[0]["kind"] == "error"
    assert _rows(b'{"a":1}')[0]["error"].endswith("(op, source, before/after)")
    assert _rows(BEGIN)[0]["kind"] == "begin"


def test_key_columns_from_tags_and_debezium_keys() -> None:
    assert key_columns(b'"ID":1,"CODE":"x"') == ["ID", "CODE"]
    assert key_columns(b'{"schema":{},"payload":{"ID":5}}') == ["ID"]
    assert key_columns(None) is None and key_columns(b"\xff") is None


def test_debezium_envelope_with_schema() -> None:
    doc = {
        "schema": {
            "fields": [
                {
                    "field": "after",
                    "fields": [
                        {"field": "ID", "type": "int64", "optional": False},
                        {
                            "field": "AMT",
                            "type": "bytes",
                            "name": "org.apache.kafka.connect.data.Decimal",
                            "parameters": {"scale": "2"},
                        },
                        {"field": "TS", "type": "int64", "name": "io.debezium.time.Timestamp"},
                        {"field": "BIN", "type": "bytes"},
                    ],
                }
            ]
        },
        "payload": {
            "op": "u",
            "before": None,
            "after": {"ID": 1, "AMT": "MDk=", "TS": 1733823000000, "BIN": "AQI="},
            "source": {"schema": "S", "table": "T", "scn": "90", "commit_scn": "95", "txId": "1.2.3", "ts_ms": 1000},
            "transaction": {"id": "1.2.3", "total_order": 4},
        },
    }
    (row,) = parse_debezium(decode_json(json.dumps(doc)), META)
    assert (row["tbl"], row["op"], row["commit_scn"], row["c_scn"], row["c_idx"]) == ("S.T", "u", 95, 0, 4)
    after = dict(row["after"])
    assert after["AMT"] == "123.45" and after["BIN"] == "0102" and after["TS"] == "1733823000000"
    cols = {c["name"]: c for c in json.loads(row["columns"])}
    assert cols["TS"]["unit"] == "ms" and sql_type(cols["AMT"]) == "decimal(38,2)"
    assert (
        parse_message(
            json.dumps({"payload": {"status": "BEGIN", "id": "1"}, "schema": {}}).encode(), None, FormatHints(), META
        )
        == []
    )


def test_header_times_in_every_form() -> None:
    want = iso_to_us("2026-03-07 01:44:40")
    for value in (
        1772847880000000000,
        "1772847880000000",
        1772847880000,
        "1772847880",
        "2026-03-07T01:44:40.000000000Z",
        "2026-03-07T01:44:40Z.000000Z",
        "2026-03-07 01:44:40.000",
    ):
        assert header_time_us(value) == want, value
    assert iso_to_us("-0044-03-15 00:00:00") < 0


def test_ddl_evolves_a_schema() -> None:
    s = TableSchema("A.T", [{"name": "ID", "type": "number"}])
    assert apply_ddl(s, 'ALTER TABLE "A"."T" ADD (NOTE VARCHAR2(20), "Amt" NUMBER(10,2) DEFAULT 0)').changed
    assert s.names == ["ID", "NOTE", "Amt"] and s.columns[2]["scale"] == 2
    r = apply_ddl(s, "alter table t rename column note to remark")
    assert r.rewrite and s.names == ["ID", "REMARK", "Amt"]
    assert apply_ddl(s, 'ALTER TABLE T DROP ("Amt")').changed and s.names == ["ID", "REMARK"]
    assert apply_ddl(s, "TRUNCATE TABLE A.T").truncate
    assert not apply_ddl(s, "CREATE INDEX I ON T(ID)").changed
    assert type_spec("TIMESTAMP(3) WITH LOCAL TIME ZONE")["type"] == "timestamp with local time zone"


@pytest.mark.parametrize(
    "spec, want",
    [
        ({"type": "number", "precision": 10, "scale": 0}, "bigint"),
        ({"type": "number", "precision": 12, "scale": 2}, "decimal(12,2)"),
        ({"type": "number", "precision": -1, "scale": -1}, "string"),
        ({"type": "number", "precision": -1, "scale": 0}, "decimal(38,0)"),
        ({"type": "date"}, "timestamp_ntz"),
        ({"type": "timestamp with local time zone"}, "timestamp"),
        ({"type": "timestamp with time zone"}, "struct<utc:timestamp,zone:string>"),
        ({"type": "raw"}, "binary"),
        ({"type": "binary_float"}, "float"),
        ({"type": "boolean"}, "boolean"),
    ],
)
def test_column_types(spec: dict, want: str) -> None:
    assert sql_type(spec) == want


def test_timestamp_with_time_zone_is_the_utc_instant_and_the_zone() -> None:
    """Every form the producers print: OLR's epoch,zone (timestamp-tz 0-3) and ISO-UTC zone (4-11),
    Debezium's ZonedTimestamp (local time with its offset)."""
    from datetime import UTC, datetime

    from replicator.spark.arrowconv import convert

    spec = {"type": "timestamp with time zone"}
    instant = datetime(2025, 1, 2, 1, 4, 5, 123456, tzinfo=UTC)
    got = convert(
        [
            "1735779845123456789,+02:00",
            "2025-01-02T01:04:05.123456789Z +02:00",
            "2025-01-02 01:04:05.123456 Europe/Warsaw",
            "2025-01-02T03:04:05.123456+02:00",
            None,
        ],
        spec,
        0,
        "string",
        tz_code=0,
    ).to_pylist()
    assert got[:4] == [
        {"utc": instant, "zone": "+02:00"},
        {"utc": instant, "zone": "+02:00"},
        {"utc": instant, "zone": "Europe/Warsaw"},
        {"utc": instant, "zone": "+02:00"},
    ]
    assert got[4] is None
    assert convert(["1735779845123,-05:00"], spec, 0, "string", tz_code=2).to_pylist() == [
        {"utc": datetime(2025, 1, 2, 1, 4, 5, 123000, tzinfo=UTC), "zone": "-05:00"}
    ]


def test_unbounded_numbers_as_decimal_never_fail() -> None:
    """NUMBER without precision in --unbounded-number decimal: decimal(38,10); more fraction digits
    are rounded, a value beyond 28 integer digits (36 digits, 1E+100) is NULL (the change log keeps
    its text), nothing raises."""
    from decimal import Decimal

    from replicator.spark.arrowconv import convert

    spec = {"type": "number", "precision": -1, "scale": -1}
    got = convert(
        [
            "12.5",
            "123456789012345678901234567890123456",
            "1E+100",
            "-1e-3",
            "0.123456789012345",
            "9999999999999999999999999999",
            None,
        ],
        spec,
        0,
        "decimal",
    ).to_pylist()
    assert got == [
        Decimal("12.5000000000"),
        None,
        None,
        Decimal("-0.0010000000"),
        Decimal("0.1234567890"),
        Decimal("9999999999999999999999999999.0000000000"),
        None,
    ]


def test_timestamp_conversion_uses_the_producer_unit() -> None:
    from datetime import datetime

    from replicator.spark.arrowconv import convert

    want = datetime(2025, 1, 2, 3, 4, 5)
    assert convert(["1735787045000000000"], {"type": "date"}, 0, "string").to_pylist() == [want]
    assert convert(["1735787045"], {"type": "date"}, 7, "string").to_pylist() == [want]
    assert convert(["2025-01-02T03:04:05Z"], {"type": "date"}, 8, "string").to_pylist() == [want]
    assert (
        convert(["2025-01-02T04:04:05+01:00"], {"type": "timestamp with local time zone"}, 8, "string")
        .to_pylist()[0]
        .replace(tzinfo=None)
        == want
    )


@pytest.mark.parametrize("mode", ["bytes", "base64", "base64-url-safe", "hex"])
def test_debezium_bytes_in_each_binary_handling_mode(mode: str) -> None:
    import base64

    raw = bytes([0xFB, 0xFF, 0x00, 0x3E, 0x10])
    text = {"hex": raw.hex().upper(), "base64-url-safe": base64.urlsafe_b64encode(raw).decode().rstrip("=")}.get(
        mode, base64.b64encode(raw).decode()
    )
    doc = {
        "schema": {
            "type": "struct",
            "fields": [
                {
                    "field": "after",
                    "type": "struct",
                    "fields": [
                        {"field": "ID", "type": "int32", "optional": False},
                        {"field": "R", "type": "bytes", "optional": True},
                    ],
                }
            ],
        },
        "payload": {
            "before": None,
            "after": {"ID": 1, "R": text},
            "op": "c",
            "source": {"schema": "A", "table": "T", "scn": "10", "commit_scn": "12"},
        },
    }
    hints = FormatHints.from_format({"type": "debezium", "binary-handling-mode": mode})
    rows = parse_message(json.dumps(doc).encode(), None, hints, META)
    assert dict(rows[0]["after"])["R"] == raw.hex()
    if mode == "hex":  # the other modes' text is not hex: a clear error, not a wrong value
        wrong = parse_message(json.dumps(doc).encode(), None, FormatHints(), META)
        assert wrong[0]["kind"] == "error" and "binary-handling-mode" in wrong[0]["error"]


def test_olr_config_gives_hints_topic_and_primary_keys(tmp_path: Path) -> None:
    from replicator.redogen.demo import demo_scenario
    from replicator.redogen.generate import generate

    result = generate(demo_scenario(), tmp_path)
    doc = json.loads(result.config.read_text())
    doc["source"][0]["format"] = {"type": "json", "scn-type": 8, "timestamp-metadata": 7}
    doc["source"][0]["filter"]["table"].insert(0, {"owner": "SHOP", "table": "ORD.*", "key": "ID, CUSTOMER_ID"})
    doc["target"][0]["writer"] = {"type": "kafka", "topic": "t1", "properties": {"bootstrap.servers": "h:1"}}
    result.config.write_text(json.dumps(doc))
    opts = JobOptions(lake=str(tmp_path / "lake"))
    apply_olr_config(opts, str(result.config))
    assert (opts.topic, opts.bootstrap_servers, opts.hints.scn_type, opts.hints.timestamp_metadata) == (
        "t1",
        "h:1",
        8,
        7,
    )
    assert opts.checkpoint_keys == {"SHOP.CUSTOMERS": ["ID"], "SHOP.ORDERS": ["ID"]}
    from replicator.spark.keys import KeyResolver

    keys = KeyResolver(opts)
    assert keys.decide("SHOP.ORDERS", None, True) == (["ID", "CUSTOMER_ID"], "filter key rule")
    assert keys.decide("X.Y", ["K"], True) == (["K"], "Kafka message key")
    assert keys.decide("X.Z", None, True)[0] is None


def test_final_state_matches_a_fold_of_the_expected_output(tmp_path: Path) -> None:
    """The oracle (scenario replay) agrees with the generator's expected OLR output."""
    from spark_values import actual, expected, same

    from replicator.redogen.final_state import FinalState
    from replicator.redogen.generate import generate
    from replicator.redogen.workloads import mixed

    sc = mixed(seed=3, events=250, wide=False)
    sc.format = {"type": "json", "scn-type": 8, "schema": 1, "rid": 1}
    state = FinalState(sc)
    sc.timeline = state.watch(sc.timeline)
    result = generate(sc, tmp_path)
    assert result.expected is not None
    by_rid: dict[str, dict[str, dict]] = {}
    for line in result.expected.read_bytes().splitlines():
        for el in decode_json(line)["payload"]:
            if el["op"] in ("c", "u", "d"):
                rows = by_rid.setdefault(el["schema"]["table"], {})
                if el["op"] == "d":
                    rows.pop(el["rid"])
                elif el["op"] == "c":
                    rows[el["rid"]] = dict(el["after"])
                else:  # a column only in before was set to a NULL OLR does not print
                    rows[el["rid"]].update({c: None for c in el.get("before") or {}}, **el["after"])
    for t in sc.tables:
        types = {c.name: c.type for c in t.columns}
        want = {str(r["ID"]): r for r in state.rows(t.full_name)}
        got = {str(r["ID"]): r for r in by_rid.get(t.name, {}).values()}
        assert sorted(want) == sorted(got), t.full_name
        for key, w in want.items():
            for c, sql in types.items():
                a, b = expected(sql, w.get(c)), _olr_value(sql, got[key].get(c), actual)
                assert same(sql, a, b), (t.full_name, key, c, a, b)


def _olr_value(sql: str, text: object, actual) -> object:  # type: ignore[no-untyped-def]
    """An OLR JSON value (default format options) in the canonical form of spark_values."""
    from datetime import datetime, timedelta

    if text is None:
        return None
    t = sql.upper()
    if t.startswith(("DATE", "TIMESTAMP")) and ("TIME ZONE" not in t or "LOCAL" in t):
        return datetime(1970, 1, 1) + timedelta(microseconds=int(text) // 1000)
    if t.startswith("RAW"):
        return bytes.fromhex(str(text))
    return actual(sql, text)


def _kafka_batch(values: list[bytes]):  # type: ignore[no-untyped-def]
    import pyarrow as pa

    n = len(values)
    return pa.RecordBatch.from_pydict(
        {
            "key": [None] * n,
            "value": values,
            "partition": [0] * n,
            "offset": list(range(n)),
            "timestamp": pa.array([None] * n, pa.timestamp("us", "UTC")),
        }
    )


ROW = (
    b'{"e_scn":105,"c_scn":100,"c_idx":2,"xid":"x","payload":[{"op":"c","schema":{"owner":"A","table":"T"},'
    b'"after":{"I":12,"D":1.50,"E":-1.5e+11,"B":123456789012345678901234567890,"S":"a","T":true,"N":null}}]}'
)
ROW_MINUS_ZERO = (
    b'{"e_scn":105,"c_scn":100,"c_idx":3,"xid":"x","payload":[{"op":"c","schema":{"owner":"A",'
    b'"table":"T"},"after":{"I":-0,"D":-0.50}}]}'
)


def test_fast_and_standard_json_decoders_give_the_same_events() -> None:
    import replicator.spark.jsontext as jt
    from replicator.spark.parse import event_arrow_schema, parse_batch

    if jt._FAST is None:
        pytest.skip("msgspec is not installed: only the standard decoder runs")
    batch, schema, hints = _kafka_batch([BEGIN, ROW, ROW_MINUS_ZERO]), event_arrow_schema(), FormatHints(scn_type=8)
    fast = parse_batch(batch, hints, schema)
    saved, jt._FAST = jt._FAST, None
    try:
        standard = parse_batch(batch, hints, schema)
    finally:
        jt._FAST = saved
    assert fast.equals(standard)
    images = fast.column("after").to_pylist()
    assert dict(images[1]) == {
        "I": "12",
        "D": "1.50",
        "E": "-1.5e+11",
        "B": "123456789012345678901234567890",
        "S": "a",
        "T": "true",
        "N": None,
    }  # every number exactly as printed
    assert dict(images[2]) == {"I": "-0", "D": "-0.50"}


def test_packed_events_reach_the_driver_unchanged() -> None:
    import pyarrow as pa

    from replicator.spark.eventpack import pack, unpack
    from replicator.spark.parse import event_arrow_schema, parse_batch

    events = parse_batch(_kafka_batch([BEGIN, ROW, b"not json"]), FormatHints(scn_type=8), event_arrow_schema())
    packed = pa.Table.from_batches([pack(events)])
    assert packed.column("rows").to_pylist() == [3]
    assert packed.column("max_commit_scn").to_pylist() == [105]
    assert packed.column("errors").to_pylist() == [1]
    assert unpack(packed).equals(pa.Table.from_batches([events]))
    assert unpack(packed.slice(0, 0)).schema == event_arrow_schema()


def test_source_tasks_pack_small_ranges_and_share_large_ones() -> None:
    """The Python source's tasks: several partitions' small ranges in one task; a large batch in
    equal tasks, each range read exactly once."""
    pytest.importorskip("pyspark")
    from replicator.spark.source import _tasks

    small = _tasks({("t", 0): 0, ("t", 1): 10}, {("t", 0): 5000, ("t", 1): 5010, ("u", 0): 7}, 50_000)
    assert [t.ranges for t in small] == [[("t", 0, 0, 5000), ("t", 1, 10, 5010), ("u", 0, 0, 7)]]
    begin = {("t", p): 100 for p in range(3)}
    stop = {("t", 0): 67_100, ("t", 1): 67_100, ("t", 2): 66_101}
    tasks = [t.ranges for t in _tasks(begin, stop, 50_000)]
    sizes = [sum(e - s for _, _, s, e in r) for r in tasks]
    assert len(tasks) == 5 and max(sizes) - min(sizes) <= 5 and sum(sizes) == 200_001
    for p in range(3):  # every partition's offsets covered once, in order
        pieces = [(s, e) for r in tasks for t, q, s, e in r if q == p]
        assert pieces[0][0] == 100 and pieces[-1][1] == stop[("t", p)]
        assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    assert _tasks({("t", 0): 5}, {("t", 0): 5}, 10) == []


def test_the_kafka_key_names_the_key_columns_on_each_tables_first_change_of_a_transaction() -> None:
    """parse_batch reads a Kafka key's column names for the first row change of each table and
    transaction (what the driver takes), not for every message."""
    import pyarrow as pa

    from replicator.spark.parse import event_arrow_schema, parse_batch

    def row(table: str, idx: int, scn: int, xid: str) -> bytes:
        return json.dumps(
            {
                "e_scn": scn,
                "c_scn": scn - 5,
                "c_idx": idx,
                "xid": xid,
                "payload": [{"op": "c", "schema": {"owner": "A", "table": table}, "after": {"ID": idx}}],
            }
        ).encode()

    values = [row("T", 1, 105, "x"), row("T", 2, 105, "x"), row("U", 3, 105, "x"), row("T", 1, 205, "y")]
    n = len(values)
    batch = pa.RecordBatch.from_pydict(
        {
            "key": [b'{"ID":%d}' % i for i in range(n)],
            "value": values,
            "partition": [0] * n,
            "offset": list(range(n)),
            "timestamp": pa.array([None] * n, pa.timestamp("us", "UTC")),
        }
    )
    events = parse_batch(batch, FormatHints(scn_type=8), event_arrow_schema())
    assert events.column("key_cols").to_pylist() == [["ID"], None, ["ID"], ["ID"]]


ODD = [  # what the compiled parse takes, and what it leaves to the python one (in place)
    b'{"scn":5,"tm":1700000000000000000,"c_scn":5,"c_idx":0,"xid":"0x1","payload":[{"op":"begin"}]}',
    b'{"c_scn":7,"c_idx":1,"e_scn":9,"e_tm":"2024-01-02T03:04:05.123Z","payload":[{"op":"c","schema":{"owner":"A",'
    b'"table":"T","columns":[{"name":"X","type":"number","scale":1.5}]},"rid":"AAA","after":{"X":-0,'
    b'"Y":"a\\u00e9\\n\\"q\\ud83d\\ude00","Z":null,"B":true,"F":1.50E+3,"G":12345678901234567890123}}]}',
    b'{"payload":[{"op":"u","schema":{"table":"T2"},"before":{"X":1},"after":{"X":2,"N":{"a":1}}}],"c_scn":8,'
    b'"c_idx":2,"e_scn":10}',
    b'{"payload":[{"op":"d","schema":{"owner":"A","table":"T"},"before":{"X":1}}],"c_scn":8,"c_idx":3,"e_scn":10,'
    b'"xid":77}',
    b'{"payload":[{"op":"ddl","schema":{"owner":"A","table":"T"},"sql":"alter table t add y int"}],"c_scn":8,'
    b'"c_idx":4,"e_scn":10}',
    b'{"payload":[{"op":"chkpt"}],"c_scn":8,"c_idx":5,"scn":10}',
    b"not json",
    b'{"payload":[{"op":"c","schema":{"owner":"A","table":"T"},"after":{"X":inf}}],"c_scn":8,"c_idx":6,"e_scn":10}',
    b'{"payload":[{"op":"c","schema":{"owner":"A","table":"T"},"after":{"X":1}}],"c_scn":8,"c_idx":6}',
    b'{"payload":[{"op":"c","schema":{"owner":"A","table":"T"},"after":{"X":"\xff"}}],"c_scn":8,"c_idx":6,"e_scn":11}',
    b'{"payload":[],"c_scn":8,"c_idx":7,"e_scn":11}',
    b' { "c_scn" : 8 , "c_idx" : 8 , "e_scn" : 12 , "payload" : [ { "op" : "c" , "schema" : { "owner" : "A" , '
    b'"table" : "T" } , "after" : { "X" : 1 , "W" : [1,2] } } , {"op":"commit"} ] } ',
    b'{"c_scn":8,"c_idx":9,"e_scn":12,"payload":[{"op":"c","schema":{"owner":"A","table":"T"},"after":{}},'
    b'{"op":"u","schema":{"owner":"A","table":"T"},"before":null,"after":{"X":"1"}}]}',
    None,
    b'{"schema":{},"payload":{"op":"c","source":{"scn":"5"},"after":{"X":1}}}',
    b'{"c_scn":8,"c_idx":10,"e_scn":12,"payload":[{"op":"c","schema":{"owner":"A","table":"T","columns":'
    b'[{"name":"X","type":"number"}]},"after":{"X":1}}]}',
    b'{"c_scn":8,"c_idx":11,"e_scn":12,"payload":[{"op":"c","schema":{"owner":"A","table":"T","columns":'
    b'[{"name": "X", "type": "number"}]},"after":{"X":1}}]}',
    b'{"c_scn":8,"c_idx":11,"e_scn":13,"payload":[{"op":"c","schema":{"owner":"A","table":"T","columns":'
    b'[{"name":"X","type":"number"}]},"after":{"X":1}}]}',
    b'{"c_scn":8,"c_idx":12,"e_scn":12,"payload":[{"op":"c","schema":{"owner":"","table":"T"},"after":{"X":1}}]} x',
    b'{"payload":[{"op":"c","schema":{"owner":"A","table":"T"},"after":{"X":1}}],"c_scn":9,"c_idx":1,"e_scn":14,'
    b'"xid":"late"}',
]


@pytest.mark.parametrize(
    "hints",
    [FormatHints(scn_type=8), FormatHints(scn_type=8, message=1), FormatHints(scn_type=5, timestamp_metadata=0)],
    ids=["scn8", "full", "scn5"],
)
@pytest.mark.parametrize("keyed", [False, True])
def test_compiled_and_python_parses_give_the_same_events(
    monkeypatch: pytest.MonkeyPatch, hints: FormatHints, keyed: bool
) -> None:
    """The compiled parse (replicator.spark._parse) makes the python parse's events, cell
    by cell: numbers as printed, escapes, NULLs, header fields after the payload, column lists
    and keys once per table and transaction, and the messages it leaves to the python parse
    (DDL, checkpoints, nested values, Debezium, malformed ones) in their place."""
    import pyarrow as pa

    import replicator.native as native
    from replicator.spark.parse import event_arrow_schema, parse_batch

    compiled_parse = native.spark_events()
    if compiled_parse is None:
        pytest.skip("the compiled parse is not built")
    values = [BEGIN, ROW, ROW_MINUS_ZERO, *ODD]
    n = len(values)
    batch = _kafka_batch(values)
    if keyed:  # tag fragments and JSON objects
        keys = pa.array([b'"X":1' if i % 3 else b'{"X":1}' for i in range(n)], pa.binary())
        batch = pa.RecordBatch.from_arrays([keys, *batch.columns[1:]], names=batch.schema.names)
    schema = event_arrow_schema()
    batches = [batch, *(_kafka_batch([v]) for v in values)]  # and each message alone (no marks from the others)
    compiled = [parse_batch(b, hints, schema) for b in batches]
    monkeypatch.setattr(native, "spark_events", lambda: None)
    python = [parse_batch(b, hints, schema) for b in batches]
    assert compiled[0].num_rows == python[0].num_rows >= n
    for got, want in zip(compiled, python):
        for name in schema.names:
            assert got.column(name).to_pylist() == want.column(name).to_pylist(), name
        assert got.equals(want)
