"""The result of ``replicator verify`` as text (people) or JSON (automation).

Both hold the same facts: what was read (redo and sink, with their MB/s), what was compared
(the bounds), per table the count and digest sum of each side, the transactions checked, and
every difference kept (up to ``--max-report``) with its position -- c_scn, c_idx, the element
in a FULL message, xid, table, row key -- and where it is in the sink; then the findings
that are not single changes (a rotation file missing, a torn or unreadable message).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replicator.formats.olr_digest import value_text, xid_text
from replicator.verify.compare import DIFFERS, Result
from replicator.verify.spool import NO_TABLE, TableNames


@dataclass(slots=True)
class Finding:
    """Something wrong with the sink that is not one change."""

    kind: str  # rotation, torn, unreadable
    text: str
    where: str


@dataclass
class Detail:
    """A difference as reported: identity texts, key, where, and what differs."""

    kind: str
    c_scn: int
    c_idx: int
    elem: int
    xid: str
    table: str
    key: Any = None
    redo: int | None = None
    sink: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)  # differs: what is not equal

    def as_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "kind": self.kind,
            "c_scn": self.c_scn,
            "c_idx": self.c_idx,
            "xid": self.xid,
            "table": self.table,
            "key": self.key,
        }
        if self.elem:
            doc["elem"] = self.elem
        if self.redo is not None:
            doc["redo_message"] = self.redo
        if self.sink:
            doc["sink"] = self.sink
        if self.columns:
            doc["differs_in"] = self.columns
        return doc


def _element(doc: dict[str, Any] | None, elem: int) -> dict[str, Any] | None:
    if not doc:
        return None
    payload = doc.get("payload")
    if isinstance(payload, list) and elem < len(payload) and isinstance(payload[elem], dict):
        return payload[elem]
    return None


def row_key(element: dict[str, Any] | None, keys: dict[tuple[str, str], list[str]]) -> Any:
    """The row's key: its primary key columns (from the dictionary), else its ROWID (``rid``),
    else its whole image; None for begin/commit."""
    if element is None or element.get("op") not in ("c", "u", "d"):
        return None
    schema = element.get("schema") or {}
    image = element.get("before") if element.get("op") == "d" else element.get("after")
    if not isinstance(image, dict):
        image = element.get("before") or {}
    names = keys.get((str(schema.get("owner", "")), str(schema.get("table", ""))))
    if names:
        return {n: image.get(n) for n in names}
    if "rid" in element:
        return {"rid": element["rid"]}
    return image


def _columns_differing(redo: dict[str, Any] | None, sink: dict[str, Any] | None) -> list[str]:
    if redo is None or sink is None:
        return []
    out = [name for name in ("op", "schema", "sql") if redo.get(name) != sink.get(name)]
    for image in ("before", "after"):
        a, b = redo.get(image) or {}, sink.get(image) or {}
        if not isinstance(a, dict) or not isinstance(b, dict):
            out.append(image)
            continue
        out += [
            f"{image}.{c}"
            for c in sorted(set(a) | set(b))
            if c not in a or c not in b or value_text(a[c]) != value_text(b[c])
        ]
    return out


def details(
    result: Result,
    tables: TableNames,
    redo_docs: dict[int, dict[str, Any]],
    sink_docs: dict[int, Any],
    keys: dict[tuple[str, str], list[str]],
) -> list[Detail]:
    """The reported differences with their texts, from the messages located on both sides
    (``sink_docs``: place -> sinks.Located)."""
    out = []
    for d in result.differences:
        redo_doc = redo_docs.get(d.redo) if d.redo is not None else None
        located = [sink_docs[p] for p in d.sink if p in sink_docs]
        sink_doc = located[0].doc if located else None
        doc = redo_doc or sink_doc
        element = _element(redo_doc, d.elem) or _element(sink_doc, d.elem)
        detail = Detail(
            d.kind,
            d.c_scn,
            d.c_idx,
            d.elem,
            xid_text(doc) if doc else f"#{d.xid_key:016x}",
            tables.label(d.table) if d.table != NO_TABLE else "",
            row_key(element, keys),
            d.redo,
            [loc.where for loc in located],
        )
        if d.kind == DIFFERS:
            detail.columns = _columns_differing(_element(redo_doc, d.elem), _element(sink_doc, d.elem))
        out.append(detail)
    return out


@dataclass
class Report:
    """Everything ``replicator verify`` prints."""

    redo_label: str
    sink_label: str
    bounds: str
    redo: Any  # truth.RedoStats
    sink: Any  # sinks.SinkStats
    result: Result
    tables: TableNames
    details: list[Detail]
    findings: list[Finding]
    notes: list[str]  # about the bounds (the sink is ahead of the redo read): not differences
    seconds: float
    peak_rss_mb: float
    state: Any = None  # delta.StateResult: a lake's current-state tables checked too

    @property
    def ok(self) -> bool:
        return not self.result.total and not self.findings and (self.state is None or not self.state.total)

    def _table_rows(self) -> list[dict[str, Any]]:
        rows = []
        for t in sorted(set(self.result.redo_tables) | set(self.result.sink_tables), key=self.tables.label):
            rn, rd = self.result.redo_tables.get(t, (0, 0))
            sn, sd = self.result.sink_tables.get(t, (0, 0))
            rows.append(
                {
                    "table": self.tables.label(t) if t != NO_TABLE else "(begin/commit)",
                    "redo": rn,
                    "redo_digest": f"{rd:016x}",
                    "sink": sn,
                    "sink_digest": f"{sd:016x}",
                    "equal": (rn, rd) == (sn, sd),
                }
            )
        return rows

    def _transactions(self) -> list[dict[str, Any]]:
        """Each transaction of a listed difference with both sides' count and digest sum."""
        texts = {(d.c_scn, d.xid_key): detail.xid for d, detail in zip(self.result.differences, self.details)}
        return [
            {
                "c_scn": scn,
                "xid": texts.get((scn, key), f"#{key:016x}"),
                "redo": rn,
                "redo_digest": f"{rd:016x}",
                "sink": sn,
                "sink_digest": f"{sd:016x}",
            }
            for (scn, key), (rn, rd, sn, sd) in sorted(self.result.transaction_tallies.items())
        ]

    def as_json(self) -> dict[str, Any]:
        r = self.result
        redo_mb = self.redo.bytes / 1e6
        return {
            "result": "ok" if self.ok else "differences",
            "redo": {
                "what": self.redo_label,
                "files": self.redo.files,
                "bytes": self.redo.bytes,
                "messages": self.redo.messages,
                "checkpoint_messages": self.redo.checkpoints,
                "transactions": self.redo.transactions,
                "seconds": round(self.redo.seconds, 3),
                "mb_per_s": round(redo_mb / max(self.redo.seconds, 1e-9), 1),
                "engine": self.redo.engine,
            },
            "sink": {
                "what": self.sink_label,
                "parts": self.sink.parts,
                "bytes": self.sink.bytes,
                "messages": self.sink.messages,
                "checkpoint_messages": self.sink.checkpoints,
                "seconds": round(self.sink.seconds, 3),
                "mb_per_s": round(self.sink.bytes / 1e6 / max(self.sink.seconds, 1e-9), 1),
            },
            "compared": {
                "bounds": self.bounds,
                "redo_changes": r.redo_changes,
                "sink_changes": r.sink_changes,
                "transactions": r.transactions,
                "differing_transactions": r.differing_transactions,
                "redo_changes_not_claimed": r.not_claimed,
                "sink_changes_before_start": r.before_start,
                "sink_changes_after_redo": r.after_redo,
                "changes_after_to_scn": r.after_to,
                "ambiguous_identities": r.ambiguous,
                "seconds": round(r.seconds, 3),
            },
            "tables": self._table_rows(),
            "counts": dict(r.counts),
            "differences": [d.as_json() for d in self.details],
            "differing_transactions": self._transactions(),
            "differences_not_listed": r.total - len(self.details),
            "findings": [{"kind": f.kind, "text": f.text, "where": f.where} for f in self.findings],
            "notes": self.notes,
            **({"current_state": self.state.as_json()} if self.state is not None else {}),
            "seconds": round(self.seconds, 3),
            "mb_per_s": round(redo_mb / max(self.seconds, 1e-9), 1),
            "peak_rss_mb": round(self.peak_rss_mb, 1),
        }

    def text(self) -> str:
        r = self.result
        redo_mb, sink_mb = self.redo.bytes / 1e6, self.sink.bytes / 1e6
        lines = [
            f"redo:    {self.redo_label}",
            f"sink:    {self.sink_label} ({len(self.sink.parts)} part(s))",
            f"compare: {self.bounds}",
            f"read redo: {self.redo.messages:,} messages ({self.redo.checkpoints:,} checkpoints), "
            f"{self.redo.transactions:,} transactions, "
            f"{redo_mb:.1f} MB in {self.redo.seconds:.2f} s = {redo_mb / max(self.redo.seconds, 1e-9):.1f} MB/s "
            f"({self.redo.engine} engine)",
            f"read sink: {self.sink.messages:,} messages ({self.sink.checkpoints:,} checkpoints), "
            f"{sink_mb:.1f} MB in {self.sink.seconds:.2f} s = {sink_mb / max(self.sink.seconds, 1e-9):.1f} MB/s",
            f"compared in {r.seconds:.2f} s; total {self.seconds:.2f} s = "
            f"{redo_mb / max(self.seconds, 1e-9):.1f} MB/s of redo, peak RSS {self.peak_rss_mb:.0f} MB",
            "",
        ]
        rows = self._table_rows()
        width = max([len(row["table"]) for row in rows] + [5])
        lines.append(f"{'table':<{width}}  {'redo':>12}  {'digest':<16}  {'sink':>12}  digest")
        for row in rows:
            mark = "" if row["equal"] else "  <- differs"
            lines.append(
                f"{row['table']:<{width}}  {row['redo']:>12,}  {row['redo_digest']}  {row['sink']:>12,}  "
                f"{row['sink_digest']}{mark}"
            )
        notes = []
        if r.not_claimed:
            notes.append(f"{r.not_claimed:,} redo changes after what the sink claims to hold (not checked)")
        if r.before_start:
            notes.append(f"{r.before_start:,} sink changes older than the redo read (not checked)")
        if r.after_redo:
            notes.append(f"{r.after_redo:,} sink changes after the redo read (not checked)")
        if r.after_to:
            notes.append(f"{r.after_to:,} changes with c_scn above --to-scn (not checked)")
        if r.ambiguous:
            notes.append(f"{r.ambiguous:,} identities the redo holds more than once (compared by count)")
        lines.append(
            f"transactions: {r.transactions:,} checked, {r.differing_transactions:,} differ"
            + "".join(f"; {n}" for n in notes)
        )
        lines += [f"note: {n}" for n in self.notes]
        if self.state is not None:
            lines += self.state.text()
        lines.append("")
        if self.ok:
            state = (
                f"; its current-state tables hold the {sum(t['redo_rows'] for t in self.state.tables):,} rows "
                f"the redo folds to at SCN {self.state.applied_scn}"
                if self.state is not None
                else ""
            )
            lines.append(
                f"OK: the sink holds exactly the {r.redo_changes:,} changes of the redo "
                f"({r.transactions:,} transactions){state}"
            )
            return "\n".join(lines)
        c = r.counts
        state = ""
        if self.state is not None:
            s = self.state.counts
            state = f"; current-state rows: {s['missing']:,} missing, {s['extra']:,} extra, {s['differs']:,} differing"
        lines.append(
            f"DIFFERENCES: {c['missing']:,} missing, {c['duplicated']:,} duplicated, {c['differs']:,} "
            f"differing, {c['extra']:,} extra changes in {r.differing_transactions:,} transactions; "
            f"{len(self.findings)} other finding(s){state}"
        )
        for d in self.details:
            key = "" if d.key is None else f" key {_compact(d.key)}"
            elem = f" elem {d.elem}" if d.elem else ""
            where = f"  sink: {'; '.join(d.sink)}" if d.sink else ""
            columns = f"  in {', '.join(d.columns)}" if d.columns else ""
            lines.append(
                f"  {d.kind:<10} c_scn {d.c_scn} c_idx {d.c_idx}{elem} xid {d.xid} "
                f"{d.table or '(begin/commit)'}{key}{columns}{where}"
            )
        if r.total > len(self.details):
            lines.append(f"  ... {r.total - len(self.details):,} more (--max-report)")
        for t in self._transactions():
            lines.append(
                f"  transaction c_scn {t['c_scn']} xid {t['xid']}: redo {t['redo']:,} changes "
                f"({t['redo_digest']}), sink {t['sink']:,} ({t['sink_digest']})"
            )
        for f in self.findings:
            lines.append(f"  {f.kind:<10} {f.text} ({f.where})")
        return "\n".join(lines)


def _compact(value: Any) -> str:
    import orjson

    text = orjson.dumps(value).decode()
    return text if len(text) <= 200 else text[:197] + "..."
