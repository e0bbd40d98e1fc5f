"""``replicator dump``: a readable, logdump-like listing of redo files.

Prints the file and redo headers, every LWN, every record (including marker records
without change vectors) and every change vector with its header fields, field sizes and
the decoded payload of the opcodes the parser uses. It is the first tool for any redo
question, so it shows raw numbers rather than interpretations where both are possible.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TextIO

from replicator.errors import RuntimeFailure
from replicator.redo.header import SCN_NONE, RedoHeader
from replicator.redo.opcodes import kdo as K
from replicator.redo.opcodes import session, undo
from replicator.redo.reader import read_lwns
from replicator.redo.records import Record
from replicator.redo.timeconv import redo_time_parts
from replicator.redo.vectors import ChangeVector, iter_vectors


@dataclass
class DumpCounts:
    """Totals of one dumped file (used by tests and printed at the end)."""

    lwns: int = 0
    records: int = 0
    vectors: int = 0


def _time(v: int) -> str:
    y, mo, d, h, mi, s = redo_time_parts(v)
    return f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}"


def _scn(v: int) -> str:
    return "none" if v == SCN_NONE else f"0x{v:016x}"


def _xid(x: int) -> str:
    return f"0x{x >> 48:04x}.{(x >> 32) & 0xFFFF:03x}.{x & 0xFFFFFFFF:08x}"


def dump_header(h: RedoHeader, path: str, out: TextIO) -> None:
    """Print the fields of blocks 0 and 1."""
    order = "little" if h.endian == "<" else "big"
    out.write(f"FILE {path}\n")
    out.write(f" block size {h.block_size}, blocks {h.blocks}, {order}-endian, NAB {h.nab}\n")
    out.write(f" version {h.version} (compat 0x{h.compat:08x}), DBID {h.dbid}, database {h.db_name!r}\n")
    out.write(
        f" thread {h.thread}, sequence {h.sequence}, resetlogs {h.resetlogs} (SCN {_scn(h.resetlogs_scn)}),"
        f" activation {h.activation}\n"
    )
    out.write(
        f" first SCN {_scn(h.first_scn)} at {_time(h.first_time)}, next SCN {_scn(h.next_scn)}"
        f" at {_time(h.next_time)}\n"
    )
    out.write(f" description {h.description!r}\n")


def _payload(cv: ChangeVector) -> str:
    """One line of decoded payload for the opcodes the parser understands."""
    op = cv.opcode
    if op == 0x0501:
        info = undo.undo_info(cv)
        if info is None:
            return ""
        text = (
            f"ktudb xid {_xid(info.xid)}; ktub obj {info.obj} dataobj {info.data_obj}"
            f" opc {info.opc >> 8}.{info.opc & 0xFF} slot {info.slot} flg 0x{info.flags:04x}"
        )
        if info.opc == 0x0B01 and not info.flags & (undo.UNDO_HEAD | undo.UNDO_MID | undo.UNDO_TAIL):
            text += "; " + _kdo(cv, 4)
            k = K.parse_kdo(cv, 4)
            if k is not None:
                _, _, at = K.undo_layout(cv, k)
                supp = K.parse_supplemental(cv, at, k) if at else None
                if supp is not None:
                    text += (
                        f"; supp fb 0x{supp.fb:02x} cc {supp.cc} before {supp.before} after {supp.after}"
                        f" head 0x{supp.bdba:08x}.{supp.slot:x} cols {list(supp.nums)}"
                    )
        return text
    if op == 0x0502:
        x = undo.begin_xid(cv)
        return f"begin xid {_xid(x)}" if x else "begin (cleanup, sqn 0)"
    if op == 0x0504:
        info2 = undo.commit_info(cv)
        return f"{'rollback' if info2[1] else 'commit'} xid {_xid(info2[0])}" if info2 else ""
    if op in (0x0506, 0x050B):
        ktub = undo.ktub_info(cv)
        return (
            f"rollback of obj {ktub[0]} opc {ktub[2] >> 8}.{ktub[2] & 0xFF} usn {cv.usn} slot {ktub[3]}"
            f" flg 0x{ktub[4]:04x}"
            if ktub
            else ""
        )
    if op in (0x0513, 0x0514):
        attrs = session.session_attributes(cv, 0x17000000)
        return "; ".join(f"{k}={v}" for k, v in attrs.items())
    if op == 0x1801:
        head = session.ddl_header(cv)
        if head is None:
            return ""
        owner, sql = session.ddl_text([cv])
        return f"ddl xid {_xid(head[0])} type {head[1]} piece {head[2]}/{head[3]} obj {head[4]} owner {owner!r} sql {sql!r}"
    if cv.layer == 11:
        return _kdo(cv, 2)
    return ""


def _kdo(cv: ChangeVector, index: int) -> str:
    k = K.parse_kdo(cv, index)
    if k is None:
        return "kdo ?"
    text = f"kdo op {k.op} bdba 0x{k.bdba:08x} slot {k.slot}"
    if k.op in (K.IRP, K.ORP, K.URP):
        text += f" fb 0x{k.fb:02x} cc {k.cc} nulls {k.nulls.hex()}"
    if k.op in (K.QMI, K.QMD):
        text += f" nrow {k.nrow} slots {list(k.slots)}"
    return text


def dump_record(r: Record, h: RedoHeader, out: TextIO, counts: DumpCounts) -> None:
    """Print one record and its change vectors."""
    counts.records += 1
    out.write(
        f"REDO RECORD - block {r.block} offset {r.offset} size {len(r.data)} vld 0x{r.vld:02x}"
        f" SCN {_scn(r.scn)} subscn {r.subscn}\n"
    )
    if not r.vld & 1:
        return
    for cv in iter_vectors(r.data, r.header_size, h.vector_header_size, h.endian):
        counts.vectors += 1
        out.write(
            f" CHANGE {cv.layer}.{cv.code} CLS {cv.cls} AFN {cv.afn} DBA 0x{cv.dba:08x} OBJ {cv.obj}"
            f" SCN {_scn(cv.scn)} SEQ {cv.seq} TYP {cv.typ} CON_ID {cv.con_id} fields {list(cv.lengths)}\n"
        )
        payload = _payload(cv)
        if payload:
            out.write(f"  {payload}\n")


def check_dump_path(path: str) -> None:
    """A path ``dump`` can read: an existing, readable file (RuntimeFailure 10001 naming it otherwise)."""
    if os.path.isdir(path):
        raise RuntimeFailure(f"{path} is a directory: dump takes redo log files (e.g. {path.rstrip('/')}/*.dbf)", 10001)
    if not os.path.exists(path):
        raise RuntimeFailure(f"redo log {path} does not exist", 10001)
    if not os.access(path, os.R_OK):
        raise RuntimeFailure(f"redo log {path} is not readable by this user (uid {os.getuid()})", 10001)


def dump_file(path: str, out: TextIO = sys.stdout, verify_checksum: bool = True) -> DumpCounts:
    """Dump one redo file; returns the LWN, record and vector counts."""
    check_dump_path(path)
    counts = DumpCounts()
    headers: list[RedoHeader] = []
    for lwn in read_lwns(path, verify_checksum, all_records=True, header_out=headers):
        if counts.lwns == 0:
            dump_header(headers[0], path, out)
        counts.lwns += 1
        out.write(
            f"LWN blocks {lwn.first_block}-{lwn.end_block - 1} SCN {_scn(lwn.scn)} time {_time(lwn.time)}"
            f" records {len(lwn.records)}\n"
        )
        for r in lwn.records:
            dump_record(r, headers[0], out, counts)
    out.write(f"END {path}: {counts.lwns} LWNs, {counts.records} records, {counts.vectors} change vectors\n")
    return counts
