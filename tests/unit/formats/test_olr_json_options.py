"""OpenLogReplicator JSON: header options, positions (c_scn/c_idx), message modes, schema."""

from __future__ import annotations

from dataclasses import replace

from olr_test_builders import change, col, delete, insert, table, transaction, update, xid

from replicator.events import TYPE_DATE, TYPE_NUMBER, TYPE_VARCHAR2, Checkpoint, Transaction
from replicator.formats.base import FormatOptions
from replicator.formats.olr_json import OlrJsonFormat

XID = "10.12.572"
TAB = table("TEST_CDC", [col("ID", TYPE_NUMBER, key=True, nullable=False), col("NAME", TYPE_VARCHAR2, 100)], obj=72726)


def _txn(*changes, **kw) -> Transaction:
    return transaction(XID, 2267707, 1772847880, list(changes), commit_scn=2267710, **kw)


def _lines(options: FormatOptions, *txns: Transaction) -> list[str]:
    fmt = OlrJsonFormat(options)
    return [m.data.decode() for txn in txns for m in fmt.transaction(txn)]


def test_defaults_match_spec_example() -> None:
    lines = _lines(FormatOptions(), _txn(insert(TAB, {"ID": 1, "NAME": "abc"})))
    assert lines == [
        '{"scn":2267707,"tm":1772847880000000000,"c_scn":2267707,"c_idx":1,'
        '"xid":"0x000a.00c.0000023c","payload":[{"op":"begin"}]}',
        '{"c_scn":2267707,"c_idx":2,"xid":"0x000a.00c.0000023c","payload":[{"op":"c",'
        '"schema":{"owner":"OLR_TEST","table":"TEST_CDC"},"after":{"ID":1,"NAME":"abc"}}]}',
        '{"c_scn":2267707,"c_idx":3,"xid":"0x000a.00c.0000023c","payload":[{"op":"commit"}]}',
    ]


def test_update_with_rid_obj_num_and_scn_everywhere() -> None:
    options = FormatOptions(rid=1, schema=4, message=2, scn_type=4)
    upd = update(TAB, {"ID": 1, "NAME": "abc"}, {"NAME": "xyz"}, scn=2267712, bdba=(7 << 22) | 363)
    lines = _lines(options, _txn(upd))
    assert lines[1] == (
        '{"scn":2267712,"c_scn":2267707,"c_idx":2,"xid":"0x000a.00c.0000023c","payload":[{"op":"u",'
        '"schema":{"owner":"OLR_TEST","table":"TEST_CDC","obj":72726},"num":0,'
        '"rid":"AAARwWAAHAAAAFrAAA","before":{"ID":1,"NAME":"abc"},"after":{"ID":1,"NAME":"xyz"}}]}'
    )
    assert lines[2].startswith('{"scn":2267710,"c_scn":2267707,"c_idx":3,')


def test_xid_formats() -> None:
    row = insert(TAB, {"ID": 1})
    expected = ['"xid":"0x000a.00c.0000023c"', '"xid":"10.12.572"', f'"xidn":{xid(XID)}', '"xid":"0a000c003c020000"']
    for code, text in enumerate(expected):
        assert text in _lines(FormatOptions(xid=code), _txn(row))[0]


def test_scn_type_and_timestamp_type_bits() -> None:
    row = insert(TAB, {"ID": 1}, scn=2267708, time=1772847881)
    txn = transaction(XID, 2267707, 1772847880, [row], commit_scn=2267710)
    txn.commit_time = 1772847885
    lines = _lines(FormatOptions(scn=1, scn_type=1 | 2 | 8, timestamp_metadata=3, timestamp_type=2 | 8, xid=1), txn)
    assert lines[0].startswith(
        '{"scns":"0x0000000000229a3e","b_scns":"0x0000000000229a3b",'
        '"e_scns":"0x0000000000229a3e","tm":1772847881,"b_tm":1772847880,'
        '"e_tm":1772847885,"c_scn":2267707,"c_idx":1,'
    )
    assert lines[1].startswith(
        '{"b_scns":"0x0000000000229a3b","e_scns":"0x0000000000229a3e","b_tm":1772847880,"e_tm":1772847885,"c_scn"'
    )
    lines = _lines(FormatOptions(timestamp_metadata=3, timestamp_type=1 | 4, xid=1), txn)
    assert lines[1].startswith('{"tm":1772847885,"c_scn":2267707,"c_idx":2,')
    lines = _lines(FormatOptions(timestamp_metadata=3, timestamp_type=4, xid=1), txn)
    assert [line.split(',"c_scn"')[0] for line in lines] == [
        '{"scn":2267707,"tm":1772847881',
        '{"tm":1772847881',
        '{"tm":1772847885',
    ]


def test_db_usr_rth_and_attributes() -> None:
    attributes = {"os username": "oracle", "login username": "OLR_TEST", "version": "23"}
    txn = _txn(insert(TAB, {"ID": 1}), attributes=attributes, con_name="FREEPDB1", thread=2)
    lines = _lines(FormatOptions(db=1, user_type=1 | 4, redo_thread=1, attributes=2, xid=1), txn)
    assert lines[0].endswith('"xid":"10.12.572","db":"FREEPDB1","usr":"OLR_TEST","rth":2,"payload":[{"op":"begin"}]}')
    assert (
        '"xid":"10.12.572","db":"FREEPDB1","rth":2,"attrs":{"version":"23",'
        '"login username":"OLR_TEST","os username":"oracle"},"payload":[{"op":"c"'
    ) in lines[1]
    assert '"usr":"OLR_TEST","rth":2,"payload":[{"op":"commit"}]}' in lines[2]


def test_full_mode_offset_and_num() -> None:
    txn = _txn(insert(TAB, {"ID": 1}, offset=4096), delete(TAB, {"ID": 2, "NAME": "x"}, offset=8192))
    lines = _lines(FormatOptions(message=1 | 2 | 0x10, xid=1, timestamp_metadata=3), txn)
    assert lines == [
        '{"scn":2267707,"tm":1772847880,"c_scn":2267707,"c_idx":1,"xid":"10.12.572","payload":['
        '{"op":"c","offset":4096,"schema":{"owner":"OLR_TEST","table":"TEST_CDC"},"num":0,'
        '"after":{"ID":1}},{"op":"d","offset":8192,"schema":{"owner":"OLR_TEST","table":"TEST_CDC"},'
        '"num":1,"before":{"ID":2,"NAME":"x"}}]}'
    ]


def test_skip_begin_and_commit() -> None:
    txn = _txn(insert(TAB, {"ID": 1}))
    lines = _lines(FormatOptions(message=4 | 8, xid=1), txn)
    assert lines == [
        '{"c_scn":2267707,"c_idx":1,"xid":"10.12.572","payload":[{"op":"c","schema":'
        '{"owner":"OLR_TEST","table":"TEST_CDC"},"after":{"ID":1}}]}'
    ]


def test_positions_follow_head_rules() -> None:
    fmt = OlrJsonFormat(FormatOptions(xid=1, timestamp_metadata=3))
    [cp] = fmt.checkpoint(Checkpoint(scn=2267707, time=1772847879, seq=16, offset=4096))
    assert cp.checkpoint and (cp.scn, cp.idx) == (2267707, 0)
    assert cp.data == (
        b'{"scn":2267707,"tm":1772847879,"c_scn":2267707,"c_idx":1,"payload":[{"op":"chkpt","seq":16,"offset":4096}]}'
    )
    # A transaction beginning at the checkpoint's SCN continues its numbering.
    first = fmt.transaction(_txn(insert(TAB, {"ID": 1})))
    assert [(m.scn, m.idx) for m in first] == [(2267707, 1), (2267707, 2), (2267707, 3)]
    assert b'"c_idx":2,' in first[0].data
    # An empty transaction prints nothing but still moves c_scn.
    assert fmt.transaction(transaction(XID, 2267720, 1772847890, [])) == []
    [switch] = fmt.checkpoint(Checkpoint(scn=2267730, time=1772847899, seq=16, offset=4096, redo_switch=True))
    assert switch.data.endswith(
        b'"c_scn":2267730,"c_idx":1,"payload":[{"op":"chkpt","seq":16,"offset":4096,"redo":true}]}'
    )
    second = fmt.transaction(transaction(XID, 2267730, 1772847900, [insert(TAB, {"ID": 2})]))
    assert [m.idx for m in second] == [1, 2, 3]


def test_checkpoint_before_any_transaction_prints_olr_defaults() -> None:
    fmt = OlrJsonFormat(FormatOptions(scn=1, scn_type=8, redo_thread=1, timestamp_type=2))
    [cp] = fmt.checkpoint(Checkpoint(scn=5, time=0, seq=1, offset=512))
    assert cp.data == (
        b'{"scns":"0x0000000000000005","e_scns":"0xffffffffffffffff","tm":0,"b_tm":0,'
        b'"c_scn":5,"c_idx":1,"rth":0,"payload":[{"op":"chkpt","seq":1,"offset":512}]}'
    )


def test_schema_columns_first_use_and_repeated() -> None:
    tab = table(
        "T",
        [
            col("ID", TYPE_NUMBER, key=True, nullable=False, precision=10, scale=0),
            col("D", TYPE_DATE, 7),
            col("S", TYPE_VARCHAR2, 20),
        ],
    )
    columns = (
        '"columns":[{"name":"ID","type":"number","precision":10,"scale":0,"nullable":false},'
        '{"name":"D","type":"date","nullable":true},'
        '{"name":"S","type":"varchar2","length":20,"nullable":true}]'
    )
    txns = [_txn(insert(tab, {"ID": 1})), _txn(insert(tab, {"ID": 2}))]
    once = _lines(FormatOptions(schema=1), *txns)
    assert columns in once[1] and columns not in once[4]
    assert '"schema":{"owner":"OLR_TEST","table":"T"}' in once[4]
    every = _lines(FormatOptions(schema=7), *txns)
    assert f'"table":"T","obj":73000,{columns}}}' in every[1] and columns in every[4]


def test_unknown_table_needs_schemaless_or_system_flag() -> None:
    row = change("c", None, None, {0: b"\xc1\x02", 2: None}, obj=5)
    assert _lines(FormatOptions(), _txn(row)) == []
    lines = _lines(FormatOptions(flags=0x2, schema=4), _txn(row))
    assert '"schema":{"table":"OBJ_5","obj":5},"after":{"COL_0":"c102","COL_2":null}}' in lines[1]
    upd = change("u", None, {1: b"\x01"}, {0: b"\x02"}, obj=5)
    lines = _lines(FormatOptions(flags=0x2), _txn(upd))
    assert '"before":{"COL_0":null,"COL_1":"01"},"after":{"COL_0":"02","COL_1":null}' in lines[1]


def test_system_tables_need_flag() -> None:
    sys_tab = replace(TAB, system=True)
    assert _lines(FormatOptions(), _txn(insert(sys_tab, {"ID": 1}))) == []
    assert len(_lines(FormatOptions(flags=0x800), _txn(insert(sys_tab, {"ID": 1})))) == 3


def test_same_begin_scn_continues_numbering_across_checkpoint() -> None:
    # As in the interleaved-transactions reference: 4 messages, a checkpoint at the same SCN,
    # then a transaction with the same begin SCN starting at c_idx 6.
    fmt = OlrJsonFormat(FormatOptions())
    first = fmt.transaction(transaction("10.27.984", 3806554, 1, [insert(TAB, {"ID": 5}), insert(TAB, {"ID": 6})]))
    assert [m.idx for m in first] == [0, 1, 2, 3]
    [cp] = fmt.checkpoint(Checkpoint(scn=3806554, time=1, seq=1, offset=0))
    assert cp.idx == 4
    second = fmt.transaction(transaction("2.1.752", 3806554, 1, [insert(TAB, {"ID": 7})]))
    assert b'"c_scn":3806554,"c_idx":6,' in second[0].data
