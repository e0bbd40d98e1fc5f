"""How current-state tables are laid out: typed keys, buckets, sorted files with statistics.

Every current-state table (and its tombstone table, :mod:`.lakestore`) is a Delta table
partitioned by ``_bucket`` = crc32(canonical key) mod B, B fixed when the table is created
(``--buckets``). A batch folds each (table, bucket) group in a Spark task over only that
bucket's files, and rewrites only the files of that bucket holding one of its keys; the
files are sorted by the key columns and carry their minimum and maximum (Delta statistics),
so a key outside a file's range never reads it.

The *canonical key* is the text of the typed key values (``\\x1f`` between columns): the
same for a value read from a stored file and for the producer's text of it converted to
the column's type, so ``1``, ``1.0`` and ``1E0`` of a NUMBER key are one row.
"""

from __future__ import annotations

import json
import re
import time
import uuid
import zlib
from dataclasses import dataclass
from typing import Any, Final

from replicator.spark.arrowconv import column_type, metadata_schema
from replicator.spark.tableschema import BUCKET, ROWID, TableSchema

FILE_ROWS: Final = 1 << 18  # rows per data file at most
SEP: Final = "\x1f"
# Key column types whose minimum and maximum go into the Delta statistics. Other readers skip
# files by them, so only types whose JSON form is exact are written (not decimals, floats or
# timestamps, which Delta writers print with less precision than they hold).
_STATS_TYPES: Final = ("int8", "int16", "int32", "int64", "string", "large_string")


def canonical(typed: list[Any]) -> Any:
    """Typed key arrays (one per key column) -> an Arrow string array of canonical keys
    (null where a key value is missing)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = []
    for arr in typed:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        t = arr.type
        if pa.types.is_binary(t) or pa.types.is_large_binary(t):
            arr = pa.array([None if v is None else v.hex() for v in arr.to_pylist()], pa.string())
        elif pa.types.is_timestamp(t):
            arr = arr.cast(pa.int64()).cast(pa.string())
        elif pa.types.is_struct(t):  # TIMESTAMP WITH TIME ZONE: the instant identifies the value
            arr = pc.struct_field(arr, "utc").cast(pa.int64()).cast(pa.string())
        elif not pa.types.is_string(t):
            arr = arr.cast(pa.string())
        parts.append(arr)
    if len(parts) == 1:
        return parts[0]
    return pc.binary_join_element_wise(*parts, pa.scalar(SEP), null_handling="emit_null")


def buckets_of(keys: list[str | None], buckets: int) -> Any:
    """The bucket (numpy int32) of each canonical key (0 for a missing one)."""
    import numpy as np

    return np.fromiter((zlib.crc32(k.encode()) % buckets if k is not None else 0 for k in keys), np.int32, len(keys))


_NEEDS_ESCAPE: Final = re.compile(r'[^\x1f\x20-\x7e]|["\\]')  # what json.dumps would escape (SEP apart)


def key_json(key: str | None) -> str | None:
    """A canonical key as the change log prints it: a JSON array of the key values' text
    (``json.dumps`` of the values, ASCII-escaped; plain keys, nearly all, built directly)."""
    if key is None:
        return None
    if _NEEDS_ESCAPE.search(key) is None:
        return '["' + key.replace(SEP, '","') + '"]'
    return json.dumps(key.split(SEP), separators=(",", ":"))


def keys_json(keys: list[str | None]) -> Any:
    """:func:`key_json` of every key, as an Arrow string array: built in Arrow when no key needs
    an escape (nearly always), else key by key."""
    import pyarrow as pa
    import pyarrow.compute as pc

    text = pa.array(keys, pa.string())
    if pc.any(pc.match_substring_regex(text, _NEEDS_ESCAPE.pattern)).as_py():
        return pa.array([key_json(k) for k in keys], pa.string())
    return pc.binary_join_element_wise('["', pc.replace_substring(text, SEP, '","'), '"]', "")


@dataclass(slots=True)
class DataFile:
    """A data file of a table: where, how large, its bucket, the range of its first key column."""

    path: str
    size: int
    bucket: int
    low: Any = None  # None: unknown (any key may be in the file)
    high: Any = None

    def may_hold(self, sorted_values: list[Any]) -> bool:
        """True when one of ``sorted_values`` (first key column, sorted) can be in the file."""
        from bisect import bisect_left

        if self.low is None or self.high is None:
            return True
        try:
            at = bisect_left(sorted_values, self.low)
            return at < len(sorted_values) and sorted_values[at] <= self.high
        except TypeError:  # values of another type than the statistics: read the file
            return True


def data_files(actions: Any, first_key: str) -> list[DataFile]:
    """The files of a Delta table's snapshot (``get_add_actions(flatten=True)`` as pyarrow)."""
    names = actions.column_names
    cols = actions.to_pydict()
    n = actions.num_rows
    lows = cols.get(f"min.{first_key}", [None] * n)
    highs = cols.get(f"max.{first_key}", [None] * n)
    buckets = cols.get("partition._bucket", [0] * n) if "partition._bucket" in names else [0] * n
    return [
        DataFile(p, s, int(b or 0), lo, hi)
        for p, s, b, lo, hi in zip(cols["path"], cols["size_bytes"], buckets, lows, highs)
    ]


def write_files(fs: Any, data: Any, keys: list[str], bucket: int | None, prefix: str = "") -> list[dict[str, Any]]:
    """Write ``data`` (sorted by ``keys``) as Parquet files of at most :data:`FILE_ROWS` rows under
    ``_bucket=<bucket>/`` (the bucket column itself is a partition value, not in the file).
    Returns the add actions as dicts (path, size, partition values, statistics JSON)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if not data.num_rows:
        return []
    if keys:
        data = data.take(pc.sort_indices(data, [(k, "ascending") for k in keys]))
    folder = f"{prefix}_bucket={bucket}/" if bucket is not None else prefix
    now = int(time.time() * 1000)
    out = []
    for lo in range(0, data.num_rows, FILE_ROWS):
        part = data.slice(lo, FILE_ROWS)
        path = f"{folder}part-{uuid.uuid4()}-c000.snappy.parquet"
        if folder:
            fs.create_dir(folder.rstrip("/"), recursive=True)
        pq.write_table(part, path, filesystem=fs, compression="snappy")
        stats: dict[str, Any] = {"numRecords": part.num_rows, "minValues": {}, "maxValues": {}, "nullCount": {}}
        for k in keys:
            col = part[k]
            if str(col.type) in _STATS_TYPES:
                mm = pc.min_max(col).as_py()
                stats["minValues"][k], stats["maxValues"][k] = mm["min"], mm["max"]
                stats["nullCount"][k] = col.null_count
        out.append(
            {
                "path": path,
                "size": fs.get_file_info(path).size,
                "modification_time": now,
                "partition": {"_bucket": str(bucket)} if bucket is not None else {},
                "stats": json.dumps(stats, separators=(",", ":")),
                "rows": part.num_rows,
            }
        )
    return out


def filesystem(uri: str, storage_options: dict[str, str] | None) -> Any:
    """A pyarrow filesystem rooted at a table's URI (local directories, or any store delta-rs opens)."""
    import re

    import pyarrow.fs as pafs

    if not re.match(r"^[A-Za-z][\w+.-]*://", uri) or uri.startswith("file://"):
        import os

        root = uri.removeprefix("file://")
        os.makedirs(root, exist_ok=True)
        return pafs.SubTreeFileSystem(root, pafs.LocalFileSystem())
    from deltalake.fs import DeltaStorageHandler

    return pafs.PyFileSystem(DeltaStorageHandler(uri, storage_options or None))


def table_arrow(schema: TableSchema, unbounded: str) -> Any:
    """The Arrow schema of a current-state table (data columns, ``_rowid``, metadata, ``_bucket``)."""
    import pyarrow as pa

    fields = [pa.field(c["name"], column_type(c, unbounded) if schema.typed else pa.string()) for c in schema.columns]
    if schema.key is None:
        fields.append(pa.field(ROWID, pa.string()))
    fields += [pa.field(n, t) for n, t in metadata_schema()]
    return pa.schema([*fields, pa.field(BUCKET, pa.int32())])


def tomb_arrow(schema: TableSchema, unbounded: str) -> Any:
    """The Arrow schema of a tombstone table: ``_key`` (the canonical key, :mod:`.layout`), the
    metadata of the delete, ``_bucket``."""
    import pyarrow as pa

    return pa.schema(
        [pa.field("_key", pa.string()), *(pa.field(n, t) for n, t in metadata_schema()), pa.field(BUCKET, pa.int32())]
    )
