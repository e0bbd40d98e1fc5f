"""Debezium change events (Oracle connector, JSON converter) -> event rows.

Accepted: the bare envelope ``{"before","after","source","op",...}`` and the JSON
converter's ``{"schema":…,"payload":…}`` form. With the schema, column types come from
the Connect schema (Debezium logical types for times and decimals) and values are
rewritten to the text the typed conversion expects (decimal text, hex for bytes);
without it, every column is kept as text.

Ordering: ``source.commit_scn`` (``source.scn`` for snapshot reads), then
``transaction.total_order`` (with transaction metadata) or else ``source.scn`` and
``source.ssn``. Every event counts as complete: transaction metadata records (BEGIN/END)
and heartbeats are skipped, so Debezium input is applied without transaction atomicity.
Schema change events become DDL events.
"""

from __future__ import annotations

import base64
import json
from decimal import Decimal
from typing import Any, Final

from replicator.spark.jsontext import text_map

_OPS: Final = {"c": "c", "r": "c", "u": "u", "d": "d"}
# Connect logical type -> (internal type, unit)
_LOGICAL: Final[dict[str, tuple[str, str]]] = {
    "io.debezium.time.Timestamp": ("timestamp", "ms"),
    "org.apache.kafka.connect.data.Timestamp": ("timestamp", "ms"),
    "io.debezium.time.MicroTimestamp": ("timestamp", "us"),
    "io.debezium.time.NanoTimestamp": ("timestamp", "ns"),
    "io.debezium.time.Date": ("date", "days"),
    "org.apache.kafka.connect.data.Date": ("date", "days"),
    "io.debezium.time.ZonedTimestamp": ("timestamp with local time zone", "iso"),
}
_PRIMITIVE: Final[dict[str, str]] = {
    "int8": "integer",
    "int16": "integer",
    "int32": "integer",
    "int64": "integer",
    "float": "binary_float",
    "float32": "binary_float",
    "double": "binary_double",
    "float64": "binary_double",
    "boolean": "boolean",
    "string": "varchar2",
    "bytes": "raw",
}


def is_debezium(doc: Any) -> bool:
    """True for a Debezium record: change event, schema change, transaction metadata, heartbeat."""
    if isinstance(doc, dict) and isinstance(doc.get("payload"), dict) and "schema" in doc:
        doc = doc["payload"]
    if not isinstance(doc, dict):
        return False
    return (
        ("op" in doc and "source" in doc)
        or ("ddl" in doc and "source" in doc)
        or (doc.get("status") in ("BEGIN", "END") and "id" in doc)
    )


def column_specs(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Connect schema of the envelope -> column specs as OLR's ``schema.columns`` has them."""
    image = next((f for f in schema.get("fields", []) if f.get("field") in ("after", "before")), None)
    out: list[dict[str, Any]] = []
    for f in (image or {}).get("fields", []):
        name, params = f.get("name", ""), f.get("parameters") or {}
        spec: dict[str, Any] = {"name": f["field"], "nullable": bool(f.get("optional", True))}
        if name in _LOGICAL:
            spec["type"], spec["unit"] = _LOGICAL[name]
        elif name == "org.apache.kafka.connect.data.Decimal":
            spec.update(
                type="number",
                precision=int(params.get("connect.decimal.precision", 38)),
                scale=int(params.get("scale", 0)),
                encoding="decimal",
            )
        elif name == "io.debezium.data.VariableScaleDecimal":
            spec.update(type="number", precision=-1, scale=-1, encoding="variable")
        else:
            spec["type"] = _PRIMITIVE.get(f.get("type", "string"), "varchar2")
            if spec["type"] == "raw":
                spec["encoding"] = "base64"
        out.append(spec)
    return out


def decode_bytes(value: str, mode: str) -> bytes:
    """A ``bytes`` field as the producer's ``binary.handling.mode`` printed it."""
    if mode == "hex":
        return bytes.fromhex(value)
    if mode == "base64-url-safe":
        return base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    return base64.b64decode(value, validate=True)  # bytes (the default) and base64


def _decode(value: Any, spec: dict[str, Any], binary_mode: str = "bytes") -> Any:
    """A Connect-encoded value -> the text the typed conversion reads."""
    encoding = spec.get("encoding")
    if value is None or encoding is None:
        return value
    if encoding == "base64":
        try:
            return decode_bytes(value, binary_mode).hex()
        except (ValueError, TypeError) as exc:
            raise ValueError(
                f"column {spec.get('name')}: {value!r} is not {binary_mode} binary data ({exc}); "
                "the job's --binary-handling-mode must match the producer's"
            ) from None
    if encoding == "variable":  # {"scale": s, "value": base64 two's complement}
        unscaled = int.from_bytes(base64.b64decode(value["value"]), "big", signed=True)
        return str(Decimal(unscaled).scaleb(-int(value["scale"])))
    if isinstance(value, str) and not value.lstrip("-").replace(".", "", 1).isdigit():
        unscaled = int.from_bytes(base64.b64decode(value), "big", signed=True)
        return str(Decimal(unscaled).scaleb(-int(spec["scale"])))
    return value  # decimal.handling.mode=string/double already gives the number


def parse_debezium(doc: dict[str, Any], meta: dict[str, Any], binary_mode: str = "bytes") -> list[dict[str, Any]]:
    """One Debezium event -> one event row (none for heartbeats/messages)."""
    specs: list[dict[str, Any]] = []
    if isinstance(doc.get("payload"), dict) and "schema" in doc:
        specs = column_specs(doc.get("schema") or {})
        doc = doc["payload"]
    op = doc.get("op")
    source = doc.get("source") or {}
    tbl = f"{source.get('schema')}.{source.get('table')}"
    scn = int(source["scn"]) if source.get("scn") not in (None, "") else None
    commit = source.get("commit_scn")
    commit_scn = int(commit) if commit not in (None, "") else scn
    if op is None and "ddl" in doc:  # a schema change event
        changes = doc.get("tableChanges") or [{}]
        table_id = str(changes[0].get("id", "")).replace('"', "")
        tbl = ".".join(table_id.split(".")[-2:]) if table_id.count(".") >= 1 else tbl
        return [
            dict(
                meta,
                kind="ddl",
                fmt="debezium",
                tbl=tbl,
                op="ddl",
                sql=doc["ddl"],
                commit_scn=commit_scn,
                c_scn=scn or 0,
                c_idx=0,
                elem=0,
                full=True,
            )
        ]
    if op == "t":
        return [
            dict(
                meta,
                kind="ddl",
                fmt="debezium",
                tbl=tbl,
                op="ddl",
                sql=f"TRUNCATE TABLE {tbl}",
                commit_scn=commit_scn,
                c_scn=scn or 0,
                c_idx=0,
                elem=0,
                full=True,
            )
        ]
    if op not in _OPS:
        return []  # transaction metadata, heartbeats, messages
    if commit_scn is None:
        return [
            dict(meta, kind="error", error=f"Debezium event for {tbl} has neither source.commit_scn nor source.scn")
        ]
    by_name = {s["name"]: s for s in specs}

    def image(values: Any) -> list[tuple[str, str | None]] | None:
        """A before/after object decoded with the Connect schema, as text pairs."""
        if isinstance(values, dict) and by_name:
            values = {k: _decode(v, by_name[k], binary_mode) if k in by_name else v for k, v in values.items()}
        return text_map(values)

    txn = doc.get("transaction") or {}
    # Inside a transaction total_order is the order; without it, the record SCN then ssn.
    if txn.get("total_order") is not None:
        c_scn, order = 0, int(txn["total_order"])
    else:
        c_scn, order = scn or 0, int(source.get("ssn") or 0)
    ts_ms = source.get("ts_ms", doc.get("ts_ms"))
    return [
        dict(
            meta,
            kind="dml",
            fmt="debezium",
            tbl=tbl,
            op=_OPS[op],
            commit_scn=commit_scn,
            c_scn=c_scn,
            c_idx=order,
            elem=0,
            xid=source.get("txId") or txn.get("id"),
            commit_ts=int(ts_ms) * 1000 if ts_ms not in (None, "") else None,
            rid=source.get("row_id"),
            before=image(doc.get("before")),
            after=image(doc.get("after")),
            columns=json.dumps(specs, separators=(",", ":")) if specs else None,
            full=True,
        )
    ]
