"""Wiring of the native engine into the one :class:`~replicator.runner.driver.Driver`, whatever its
feed (the batch :class:`~replicator.runner.pipeline.Pipeline`, the daemon's
:class:`~replicator.runner.daemon_engine.DaemonEngine` and RacEngine): the same hooks for all.

The python engine's stages stay in place; the native engine installs hooks that take over
the parts it implements and leave the rest (and anything unusual) to the python code.
Today: a batch run's files go through the native record loop (block checks, framing, LWNs
and dispatch in C, :class:`replicator.native._dispatch.RecordLoop`; the reading and block checks
of the next buffers run ahead in a reader thread), and so do the blocks the
daemon's single-thread engine reads (:class:`replicator.native._daemon_loop.BlockLoop`, fed as they
arrive, with the per-LWN checkpoint step in C) and, for RAC, each thread's blocks (framed by
:class:`~replicator.native._daemon_loop.ThreadLoop`, merged by
:class:`~replicator.native._daemon_loop.RacMerge`);
single records go through :class:`replicator.native._dispatch.RecordDispatcher` (for every format),
which stores the (5.1, 11.x) pairs natively; and the commit of a transaction for the
OpenLogReplicator JSON format (row assembly, value decoding and rendering,
:class:`replicator.native._core.JsonCommitter`, FULL mode included), for the Debezium formats
(:class:`~replicator.native._debezium.DebeziumCommitter`), for protobuf
(:class:`~replicator.native._protobuf.ProtobufCommitter`) and, through the typed row images
(:class:`~replicator.formats._rowvalues.RowImages`), for every EventFormat that defines
``on_native_row`` and does not turn it off with ``native_rows`` (:class:`~replicator.native.
_rows.EventCommitter`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from replicator.formats.capabilities import NativeRowFormat
from replicator.formats.olr_json import OlrJsonFormat
from replicator.native import core, debezium, dispatch, framing, protobuf, rows, stage2
from replicator.redo.header import RedoHeader
from replicator.redo.readahead import ReadAhead
from replicator.redo.reader import READ_AHEAD_CHUNKS, RedoFile, checked_chunks

if TYPE_CHECKING:
    from replicator.runner.stages import CommitSink, NativeDriver

# The committer of the last pipeline set up (tests and benchmarks read its counters).
last_committer: Any = None


def attach(pipeline: NativeDriver) -> None:
    """Install the native hooks a runner's format and options allow.

    ``pipeline`` is the run's :class:`~replicator.runner.driver.Driver` (its typed port,
    :class:`~replicator.runner.stages.NativeDriver`): each feed installs its own native loop
    classes (the record loop, the daemon's block loop, the RAC merge) and says which commits
    it declines.
    """
    pipeline.native = None
    attach_dispatch(pipeline.parser)
    pipeline.install_native_feed(core())
    pipeline.native = attach_commit(pipeline, pipeline.parser, pipeline.format, pipeline.commit_declines())
    stage = None if pipeline.native is None else pipeline.native.stage2  # decode workers (JSON runs)
    if stage is not None:
        pipeline.native_barrier = stage.barrier
        pipeline.native_finish = stage.finish


def attach_commit(target: CommitSink, parser: Any, fmt: Any, declines: Callable[[Any, Any], bool] | None = None) -> Any:
    """Install the native commit of ``fmt`` (when it has one) on ``parser``; the committer or None.

    ``target`` (a :class:`~replicator.runner.stages.CommitSink`) takes the rendered messages:
    ``on_native(txn, messages, rows)``, ``on_native_stream(txn) -> room`` and
    ``on_native_part(messages, rows) -> room`` (the run's :class:`~replicator.runner.driver.Driver`),
    and has the observers ``on_commit`` and
    ``on_change`` (a commit is left to python while either is set, unless the committer's
    ``tally`` is set: then they only count into that metrics Tally and the committer counts
    its own rows there). ``target.tally`` (the daemon's) becomes the committer's ``tally``.
    ``declines(txn, record)``, when given, leaves a commit to python when it says so.
    """
    global last_committer
    committer = None
    # A Debezium, protobuf or event format exists only once its module is imported (a run of
    # another format does not import it, nor the protobuf runtime, for this test).
    debezium_formats = sys.modules.get("replicator.formats.debezium")
    protobuf_format = sys.modules.get("replicator.formats.protobuf")
    framework = sys.modules.get("replicator.formats.framework")
    if type(fmt) is OlrJsonFormat:
        # Stage 2's class only for a run with decode workers (its module is not needed otherwise).
        workers = stage2().Stage2 if target.decode_workers > 0 else None
        committer = core().JsonCommitter(fmt, target, workers)
    elif debezium_formats is not None and type(fmt) is debezium_formats.DebeziumFormat:
        committer = debezium().DebeziumCommitter(fmt, target)
    elif protobuf_format is not None and type(fmt) is protobuf_format.ProtobufFormat:
        committer = protobuf().ProtobufCommitter(fmt, target)
    elif (
        framework is not None
        and isinstance(fmt, framework.EventFormat)
        and isinstance(fmt, NativeRowFormat)
        and fmt.native_rows
    ):
        committer = rows().EventCommitter(fmt, target)  # the typed row-image interface
    last_committer = committer
    if committer is None:
        return None
    committer.tally = target.tally  # the daemon's metrics counters (set before attach)
    commit = committer.commit
    if declines is None:
        parser.native_commit = commit
    else:
        stage = committer.stage2

        def guarded(parser: Any, txn: Any, record: Any) -> bool:
            if declines(txn, record):
                if stage is not None:
                    stage.barrier()  # the python engine takes it: after the queued ones
                return False
            return commit(parser, txn, record)

        parser.native_commit = guarded
    return committer


def attach_dispatch(parser: Any) -> None:
    """Install the native record dispatch (any format, batch or daemon)."""
    dispatcher = dispatch().RecordDispatcher()
    parser.native_dispatch = dispatcher.dispatch
    parser.native_records = dispatcher.dispatch_records


def run_file(pipeline: Any, redo: RedoFile) -> RedoHeader:
    """Pipeline.run_file's reading and analysis with the native record loop (RecordLoop).

    A reader thread (:class:`~replicator.redo.readahead.ReadAhead`) reads the file (header
    checks, then buffers of blocks) and checks each buffer's blocks (check_chunk, the GIL
    released) up to READ_AHEAD_CHUNKS buffers ahead, while this thread's loop frames records
    and LWNs and dispatches them; per LWN the parser's checkpoint and ``pipeline.on_lwn`` are
    called as in the python engine. A read error, or a buffer that failed its checks (the loop
    checks it again and raises), surfaces after the buffers before it were analysed.
    """
    parser = pipeline.parser
    headers: list[RedoHeader] = []
    loop = None
    on_lwn = pipeline.on_lwn
    observe = None if on_lwn is None else partial(on_lwn, redo)  # per LWN: no python frame of its own
    native = dispatch()
    check_chunk = framing().check_chunk
    verify = pipeline.verify_checksum

    def chunks() -> Iterator[tuple[bytes, int, int, bool]]:
        return checked_chunks(redo.path, check_chunk, verify, headers, source=pipeline.source)

    # The per-LWN checkpoint decided in C when it is only the position and schema checkpoint step.
    step = pipeline.native_checkpoint_step()
    on_checkpoint = parser.on_checkpoint
    if step is not None:
        parser.on_checkpoint = None  # the loop's checkpoint step takes it (RecordLoop.set_checkpoint_step)
    try:
        reader = ReadAhead(chunks, READ_AHEAD_CHUNKS)
        try:
            for buf, block, count, checked in reader:
                if loop is None:
                    parser.start_file(headers[0])
                    loop = native.RecordLoop(parser, headers[0], redo.path, verify, block, observe, step)
                loop.feed(buf, block, count, checked)
        finally:
            reader.close()  # an error or a stop here: the reader ends (and closes the file) first
        if loop is not None:
            loop.finish()
    finally:
        parser.on_checkpoint = on_checkpoint
    if loop is None or not loop.lwns:
        raise AssertionError("read_lwns yielded nothing")  # pragma: no cover - as the python engine
    return headers[0]
