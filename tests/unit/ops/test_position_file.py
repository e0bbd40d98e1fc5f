"""``<name>-chkpt.json`` is read as strictly as the config (issue 31, item 6).

Each broken file used to give a Python traceback (``[]``, ``null``, ``"scn":"abc"``,
``"scn":null``, ``"output":[p,"x"]``), be read as another layout (``pos`` with 3 elements,
``output`` without ``pos``) or fail with a misleading parse error (a valid file over the
4,096 bytes read). Now: a coded error naming the field, or the file read whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replicator.errors import ReplicatorError
from replicator.runner.checkpoint import CheckpointManager, Confirmed

VALID = {
    "database": "TEST",
    "scn": 2267068,
    "idx": 5,
    "resetlogs": 1227145478,
    "activation": 1496992686,
    "pos": [4, 27648, 0, 5],
    "output": ["/data/out.json", 2571307],
}


def _load(tmp_path: Path, text: str) -> Confirmed | None:
    (tmp_path / "TEST-chkpt.json").write_text(text)
    return CheckpointManager(str(tmp_path), "TEST").load_confirmed()


def _with(**changes: object) -> str:
    doc = {**VALID, **changes}
    return json.dumps({k: v for k, v in doc.items() if v is not ...})


@pytest.mark.parametrize(
    "text, code, says",
    [
        ("[]", 20001, "not a JSON object"),
        ("null", 20001, "not a JSON object"),
        ("{", 20001, "parse error"),
        (_with(scn="abc"), 20003, "field scn"),
        (_with(scn=None), 20003, "field scn"),
        (_with(scn=-1), 20003, "field scn"),
        (_with(scn=1 << 64), 20003, "field scn"),
        (_with(resetlogs=1 << 32), 20003, "field resetlogs"),
        (_with(idx=1.5), 20003, "field idx"),
        (_with(output=["/data/out.json", "x"]), 20003, "field output[1]"),
        (_with(output=["/data/out.json"]), 20003, "field output"),
        (_with(output=[7, 10]), 20003, "field output[0]"),
        (_with(pos=[4, 27648, 0]), 20003, "field pos"),
        (_with(pos=[4, 27648, 0, 5, 1]), 20003, "field pos"),
        (_with(pos=[4, "27648", 0, 5]), 20003, "field pos[1]"),
        (_with(pos=...), 20003, "output without field pos"),
        (_with(scn=...), 20003, "field scn not found"),
        (_with(database="OTHER"), 20001, "invalid database name"),
        (_with(extra=1), 20003, "field extra not expected"),
    ],
)
def test_broken_position_file_is_a_coded_error(tmp_path: Path, text: str, code: int, says: str) -> None:
    with pytest.raises(ReplicatorError) as error:
        _load(tmp_path, text)
    assert error.value.code == code and says in error.value.message, error.value


def test_a_valid_file_over_4096_bytes_is_read_whole(tmp_path: Path) -> None:
    text = json.dumps(VALID, indent=200)  # valid JSON, padded past the 4,096 bytes once read
    assert 4096 < len(text) < 16384
    confirmed = _load(tmp_path, text)
    assert confirmed == Confirmed(
        "TEST", 2267068, 5, 1227145478, 1496992686, (4, 27648, 0, 5), ("/data/out.json", 2571307)
    )


@pytest.mark.parametrize("text", ["", " " * 16385 + "{}"])
def test_empty_or_oversized_file_is_10004(tmp_path: Path, text: str) -> None:
    with pytest.raises(ReplicatorError) as error:
        _load(tmp_path, text)
    assert error.value.code == 10004 and "wrong size" in error.value.message


def test_openlogreplicator_file_keeps_its_meaning(tmp_path: Path) -> None:
    confirmed = _load(tmp_path, '{"database":"TEST","scn":2267068,"idx":5,"resetlogs":1,"activation":2}')
    assert confirmed == Confirmed("TEST", 2267068, 5, 1, 2)


def test_rac_position_keeps_its_packed_rank(tmp_path: Path) -> None:
    packed = (2 << 64) | (3072 << 20) | 4  # rac_engine.rac_position: (sequence, LWN offset, rank) in one number
    confirmed = _load(tmp_path, _with(pos=[2270172, 1, packed, 2]))
    assert confirmed is not None and confirmed.pos == (2270172, 1, packed, 2)
