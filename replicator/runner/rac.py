"""RAC batch runs: the archived logs of several redo threads through one parser (docs/rac.md).

:func:`run_merged` is what :meth:`replicator.runner.pipeline.Pipeline.run` does when its file list
spans more than one thread: one :class:`~replicator.redo.merge.ThreadCursor` per thread, a
:class:`~replicator.redo.merge.ThreadMerge` over them, and every record analysed by the one
shared parser, so transactions (cluster-wide XIDs) may span threads and commits come out in
cluster SCN order.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from replicator.redo.merge import ThreadCursor, ThreadMerge, group_by_thread
from replicator.redo.reader import RedoFile
from replicator.redo.records import Lwn
from replicator.redo.source import RedoSource
from replicator.runner.driver import rac_restart_positions
from replicator.runner.runstats import RunStats


class MergedRun(Protocol):
    """What the merge uses of the batch :class:`~replicator.runner.pipeline.Pipeline` (declared
    here so this module, which the pipeline calls, does not import it back)."""

    parser: Any
    stats: RunStats
    sink: Any
    source: RedoSource
    verify_checksum: bool
    threads: dict[int, object]
    on_lwn: Callable[[RedoFile, Lwn], None] | None
    on_rac_checkpoint: Callable[[int, int, list[tuple[int, int, int, int]]], None] | None

    def drain(self) -> None: ...

    def stage2_barrier(self) -> None: ...


def run_merged(
    pipeline: MergedRun, files: list[RedoFile], progress: Callable[[RunStats, RedoFile], None] | None = None
) -> RunStats:
    """Process the files of every thread merged by SCN, then flush (a batch run's soft stop)."""
    t0 = time.perf_counter()
    parser = pipeline.parser
    stats = pipeline.stats
    cursors = [
        ThreadCursor(thread, group, pipeline.verify_checksum, pipeline.source)
        for thread, group in group_by_thread(files).items()
    ]

    def lwn_done(cursor: ThreadCursor, lwn: Lwn) -> None:
        parser.merged_lwn_done(lwn)
        if pipeline.on_lwn is not None and cursor.file is not None:
            pipeline.on_lwn(cursor.file, lwn)

    def file_done(cursor: ThreadCursor, redo: RedoFile) -> None:
        size = redo.size if redo.size >= 0 else pipeline.source.size(redo.path)
        cursor.progress.bytes_read += size
        stats.files += 1
        stats.bytes_read += size
        stats.per_file.append((redo.path, size))
        pipeline.stage2_barrier()
        pipeline.drain()
        if progress is not None:
            progress(stats, redo)

    for cursor in cursors:
        cursor.on_lwn_done = lwn_done
        cursor.on_file_done = file_done
    merge = ThreadMerge(cursors)
    enter, analyse = parser.enter, parser.merged_record
    cut_scn = 0
    for _cursor, head in merge:
        enter(head.header, head.lwn)
        analyse(head.rank, head.record)
        cut_scn = head.record.scn
    pipeline.threads = {c.thread: c.progress for c in cursors}
    hook = pipeline.on_rac_checkpoint
    if hook is not None and cut_scn:  # the soft stop's restart point, with every thread's position
        threads = rac_restart_positions(
            parser, [(c.thread, c.position(), c.history, c.progress.lwn_scn, c.progress.bound) for c in cursors]
        )
        hook(cut_scn, max(c.progress.lwn_time for c in cursors), threads)
    pipeline.stage2_barrier()
    pipeline.drain()
    pipeline.sink.flush()
    parser.report_skips()
    stats.lwns = parser.stats.lwns
    stats.seconds = time.perf_counter() - t0
    return stats
