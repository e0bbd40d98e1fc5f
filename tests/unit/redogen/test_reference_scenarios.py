"""Scenarios rebuilt from the SQL behind OpenLogReplicator's real outputs must replicate the same rows.

``shared/reference/olr-real-outputs`` (beside the repository) holds, per scenario, the SQL run on
Oracle 23ai (``sql/<name>.sql``), OLR's real output for it (``expected/<name>/output.json``) and
the schema checkpoint of that database (``schema/<name>/``). ``tests/scenarios/reference/<name>.yaml``
replays the same DML through redogen; the redo it writes goes through ``replicator run`` and the
messages must equal OLR's, value text included. Only what a different database run cannot
reproduce is normalised: SCNs, checkpoint indexes, times and the XID numbers (an XID keeps its
identity: messages of one transaction must share one, different transactions differ).

A second test checks that each scenario declares its tables exactly as the real checkpoint
describes them (column order, types, lengths, precision/scale, charset, nullability, keys and
supplemental log groups), so a passing comparison is not an accident of looser types.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from redogen_helpers import SHARED, pipeline_missing, run_pipeline

from replicator.redogen import Scenario, generate

REFERENCE = SHARED / "reference" / "olr-real-outputs"
SCENARIO_DIR = Path(__file__).resolve().parents[2] / "scenarios" / "reference"
NAMES = (
    "basic-crud",
    "data-types",
    "number-precision",
    "timestamp-variants",
    "null-handling",
    "rollback",
    "interleaved-transactions",
    "multi-table",
    "many-columns",
    "large-transaction",
    "concurrent-updates",
    "long-spanning-txn",
    "special-chars",
    "wide-rows",
    "boolean-type",
    "ddl-add-column",
    "partitioned-table",
    "lob-operations",
    # two-node RAC: the statements of each node go to its own redo thread
    "rac-interleaved",
    "rac-concurrent-tables",
    "rac-thread2-only",
)
# The format section of the OLR fork config that produced the reference outputs.
REFERENCE_FORMAT = {"type": "json", "scn": 1, "timestamp": 7, "timestamp-metadata": 7, "xid": 1}
# Top-level fields whose values depend on the database run, not on the DML.
VOLATILE = ("scns", "scn", "c_scn", "c_idx", "tms", "tm")
# name -> why our output differs from OLR's for a reason outside redogen (parser or format);
# such a scenario runs as a strict xfail so a fix is noticed. None today.
KNOWN_DIFFERENCES: dict[str, str] = {}
# name -> why the scenario's supplemental logging differs from the real checkpoint's CDEF$ rows.
SUPPLEMENTAL_AS_LOGGED = {"boolean-type": "the real updates' redo held no supplemental columns"}


class _Num(str):
    """A JSON number kept as its literal text (2.71828 and 2.718281828459045 must not compare equal)."""


class _Obj(tuple):
    """A JSON object as its (key, value) pairs, so key order is compared too."""


def _parse(line: str) -> Any:
    return json.loads(line, parse_float=_Num, parse_int=_Num, object_pairs_hook=_Obj)


def _dump(value: Any) -> str:
    """Back to JSON text, numbers verbatim and keys in their original order."""
    if isinstance(value, _Num):
        return str(value)
    if isinstance(value, _Obj):
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_dump(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dump(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def normalise(text: str) -> list[str]:
    """Messages with volatile values masked and XIDs renamed T0, T1... in order of appearance."""
    xids: dict[str, str] = {}
    out: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        msg = _parse(line)
        fields = []
        for key, value in msg:
            if key in VOLATILE:
                value = "*"
            elif key == "xid":
                value = xids.setdefault(str(value), f"T{len(xids)}")
            fields.append((key, value))
        out.append(_dump(_Obj(fields)))
    return out


def _params() -> list[Any]:
    return [
        pytest.param(n, marks=pytest.mark.xfail(reason=KNOWN_DIFFERENCES[n], strict=True))
        if n in KNOWN_DIFFERENCES
        else n
        for n in NAMES
    ]


@pytest.fixture
def reference() -> Path:
    """The reference folder, or skip: it lives outside the repository."""
    if not (REFERENCE / "expected").is_dir():
        pytest.skip(f"OLR reference outputs not found at {REFERENCE} (the `shared` folder beside the repository)")
    return REFERENCE


def _scenario(name: str) -> Scenario:
    sc = Scenario.from_file(SCENARIO_DIR / f"{name}.yaml")
    assert sc.format == REFERENCE_FORMAT, f"{name}: the scenario must use the reference's format options"
    return sc


@pytest.mark.skipif(pipeline_missing() is not None, reason=pipeline_missing() or "")
@pytest.mark.parametrize("name", _params())
def test_pipeline_output_matches_olr(reference: Path, tmp_path: Path, name: str) -> None:
    result = generate(_scenario(name), tmp_path, with_expected=False)
    assert run_pipeline(result.config) == 0
    got = normalise(result.output.read_text(encoding="utf-8") if result.output.exists() else "")
    want = normalise((reference / "expected" / name / "output.json").read_text(encoding="utf-8"))
    assert got == want


def _real_tables(reference: Path, name: str) -> dict[str, Any]:
    """OWNER.TABLE -> (columns by SEGCOL#, key INTCOL#s, CDEF$ types) of the real checkpoint."""
    files = sorted((reference / "schema" / name).glob("*-chkpt-*.json"))
    assert files, f"no schema checkpoint for {name}"
    return _tables(json.loads(files[0].read_text(encoding="utf-8")))


def _tables(doc: dict[str, Any]) -> dict[str, Any]:
    users = {u["user"]: u["name"] for u in doc["sys-user"]}
    out: dict[str, Any] = {}
    for obj in doc["sys-obj"]:
        if obj["type"] != 2:
            continue
        no = obj["obj"]
        cols = sorted(
            (
                c["seg-col"],
                c["name"],
                c["type"],
                c["length"],
                c["precision"],
                c["scale"],
                c["charset-form"],
                c["charset-id"],
                c["null"],
            )
            for c in doc["sys-col"]
            if c["obj"] == no
        )
        cdefs = [c for c in doc["sys-cdef"] if c["obj"] == no]
        pk = {c["con"] for c in cdefs if c["type"] == 2}
        keys = sorted(c["int-col"] for c in doc["sys-ccol"] if c["con"] in pk)
        out[f"{users.get(obj['owner'])}.{obj['name']}"] = (cols, keys, sorted(c["type"] for c in cdefs))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_scenario_tables_match_real_checkpoint(reference: Path, tmp_path: Path, name: str) -> None:
    sc = _scenario(name)
    result = generate(sc, tmp_path, with_expected=False)
    ours = _tables(json.loads(result.checkpoint.read_text(encoding="utf-8")))
    real = _real_tables(reference, name)
    for t in sc.tables:
        if name in SUPPLEMENTAL_AS_LOGGED:  # compare columns and keys only
            assert ours[t.full_name][:2] == real[t.full_name][:2], t.full_name
        else:
            assert ours[t.full_name] == real[t.full_name], t.full_name
