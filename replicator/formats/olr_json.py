"""The OpenLogReplicator JSON output format (olr-interfaces.md §2), byte-exact with OLR HEAD.

One committed :class:`~replicator.events.Transaction` becomes a begin message (emitted just
before the first printed change, so empty transactions print nothing), one message per row
change or DDL, and a commit message; `message` bit 1 folds them into one message. Every
message takes the next position ``(c_scn, c_idx)``: a transaction resets ``c_scn`` to its
begin SCN and a checkpoint to its LWN SCN, and the index restarts only when ``c_scn``
changes, so a transaction beginning at the SCN of the previous checkpoint continues that
checkpoint's numbering. ``Message.idx`` is the internal index; JSON prints it plus one.

Header fields that are not about the current transaction (b_scn, e_scn, b_tm, e_tm, rth in
a checkpoint) repeat the last transaction's values, as OLR's builder does.
"""

from __future__ import annotations

from collections.abc import Iterator

from replicator.events import (
    OP_DELETE,
    Checkpoint,
    DdlChange,
    Message,
    RowChange,
    Table,
    Transaction,
)
from replicator.formats.base import NO_SCN, FormatOptions, printable_filter
from replicator.formats.capabilities import SilentCheckpoints, StreamingFormat
from replicator.formats.escape import escape_bytes, escape_str
from replicator.formats.olr_columns import TablePlan, render_compressed, render_schemaless
from replicator.formats.olr_header import HeaderBuilder
from replicator.formats.olr_rows import UpdateReducer
from replicator.values.rowid import rowid_text


class OlrJsonFormat(StreamingFormat, SilentCheckpoints):
    """Renders transactions and checkpoints as OpenLogReplicator JSON messages."""

    def __init__(self, options: FormatOptions):
        self.options = options
        message = options.message
        self.full = bool(message & 1)
        self.add_num = bool(message & 2)
        # Skipping begin/commit is rejected with FULL mode by the config; ignore it here too.
        self.skip_begin = bool(message & 4) and not self.full
        self.skip_commit = bool(message & 8) and not self.full
        self.add_offset = bool(message & 0x10)
        self.rid = options.rid == 1
        self.schema_columns = bool(options.schema & 1)
        self._schema_repeat = bool(options.schema & 2)
        self._schema_obj = bool(options.schema & 4)
        self.column_mode = options.column
        self._printable = printable_filter(options.flags)
        self.header = HeaderBuilder(options)
        self.reducer = UpdateReducer(options.column, options.flags)
        self.plans: dict[int, TablePlan] = {}
        self._described: set[int] = set()
        self.lwn_scn = NO_SCN
        self.lwn_idx = 0

    # -- positions ---------------------------------------------------------------------------

    def set_position(self, scn: int) -> None:
        if self.lwn_scn != scn:
            self.lwn_scn = scn
            self.lwn_idx = 0

    def _message(
        self, head: bytes, body: bytes, txn: Transaction, tag: bytes | None = None, table: Table | None = None
    ) -> Message:
        """Wrap ``{head,body}``; ``head`` must be the header built for the index just taken."""
        return Message(
            data=b"{" + head + b"," + body,
            scn=self.lwn_scn,
            idx=self.lwn_idx - 1,
            tag=tag,
            xid=txn.xid,
            seq=txn.begin_seq,
            table=table,
        )

    def take_index(self) -> int:
        self.lwn_idx += 1
        return self.lwn_idx

    # -- Format protocol ---------------------------------------------------------------------

    def transaction(self, txn: Transaction) -> list[Message]:
        """Render one committed transaction (begin, changes, commit as the options say)."""
        return list(self.iter_transaction(txn))

    def iter_transaction(self, txn: Transaction) -> Iterator[Message]:
        """Like :meth:`transaction`, one message at a time: ``txn.changes`` may be a stream.

        Used for transactions too big to hold; every message is yielded as soon as it is
        built (FULL mode, one message per transaction, must still hold its elements).
        """
        self.set_position(txn.begin_scn)
        header = self.header
        header.start_transaction(txn)
        ctx = header.transaction_context(txn)
        elements: list[bytes] = []
        full_head = b""
        started = False
        num = 0
        for change in txn.changes:
            if not self._printable(change):
                continue
            if not started:
                started = True
                if not self.skip_begin:
                    head = header.begin(self.lwn_scn, self.take_index(), change.time, ctx)
                    if self.full:
                        full_head = head
                    else:
                        yield self._message(head, b'"payload":[{"op":"begin"}]}', txn)
            if isinstance(change, DdlChange):
                element, tag = self._ddl_element(change), None
            else:
                element, tag = self._row_element(change, num)
            num += 1
            if self.full:
                elements.append(element)
                continue
            if isinstance(change, DdlChange):
                head = header.ddl(self.lwn_scn, self.take_index(), change.scn, change.time, ctx)
            else:
                head = header.dml(self.lwn_scn, self.take_index(), change.scn, change.time, ctx)
            table = change.table if isinstance(change, RowChange) else None
            yield self._message(head, b'"payload":[' + element + b"]}", txn, tag=tag, table=table)
        if not started:
            return
        if self.full:
            body = b'"payload":[' + b",".join(elements) + b"]}"
            yield self._message(full_head, body, txn)
        elif not self.skip_commit:
            head = header.commit(self.lwn_scn, self.take_index(), ctx)
            yield self._message(head, b'"payload":[{"op":"commit"}]}', txn)

    def checkpoint_unsent(self, cp: Checkpoint) -> None:
        """What :meth:`checkpoint` does to later positions, for a checkpoint not output (no 0x1000)."""
        self.set_position(cp.scn)
        self.take_index()

    def checkpoint(self, cp: Checkpoint) -> list[Message]:
        """Render a checkpoint; the message has ``checkpoint=True`` (output only with flag 0x1000)."""
        self.set_position(cp.scn)
        head = self.header.checkpoint(self.lwn_scn, self.take_index(), cp.scn, cp.time)
        body = b'"payload":[{"op":"chkpt","seq":%d,"offset":%d%s}]}' % (
            cp.seq,
            cp.offset,
            b',"redo":true' if cp.redo_switch else b"",
        )
        return [
            Message(data=b"{" + head + b"," + body, scn=self.lwn_scn, idx=self.lwn_idx - 1, checkpoint=True, seq=cp.seq)
        ]

    # -- payload elements --------------------------------------------------------------------

    def plan(self, table: Table) -> TablePlan:
        plan = self.plans.get(id(table))
        if plan is None or plan.table is not table:
            plan = self.plans[id(table)] = TablePlan(table, self.options)
        return plan

    def table_schema(self, plan: TablePlan | None, obj: int, owner: str = "", name: str = "") -> bytes:
        """The ``"schema":{…}`` object: owner/table, obj, and the column list when due."""
        if plan is None:
            head = b'"schema":{"owner":"' + escape_str(owner) + b'",' if owner else b'"schema":{'
            head += b'"table":"' + escape_str(name) + b'"' if name else b'"table":"OBJ_%d"' % obj
        else:
            head = plan.schema_head
        if self._schema_obj:
            head += b',"obj":%d' % obj
        if plan is not None and self.schema_columns:
            # Once per table for the process, by object number: OLR remembers the tables it
            # described and, on the reference check's DDL (add/drop/rename column, truncate,
            # partitions), never described a table again after its definition changed.
            key = plan.table.obj
            if self._schema_repeat or key not in self._described:
                self._described.add(key)
                head += plan.schema_columns
        return head + b"}"

    def _row_element(self, change: RowChange, num: int) -> tuple[bytes, bytes | None]:
        """``{"op":…}`` of a row change, and its Kafka key fragment (filter `tag`)."""
        table = change.table
        plan = self.plan(table) if table is not None else None
        parts = [b'{"op":"' + change.op.encode("ascii") + b'",']
        if self.add_offset:
            parts.append(b'"offset":%d,' % change.offset)
        parts.append(self.table_schema(plan, change.obj))
        if self.add_num:
            parts.append(b',"num":%d' % num)
        if self.rid:
            parts.append(b',"rid":"' + rowid_text(change.data_obj, change.bdba, change.slot).encode("ascii") + b'"')
        before, after = self.reducer.images(change, plan)
        if before is not None:
            parts.append(b',"before":' + self._render(before, plan, False))
        if after is not None:
            parts.append(b',"after":' + self._render(after, plan, True))
        parts.append(b"}")
        tag = None
        if plan is not None and table is not None and table.tag_columns and not self.full:
            image = before if change.op == OP_DELETE else after
            if isinstance(image, dict):
                tag = plan.render_tag(image, table.tag_columns)
        return b"".join(parts), tag

    @staticmethod
    def _render(image: object, plan: TablePlan | None, after: bool) -> bytes:
        if isinstance(image, bytes):
            return render_compressed(image)
        assert isinstance(image, dict)
        return plan.render(image, after) if plan is not None else render_schemaless(image)

    def _ddl_element(self, change: DdlChange) -> bytes:
        plan = self.plan(change.table) if change.table is not None else None
        return (
            b'{"op":"ddl",'
            + self.table_schema(plan, change.obj, change.owner, change.name)
            + b',"sql":"'
            + escape_bytes(change.sql.encode("utf-8", "surrogateescape"))
            + b'"}'
        )
