# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""EventCommitter: the engine's commit for the formats with on_native_row (typed row images)."""

# The engine's side of the typed row-image interface: phase A's rows (JsonCommitter's, whose
# plan and committer this module subclasses through _core.pxd) become a RowImages
# (replicator/formats/_rowvalues.pyx, beside the rowvalues module it mirrors) that the format's
# on_native_row reads; see docs/native-engine.md "Typed row images". It stays in replicator.native
# because it is the engine (it subclasses _core's JsonCommitter and reads phase A's Work); what
# the images know of the formats (a table's visible columns, the cells, their texts) lives below,
# in replicator.formats, and is cimported from _rowvalues.pxd (native -> formats: downwards).

from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t

from replicator.values._buf cimport *
from replicator.native._structs cimport *
from replicator.native._core cimport JsonCommitter, _Plan, _Out
from replicator.formats._rowvalues cimport RowImages, RowMeta, RowView, row_view

include "_defs.pxi"

import gc

from replicator.events import Transaction
from replicator.formats.framework import TxnContext


cdef class _RowPlan(_Plan):
    """A table's plan for EventCommitter: the core's _Plan (table, ncols, bail) and its RowView."""

    cdef RowView rv


cdef _RowPlan make_row_plan(object fmt, object parser, object table):
    cdef _RowPlan plan = _RowPlan()
    plan.table = table
    plan.ncols = len(table.columns)
    plan.bail = True
    lobs = parser.lobs
    if table.system or table.tag_columns or (lobs.enabled and lobs.columns(table)):
        return plan
    plan.rv = row_view(fmt, table)
    plan.bail = plan.rv is None
    return plan


cdef RowImages decode_rows(Work* w, list plans, object epoch_of_raw):
    """Phase B for the typed interface: every row's images into cells (python decode order)."""
    cdef RowImages out = RowImages()
    cdef Py_ssize_t r, total = 0
    cdef Row* row
    cdef RowMeta* meta
    cdef RowView view
    cdef list views = [(<_RowPlan>plan).rv for plan in plans]
    out.views = views
    out.epoch_of_raw = epoch_of_raw
    for r in range(w.nrows):
        total += 2 * (<RowView>views[w.rows[r].table]).nvis
    out._alloc(w.nrows, total)
    total = 0
    for r in range(w.nrows):
        row = w.rows + r
        view = views[row.table]
        meta = out.rows + r
        meta.op = row.op
        meta.table = row.table
        meta.nvis = view.nvis
        meta.cell0 = total
        meta.scn = row.scn
        meta.time = row.time
        meta.obj = row.obj
        meta.data_obj = row.data_obj
        meta.bdba = row.bdba
        meta.slot = row.slot
        meta.offset = row.offset
        total += 2 * view.nvis
        out._decode_row(r, w.vals + row.img, row.ncols)
    return out


cdef class EventCommitter(JsonCommitter):
    """Commits transactions natively for an EventFormat that has ``on_native_row``.

    Phase A is :class:`JsonCommitter`'s; phase B decodes the rows into a
    :class:`RowImages` and drives the format's hooks as EventFormat.transaction does,
    calling ``on_native_row(ctx, pos, rows, r)`` instead of ``on_row`` per row; a
    transaction above the streaming size is decoded and formatted chunk by chunk (_stream).
    """

    def __init__(self, fmt, pipeline):
        self.fmt = fmt
        self.pipeline = pipeline
        self.deliver = pipeline.on_native
        self.plans = {}
        self.epochs = {}
        self.scn_all = False
        self.native_transactions = 0
        self.python_transactions = 0

    cdef bint _stream(self, object parser, object txn, object record) except -1:
        """A transaction above parser.stream_bytes, chunk by chunk as JsonCommitter._stream: a
        first walk checks and counts the rows (the formats need the total up front), the
        second decodes and formats them, and the messages are handed over exactly where the
        python engine's stream (the whole list, drained every FLUSH_MESSAGES) cuts them."""
        cdef _Out o = _Out()
        cdef long long total
        stats = parser.stats
        rows_before = stats.rows
        o.event = None  # counting only
        try:
            if not self._walk(parser, txn, o):
                return False
        finally:
            stats.rows = rows_before
        total = o.num
        stats.transactions += 1
        fmt = self.fmt
        opts = fmt.options
        event = self._event(parser, txn, record)
        fmt.reset(event.begin_scn)
        o = _Out()
        o.event = event
        o.ctx = TxnContext(event, [None] * total, event.con_name or opts.con_name or opts.database)
        o.messages = []
        o.room = self.pipeline.on_native_stream(event)
        if total and not fmt.skip_begin:
            self._give(o, fmt.on_begin(o.ctx, fmt.take()))
        collecting = gc.isenabled()
        gc.disable()  # as JsonCommitter._stream: messages alive until the drain, no cycles
        try:
            if not self._walk(parser, txn, o):
                raise AssertionError("native stream: the rendering walk disagrees with the checking walk")
        finally:
            if collecting:
                gc.enable()
        if total and not fmt.skip_commit:
            self._give(o, fmt.on_commit(o.ctx, fmt.take()))
        self._hand_over(o)
        return True

    cdef _rows(self, Work* w, _Out o, object parser):
        """One chunk's rows of a streamed transaction (counted only on the checking walk)."""
        cdef Py_ssize_t r
        if o.event is None:
            o.num += w.nrows
            return
        rows = decode_rows(w, self._tables, parser.epoch)
        fmt = self.fmt
        ctx = o.ctx
        on_row = fmt.on_native_row
        take = fmt.take
        o.rows += w.nrows
        for r in range(w.nrows):
            ctx.number = o.num
            o.num += 1
            self._give(o, on_row(ctx, take(), rows, r))

    cdef int _give(self, _Out o, list messages) except -1:
        """Add messages; hand over exactly ``o.room`` whenever that many are waiting."""
        o.messages += messages
        while o.room and len(o.messages) >= o.room:
            rest = o.messages[o.room:]
            del o.messages[o.room:]
            self._hand_over(o)
            o.messages = rest
        return 0

    cdef object _event(self, object parser, object txn, object record):
        """The Transaction event of a commit (as Parser._emit builds it)."""
        header = parser.header
        lwn = parser.lwn
        begin_scn = txn.begin_scn if txn.begun else record.scn
        begin_time = txn.begin_time if txn.begun else record.time
        return Transaction(
            xid=txn.xid, begin_scn=begin_scn, begin_time=parser.epoch(begin_time), commit_scn=record.scn,
            commit_time=parser.epoch(record.time), changes=[], attributes=txn.attributes,
            logon_user=txn.logon_user, thread=header.thread, begin_seq=txn.begin_seq, begin_offset=txn.begin_offset,
            system=txn.system, con_name=parser.opt.con_name,
            commit_pos=(header.sequence, (lwn.first_block if lwn else 0) * header.block_size, parser.rank),
        )

    cdef _Plan plan_for(self, object parser, object table):
        cdef _Plan plan = self.plans.get(id(table))
        if plan is None or plan.table is not table:
            plan = make_row_plan(self.fmt, parser, table)
            self.plans[id(table)] = plan
        return plan

    cdef _emit(self, Work* w, object parser, object txn, object record):
        cdef Py_ssize_t r
        if w.nrows == 0:
            return
        stats = parser.stats
        stats.rows += w.nrows
        stats.transactions += 1
        fmt = self.fmt
        event = self._event(parser, txn, record)
        rows = decode_rows(w, self._tables, parser.epoch)
        opts = fmt.options
        fmt.reset(event.begin_scn)
        ctx = TxnContext(event, [None] * w.nrows, event.con_name or opts.con_name or opts.database)
        messages = []
        if not fmt.skip_begin:
            messages += fmt.on_begin(ctx, fmt.take())
        on_row = fmt.on_native_row
        take = fmt.take
        for r in range(w.nrows):
            ctx.number = r
            messages += on_row(ctx, take(), rows, r)
        if not fmt.skip_commit:
            messages += fmt.on_commit(ctx, fmt.take())
        self.deliver(event, messages, w.nrows)
