"""Message headers of the OpenLogReplicator JSON format (olr-interfaces.md §2.2-2.3).

Field order: scn|scns, b_scn, e_scn, tm|tms, b_tm, e_tm, c_scn, c_idx, xid|xidn, db, usr,
rth, and then ``attrs`` when asked for. scn and tm appear in "first" messages (begin and
checkpoint) or in all of them with scn-type/timestamp-type bit 4. Values not belonging to the
message itself (begin/commit SCN and time, redo thread) are the builder's current transaction
values, which a checkpoint inherits from the previous transaction, as in OLR.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from replicator.events import ATTRIBUTE_ORDER, Transaction
from replicator.formats.base import NO_SCN, FormatOptions
from replicator.formats.escape import escape_str
from replicator.values.timefmt import metadata_renderer

_ATTRIBUTE_RANK: Final = {name: rank for rank, name in enumerate(ATTRIBUTE_ORDER)}


def xid_formatter(code: int) -> Callable[[int], str]:
    """The ``xid``/``xidn`` field for `xid` code 0..3, from the packed usn.slot.sqn value."""
    if code == 0:
        return lambda x: f'"xid":"0x{x >> 48:04x}.{(x >> 32) & 0xFFF:03x}.{x & 0xFFFFFFFF:08x}"'
    if code == 1:
        return lambda x: f'"xid":"{x >> 48}.{(x >> 32) & 0xFFFF}.{x & 0xFFFFFFFF}"'
    if code == 2:
        return lambda x: f'"xidn":{x}'
    # LogMiner RAW order: usn, slot and sqn each little-endian.
    return lambda x: f'"xid":"{struct.pack("<HHI", x >> 48, (x >> 32) & 0xFFFF, x & 0xFFFFFFFF).hex()}"'


@dataclass(slots=True)
class TxnHeader:
    """Per-transaction header pieces, computed once per transaction: the fields after
    ``c_idx`` (``xid``, ``db``, ``usr``, ``rth``, ``attrs``) of each message kind."""

    begin: bytes
    dml: bytes
    ddl: bytes
    commit: bytes


class HeaderBuilder:
    """Builds the header part ``"scn":…,"attrs":{…}`` of every message kind."""

    def __init__(self, options: FormatOptions):
        self._options = options
        self._scn_hex = options.scn == 1
        scn_type, tm_type = options.scn_type, options.timestamp_type
        self._scn_commit_value, self._scn_begin = bool(scn_type & 1), bool(scn_type & 2)
        self.scn_all, self._scn_end = bool(scn_type & 4), bool(scn_type & 8)
        self._tm_commit_value, self._tm_begin = bool(tm_type & 1), bool(tm_type & 2)
        self.tm_all, self._tm_end = bool(tm_type & 4), bool(tm_type & 8)
        # Neither b_scn/e_scn nor b_tm/e_tm nor scn/tm in every message (the default): a row's
        # header is then its c_scn and c_idx only, a begin's adds scn and tm.
        self._plain = not (self.scn_all or self._scn_begin or self._scn_end) and not (
            self.tm_all or self._tm_begin or self._tm_end
        )
        self._tm = metadata_renderer(options.timestamp_metadata)
        self._xid = xid_formatter(options.xid)
        self._rth = options.redo_thread == 1
        o = options
        # (db, usr, attrs) of each kind, by the options' bits.
        kinds = (
            (bool(o.db & 1), bool(o.user_type & 1), bool(o.attributes & 1)),  # begin
            (bool(o.db & 1), bool(o.user_type & 2), bool(o.attributes & 2)),  # dml
            (bool(o.db & 2), bool(o.user_type & 8), bool(o.attributes & 2)),  # ddl
            (bool(o.db & 1), bool(o.user_type & 4), bool(o.attributes & 4)),  # commit
        )
        # Kinds with the same bits share a tail (all four by default): each is made once.
        self._distinct = sorted(set(kinds))
        self._slots = tuple(self._distinct.index(kind) for kind in kinds)
        self._begin_scn = self._commit_scn = NO_SCN
        self._begin_time = self._commit_time = 0
        self._thread = 0
        self._attrs: dict[tuple[tuple[str, str], ...], bytes] = {}  # transaction_context's attrs texts

    def start_transaction(self, txn: Transaction) -> None:
        """Make ``txn`` the builder's current transaction (its values persist afterwards)."""
        self._begin_scn, self._commit_scn = txn.begin_scn, txn.commit_scn
        self._begin_time, self._commit_time = txn.begin_time, txn.commit_time
        self._thread = txn.thread

    def transaction_context(self, txn: Transaction) -> TxnHeader:
        """Header pieces shared by all messages of ``txn`` (after :meth:`start_transaction`)."""
        # A session's transactions carry the same attributes: their text is made once.
        items = tuple(txn.attributes.items())
        attrs = self._attrs.get(items)
        if attrs is None:
            ranked = sorted(items, key=lambda item: _ATTRIBUTE_RANK.get(item[0], len(_ATTRIBUTE_RANK)))
            attrs = (
                b',"attrs":{'
                + b",".join(b'"' + escape_str(k) + b'":"' + escape_str(v) + b'"' for k, v in ranked)
                + b"}"
            )
            if len(self._attrs) >= 4096:
                self._attrs.clear()
            self._attrs[items] = attrs
        usr = txn.attributes.get("login username")
        xid = "," + self._xid(txn.xid)
        db = ',"db":"' + (txn.con_name or self._options.con_name) + '"'
        usr_text = f',"usr":"{usr}"' if usr is not None else ""
        rth = ',"rth":%d' % self._thread if self._rth else ""
        made = []
        for with_db, with_usr, with_attrs in self._distinct:
            tail = (xid + (db if with_db else "") + (usr_text if with_usr else "") + rth).encode("utf-8")
            made.append(tail + attrs if with_attrs else tail)
        begin, dml, ddl, commit = self._slots
        return TxnHeader(made[begin], made[dml], made[ddl], made[commit])

    def _scn(self, name: str, value: int) -> str:
        return f'"{name}s":"0x{value:016x}"' if self._scn_hex else f'"{name}":{value}'

    def _fields(self, lwn_scn: int, idx: int, scn: int, time: int, first: bool) -> str:
        """The fields up to ``c_idx``."""
        if self._plain:
            if not first:
                return f'"c_scn":{lwn_scn},"c_idx":{idx}'
            scn_text = self._scn("scn", self._commit_scn if self._scn_commit_value else scn)
            tm = self._tm("tm", self._commit_time if self._tm_commit_value else time)
            return f'{scn_text},{tm},"c_scn":{lwn_scn},"c_idx":{idx}'
        fields = []
        if first or self.scn_all:
            fields.append(self._scn("scn", self._commit_scn if self._scn_commit_value else scn))
        if self._scn_begin:
            fields.append(self._scn("b_scn", self._begin_scn))
        if self._scn_end:
            fields.append(self._scn("e_scn", self._commit_scn))
        if first or self.tm_all:
            fields.append(self._tm("tm", self._commit_time if self._tm_commit_value else time))
        if self._tm_begin:
            fields.append(self._tm("b_tm", self._begin_time))
        if self._tm_end:
            fields.append(self._tm("e_tm", self._commit_time))
        fields.append(f'"c_scn":{lwn_scn},"c_idx":{idx}')
        return ",".join(fields)

    def begin(self, lwn_scn: int, idx: int, time: int, ctx: TxnHeader) -> bytes:
        """Header of the begin message (``idx`` as printed); ``time`` is the first change's."""
        return self._fields(lwn_scn, idx, self._begin_scn, time, True).encode("utf-8") + ctx.begin

    def dml(self, lwn_scn: int, idx: int, scn: int, time: int, ctx: TxnHeader) -> bytes:
        """Header of a row-change message."""
        return self._fields(lwn_scn, idx, scn, time, False).encode("utf-8") + ctx.dml

    def ddl(self, lwn_scn: int, idx: int, scn: int, time: int, ctx: TxnHeader) -> bytes:
        """Header of a DDL message (db bit 2, user-type bit 8, attributes as for DML)."""
        return self._fields(lwn_scn, idx, scn, time, False).encode("utf-8") + ctx.ddl

    def commit(self, lwn_scn: int, idx: int, ctx: TxnHeader) -> bytes:
        """Header of the commit message."""
        return self._fields(lwn_scn, idx, self._commit_scn, self._commit_time, False).encode("utf-8") + ctx.commit

    def checkpoint(self, lwn_scn: int, idx: int, scn: int, time: int) -> bytes:
        """Header of a checkpoint message: no xid, db or usr."""
        head = self._fields(lwn_scn, idx, scn, time, True)
        if self._rth:
            head += f',"rth":{self._thread}'
        return head.encode("ascii")
