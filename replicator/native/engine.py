"""Wiring of the native engine into a :class:`~replicator.runner.pipeline.Pipeline`.

The python engine's stages stay in place; the native engine installs hooks that take over
the parts it implements and leave the rest (and anything unusual) to the python code.
Today: the dispatch of a record's change vectors with the (5.1, 11.x) pairs stored natively
(:class:`replicator.native._core.RecordDispatcher`, for every format), and the commit of a
transaction for the OpenLogReplicator JSON format (row assembly, value decoding and
rendering, :class:`replicator.native._core.JsonCommitter`, FULL mode included), for the
Debezium formats (:class:`~replicator.native._core.DebeziumCommitter`) and, through the typed
row images (:class:`~replicator.native._core.RowImages`), for every EventFormat that defines
``on_native_row`` and does not turn it off with ``native_rows`` (:class:`~replicator.native.
_core.EventCommitter`).
"""

from __future__ import annotations

from typing import Any

from replicator.formats.debezium import DebeziumFormat
from replicator.formats.framework import EventFormat
from replicator.formats.olr_json import OlrJsonFormat
from replicator.native import core

# The committer of the last pipeline set up (tests and benchmarks read its counters).
last_committer: Any = None


def attach(pipeline: Any) -> None:
    """Install the native hooks a pipeline's format and options allow."""
    global last_committer
    fmt = pipeline.format
    pipeline.native = last_committer = None
    attach_dispatch(pipeline.parser)
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
    parser.native_dispatch = core().RecordDispatcher().dispatch
