"""The scenario model and its JSON/YAML file form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replicator.errors import ConfigError
from replicator.redogen.scenario import Event, Scenario

DOC = {
    "name": "T1",
    "version": "19c",
    "block-size": 1024,
    "start-scn": 5000,
    "tables": [
        {
            "owner": "APP",
            "name": "EMP",
            "primary-key": ["ID"],
            "supplemental": "pk",
            "columns": ["ID NUMBER NOT NULL", "NAME VARCHAR2(20)", {"name": "SAL", "type": "NUMBER(8,2)"}],
        }
    ],
    "sessions": [{"id": 2, "user": "APP"}],
    "timeline": [
        {"op": "insert", "session": 2, "table": "EMP", "values": {"ID": 1, "NAME": "x"}},
        {"savepoint": "a", "session": 2},
        {"update": "EMP", "s": 2, "key": {"ID": 1}, "values": {"SAL": 10}, "wait": 1.5},
        {"rollback_to": "a", "session": 2},
        {"commit": 2},
        {"switch": None},
        {"sleep": 3},
    ],
}


def test_from_dict_normalises_keys_and_shorthands() -> None:
    sc = Scenario.from_dict(json.loads(json.dumps(DOC)))
    assert (sc.name, sc.block_size, sc.start_scn, sc.compat) == ("T1", 1024, 5000, 0x13000000)
    emp = sc.table("APP.EMP")
    assert [c.name for c in emp.columns] == ["ID", "NAME", "SAL"] and not emp.columns[0].nullable
    assert emp.supplemental == "pk"
    ops = [(e.op, e.session, e.table, e.name) for e in sc.timeline]
    assert ops == [
        ("insert", 2, "EMP", None),
        ("savepoint", 2, None, "a"),
        ("update", 2, "EMP", None),
        ("rollback_to", 2, None, "a"),
        ("commit", 2, None, None),
        ("switch", 1, None, None),
        ("sleep", 1, None, None),
    ]
    assert list(sc.timeline)[2].wait == 1.5 and list(sc.timeline)[6].wait == 3.0


def test_from_file_yaml_and_json(tmp_path: Path) -> None:
    import yaml

    (tmp_path / "s.yaml").write_text(yaml.safe_dump(DOC))
    (tmp_path / "s.json").write_text(json.dumps(DOC))
    a, b = Scenario.from_file(tmp_path / "s.yaml"), Scenario.from_file(tmp_path / "s.json")
    assert a.tables == b.tables and list(a.timeline) == list(b.timeline)


def test_versions_and_defaults() -> None:
    assert Scenario(version="23").compat == 0x17060000 and Scenario(version="23").effective_con_id == 3
    assert Scenario(version="19").effective_con_id == 0
    assert Scenario(version="19").effective_con_name == "FREE"
    assert Scenario(version="11.2").compat == 0x0B200400
    assert Scenario(version="19.16").compat == 0x13100000
    assert Scenario(start_time="2026-03-07T01:44:40Z").start_epoch == 1772847880
    with pytest.raises(ConfigError):
        _ = Scenario(version="nine").compat


@pytest.mark.parametrize(
    "doc",
    [
        {"bogus": 1},
        {"timeline": [{"op": "explode"}]},
        {"timeline": [{"insert": "T", "commit": 1}]},
        {"tables": [{"owner": "A", "name": "B", "columns": ["ONLYNAME"]}]},
        {"tables": [{"owner": "A", "name": "B", "columns": ["X NUMBER"], "supplemental": "some"}]},
    ],
)
def test_bad_documents(doc: dict) -> None:
    with pytest.raises(ConfigError):
        Scenario.from_dict(doc)


def test_event_defaults() -> None:
    e = Event("commit")
    assert (e.session, e.wait, e.xid) == (1, 0.0, None)
