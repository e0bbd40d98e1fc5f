"""The protobuf output format: one serialized ``RedoResponse`` (code PAYLOAD) per message.

Wire-compatible with OpenLogReplicator's OraProtoBuf.proto (``replicator/proto/olr.proto``)
and message-for-message parallel to the JSON format: the same messages (begin, one per row
change or DDL, commit; one per transaction with `message` bit 1), the same positions
(c_scn and the printed c_idx) and the same column selection, so a consumer sees the same
events in either format. Value typing is in :mod:`replicator.formats.protobuf_values`.

Header as in OpenLogReplicator: scn (``scns`` = 16 hex digits, no ``0x``, with `scn` 1) and
the time in every message, the time under the `timestamp` code (0-3 ``tm`` in ns/us/ms/s,
4-7 the same as text in ``tms``, 15 ISO-8601 text ``YYYY-MM-DDTHH:MM:SSZ``, 8-14 none, as in
OLR), xid by the `xid` code (3: the packed usn.slot.sqn as 16 hex digits, as OLR's protobuf builder
prints it, not JSON's LogMiner byte order), ``db`` as the `db` option says.

As OLR's protobuf builder: begin and commit messages are always written and no redo offset
(message bits 4, 8 and 0x10 are JSON-only), scn-type bit 1 gives rows and DDL (not begin) the
commit SCN, timestamp-type bit 1 is not applied, no transaction ``attributes`` are sent. Deliberate differences (docs/formats.md §8): RAW/BLOB
bytes are filled (OLR leaves them empty) and the schema lists every column (OLR overwrites a
single entry).
"""

from __future__ import annotations

from replicator.events import (
    OP_DELETE,
    Checkpoint,
    DdlChange,
    Message,
    RowChange,
    Transaction,
)
from replicator.formats.base import NO_SCN, FormatOptions, printable_filter
from replicator.formats.olr_rows import UpdateReducer
from replicator.formats.protobuf_plan import (
    PbTablePlan,
    fill_compressed,
    fill_schemaless,
)
from replicator.proto import olr_pb2 as pb
from replicator.values.datetime import epoch_to_iso
from replicator.values.rowid import rowid_text

_OPS = {"c": pb.INSERT, "u": pb.UPDATE, "d": pb.DELETE}
_TM_SCALE = (1_000_000_000, 1_000_000, 1000, 1)


class ProtobufFormat:
    """Renders transactions and checkpoints as serialized ``RedoResponse`` messages."""

    def __init__(self, options: FormatOptions) -> None:
        self.options = options
        self.full = bool(options.message & 1)
        self.add_num = bool(options.message & 2)
        # OLR's protobuf builder ignores the JSON-only message bits (skip begin 4, skip commit 8,
        # offset 0x10), timestamp-type bit 1 and `attributes`.
        self.skip_begin = self.skip_commit = self.add_offset = False
        self._printable = printable_filter(options.flags)
        self.reducer = UpdateReducer(options.column, options.flags)
        self.plans: dict[int, PbTablePlan] = {}
        self._described: set[int] = set()
        self.lwn_scn = NO_SCN
        self.lwn_idx = 0

    # -- header ------------------------------------------------------------------------------

    def _header(self, scn: int, time: int, txn: Transaction | None, db: bool, attrs: bool) -> pb.RedoResponse:
        """A PAYLOAD response with the header for the index just taken."""
        o = self.options
        response = pb.RedoResponse(code=pb.PAYLOAD, c_scn=self.lwn_scn, c_idx=self.lwn_idx)
        if o.scn == 1:
            response.scns = f"{scn:016x}"
        else:
            response.scn = scn
        code = o.timestamp
        if code < 4 and time >= 0:
            response.tm = time * _TM_SCALE[code]
        elif code < 8:
            response.tms = str(time * _TM_SCALE[code - 4])
        elif code == 15:
            response.tms = epoch_to_iso(time, True, True)
        # Codes 8-14 set no time: OLR's protobuf builder has no encoding for them (yet).
        if txn is not None:
            x = txn.xid
            if o.xid == 2:
                response.xidn = x
            elif o.xid == 1:
                response.xid = f"{x >> 48}.{(x >> 32) & 0xFFFF}.{x & 0xFFFFFFFF}"
            elif o.xid == 3:  # OLR's protobuf builder prints the packed value, not JSON's LogMiner order
                response.xid = f"{x:016x}"
            else:
                response.xid = f"0x{x >> 48:04x}.{(x >> 32) & 0xFFF:03x}.{x & 0xFFFFFFFF:08x}"
            if db:
                response.db = txn.con_name or o.con_name
        return response

    def _take(self, scn: int, time: int, txn: Transaction | None, db: bool, attrs: bool) -> pb.RedoResponse:
        self.lwn_idx += 1
        return self._header(scn, time, txn, db, attrs)

    def _message(
        self, response: pb.RedoResponse, txn: Transaction, tag: bytes | None = None, change: RowChange | None = None
    ) -> Message:
        return Message(
            data=response.SerializeToString(),
            scn=self.lwn_scn,
            idx=self.lwn_idx - 1,
            tag=tag,
            xid=txn.xid,
            seq=txn.begin_seq,
            table=change.table if change is not None else None,
        )

    def set_position(self, scn: int) -> None:
        if self.lwn_scn != scn:
            self.lwn_scn = scn
            self.lwn_idx = 0

    # -- Format protocol ---------------------------------------------------------------------

    def transaction(self, txn: Transaction) -> list[Message]:
        """Render one committed transaction, message for message like the JSON format."""
        self.set_position(txn.begin_scn)
        o = self.options
        messages: list[Message] = []
        full: pb.RedoResponse | None = None
        started = False
        num = 0
        for change in txn.changes:
            if not self._printable(change):
                continue
            if not started:
                started = True
                if not self.skip_begin:
                    head = self._take(txn.begin_scn, change.time, txn, bool(o.db & 1), bool(o.attributes & 1))
                    if self.full:
                        full = head
                    else:
                        head.payload.add(op=pb.BEGIN)
                        messages.append(self._message(head, txn))
            if self.full:
                if full is None:  # cannot happen: FULL mode rejects skipping the begin message
                    full = self._take(txn.begin_scn, change.time, txn, bool(o.db & 1), bool(o.attributes & 1))
                target = full
            else:
                # scn-type bit 1 gives a row or DDL the commit SCN (OLR's builder picks it before
                # the format; begin keeps the begin SCN and no time is replaced).
                scn = txn.commit_scn if o.scn_type & 1 else change.scn
                db = bool(o.db & 2) if isinstance(change, DdlChange) else bool(o.db & 1)
                target = self._take(scn, change.time, txn, db, False)
            element = target.payload.add()
            tag: bytes | None = None
            if isinstance(change, DdlChange):
                self._ddl_element(element, change)
            else:
                tag = self._row_element(element, change, num)
            num += 1
            if not self.full:
                messages.append(self._message(target, txn, tag, change if isinstance(change, RowChange) else None))
        if not started:
            return messages
        if self.full and full is not None:
            messages.append(self._message(full, txn))
        elif not self.skip_commit:
            head = self._take(txn.commit_scn, txn.commit_time, txn, bool(o.db & 1), bool(o.attributes & 4))
            head.payload.add(op=pb.COMMIT)
            messages.append(self._message(head, txn))
        return messages

    def checkpoint(self, cp: Checkpoint) -> list[Message]:
        """Render a checkpoint (output only with source flag 0x1000)."""
        self.set_position(cp.scn)
        head = self._take(cp.scn, cp.time, None, False, False)
        head.payload.add(op=pb.CHKPT, seq=cp.seq, offset=cp.offset, redo=cp.redo_switch)
        return [
            Message(data=head.SerializeToString(), scn=self.lwn_scn, idx=self.lwn_idx - 1, checkpoint=True, seq=cp.seq)
        ]

    # -- payload elements --------------------------------------------------------------------

    def plan(self, change: RowChange | DdlChange) -> PbTablePlan | None:
        table = change.table
        if table is None:
            return None
        plan = self.plans.get(id(table))
        if plan is None or plan.table is not table:
            plan = self.plans[id(table)] = PbTablePlan(table, self.options)
        return plan

    def table_schema(
        self, schema: pb.Schema, plan: PbTablePlan | None, obj: int, owner: str = "", name: str = ""
    ) -> None:
        o = self.options
        if plan is None:
            if owner:
                schema.owner = owner
            schema.name = name or f"OBJ_{obj}"
        else:
            schema.owner, schema.name = plan.table.owner, plan.table.name
        if o.schema & 4:
            schema.obj = obj
        if plan is not None and o.schema & 1:
            key = plan.table.obj  # once per table, as the JSON format (olr_json.table_schema)
            if o.schema & 2 or key not in self._described:
                self._described.add(key)
                schema.column.extend(plan.columns_schema())

    def _row_element(self, element: pb.Payload, change: RowChange, num: int) -> bytes | None:
        plan = self.plan(change)
        element.op = _OPS[change.op]
        if self.add_offset:
            element.offset = change.offset
        self.table_schema(element.schema, plan, change.obj)
        if self.add_num:
            element.num = num
        if self.options.rid == 1:
            element.rid = rowid_text(change.data_obj, change.bdba, change.slot)
        before, after = self.reducer.images(change, plan.json if plan is not None else None)
        for image, target, is_after in ((before, element.before, False), (after, element.after, True)):
            if isinstance(image, bytes):
                fill_compressed(target, image)
            elif image is not None:
                if plan is not None:
                    plan.fill(target, image, is_after)
                else:
                    fill_schemaless(target, image)
        if plan is not None and plan.table.tag_columns and not self.full:
            image = before if change.op == OP_DELETE else after
            if isinstance(image, dict):
                return plan.tag(image)
        return None

    def _ddl_element(self, element: pb.Payload, change: DdlChange) -> None:
        element.op = pb.DDL
        self.table_schema(element.schema, self.plan(change), change.obj, change.owner, change.name)
        element.ddl = change.sql
