"""The ASM redo source against a real ASM instance: runs only when REPLICATOR_ORACLE_DSN is set.

Environment: ``REPLICATOR_ORACLE_DSN`` (``//host:port/service`` of the ASM instance, or of a
database instance on ASM), ``REPLICATOR_ASM_USER``, ``REPLICATOR_ASM_PASSWORD`` and
``REPLICATOR_ASM_PRIVILEGE`` (sysasm, the default, or sysdba). The test reads an archived
log (or else an online log) stored in ASM whole, with 1 and with 4 sessions, checks every
block and the LWNs, and compares both reads byte for byte. Nothing stands in for Oracle here:
without a DSN the test skips.
"""

from __future__ import annotations

import os

import pytest

from replicator.redo.asm import AsmSettings, AsmSource
from replicator.redo.header import parse_headers
from replicator.redo.reader import read_lwns

DSN = os.environ.get("REPLICATOR_ORACLE_DSN", "")

pytestmark = pytest.mark.skipif(
    not DSN,
    reason="REPLICATOR_ORACLE_DSN is not set: no ASM instance to read from "
    "(see docs/operations.md, 'Verifying ASM against a real instance')",
)


def _settings(parallelism: int) -> AsmSettings:
    return AsmSettings(
        DSN,
        os.environ.get("REPLICATOR_ASM_USER", "sys"),
        os.environ.get("REPLICATOR_ASM_PASSWORD", ""),
        os.environ.get("REPLICATOR_ASM_PRIVILEGE", "sysasm"),
        parallelism,
    )


def _asm_redo_file(source: AsmSource) -> tuple[str, bool]:
    names = [
        row[0]
        for row in source.run(
            "find redo",
            lambda s: (
                s.connect()
                .cursor()
                .execute(
                    "select name from v$archived_log where name like '+%' and deleted = 'NO' order by sequence# desc "
                    "fetch first 1 rows only"
                )
                .fetchall()
            ),
        )
    ]
    archived = bool(names)
    if not names:
        names = [
            row[0]
            for row in source.run(
                "find redo",
                lambda s: (
                    s.connect()
                    .cursor()
                    .execute("select member from v$logfile where member like '+%' fetch first 1 rows only")
                    .fetchall()
                ),
            )
        ]
    if not names:
        pytest.skip("no redo log in ASM visible to this session (V$ARCHIVED_LOG / V$LOGFILE)")
    return str(names[0]), archived


def test_read_a_redo_log_from_asm() -> None:
    serial = AsmSource(_settings(1))
    parallel = AsmSource(_settings(4))
    try:
        name, archived = _asm_redo_file(serial)
        with serial.open(name) as a, parallel.open(name) as b:
            assert a.size() == b.size() > 0
            whole_a = b"".join(a.stream(0, a.size(), 1 << 20))
            whole_b = b"".join(b.stream(0, b.size(), 1 << 20))
        assert whole_a == whole_b
        header = parse_headers(whole_a[:8192], name)
        assert header.sequence > 0 and header.block_size in (512, 1024, 4096)
        if archived:  # a complete log: every block verified (checksums), every LWN framed
            assert list(read_lwns(name, source=parallel))
    finally:
        serial.close()
        parallel.close()
