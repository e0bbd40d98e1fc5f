"""The output OpenLogReplicator should produce for a generated scenario.

Committed transactions are rebuilt as :class:`replicator.events.Transaction` objects from
the engine's own bookkeeping (the raw column bytes it encoded and the records it placed),
then rendered by :class:`replicator.formats.olr_json.OlrJsonFormat`, the only dependency
on the rest of the project. Rolled-back transactions and changes undone by ROLLBACK TO
SAVEPOINT never reach this module. Checkpoints are replayed in OLR's order (after every
LWN, and with ``redo`` at the end of each log) because they move ``c_scn``/``c_idx``.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from replicator import events as ev
from replicator.flags import FLAG_CHECKPOINT
from replicator.formats.base import FormatOptions
from replicator.redogen.blocks import Record
from replicator.redogen.ddl import ExpectedDdl
from replicator.redogen.generator import Generated
from replicator.redogen.scenario import Scenario
from replicator.redogen.txnstate import Txn

# olr-interfaces.md §2.8: what `"type": "debezium"` presets; keys given explicitly win.
DEBEZIUM_PRESET = {
    "column": 2,
    "db": 3,
    "interval_dts": 9,
    "interval_ytm": 4,
    "message": 2,
    "redo_thread": 1,
    "rid": 1,
    "schema": 7,
    "scn_type": 14,
    "timestamp_metadata": 2,
    "timestamp_type": 14,
    "user_type": 15,
    "xid": 3,
}


def format_options(sc: Scenario) -> FormatOptions:
    """FormatOptions from the scenario's OLR ``format`` section and source facts."""
    known = {f.name for f in fields(FormatOptions)}
    opts: dict[str, Any] = dict(DEBEZIUM_PRESET) if sc.format.get("type") == "debezium" else {}
    for key, value in sc.format.items():
        name = key.replace("-", "_")
        if name in known:
            opts[name] = value
    text = sc.db_timezone
    sign = -1 if text.startswith("-") else 1
    hh, mm = text.lstrip("+-").split(":")
    return FormatOptions(
        **opts,
        flags=sc.flags,
        db_timezone=sign * (int(hh) * 3600 + int(mm) * 60),
        con_name=sc.effective_con_name,
        database=sc.name,
    )


def _offset(rec: Record, vector: int, block_size: int) -> int:
    """File offset OLR reports for a vector: record start + header + vector position."""
    return rec.block * block_size + rec.offset + rec.header_size + rec.vector_offsets[vector]


def _attributes(t: Txn, sc: Scenario) -> dict[str, str]:
    s = t.redo.session
    out = {
        "version": str(sc.compat & 0xFF000000),
        "audit session id": str(s.audit_sid),
        "session number": str(s.sid),
        "serial number": str(s.serial),
    }
    if s.user:
        out["login username"] = s.user
    return out


def build_transaction(t: Txn, sc: Scenario) -> ev.Transaction:
    """The events.Transaction of one committed transaction (``db``: its container's name)."""
    bs = sc.block_size
    begin, end = t.redo.begin_record, t.redo.end_record
    assert begin is not None and end is not None
    changes: list[ev.Change] = []
    for change in t.changes:
        for r in change.rows:
            if isinstance(r, ExpectedDdl):  # a 24.1 statement (source flag 0x20)
                changes.append(
                    ev.DdlChange(
                        obj=r.obj,
                        owner=r.owner,
                        table=r.table,
                        sql=r.sql,
                        statement_type=r.statement_type,
                        scn=r.record.scn,
                        time=r.record.time,
                        offset=r.record.block * bs + r.record.offset,
                        name=r.name,
                    )
                )
                continue
            changes.append(
                ev.RowChange(
                    op=r.op,
                    obj=r.table.obj,
                    data_obj=r.table.data_obj,
                    table=r.table.table,
                    before=r.before,
                    after=r.after,
                    scn=r.last.scn,
                    time=r.last.time,
                    bdba=r.bdba,
                    slot=r.slot,
                    offset=_offset(r.first, r.first_vector, bs),
                )
            )
    return ev.Transaction(
        xid=t.redo.xid.packed,
        begin_scn=begin.scn,
        begin_time=begin.time,
        commit_scn=end.scn,
        commit_time=end.time,
        changes=changes,
        attributes=_attributes(t, sc),
        thread=sc.thread,
        begin_seq=begin.sequence,
        begin_offset=begin.lwn_block * bs,
        con_name=t.redo.container or sc.effective_con_name,
    )


def expected_events(
    gen: Generated,
    sc: Scenario,
    lwn_log: list[tuple[int, int, int, int, int]],
    shutdown: bool = False,
    containers: frozenset[str] | None = None,
) -> list[ev.Transaction | ev.Checkpoint]:
    """Transactions and checkpoints in the order OLR's parser produces them.

    ``shutdown`` adds the checkpoint of a soft stop (a daemon stopped by a signal); a batch
    run ends at its last file without one, as OLR's does. ``containers``: in a multitenant
    scenario, only the transactions of these containers (None: the first container's, what
    OLR 1.9 reads with the first container's checkpoint).
    """
    if sc.containers and containers is None:
        containers = frozenset({sc.containers[0].name})
    committed = [t for t in gen.committed if containers is None or t.redo.container in containers]
    if sc.threads > 1:  # RAC: cluster-wide commit order; checkpoints are not predicted
        return [build_transaction(t, sc) for t in sorted(committed, key=lambda x: _end_record(x).scn)]
    by_lwn: dict[tuple[int, int], list[Txn]] = {}
    for t in committed:
        end = _end_record(t)
        by_lwn.setdefault((end.sequence, end.lwn_block), []).append(t)
    out: list[ev.Transaction | ev.Checkpoint] = []
    bs = sc.block_size
    for seq, first, count, scn, epoch in lwn_log:
        if first < 0:  # end of a log: the switch checkpoint
            out.append(
                ev.Checkpoint(scn=scn, time=epoch, seq=seq, offset=count * bs, redo_switch=True, thread=sc.thread)
            )
            continue
        for t in sorted(by_lwn.get((seq, first), []), key=lambda x: (_end_record(x).block, _end_record(x).offset)):
            out.append(build_transaction(t, sc))
        out.append(ev.Checkpoint(scn=scn, time=epoch, seq=seq, offset=(first + count) * bs, thread=sc.thread))
    if shutdown and lwn_log:
        seq, first, count, scn, epoch = lwn_log[-1]
        last = count if first < 0 else first + count
        out.append(ev.Checkpoint(scn=scn, time=epoch, seq=seq, offset=last * bs, thread=sc.thread))
    return out


def _end_record(t: Txn) -> Record:
    """The commit record of a committed transaction."""
    end = t.redo.end_record
    assert end is not None
    return end


def render(
    gen: Generated,
    sc: Scenario,
    lwn_log: list[tuple[int, int, int, int, int]],
    shutdown: bool = False,
    containers: frozenset[str] | None = None,
) -> bytes:
    """The expected output file (one message per line, as the file writer with new-line 1
    writes); ``containers`` as for :func:`expected_events`."""
    from replicator.formats.olr_json import OlrJsonFormat

    opts = format_options(sc)
    fmt = OlrJsonFormat(opts)
    lines: list[bytes] = []
    for item in expected_events(gen, sc, lwn_log, shutdown, containers):
        if isinstance(item, ev.Checkpoint):
            messages = fmt.checkpoint(item)
            if not opts.flags & FLAG_CHECKPOINT:
                continue
        else:
            messages = fmt.transaction(item)
        lines.extend(m.data + b"\n" for m in messages)
    return b"".join(lines)
