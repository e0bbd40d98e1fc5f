"""Fixtures for the schema tests: the shared fixtures folder and a synthetic checkpoint builder."""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import pytest

# `shared` sits beside the repository root (tests/unit/schema -> repo -> ..).
SHARED = Path(__file__).resolve().parents[3].parent / "shared"
FREE23_CHECKPOINT = SHARED / "fixtures/redo/free23-basic/TEST-chkpt-2266634.json"
REFERENCE = SHARED / "reference/olr-real-outputs"

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def make_rowid(data_obj: int, block: int, slot: int, afn: int = 1) -> str:
    """An extended ROWID text for the given parts."""

    def enc(value: int, width: int) -> str:
        return "".join(_ALPHABET[(value >> (6 * i)) & 63] for i in reversed(range(width)))

    return enc(data_obj, 6) + enc(afn, 3) + enc(block, 6) + enc(slot, 3)


@pytest.fixture
def shared() -> Path:
    """The shared folder, or a skip saying it is missing."""
    if not SHARED.is_dir():
        pytest.skip(f"shared fixtures folder not found at {SHARED}")
    return SHARED


class DocBuilder:
    """Builds a small, valid schema checkpoint document (OLR JSON shape)."""

    def __init__(self) -> None:
        self._slot = itertools.count(1)
        self.doc: dict[str, Any] = {
            "database": "DB1",
            "scn": 1000,
            "resetlogs": 7,
            "activation": 9,
            "time": 0,
            "seq": 3,
            "offset": 1024,
            "big-endian": 0,
            "context": "CDB",
            "con-id": 3,
            "con-name": "PDB1",
            "db-timezone": "+00:00",
            "db-recovery-file-dest": "",
            "db-block-checksum": "TYPICAL",
            "log-archive-dest": "",
            "log-archive-format": "%t_%s_%r.arc",
            "nls-character-set": "AL32UTF8",
            "nls-nchar-character-set": "AL16UTF16",
            "supp-log-db-primary": 0,
            "supp-log-db-all": 0,
            "online-redo": [{"group": 1, "path": ["/redo/r1.log"]}],
            "incarnations": [
                {
                    "incarnation": 1,
                    "resetlogs-scn": 1,
                    "prior-resetlogs-scn": 0,
                    "status": "CURRENT",
                    "resetlogs": 7,
                    "prior-incarnation": 0,
                }
            ],
            "users": ["APP"],
            "schema-scn": 1000,
        }
        for key in (
            "sys-ccol",
            "sys-cdef",
            "sys-col",
            "sys-deferredstg",
            "sys-ecol",
            "sys-lob",
            "sys-lob-comp-part",
            "sys-lob-frag",
            "sys-obj",
            "sys-tab",
            "sys-tabcompart",
            "sys-tabpart",
            "sys-tabsubpart",
            "sys-ts",
            "sys-user",
            "xdb-ttset",
        ):
            self.doc[key] = []
        self.user(0, "SYS")
        self.user(100, "APP")
        self.user(101, "OTHER")

    def rid(self, data_obj: int = 18) -> str:
        return make_rowid(data_obj, 500, next(self._slot))

    def user(self, user: int, name: str, spare1: int = 0) -> None:
        self.doc["sys-user"].append(
            {"row-id": self.rid(10), "user": user, "name": name, "spare1": [spare1, 0], "single": 0}
        )

    def table(
        self,
        obj: int,
        name: str,
        columns: list[tuple[str, int]],
        *,
        owner: int = 100,
        pk: tuple[str, ...] = (),
        obj_flags: int = 0,
        tab_flags: int = 0,
        tab_property: int = 0,
        obj_type: int = 2,
    ) -> None:
        """Add OBJ$/TAB$/COL$ rows (columns are (name, type); SEGCOL# in list order)."""
        self.doc["sys-obj"].append(
            {
                "row-id": self.rid(),
                "owner": owner,
                "obj": obj,
                "data-obj": obj,
                "name": name,
                "type": obj_type,
                "flags": [obj_flags, 0],
                "single": 0,
            }
        )
        self.doc["sys-tab"].append(
            {
                "row-id": self.rid(2),
                "obj": obj,
                "data-obj": obj,
                "ts": 4,
                "clu-cols": 0,
                "flags": [tab_flags & (2**64 - 1), tab_flags >> 64],
                "property": [tab_property, 0],
            }
        )
        for n, (col_name, col_type) in enumerate(columns, start=1):
            self.column(obj, col_name, col_type, col=n, seg_col=n)
        if pk:
            con = obj * 10
            self.doc["sys-cdef"].append({"row-id": self.rid(29), "con": con, "obj": obj, "type": 2})
            for col_name in pk:
                int_col = [c[0] for c in columns].index(col_name) + 1
                self.doc["sys-ccol"].append(
                    {"row-id": self.rid(29), "con": con, "int-col": int_col, "obj": obj, "spare1": [0, 0]}
                )

    def column(
        self,
        obj: int,
        name: str,
        col_type: int,
        *,
        col: int,
        seg_col: int,
        int_col: int | None = None,
        prop: int = 0,
        null: int = 0,
        length: int = 22,
        charset_form: int = 0,
    ) -> None:
        self.doc["sys-col"].append(
            {
                "row-id": self.rid(2),
                "obj": obj,
                "col": col,
                "seg-col": seg_col,
                "int-col": int_col if int_col is not None else col,
                "name": name,
                "type": col_type,
                "length": length,
                "precision": -1,
                "scale": -1,
                "charset-form": charset_form,
                "charset-id": 873 if charset_form == 1 else 0,
                "null": null,
                "property": [prop & (2**64 - 1), prop >> 64],
            }
        )

    def build(self) -> dict[str, Any]:
        return copy.deepcopy(self.doc)


@pytest.fixture
def builder() -> DocBuilder:
    """A fresh synthetic checkpoint builder with users SYS, APP and OTHER."""
    return DocBuilder()
