"""The SQL compiler's wider statement set, each end to end: compile, generate, replicate.

Every script of ``tests/scenarios/sql/`` is compiled and replicated; the output must equal
redogen's expected output (the reference check, ``reference_check --sql-dir tests/scenarios/sql``,
compares the same scripts with the reference OpenLogReplicator). The other tests pin the
compiler's semantics of each statement.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from redogen_helpers import pipeline_missing, row_payloads, run_checked

from replicator.redogen import compile_sql, load_sql
from replicator.redogen.encode import convert_text, decode_text, encode_text

SQL_DIR = Path(__file__).resolve().parents[2] / "scenarios" / "sql"
SCRIPTS = sorted(SQL_DIR.glob("*.sql"))


@pytest.mark.skipif(pipeline_missing() is not None, reason=pipeline_missing() or "")
@pytest.mark.parametrize("script", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_sql_scenarios_replicate_as_expected(tmp_path: Path, script: Path) -> None:
    run_checked(load_sql(script), tmp_path)


# -- database character set ---------------------------------------------------------------------

@pytest.mark.parametrize("charset_id", [1, 11, 31, 46, 178, 871, 873])
def test_text_decodes_to_what_encodes_back_to_the_same_bytes(charset_id: int) -> None:
    raw = bytes(range(256))
    assert encode_text(decode_text(raw, charset_id), charset_id) == raw


def test_client_conversion_replaces_what_the_set_lacks() -> None:
    assert convert_text("naïve", 1) == b"na?ve"
    assert convert_text("naïve", 31) == b"na\xefve"
    assert convert_text("\udca5x", 1) == b"\xa5x"  # a byte passed through stays


def test_charset_tag_stores_cast_bytes_as_they_are(tmp_path: Path) -> None:
    sc = load_sql(SQL_DIR / "us7ascii-passthrough.sql")
    assert sc.nls_charset == "US7ASCII"
    rows = row_payloads(run_checked(sc, tmp_path))
    # OLR decodes a 7-bit set by the low 7 bits of each byte: A5 78 A5 5F -> "%x%_"
    assert rows[0]["after"]["NAME"] == "%x%_" and rows[1]["after"]["NOTE"] == "na?ve"
    assert rows[3]["after"]["NOTE"] == "updated: 's7s"


def test_charset_tag_words_that_are_no_character_set_are_ignored() -> None:
    sc = compile_sql("-- @TAG rac ddl\nCREATE TABLE T (id NUMBER PRIMARY KEY);\nINSERT INTO T VALUES (1);\nCOMMIT;\n")
    assert sc.nls_charset == "AL32UTF8"


def test_value_too_large_counts_database_bytes() -> None:
    notes: list[Any] = []
    sc = compile_sql("-- @TAG US7ASCII\nCREATE TABLE T (id NUMBER PRIMARY KEY, s VARCHAR2(3));\n"
                     "INSERT INTO T VALUES (1, 'äöü');\nINSERT INTO T VALUES (2, 'äöüß');\nCOMMIT;\n", warnings=notes)
    assert [e.values for e in sc.timeline if e.op == "insert"] == [{"ID": 1, "S": "???"}]
    assert "ORA-12899" in notes[0]
