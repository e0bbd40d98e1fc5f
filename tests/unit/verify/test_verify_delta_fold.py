"""The redo folded as the Spark job folds it (replicator.verify.delta.RedoFold), and the
change digest in the lake's terms: the job's own parser and fold give the same values."""

from __future__ import annotations

import json
from typing import Any

import pytest

from replicator.verify.delta import RedoFold, lake_digest, lake_element, text_image


def _msg(commit: int, idx: int, el: dict[str, Any]) -> dict[str, Any]:
    return {"e_scn": commit, "c_scn": commit - 1, "c_idx": idx, "xid": f"1.{commit}.0", "payload": [el]}


def _dml(op: str, before: dict[str, Any] | None = None, after: dict[str, Any] | None = None) -> dict[str, Any]:
    el: dict[str, Any] = {"op": op, "schema": {"owner": "APP", "table": "T"}}
    if before is not None:
        el["before"] = before
    if after is not None:
        el["after"] = after
    return el


def _ddl(sql: str) -> dict[str, Any]:
    return {"op": "ddl", "schema": {"owner": "APP", "table": "T"}, "sql": sql}


def test_inserts_updates_key_moves_deletes_renames_and_truncates_fold_as_the_job_does() -> None:
    fold = RedoFold(through_scn=200, scn_is_commit=False, keys={"APP.T": ["ID"]})
    steps = [
        _dml("c", after={"ID": 1, "A": "x", "N": "1.50"}),
        _dml("c", after={"ID": 2, "A": "y"}),
        _dml("u", before={"ID": 1, "A": "x"}, after={"ID": 1, "A": None}),  # A set to NULL, N kept
        _dml("u", before={"ID": 2}, after={"ID": 3}),  # the key moves, A comes along
        _dml("c", after={"ID": 4, "A": "z"}),
        _dml("d", before={"ID": 4}),
        _ddl("ALTER TABLE APP.T RENAME COLUMN A TO B"),
    ]
    for n, el in enumerate(steps):
        fold.observe(_msg(100 + n, 1, el), n)
    fold.observe(_msg(300, 1, _dml("c", after={"ID": 9})), 99)  # after the applied SCN: not folded
    assert fold.cut == len(steps) - 1
    assert fold.rows["APP.T"] == {("1",): {"ID": "1", "B": None, "N": "1.50"}, ("3",): {"ID": "3", "B": "y"}}
    fold.observe(_msg(150, 1, _ddl("TRUNCATE TABLE APP.T")), 8)
    assert fold.rows["APP.T"] == {}


def test_a_table_keyed_by_rowid_folds_by_rid() -> None:
    fold = RedoFold(through_scn=200, scn_is_commit=False, keys={"APP.T": None})
    fold.observe(_msg(100, 1, {**_dml("c", after={"A": 1}), "rid": "AAAB"}), 0)
    fold.observe(_msg(101, 1, {**_dml("u", before={"A": 1}, after={"A": 2}), "rid": "AAAB"}), 1)
    assert fold.rows["APP.T"] == {("AAAB",): {"A": "2"}}


def test_the_lake_digest_of_a_message_is_that_of_the_row_the_job_logs() -> None:
    """What lake_element digests from a message equals the digest of the change-log row the
    job's parser makes of it (text images, the table as OWNER.TABLE)."""
    pytest.importorskip("pyarrow", reason="the Spark extra (pyarrow) is not installed: pip install -e '.[spark]'")
    from replicator.spark.options import FormatHints
    from replicator.spark.parse import parse_message

    el = _dml("u", before={"ID": 7, "A": "a", "F": 1.25, "B": True}, after={"A": "b", "S": "12"})
    body = json.dumps(_msg(100, 2, el)).encode()
    (row,) = parse_message(body, None, FormatHints(scn_type=8), {"k_partition": 0, "k_offset": 0})
    from replicator.spark.parse import image_array

    before = dict(image_array([row["before"]]).to_pylist()[0])
    after = dict(image_array([row["after"]]).to_pylist()[0])
    assert lake_element(json.loads(body)["payload"][0])[3] == lake_digest("u", row["tbl"], before, after, None)
    assert text_image({"S": "12", "I": 12}) == {"S": "12", "I": "12"}  # the text form cannot tell them apart
