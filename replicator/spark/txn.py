"""Whole transactions only, in commit order: which events of a batch may be applied.

The replicator writes a transaction as begin, its row messages and commit, with
consecutive ``c_idx``. On a topic with several partitions those messages can land in
different partitions and so in different micro-batches. A transaction is *complete*
when its begin and commit are here and so are the ``c_idx_commit - c_idx_begin - 1``
messages between them (FULL mode messages and Debezium events are complete by
themselves).

Complete transactions are applied only when they commit before every incomplete one
(the *watermark*): rows of one key stay in one partition, in order, so holding back
later transactions is what keeps changes of a key in commit order. Everything not
applied is kept for the next batch (the *pending* buffer, stored with the snapshot).

An incomplete transaction that commits at or before the highest SCN already applied,
and has waited longer than ``pending_timeout`` seconds, is a partial replay of something
already applied (a producer restarting mid-transaction): it is dropped, so it cannot
block the stream for ever.

One Spark job summarizes the batch per (commit SCN, xid, table); the rest is decided
on the driver from that summary, and the split itself is two filters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

GROUP = ("commit_scn", "xid", "tbl")


def summarize(events: Any) -> list[Any]:
    """Per (commit SCN, xid, table): transaction bounds, counts, schema facts (one job)."""
    from pyspark.sql import functions as F

    kind, c_idx = F.col("kind"), F.col("c_idx")
    body = kind.isin("begin", "commit", "dml", "ddl")
    return events.groupBy(*GROUP).agg(
        F.min(F.when(kind == "begin", c_idx)).alias("b"), F.max(F.when(kind == "commit", c_idx)).alias("e"),
        F.countDistinct(F.when(kind.isin("dml", "ddl"), c_idx)).alias("n"),
        F.max(F.when(body, F.col("full") | (F.col("fmt") != "olr"))).alias("whole"),
        F.count(F.when(body, 1)).alias("body"), F.count(F.when(kind == "dml", 1)).alias("rows"),
        F.count(F.when(kind == "ddl", 1)).alias("ddl"), F.min("seen").alias("seen"),
        F.count(F.when(F.col("seen").isNull() & F.coalesce(F.col("elem") == 0, F.lit(True)), 1)).alias("messages"),
        F.first("error", ignorenulls=True).alias("error"), F.max(F.col("rid").isNotNull()).alias("has_rid"),
        F.first("key_cols", ignorenulls=True).alias("key_cols"), F.collect_set("columns").alias("columns"),
        F.max(F.coalesce("commit_ts", "k_ts")).alias("max_ts")).collect()


def aware(value: datetime) -> datetime:
    """PySpark collects timestamps as naive local times: make them UTC-aware."""
    return value if value.tzinfo is not None else value.astimezone(UTC)


@dataclass(slots=True)
class TableInfo:
    """What the ready part of a batch holds for one table."""

    rows: int = 0
    ddl: int = 0
    has_rid: bool = False
    key_cols: list[str] | None = None
    columns: dict[str, int] = field(default_factory=dict)  # column list JSON -> newest commit SCN carrying it
    max_scn: int = 0
    max_ts: datetime | None = None


@dataclass(slots=True)
class Assembly:
    """The split of a batch and the counts the metrics report."""

    ready: Any  # DataFrame: dml/ddl events of transactions to apply now
    pending: Any  # DataFrame: events to keep for the next batch
    tables: dict[str, TableInfo]
    watermark: int | None = None  # commit SCN of the oldest blocking incomplete transaction
    incomplete: int = 0
    dropped: int = 0
    messages: int = 0
    max_seen_scn: int = 0
    error: str | None = None


def split(events: Any, summary: list[Any], *, atomic: bool, applied_scn: int, pending_timeout: float) -> Assembly:
    """Decide which transactions to apply and build the ready/pending DataFrames."""
    from pyspark.sql import functions as F

    now = datetime.now(UTC)
    txns: dict[tuple[Any, Any], dict[str, Any]] = {}
    asm = Assembly(None, None, {})
    for r in summary:
        asm.messages += r["messages"]
        asm.error = asm.error or r["error"]
        asm.max_seen_scn = max(asm.max_seen_scn, r["commit_scn"] or 0)
        if not r["body"]:
            continue  # checkpoint messages and errors
        t = txns.setdefault((r["commit_scn"], r["xid"]), {"b": None, "e": None, "n": 0, "whole": False,
                                                           "seen": now, "parts": []})
        t["b"] = min((v for v in (t["b"], r["b"]) if v is not None), default=None)
        t["e"] = max((v for v in (t["e"], r["e"]) if v is not None), default=None)
        t["n"] += r["n"]
        t["whole"] = t["whole"] or bool(r["whole"])
        t["seen"] = min(t["seen"], aware(r["seen"]) if r["seen"] else now)
        t["parts"].append(r)
    blocking, dropped = [], []
    for (scn, xid), t in txns.items():
        complete = not atomic or t["whole"] or (t["b"] is not None and t["e"] is not None
                                                 and t["n"] == t["e"] - t["b"] - 1)
        if complete:
            continue
        asm.incomplete += 1
        if scn <= applied_scn and t["seen"] < now - timedelta(seconds=pending_timeout):
            dropped.append((scn, xid))
        else:
            blocking.append(scn)
    asm.watermark = min(blocking) if blocking else None
    asm.dropped = len(dropped)
    drop_set = set(dropped)
    for (scn, xid), t in txns.items():
        if (scn, xid) in drop_set or (asm.watermark is not None and scn >= asm.watermark):
            continue
        for r in t["parts"]:
            if r["tbl"] is None:
                continue
            info = asm.tables.setdefault(r["tbl"], TableInfo())
            info.rows += r["rows"]
            info.ddl += r["ddl"]
            info.has_rid = info.has_rid or bool(r["has_rid"])
            info.key_cols = info.key_cols or r["key_cols"]
            for cols in r["columns"]:
                info.columns[cols] = max(info.columns.get(cols, 0), scn)
            info.max_scn = max(info.max_scn, scn)
            if r["max_ts"] is not None and (info.max_ts is None or aware(r["max_ts"]) > info.max_ts):
                info.max_ts = aware(r["max_ts"])
    kind = F.col("kind")
    keep = F.lit(True)
    if dropped:
        keep = ~F.struct("commit_scn", "xid").isin([F.struct(F.lit(s), F.lit(x)) for s, x in dropped])
    early = F.lit(True) if asm.watermark is None else F.col("commit_scn") < F.lit(asm.watermark)
    asm.ready = events.where(kind.isin("dml", "ddl") & early & keep)
    if asm.watermark is None:
        asm.pending = events.limit(0)
    else:
        asm.pending = (events.where(kind.isin("begin", "commit", "dml", "ddl") & ~early & keep)
                       .withColumn("seen", F.coalesce(F.col("seen"), F.lit(now))))
    return asm
