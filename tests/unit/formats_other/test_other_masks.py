"""Qlik changeMask/columnMask exactly as qlik-replicate-msk-data-messages.txt documents them."""

from __future__ import annotations

from other_formats_decode import strict_json
from other_formats_scenario import ALL_TYPES, NO_PK, options, run

from replicator.events import OP_DELETE, OP_INSERT, OP_UPDATE, RowChange
from replicator.formats.base import FormatOptions
from replicator.formats.masks import change_mask, column_mask, mask_hex, mask_ordinals
from replicator.formats.qlik import QlikFormat
from replicator.formats.rowvalues import TableView, row_values
from replicator.values.lob import LobValue
from replicator.values.number import encode_number


def test_document_example() -> None:
    # "If UPDATE mask is 0B hexadecimal, which is 1011 binary - ordinals 1, 2 and 4 changed."
    assert mask_hex([1, 2, 4], 4) == "0B"
    assert mask_ordinals("0B") == [1, 2, 4]


def test_little_endian_bytes_beyond_eight_columns() -> None:
    # "if there are 10 data columns, they occupy bits 0 to 9": two bytes, byte 0 first.
    assert mask_hex([1, 10], 10) == "0102"
    assert mask_hex(range(1, 11), 10) == "FF03"
    assert mask_ordinals("FF03") == list(range(1, 11))
    assert mask_hex([], 3) == "00"


def _row(op: str, table, before: dict | None, after: dict | None):
    change = RowChange(
        op=op, obj=table.obj, data_obj=table.obj, table=table, before=before, after=after, scn=1, time=0, bdba=0, slot=0
    )
    return row_values(change, TableView(table, FormatOptions()))


def _ordinal(name: str) -> int:
    return 1 + [c.name for c in ALL_TYPES.columns].index(name)


def test_insert_sets_every_inserted_column_but_lobs() -> None:
    index = {c.name: n for n, c in enumerate(ALL_TYPES.columns)}
    # BL: an out-of-line LOB whose pages are not in the redo (the parser's incomplete LobValue).
    after = {
        index["ID"]: encode_number(1),
        index["CL"]: "x".encode("utf-16-be"),
        index["VC"]: b"v",
        index["BL"]: LobValue(b"", b"locator", complete=False),
    }
    row = _row(OP_INSERT, ALL_TYPES, None, after)
    ordinals = mask_ordinals(change_mask(row))
    lobs = {_ordinal("CL"), _ordinal("NCL"), _ordinal("BL")}
    assert not lobs & set(ordinals)
    assert set(ordinals) == set(range(1, 27)) - lobs  # trailing NULLs were inserted too (LONG is left out)
    assert _ordinal("CL") in mask_ordinals(column_mask(row))  # present, just not in changeMask
    assert _ordinal("BL") not in mask_ordinals(column_mask(row))  # an out-of-line LOB not in redo
    assert _ordinal("NCL") in mask_ordinals(column_mask(row))  # a NULL LOB is a value: present


def test_delete_sets_key_columns_or_all_without_key() -> None:
    row = _row(OP_DELETE, ALL_TYPES, {0: encode_number(5), 9: b"v"}, None)
    assert change_mask(row) == "01000000"
    keyless = _row(OP_DELETE, NO_PK, {0: b"n", 1: encode_number(1), 2: None}, None)
    assert change_mask(keyless) == "07"


def test_update_sets_changed_columns_and_column_mask_shows_minimal_logging() -> None:
    # Minimal supplemental logging: the key and the changed column only.
    before = {0: encode_number(1), 9: b"old", 1: encode_number(3)}
    after = {9: b"new", 1: encode_number(3)}
    row = _row(OP_UPDATE, ALL_TYPES, before, after)
    assert mask_ordinals(change_mask(row)) == [_ordinal("VC")]  # N_SMALL was set to the same value
    assert mask_ordinals(column_mask(row)) == [1, 2, _ordinal("VC")]
    lob = _row(OP_UPDATE, ALL_TYPES, {0: encode_number(1)}, {12: "y".encode("utf-16-be")})
    assert change_mask(lob) == "00000000"  # "LOB columns are not included in the changeMask"
    assert _ordinal("CL") in mask_ordinals(column_mask(lob))


def test_qlik_messages_carry_the_masks() -> None:
    data = [strict_json(m.data)["message"] for m in run(QlikFormat(options("qlik")))]
    headers = [d["headers"] for d in data if "headers" in d]
    assert [h["operation"] for h in headers] == [
        "INSERT",
        "INSERT",
        "INSERT",
        "UPDATE",
        "UPDATE",
        "UPDATE",
        "DELETE",
        "DELETE",
    ]
    minimal = headers[4]
    assert mask_ordinals(minimal["changeMask"]) == [_ordinal("VC"), _ordinal("B")]
    assert mask_ordinals(minimal["columnMask"]) == [1, _ordinal("VC"), _ordinal("B")]
    assert [h["transactionLastEvent"] for h in headers] == [False, False, True, True, False, True, False, True]
