"""Batch runs write schema checkpoints, as OpenLogReplicator does in every reader mode.

A batch run over redogen redo with an ALTER TABLE ADD COLUMN in the middle writes a
checkpoint holding the full new schema right after the DDL's LWN; a second batch run whose
``start-scn`` selects that file starts with the new definitions (and does not apply the
DDL again). Starting from an older checkpoint with a ``start-scn`` past the DDL still
applies the DDL (committed after the loaded schema) without outputting it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from replicator.cli import main
from replicator.redogen import Scenario, generate


def run_pipeline(config: Path | str) -> int:
    """`replicator run -f config` in-process (not via conftest: its name is shared across test folders)."""
    return main(["run", "-f", str(config)])


TIMELINE: list[dict[str, Any]] = [
    {"insert": "T1", "values": {"ID": 1, "NAME": "a", "VAL": 1}},
    {"commit": 1},
    {"add_column": "T1", "column": "EMAIL VARCHAR2(50)"},
    {"insert": "T1", "values": {"ID": 2, "NAME": "b", "EMAIL": "b@x"}},
    {"commit": 1},
    {"update": "T1", "key": {"ID": 1}, "values": {"EMAIL": "a@x"}},
    {"commit": 1},
]


def _generate(tmp_path: Path) -> Any:
    sc = Scenario.from_dict(
        {
            "name": "TEST",
            "version": "23",
            "tables": [
                {
                    "owner": "OLR_TEST",
                    "name": "T1",
                    "primary-key": ["ID"],
                    "columns": ["ID NUMBER NOT NULL", "NAME VARCHAR2(100)", "VAL NUMBER"],
                }
            ],
            "timeline": TIMELINE,
        }
    )
    return generate(sc, tmp_path / "gen")


def _checkpoints(state: Path) -> dict[int, dict[str, Any]]:
    return {int(p.stem.rsplit("-", 1)[1]): json.loads(p.read_text()) for p in state.glob("TEST-chkpt-*.json")}


def _has_email(doc: dict[str, Any]) -> bool:
    return any(c["name"] == "EMAIL" for c in doc.get("sys-col", []))


def _rerun(result: Any, tmp_path: Path, start_scn: int, name: str) -> tuple[Path, Path]:
    cfg = json.loads(Path(result.config).read_text())
    cfg["source"][0]["reader"]["start-scn"] = start_scn
    out = tmp_path / f"{name}.json"
    cfg["target"][0]["writer"]["output"] = str(out)
    path = tmp_path / f"{name}-config.json"
    path.write_text(json.dumps(cfg))
    return path, out


def _after(text: str, scn: int) -> str:
    return "".join(line + "\n" for line in text.splitlines() if json.loads(line)["c_scn"] > scn)


def test_batch_writes_the_new_schema_and_a_rerun_uses_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    result = _generate(tmp_path)
    state = Path(result.checkpoint).parent
    start = json.loads(Path(result.checkpoint).read_text())["scn"]
    assert run_pipeline(result.config) == 0
    expected = result.expected.read_text()
    assert result.output.read_text() == expected

    written = {scn: doc for scn, doc in _checkpoints(state).items() if scn != start}
    assert written, "the batch run wrote no schema checkpoint"
    full_new = sorted(scn for scn, doc in written.items() if _has_email(doc))
    assert full_new, "no checkpoint holds the added column"
    ddl_cp = full_new[0]
    doc = written[ddl_cp]
    assert "schema-ref-scn" not in doc and doc["schema-scn"] >= ddl_cp
    assert all(not _has_email(d) for scn, d in written.items() if scn < ddl_cp)
    for scn, d in written.items():  # later files refer to the full one (or repeat it)
        if scn > ddl_cp:
            assert d.get("schema-ref-scn") == ddl_cp or _has_email(d)
    capsys.readouterr()

    # Second run: start-scn = the checkpoint written after the DDL selects it.
    config, out = _rerun(result, tmp_path, ddl_cp, "second")
    assert run_pipeline(config) == 0
    assert "updated metadata" not in capsys.readouterr().err  # the DDL is not applied twice
    assert out.read_text() == _after(expected, ddl_cp)
    assert '"EMAIL":"b@x"' in out.read_text() and '"EMAIL":"a@x"' in out.read_text()


def test_a_later_start_past_the_ddl_still_applies_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    result = _generate(tmp_path)
    expected = result.expected.read_text()
    last_scn = max(json.loads(line)["c_scn"] for line in expected.splitlines())
    # Only the initial checkpoint exists: the DDL commits after its schema SCN and before
    # start-scn, so it is applied (not output) and the last update sees EMAIL.
    config, out = _rerun(result, tmp_path, last_scn - 1, "late")
    assert run_pipeline(config) == 0
    assert "updated metadata: OLR_TEST.T1" in capsys.readouterr().err
    assert out.read_text() == _after(expected, last_scn - 1)
    assert '"after":{"ID":1,"EMAIL":"a@x"}' in out.read_text()
    state = Path(result.checkpoint).parent
    newest = _checkpoints(state)[max(_checkpoints(state))]
    assert _has_email(newest)  # the checkpoint written by this run holds the applied DDL
