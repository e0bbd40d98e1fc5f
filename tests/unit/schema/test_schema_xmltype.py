"""XMLTYPE stored as CLOB: the hidden CLOB takes the XMLTYPE's name, is marked ``xml_type``,
and flag 0x10000 needs an XDB.XDB$TTSET row with flags 0 (else 50069, as OLR)."""

from __future__ import annotations

from typing import Any

import pytest

from replicator.errors import DataError
from replicator.events import Table
from replicator.flags import FLAG_EXPERIMENTAL_XMLTYPE, FLAG_SHOW_HIDDEN
from replicator.formats.base import column_suppressed
from replicator.schema.dictionary import Dictionary
from replicator.schema.filter import TableRule, build_table_map
from replicator.schema.store import parse_schema_checkpoint

TTSET = {"guid": "48951E5C0814E048E063399B5E645A82", "toksuf": "ABC", "obj": 1}


def _doc(builder: Any, ttset_flags: int | None) -> dict[str, Any]:
    """APP.X (obj 1001): ID, DOC XMLTYPE (virtual, COL# 2) + SYS_NC00003$ CLOB, NOTE."""
    builder.table(1001, "X", [("ID", 2)], pk=("ID",))
    builder.column(1001, "DOC", 58, col=2, seg_col=0, int_col=2, length=2000)
    builder.column(1001, "SYS_NC00003$", 112, col=2, seg_col=2, int_col=3, prop=0x1A0, length=4000, charset_form=1)
    builder.column(1001, "NOTE", 1, col=3, seg_col=3, int_col=4, length=20, charset_form=1)
    doc = builder.build()
    if ttset_flags is not None:
        doc["xdb-ttset"] = [{"row-id": builder.rid(5), **TTSET, "flags": ttset_flags}]
        for prefix in ("xdb-xnm", "xdb-xpt", "xdb-xqn"):
            doc[prefix + TTSET["toksuf"]] = []
    return doc


def _table(doc: dict[str, Any], flags: int = 0) -> Table:
    dictionary = Dictionary.from_checkpoint(parse_schema_checkpoint(doc, "t"))
    return build_table_map(dictionary, [TableRule("APP", "X")], flags=flags)[1001]


def test_hidden_clob_named_after_the_xmltype(builder: Any) -> None:
    table = _table(_doc(builder, None))
    assert [c.name for c in table.columns] == ["ID", "DOC", "NOTE"]
    doc = table.columns[1]
    assert doc.type_code == 112 and doc.hidden and doc.xml_type
    assert not table.columns[2].xml_type


@pytest.mark.parametrize(("flags", "shown"), [(0, False), (FLAG_SHOW_HIDDEN, True), (FLAG_EXPERIMENTAL_XMLTYPE, True)])
def test_visibility_follows_olr_flags(builder: Any, flags: int, shown: bool) -> None:
    table = _table(_doc(builder, 0), flags)
    assert column_suppressed(table.columns[1], flags) is not shown


def test_experimental_flag_does_not_show_other_hidden_columns(builder: Any) -> None:
    table = _table(_doc(builder, 0), FLAG_EXPERIMENTAL_XMLTYPE)
    other = table.columns[2]
    other.hidden = True  # e.g. an ordinary hidden column
    assert column_suppressed(other, FLAG_EXPERIMENTAL_XMLTYPE)


@pytest.mark.parametrize("ttset_flags", [None, 1])
def test_experimental_flag_needs_default_token_set(builder: Any, ttset_flags: int | None) -> None:
    doc = _doc(builder, ttset_flags)
    _table(doc)  # without the flag nothing is checked
    with pytest.raises(DataError) as err:
        _table(doc, FLAG_EXPERIMENTAL_XMLTYPE)
    assert err.value.code == 50069
