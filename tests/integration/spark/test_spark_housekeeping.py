"""Housekeeping of the lake: compaction, vacuum, tombstone retention, the pruned replay lookup.

The lake is built by the job's batch logic without Spark (:meth:`BatchApplier.apply_arrow`).
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("deltalake")

from test_spark_fold import Stream, _insert_lines, _update_lines, applier, assert_equal, events  # noqa: E402

from replicator.spark import housekeeping  # noqa: E402


def _lake(tmp_path: Path, batches: int = 10) -> tuple[Any, Stream, Path]:
    s = Stream(random.Random(4))
    lake = tmp_path / "lake"
    a = applier(lake, buckets=2)
    for b in range(batches):
        a.apply_arrow(events(_insert_lines(s, [1000 * (b + 1) + i for i in range(20)], f"v{b}")), b)
    return a, s, lake


def test_compaction_rewrites_buckets_with_many_files_and_keeps_the_rows(tmp_path: Path) -> None:
    from deltalake import DeltaTable

    a, s, lake = _lake(tmp_path)
    table = lake / "tables" / "APP.S"
    assert len(DeltaTable(str(table)).file_uris()) == 20  # a file per bucket and batch
    rep = housekeeping.compact(a.lake, min_files=8)
    assert rep.buckets_compacted == 2 and rep.files_compacted == 20
    assert len(DeltaTable(str(table)).file_uris()) == 2
    assert_equal(lake, s)
    # the job goes on over the compacted table: the next batch reads and rewrites one file per bucket
    a.lake.forget(a.lake.table_uri("APP.S"))
    m = a.apply_arrow(events(_update_lines(s, [1001, 5005], "after")), 10)
    assert m.io["APP.S"][2] <= 2
    assert_equal(lake, s)


def test_vacuum_removes_unused_files_old_tombstones_and_orphans(tmp_path: Path) -> None:
    from deltalake import DeltaTable

    a, s, lake = _lake(tmp_path, batches=3)
    s.scn += 10
    doomed = sorted(s.rows["APP.S"])[:5]
    lines = [b'{"e_scn":%d,"c_scn":%d,"c_idx":1,"xid":"d","payload":[{"op":"begin"}]}' % (s.scn + 5, s.scn)]
    for n, (key,) in enumerate(doomed, 2):
        del s.rows["APP.S"][(key,)]
        lines.append(
            b'{"e_scn":%d,"c_scn":%d,"c_idx":%d,"xid":"d","payload":[{"op":"d","schema":{"owner":"APP",'
            b'"table":"S"},"before":{"ID":%d}}]}' % (s.scn + 5, s.scn, n, key)
        )
    lines.append(
        b'{"e_scn":%d,"c_scn":%d,"c_idx":%d,"xid":"d","payload":[{"op":"commit"}]}'
        % (s.scn + 5, s.scn, len(doomed) + 2)
    )
    a.apply_arrow(events(lines), 3)
    a.apply_arrow(events(_update_lines(s, [sorted(s.rows["APP.S"])[0][0]], "later")), 4)
    housekeeping.compact(a.lake, min_files=2)
    (lake / "_replicator" / "pending").mkdir(parents=True, exist_ok=True)
    (lake / "_replicator" / "pending" / "orphan.arrows").write_bytes(b"")
    table = lake / "tables" / "APP.S"
    on_disk = len(list(table.rglob("*.parquet")))
    assert on_disk > len(DeltaTable(str(table)).file_uris())
    rep = housekeeping.vacuum(a.lake, retention_hours=0, tombstone_retention_scn=1)
    assert rep.files_vacuumed > 0 and rep.pending_removed == 1 and rep.tombstones_dropped == 5
    assert len(list(table.rglob("*.parquet"))) == len(DeltaTable(str(table)).file_uris())
    assert_equal(lake, s)


def test_the_replay_lookup_reads_only_the_change_log_files_of_its_scns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyarrow.dataset as ds

    a, s, lake = _lake(tmp_path)
    read: list[list[str]] = []
    real = ds.dataset

    def spy(paths: Any, **kw: Any) -> Any:
        read.append(list(paths))
        return real(paths, **kw)

    monkeypatch.setattr(ds, "dataset", spy)
    from deltalake import DeltaTable

    logged = DeltaTable(str(lake / "changes")).to_pyarrow_table(columns=["commit_scn", "xid"]).to_pylist()
    scn, xid = logged[0]["commit_scn"], logged[0]["xid"]
    assert a.lake.applied_transactions({(scn, xid), (scn, "other")}) == {(scn, xid)}
    # the file of that batch, not the ten of the ten batches
    assert len(read) == 1 and len(read[0]) == 1
    assert len(DeltaTable(str(lake / "changes")).file_uris()) == 10


def test_housekeeping_commands(tmp_path: Path) -> None:
    _, _, lake = _lake(tmp_path, batches=9)
    for cmd in (["compact", "--min-files", "8"], ["vacuum", "--retention-hours", "0"]):
        proc = subprocess.run(
            [sys.executable, "-m", "replicator", "spark", cmd[0], "--lake", str(lake), *cmd[1:]],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.startswith("housekeeping:")
    assert (
        "2 bucket(s) compacted"
        in subprocess.run(
            [sys.executable, "-m", "replicator", "spark", "compact", "--lake", str(lake), "--min-files", "1"],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
    )
