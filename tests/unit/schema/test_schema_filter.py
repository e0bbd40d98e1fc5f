"""filter.table rules: full-match regexes, rule order, key/tag, flags and the users check."""

from __future__ import annotations

from typing import Any

import pytest

from replicator.errors import ConfigError, DataError
from replicator.events import Table
from replicator.schema.dictionary import Dictionary
from replicator.schema.filter import (
    SYSTEM_RULES,
    TableRule,
    build_table_map,
    check_patterns,
    check_users,
    configured_users,
    nearest,
    parse_tag,
    unmatched_rules,
)
from replicator.schema.store import parse_schema_checkpoint


@pytest.fixture
def dictionary(builder: Any) -> Dictionary:
    """APP.ORDERS (PK ID), APP.ORDER_ITEMS (PK ID, LINE), OTHER.ORDERS, SYS.OBJ$, a partitioned table."""
    builder.table(18, "OBJ$", [("OBJ#", 2), ("NAME", 1)], owner=0)
    builder.table(1001, "ORDERS", [("ID", 2), ("CUSTOMER", 1), ("TOTAL", 2)], pk=("ID",))
    builder.table(1002, "ORDER_ITEMS", [("ID", 2), ("LINE", 2), ("QTY", 2)], pk=("ID", "LINE"))
    builder.table(1003, "ORDERS", [("ID", 2)], owner=101)
    builder.table(1004, "orders_lower", [("ID", 2)])
    builder.table(1005, "SALES", [("ID", 2), ("REGION", 1)], tab_property=0x20)
    builder.table(1099, "GHOST", [("ID", 2)], owner=999)  # owner missing from USER$
    doc = builder.build()
    doc["sys-tabpart"] = [{"row-id": builder.rid(947), "obj": o, "data-obj": o + 100, "bo": 1005} for o in (1006, 1007)]
    doc["sys-tabcompart"] = [{"row-id": builder.rid(969), "obj": 1008, "data-obj": 0, "bo": 1005}]
    doc["sys-tabsubpart"] = [{"row-id": builder.rid(959), "obj": 1009, "data-obj": 1109, "p-obj": 1008}]
    return Dictionary.from_checkpoint(parse_schema_checkpoint(doc, "t"))


def _user_tables(table_map: dict[int, Table]) -> dict[int, Table]:
    return {t.obj: t for t in table_map.values() if not t.system}


def test_full_match_and_case(dictionary: Dictionary) -> None:
    tables = _user_tables(build_table_map(dictionary, [TableRule("APP", "ORDER")]))
    assert tables == {}  # no partial match
    tables = _user_tables(build_table_map(dictionary, [TableRule("APP", "ORDERS|orders_.*")]))
    assert set(tables) == {1001, 1004}
    tables = _user_tables(build_table_map(dictionary, [TableRule("app", "ORDERS")]))
    assert tables == {}  # case-sensitive
    tables = _user_tables(build_table_map(dictionary, [TableRule("APP|OTHER", "ORDERS")]))
    assert set(tables) == {1001, 1003}


def test_rule_order_first_claim_wins(dictionary: Dictionary) -> None:
    rules = [TableRule("APP", "ORDERS", key="CUSTOMER", condition="[op] == 'c'"), TableRule("APP", "ORDER.*", key="ID")]
    tables = _user_tables(build_table_map(dictionary, rules))
    orders = tables[1001]
    assert [c.name for c in orders.columns if c.key] == ["CUSTOMER"] and orders.key_columns == (1,)
    assert orders.condition == "[op] == 'c'" and tables[1002].condition == ""
    assert tables[1002].key_columns == (0,)
    with pytest.raises(ConfigError) as info:  # ORDER_ITEMS has no TOTAL column
        build_table_map(dictionary, [TableRule("APP", "ORDER.*", key="TOTAL")])
    assert info.value.code == 10041


def test_default_key_is_primary_key(dictionary: Dictionary) -> None:
    tables = _user_tables(build_table_map(dictionary, [TableRule("APP", ".*")]))
    assert tables[1001].key_columns == (0,) and tables[1002].key_columns == (0, 1)
    assert tables[1004].key_columns == ()


def test_key_with_separator(dictionary: Dictionary) -> None:
    rules = [TableRule("APP", "ORDER_ITEMS", key="QTY;LINE", tag="QTY;ID")]
    table = _user_tables(build_table_map(dictionary, rules, separator=";"))[1002]
    assert table.key_columns == (1, 2)
    assert (table.tag_mode, table.tag_columns) == ("list", (2, 0))
    with pytest.raises(ConfigError) as info:
        build_table_map(dictionary, [TableRule("APP", "ORDER_ITEMS", key="QTY,LINE")], separator=";")
    assert info.value.code == 10041


@pytest.mark.parametrize(
    "tag, mode, columns",
    [
        (None, "", ()),
        ("[pk]", "pk", (0,)),
        ("[all]", "all", (0, 1, 2)),
        ("TOTAL,ID", "list", (2, 0)),
    ],
)
def test_tags(dictionary: Dictionary, tag: str | None, mode: str, columns: tuple[int, ...]) -> None:
    table = _user_tables(build_table_map(dictionary, [TableRule("APP", "ORDERS", tag=tag)]))[1001]
    assert (table.tag_mode, table.tag_columns) == (mode, columns)


def test_tag_pk_follows_configured_key_and_missing_tag(dictionary: Dictionary) -> None:
    rule = TableRule("APP", "ORDERS", key="TOTAL", tag="[pk]")
    assert _user_tables(build_table_map(dictionary, [rule]))[1001].tag_columns == (2,)
    with pytest.raises(ConfigError) as info:
        build_table_map(dictionary, [TableRule("APP", "ORDERS", tag="ID,NOPE")])
    assert info.value.code == 10041
    assert parse_tag("A|B", "|") == ("list", ["A", "B"])


def test_partitions_map_to_base_table(dictionary: Dictionary) -> None:
    table_map = build_table_map(dictionary, [TableRule("APP", "SALES")])
    sales = table_map[1005]
    assert all(table_map[o] is sales for o in (1006, 1007, 1009))
    assert 1008 not in table_map  # a composite partition holds no rows itself
    assert dictionary.partitions(1005) == [(1006, 1106), (1007, 1107), (1009, 1109)]


def test_system_tables_claimed_first(dictionary: Dictionary) -> None:
    table_map = build_table_map(dictionary, [TableRule("SYS", ".*", key="NAME")])
    obj_table = table_map[18]
    assert obj_table.system and obj_table.name == "OBJ$" and obj_table.key_columns == ()
    assert len(SYSTEM_RULES) == 19


def test_schemaless_and_adaptive_flags(dictionary: Dictionary) -> None:
    table_map = build_table_map(dictionary, [TableRule("APP", ".*")], flags=0x2)
    assert _user_tables(table_map) == {} and 18 in table_map
    tables = _user_tables(build_table_map(dictionary, [], flags=0x4))
    assert {1001, 1002, 1003, 1004, 1005, 1099} <= set(tables)
    assert tables[1099].owner == "USER_1099"
    assert 1099 not in build_table_map(dictionary, [TableRule(".*", ".*")])


def test_charsets_reach_tables(dictionary: Dictionary) -> None:
    table_map = build_table_map(dictionary, [TableRule("APP", "ORDERS")], charset="WE8MSWIN1252", ncharset="UTF8")
    assert {(t.charset, t.ncharset) for t in table_map.values()} == {("WE8MSWIN1252", "UTF8")}


def test_bad_regex_is_config_error(dictionary: Dictionary) -> None:
    with pytest.raises(ConfigError) as info:
        build_table_map(dictionary, [TableRule("APP", "ORDERS(")])
    assert info.value.code == 30001


def test_check_users() -> None:
    rules = [TableRule("APP", ".*"), TableRule("APP", "X"), TableRule("OTHER", "T")]
    check_users(["OTHER", "APP"], rules)
    check_users(["OTHER", "APP", "DBG"], rules, debug_owner="DBG")
    for users, word in ((["APP"], "OTHER is missing"), (["APP", "OTHER", "EXTRA"], "EXTRA is redundant")):
        with pytest.raises(DataError) as info:
            check_users(users, rules)
        assert info.value.code == 20007 and word in info.value.message
    check_users(["ANYTHING"], rules, flags=0x4)  # adaptive schema skips the check
    check_users([], rules, flags=0x2)  # schemaless: OLR records no owners
    assert configured_users(rules) == {"APP", "OTHER"}


def test_check_users_says_what_to_do() -> None:
    """20007 names the checkpoint, the owners it was made for, the case rule and the nearest owner."""
    with pytest.raises(DataError) as info:
        check_users(["SHOP"], [TableRule("shop", ".*")], checkpoint="schema checkpoint DB-chkpt-5.json")
    text = info.value.message
    assert text.startswith("shop is missing from schema checkpoint DB-chkpt-5.json, made for owner(s) SHOP")
    assert "did you mean 'SHOP'" in text and "case-sensitive" in text and "redundant" not in text
    with pytest.raises(DataError) as info:  # no filter rules at all
        check_users(["SHOP", "HR"], [])
    assert "HR, SHOP are redundant" in info.value.message and "no filter rules" in info.value.message
    assert '{"owner": "HR", "table": ".*"}' in info.value.message
    assert nearest("SHOPP", ["SHOP", "HR"]) == "SHOP" and nearest("XYZ", ["SHOP"]) is None


def test_unmatched_rules_name_the_rule(dictionary: Dictionary) -> None:
    rules = [TableRule("APP", "ORDERS"), TableRule("APP", "ORDER"), TableRule("APX", ".*")]
    lines = unmatched_rules(dictionary, rules)
    assert len(lines) == 2
    assert lines[0].startswith('source[0].filter.table[1] {"owner": "APP", "table": "ORDER"} selects no table')
    assert "did you mean 'ORDERS'" in lines[0]
    assert "table[2]" in lines[1] and "owner matching 'APX'" in lines[1] and "did you mean 'APP'" in lines[1]


def test_bad_pattern_names_its_rule() -> None:
    with pytest.raises(ConfigError) as info:
        check_patterns([TableRule("APP", ".*"), TableRule("((", "T")])
    assert info.value.code == 30001 and info.value.message.startswith("source[0].filter.table[1].owner:")
