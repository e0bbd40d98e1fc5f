"""Records of a transaction: begin, row changes, compensations, commit/rollback (§5, §7).

Record shapes follow the 23ai fixture: the first change of a transaction shares its
record with the 5.2 begin and is followed by the 5.20 session vector; every other pair is
a record of its own; a commit or rollback is a 5.4 alone; a rolled-back change is an 11.x
compensation followed by 5.11 (5.6 before 19c) in one record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from replicator.redogen import byteorder
from replicator.redogen import vectors as v
from replicator.redogen.blocks import Record
from replicator.redogen.dml import PairSpec
from replicator.redogen.ids import Uba, Xid
from replicator.redogen.rows import TableState
from replicator.redogen.scenario import Scenario, SessionSpec
from replicator.redogen.undo import UndoSpace

BEGIN_FLAGS = 0x0C08  # undo flags of the begin-transaction undo record (fixture value)
USER_UNDO_DONE = 0x0010


class RecordStream(Protocol):
    """Where the emitter's records go: one redo thread (writer.RedoStream) or the threads of
    a cluster (cluster.ClusterStream)."""

    con_uid: int

    def open_record(self, epoch: int, commit: bool = False) -> tuple[int, int]: ...

    def add(self, record: Record, commit: bool = False) -> None: ...


@dataclass(slots=True)
class Comp:
    """What rolling back one pair needs: the compensating 11.x and the 5.11 ktub facts."""

    code: int
    fields: list[bytes]
    bdba: int
    obj: int
    data_obj: int
    ts: int
    flags: int


@dataclass(slots=True)
class TxnRedo:
    """Per-transaction redo state: XID, undo chain and the blocks it has an ITL in."""

    xid: Xid
    session: SessionSpec
    user_id: int
    begun: bool = False
    undo_count: int = 0
    last_uba: Uba | None = None
    blocks: dict[int, Uba] = field(default_factory=dict)
    begin_record: Record | None = None
    end_record: Record | None = None
    # Multitenant: the container the transaction runs in (-1: the scenario's only one).
    con_id: int = -1
    con_uid: int = -1
    container: str = ""


class Emitter:
    """Builds records and hands them to the stream."""

    def __init__(self, sc: Scenario, stream: RecordStream, undo: UndoSpace, data_afn: int):
        self.sc = sc
        self.d = v.Dialect(sc.compat, sc.effective_con_id)
        self.stream = stream
        self.undo = undo
        self.data_afn = data_afn
        self.con_uid = stream.con_uid
        self._default = (sc.effective_con_id, stream.con_uid, undo)
        self._rec_con_uid: int | None = None  # CON_UID of the records being built (None: the stream's)
        self.undos: dict[int, UndoSpace] = {}  # multitenant: each container's undo (set by the engine)
        self.epoch = sc.start_epoch
        self._blk: dict[int, tuple[int, int]] = {}

    def _block(self, dba: int, scn: int) -> tuple[int, int]:
        """(SCN the block had before this change, change sequence within that SCN)."""
        prev = self._blk.get(dba)
        seq = prev[1] + 1 if prev is not None and prev[0] == scn else 1
        self._blk[dba] = (scn, min(seq, 255))
        return (prev[0] if prev is not None else scn), min(seq, 255)

    def _vec(
        self, layer: int, code: int, cls: int, afn: int, dba: int, scn: int, obj: int, fields: list[bytes], typ: int = 0
    ) -> bytes:
        bscn, seq = self._block(dba, scn) if typ == 0 else (0, 0)
        return self.d.vector(layer, code, cls, afn, dba, bscn, seq, typ, obj, fields)

    def use(self, tx: TxnRedo) -> None:
        """Build the next records for ``tx``: its container's CON_ID in the vector headers,
        its CON_UID in the record headers and 5.2, its container's undo segments."""
        if tx.con_id < 0:
            self.d.con_id, self.con_uid, self.undo = self._default
            self._rec_con_uid = None
        else:
            self.d.con_id, self.con_uid = tx.con_id, tx.con_uid
            self.undo = self.undos.get(tx.con_id, self._default[2])
            self._rec_con_uid = tx.con_uid

    def _record(self, scn: int, sub: int, vectors: list[bytes], commit: bool = False) -> Record:
        offsets, pos = [], 0
        for vec in vectors:
            offsets.append(pos)
            pos += len(vec)
        rec = Record(scn, sub, b"".join(vectors), vector_offsets=offsets, con_uid=self._rec_con_uid)
        self.stream.add(rec, commit)
        return rec

    # ------------------------------------------------------------------------------------
    def pair(self, tx: TxnRedo, ts: TableState, pair: PairSpec) -> tuple[Record, int, Comp]:
        """Record of one (5.1, 11.x) pair; returns it, the index of its 5.1 vector and the compensation."""
        rec, undo_index, ktb_undo, flags = self.undo_redo(
            tx,
            pair.bdba,
            ts.obj,
            ts.data_obj,
            ts.spec.ts,
            (11, pair.redo_code, self.data_afn),
            pair.undo_fields,
            pair.redo_fields,
        )
        kdo = bytearray(pair.undo_fields[0])
        kdo[11] = v.XR  # the compensating change carries the undo's KDO marked as rollback
        comp = Comp(
            pair.comp_code,
            [ktb_undo, bytes(kdo), *pair.undo_fields[1:]],
            pair.bdba,
            ts.obj,
            ts.data_obj,
            ts.spec.ts,
            flags,
        )
        return rec, undo_index, comp

    def undo_redo(
        self,
        tx: TxnRedo,
        bdba: int,
        obj: int,
        data_obj: int,
        ts_no: int,
        redo: tuple[int, int, int],
        undo_fields: list[bytes],
        redo_fields: list[bytes],
        opc: int = 0x0B01,
    ) -> tuple[Record, int, bytes, int]:
        """Record of one (5.1, ``redo`` = (layer, code, afn)) pair on block ``bdba``, opening the
        transaction when it is its first change (5.2 begin, ktubl, 5.20 session).

        Returns the record, the index of its 5.1 vector, the undo's KTB field and the ktub flags.
        """
        self.use(tx)
        scn, sub = self.stream.open_record(self.epoch)
        xid, usn = tx.xid, tx.xid.usn
        uba = self.undo.next_uba(usn)
        begin = not tx.begun
        vectors = [self._begin_vector(tx, uba, scn)] if begin else []
        prev = tx.blocks.get(bdba)
        ktb_undo = v.KTB_Z if prev is None else v.ktb_c(prev)
        ktb_redo = v.ktb_f(xid, uba) if prev is None else v.ktb_c(uba)
        tx.blocks[bdba] = uba
        first = tx.undo_count == 0
        flags = BEGIN_FLAGS if first else 0
        ktub = v.ktub_field(
            obj,
            data_obj,
            ts_no,
            xid.slot,
            flags,
            xid.sqn,
            opc=opc,
            begin=(tx.last_uba or uba, scn, tx.user_id) if first else None,
        )
        tail = [ktb_undo, *undo_fields]
        ktudb = v.ktudb_field(xid, uba, first=first, size=sum(len(f) for f in tail) + 48)
        undo_index = len(vectors)
        vectors.append(self._vec(5, 1, 16 + 2 * usn, self.undo.afn, uba.dba, scn, v.UNDO_OBJ, [ktudb, ktub, *tail]))
        layer, code, afn = redo
        vectors.append(self._vec(layer, code, 1, afn, bdba, scn, data_obj, [ktb_redo, *redo_fields]))
        if begin:
            vectors.append(self._session_vector(tx.session))
        tx.undo_count += 1
        tx.last_uba = uba
        rec = self._record(scn, sub, vectors)
        if begin:
            tx.begun, tx.begin_record = True, rec
        return rec, undo_index, ktb_undo, flags

    def begin(self, tx: TxnRedo) -> Record:
        """A transaction's opening record when its first redo is not a row change (SecureFile
        LOB pages, which OLR keeps only for a transaction that has begun): 5.2, a 5.1 of just
        ktudb and ktubl (opc 5.7) and the 5.20 session vector, as in the 19c LOB fixture."""
        self.use(tx)
        scn, sub = self.stream.open_record(self.epoch)
        usn = tx.xid.usn
        uba = self.undo.next_uba(usn)
        ktub = v.ktub_field(
            0, 0, 0, tx.xid.slot, BEGIN_FLAGS, tx.xid.sqn, opc=0x0507, begin=(tx.last_uba or uba, scn, tx.user_id)
        )
        ktudb = v.ktudb_field(tx.xid, uba, first=True, size=48)
        undo = self._vec(5, 1, 16 + 2 * usn, self.undo.afn, uba.dba, scn, v.UNDO_OBJ, [ktudb, ktub])
        rec = self._record(scn, sub, [self._begin_vector(tx, uba, scn), undo, self._session_vector(tx.session)])
        tx.undo_count += 1
        tx.last_uba = uba
        tx.begun, tx.begin_record = True, rec
        return rec

    def compensation(self, tx: TxnRedo, comp: Comp) -> Record:
        """Record undoing one pair: compensating 11.x + 5.11 (5.6 before 19c)."""
        self.use(tx)
        scn, sub = self.stream.open_record(self.epoch)
        usn = tx.xid.usn
        redo = self._vec(11, comp.code, 1, self.data_afn, comp.bdba, scn, comp.data_obj, comp.fields)
        ktub = v.ktub_field(comp.obj, comp.data_obj, comp.ts, tx.xid.slot, comp.flags | USER_UNDO_DONE, tx.xid.sqn)
        hdr = self.undo.header_dba(usn)
        if self.d.v19:
            rb = self._vec(
                5,
                11,
                15 + 2 * usn,
                self.undo.afn,
                hdr,
                scn,
                v.UNDO_OBJ,
                [ktub + b"\0" * 4, byteorder.pack("<IHH", 0x5F9A0E68, 2, 0)],
            )
        else:
            rb = self._vec(
                5,
                6,
                15 + 2 * usn,
                self.undo.afn,
                hdr,
                scn,
                v.UNDO_OBJ,
                [ktub, byteorder.pack("<HHHH", 0x1C, 0, 0x10, 0)],
            )
        return self._record(scn, sub, [redo, rb])

    def end(self, tx: TxnRedo, rollback: bool) -> Record:
        """The 5.4 record: commit (with ktucf) or rollback (flag 0x04)."""
        self.use(tx)
        scn, sub = self.stream.open_record(self.epoch, commit=True)
        usn = tx.xid.usn
        flags = 0x04 if rollback else 0x02
        fields = [byteorder.pack("<HHIHHIB3x", tx.xid.slot, 0, tx.xid.sqn, 0, 0, 9, flags)]
        if not rollback:
            fields.append((tx.last_uba or Uba(0, 0, 0)).pack() + byteorder.pack("<HHB3x", 0, 0x0B9E, 0))
        if self.d.v23:
            fields.append(byteorder.pack("<II16x", 0, self.epoch))
        fields.append(byteorder.pack("<I", self.epoch))
        vec = self._vec(5, 4, 15 + 2 * usn, self.undo.afn, self.undo.header_dba(usn), scn, v.UNDO_OBJ, fields)
        rec = self._record(scn, sub, [vec], commit=True)
        tx.end_record = rec
        return rec

    def ddl(self, tx: TxnRedo, statement_type: int, owner: str, sql: str, obj: int) -> Record:
        """Record of one 24.1 DDL vector (§10.1) of an already begun transaction: XID, statement
        type, piece 1 of 1, the owner in f2, the NUL-terminated text in f8, the OBJ# in f12."""
        self.use(tx)
        scn, sub = self.stream.open_record(self.epoch)
        xid = tx.xid
        head = byteorder.pack("<IHHIHHHHH2x", 0, xid.usn, xid.slot, xid.sqn, statement_type, 0, 1, 1, 1)
        fields = [
            head,
            owner.encode("utf-8"),
            b"",
            b"",
            b"",
            b"",
            b"",
            sql.encode("utf-8") + b"\0",
            b"",
            b"",
            b"",
            byteorder.pack("<I", obj),
        ]
        vec = self.d.vector(24, 1, 0, 0, 0, 0, 0, v.TYP_NO_BLOCK, obj, fields)
        return self._record(scn, sub, [vec])

    # ------------------------------------------------------------------------------------
    def _begin_vector(self, tx: TxnRedo, uba: Uba, scn: int) -> bytes:
        usn = tx.xid.usn
        ktudh = (
            byteorder.pack("<HHI", tx.xid.slot, 0, tx.xid.sqn) + uba.pack() + byteorder.pack("<HHB3x8x", 0x52, 0x88, 0)
        )
        fields = [ktudh]
        if self.d.hdr32 and self.sc.is_cdb:
            fields.append(byteorder.pack("<I", self.con_uid))
        return self._vec(5, 2, 15 + 2 * usn, self.undo.afn, self.undo.header_dba(usn), scn, v.UNDO_OBJ, fields)

    def _session_vector(self, s: SessionSpec) -> bytes:
        if self.d.v19:
            session = byteorder.pack("<HHI", 0, s.serial, s.sid)
        else:
            session = byteorder.pack("<HHI", s.sid, s.serial, 0)
        audit = byteorder.pack("<Q" if self.d.v23 else "<I", s.audit_sid)
        fields = [
            session,
            b"",
            byteorder.pack("<HHH", 0, 1, 0),
            byteorder.pack("<I", self.sc.compat & 0xFF000000),
            audit,
            b"",
            b"",
            s.user.encode("utf-8"),
        ]
        return self.d.vector(5, 20, 0, 0, 0, 0, 0, v.TYP_NO_BLOCK, 0, fields)
