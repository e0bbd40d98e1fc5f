"""Duplicate dictionary keys: OLR's 50022 (ROWID) and 50024 (unique key) at load and when tracking.

One hand-made bad checkpoint per unique key of every SYS/XDB table: two rows that share
exactly that key (and differ in every other key) must be refused with OLR's code and a
message naming the table, and the same two rows with the key made different must load.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from replicator.errors import DataError
from replicator.schema.dictionary import Dictionary
from replicator.schema.keys import UNIQUE_KEYS, table_name
from replicator.schema.rows import SYS_ROW_FIELDS, XDB_TOKSUF_FIELDS, Kind
from replicator.schema.store import load_schema_checkpoint, parse_schema_checkpoint

DocBuilder = Any  # conftest's synthetic checkpoint builder (the `builder` fixture)
_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def make_rowid(data_obj: int, block: int, slot: int, afn: int = 1) -> str:
    """An extended ROWID text for the given parts."""

    def enc(value: int, width: int) -> str:
        return "".join(_ALPHABET[(value >> (6 * i)) & 63] for i in reversed(range(width)))

    return enc(data_obj, 6) + enc(afn, 3) + enc(block, 6) + enc(slot, 3)


KEY_CASES = [(key, n) for key, keys in UNIQUE_KEYS.items() for n in range(len(keys))]


def _row(key: str, slot: int, seed: int) -> dict[str, Any]:
    """A valid row of array ``key`` whose every field is derived from ``seed``."""
    spec = SYS_ROW_FIELDS.get(key) or XDB_TOKSUF_FIELDS[key[:7]]
    row: dict[str, Any] = {}
    for name, kind in spec:
        if kind is Kind.ROWID:
            row[name] = make_rowid(77, 900, slot)
        elif kind is Kind.STR:
            row[name] = f"V{seed}"
        elif kind is Kind.X128:
            row[name] = [seed, 0]
        else:
            row[name] = seed
    return row


def _doc_with(builder: DocBuilder, key: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    doc = builder.build()
    doc[key] = doc.get(key, []) + rows
    if key == "xdb-ttset":  # each token set brings its own three arrays
        for row in rows:
            for prefix in XDB_TOKSUF_FIELDS:
                doc[prefix + row["toksuf"]] = []
    return doc


@pytest.mark.parametrize("key,n", KEY_CASES, ids=[f"{k}-{n}" for k, n in KEY_CASES])
def test_two_rows_sharing_a_unique_key_are_refused(builder: DocBuilder, key: str, n: int) -> None:
    fields, suffix = UNIQUE_KEYS[key][n]
    first = _row(key, 1, 500)
    second = _row(key, 2, 600)
    for f in fields:
        second[f] = first[f]
    # Keys checked before this one must not clash: they differ in a field this key lacks.
    for earlier, _ in UNIQUE_KEYS[key][:n]:
        assert any(f not in fields for f in earlier)
    parse_schema_checkpoint(_doc_with(builder, key, [first, _row(key, 2, 600)]), "ok")
    with pytest.raises(DataError) as exc:
        parse_schema_checkpoint(_doc_with(builder, key, [first, second]), "file: x.json")
    assert exc.value.code == 50024
    message = exc.value.message
    assert message.startswith(f"file: x.json - duplicate {table_name(key)} value for unique (ROWID: "), message
    assert message.endswith(")" + suffix), message


def test_obj_number_given_to_two_objects(builder: DocBuilder) -> None:
    """The partitioned-table case of issue 13: a partition and an index with one OBJ#."""
    builder.table(5000, "T", [("ID", 2)])
    doc = builder.build()
    doc["sys-obj"].append(
        {
            "row-id": make_rowid(18, 501, 1),
            "owner": 100,
            "obj": 5000,
            "data-obj": 5001,
            "name": "T_PK",
            "type": 1,
            "flags": [0, 0],
            "single": 0,
        }
    )
    with pytest.raises(
        DataError, match=r"50024|duplicate SYS\.OBJ\$ value for unique \(ROWID: .*obj: 5000.*\)2$"
    ) as exc:
        parse_schema_checkpoint(doc, "file: t.json")
    assert exc.value.code == 50024


def test_duplicate_rowid_is_50022(builder: DocBuilder) -> None:
    doc = builder.build()
    doc["sys-ts"] = [_row("sys-ts", 1, 4), _row("sys-ts", 1, 5)]
    with pytest.raises(DataError, match=r"duplicate SYS\.TS\$ \(ROWID: .*\) for insert") as exc:
        parse_schema_checkpoint(doc, "t")
    assert exc.value.code == 50022


def test_xdb_token_set_arrays(builder: DocBuilder) -> None:
    doc = builder.build()
    doc["xdb-ttset"] = [{"row-id": make_rowid(40, 1, 1), "guid": "G", "toksuf": "X1", "flags": 0, "obj": 9}]
    doc["xdb-xnmX1"] = [
        {"row-id": make_rowid(41, 1, 1), "nmspcuri": "a", "id": "07"},
        {"row-id": make_rowid(41, 1, 2), "nmspcuri": "b", "id": "07"},
    ]
    doc["xdb-xptX1"], doc["xdb-xqnX1"] = [], []
    with pytest.raises(DataError, match=r"duplicate XDB\.X\$NM value for unique .*\)2$"):
        parse_schema_checkpoint(doc, "t")
    doc["xdb-xnmX1"][1]["id"] = "08"
    parse_schema_checkpoint(copy.deepcopy(doc), "t")


def test_first_error_in_olr_load_order(builder: DocBuilder) -> None:
    """OLR loads SYS.USER$ before SYS.OBJ$ (and both before the arrays written first)."""
    doc = builder.build()
    doc["sys-ccol"] = [_row("sys-ccol", 1, 3), _row("sys-ccol", 2, 3)]
    doc["sys-user"].append({**doc["sys-user"][-1], "row-id": make_rowid(10, 700, 9)})
    with pytest.raises(DataError, match=r"SYS\.USER\$"):
        parse_schema_checkpoint(doc, "t")


def test_real_checkpoint_has_no_duplicates(shared: Any) -> None:
    assert load_schema_checkpoint(shared / "fixtures/redo/free23-basic/TEST-chkpt-2266634.json").rows["sys-obj"]


def test_tracking_refuses_a_row_taking_another_rows_key(builder: DocBuilder) -> None:
    builder.table(6000, "A", [("ID", 2)])
    builder.table(6001, "B", [("ID", 2)])
    d = Dictionary.from_checkpoint(parse_schema_checkpoint(builder.build(), "t"))
    rid_b = next(r["row-id"] for r in d.rows("sys-obj") if r["obj"] == 6001)
    rid_new = make_rowid(18, 800, 1)
    new = {"owner": 100, "obj": 6000, "data-obj": 6100, "name": "C", "type": 2, "flags": 0, "single": 0}
    with pytest.raises(DataError, match=r"duplicate SYS\.OBJ\$ value for unique .*\)2$") as exc:
        d.apply_row("sys-obj", "insert", rid_new, new)
    assert exc.value.code == 50024
    with pytest.raises(DataError, match="50024|duplicate SYS.OBJ"):
        d.apply_row("sys-obj", "update", rid_b, {"obj": 6000})  # B renumbered onto A's OBJ#
    d.apply_row("sys-obj", "update", rid_b, {"obj": 6002})  # a free number is fine
    d.apply_row("sys-obj", "insert", rid_new, {**new, "obj": 6001})  # and B's old one is free now
    rid_a = next(r["row-id"] for r in d.rows("sys-obj") if r["obj"] == 6000)
    d.apply_row("sys-obj", "delete", rid_a)
    d.apply_row("sys-obj", "insert", make_rowid(18, 800, 2), {**new, "name": "D"})  # A's OBJ# freed by delete
