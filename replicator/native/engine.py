"""Wiring of the native engine into a :class:`~replicator.runner.pipeline.Pipeline`.

The python engine's stages stay in place; the native engine installs hooks that take over
the parts it implements and leave the rest (and anything unusual) to the python code.
Today: a batch run's files go through the native record loop (block checks, framing, LWNs
and dispatch in C, :class:`replicator.native._core.RecordLoop`); framed LWNs (daemon, RAC) and
single records go through :class:`replicator.native._core.RecordDispatcher` (for every format),
which stores the (5.1, 11.x) pairs natively; and the commit of a transaction for the
OpenLogReplicator JSON format (row assembly, value decoding and rendering,
:class:`replicator.native._core.JsonCommitter`, FULL mode included), for the Debezium formats
(:class:`~replicator.native._core.DebeziumCommitter`) and, through the typed row images
(:class:`~replicator.native._core.RowImages`), for every EventFormat that defines
``on_native_row`` and does not turn it off with ``native_rows`` (:class:`~replicator.native.
_core.EventCommitter`).
"""

from __future__ import annotations

from typing import Any

from replicator.formats.debezium import DebeziumFormat
from replicator.formats.framework import EventFormat
from replicator.formats.olr_json import OlrJsonFormat
from replicator.native import core
from replicator.redo.header import RedoHeader
from replicator.redo.reader import RedoFile, read_chunks

# The committer of the last pipeline set up (tests and benchmarks read its counters).
last_committer: Any = None


def attach(pipeline: Any) -> None:
    """Install the native hooks a pipeline's format and options allow."""
    global last_committer
    fmt = pipeline.format
    pipeline.native = last_committer = None
    attach_dispatch(pipeline.parser)
    pipeline.native_loop = run_file
    committer = None
    if type(fmt) is OlrJsonFormat:
        committer = core().JsonCommitter(fmt, pipeline)
    elif type(fmt) is DebeziumFormat:
        committer = core().DebeziumCommitter(fmt, pipeline)
    elif isinstance(fmt, EventFormat) and hasattr(fmt, "on_native_row") and getattr(fmt, "native_rows", True):
        committer = core().EventCommitter(fmt, pipeline)  # the typed row-image interface
    if committer is not None:
        pipeline.native = last_committer = committer
        pipeline.parser.native_commit = committer.commit


def attach_dispatch(parser: Any) -> None:
    """Install the native record dispatch (any format, batch or daemon)."""
    dispatcher = core().RecordDispatcher()
    parser.native_dispatch = dispatcher.dispatch
    parser.native_records = dispatcher.dispatch_records


def run_file(pipeline: Any, redo: RedoFile) -> RedoHeader:
    """Pipeline.run_file's reading and analysis with the native record loop (RecordLoop).

    Python reads the file (header checks, then buffers of blocks); the loop checks the
    blocks, frames records and LWNs and dispatches them; per LWN the parser's checkpoint
    and ``pipeline.on_lwn`` are called as in the python engine.
    """
    parser = pipeline.parser
    headers: list[RedoHeader] = []
    loop = None
    on_lwn = pipeline.on_lwn
    observe = None if on_lwn is None else (lambda lwn: on_lwn(redo, lwn))
    for buf, block, count in read_chunks(redo.path, pipeline.verify_checksum, headers, source=pipeline.source):
        if loop is None:
            parser.start_file(headers[0])
            loop = core().RecordLoop(parser, headers[0], redo.path, pipeline.verify_checksum, block, observe)
        loop.feed(buf, block, count)
    if loop is not None:
        loop.finish()
    if loop is None or not loop.lwns:
        raise AssertionError("read_lwns yielded nothing")  # pragma: no cover - as the python engine
    return headers[0]
