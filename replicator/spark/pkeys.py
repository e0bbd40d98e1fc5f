"""Primary keys from the replicator's schema checkpoint (SYS.CDEF$/CCOL$ rows).

Used by :func:`replicator.spark.options.apply_olr_config` to fill ``JobOptions.checkpoint_keys``,
which :class:`replicator.spark.keys.KeyResolver` consults; a module of its own so that the
options and the key resolver do not import each other.
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger("replicator.spark")


def primary_keys_from_state(state_dir: Path, name: str) -> dict[str, list[str]]:
    """OWNER.TABLE -> primary key columns, from the newest schema checkpoint of ``name`` that holds
    the dictionary (later ones usually only reference it)."""
    from replicator.errors import ReplicatorError
    from replicator.schema.dictionary import Dictionary
    from replicator.schema.store import list_schema_checkpoints, load_schema_checkpoint

    if not name or not state_dir.is_dir():
        return {}
    try:
        found = list_schema_checkpoints(state_dir, name)
    except ReplicatorError as exc:
        log.warning("schema checkpoints not used for primary keys: %s", exc.message)
        return {}
    cp = None
    for _, path in reversed(found):  # newest first; most hold only a reference to an older one
        try:
            candidate = load_schema_checkpoint(path)
        except ReplicatorError as exc:
            log.warning("schema checkpoint %s not used for primary keys: %s", path, exc.message)
            continue
        if candidate.rows:
            cp = candidate
            break
    if cp is None:
        return {}
    dictionary = Dictionary.from_checkpoint(cp)
    out: dict[str, list[str]] = {}
    for obj_row in dictionary.tables():
        if dictionary.skip_reason(obj_row["obj"]) is not None:
            continue
        table = dictionary.build_table(obj_row["obj"])
        if table.key_columns:
            out[f"{table.owner}.{table.name}"] = [table.columns[i].name for i in table.key_columns]
    return out
