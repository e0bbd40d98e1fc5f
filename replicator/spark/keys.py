"""Which columns identify a row of each table.

OpenLogReplicator's JSON does not say which columns form the primary key, so the job
takes them, in this order of precedence, from:

1. ``--key OWNER.TABLE=COL1,COL2`` on the command line;
2. the ``key`` of a matching table rule in the replicator config's ``filter``;
3. the replicator's schema checkpoint (SYS.CDEF$/CCOL$ rows; ``--olr-config`` finds it);
4. the Kafka message key: a ``tag`` (e.g. ``[pk]``) makes the replicator key every row
   message with a JSON fragment of the key columns, and Debezium keys by the primary key.

A table with none of these is keyed by ROWID (the ``rid`` field, format option
``rid: 1``); the job logs that choice, because a ROWID changes when a row moves
(ALTER TABLE MOVE, partition movement, export/import).
"""

from __future__ import annotations

import logging
import re

from replicator.spark.options import JobOptions

log = logging.getLogger("replicator.spark")


class KeyResolver:
    """Decides the key of each table once and remembers it (and why) for the log."""

    def __init__(self, opts: JobOptions):
        self.opts = opts
        self._rules = [(re.compile(o), re.compile(t), cols) for o, t, cols in opts.key_rules]

    def configured(self, table: str) -> tuple[list[str] | None, str]:
        """Key columns known without looking at messages, and where they come from."""
        if table in self.opts.rowid_tables:
            return None, "--rowid-table"
        if table in self.opts.keys:
            return self.opts.keys[table], "--key"
        owner, _, name = table.partition(".")
        for owner_re, table_re, cols in self._rules:
            if owner_re.fullmatch(owner) and table_re.fullmatch(name):
                return cols, "filter key rule"
        if table in self.opts.checkpoint_keys:
            return self.opts.checkpoint_keys[table], "schema checkpoint"
        return None, ""

    def decide(self, table: str, message_key: list[str] | None, has_rid: bool) -> tuple[list[str] | None, str]:
        """Key columns (None = ROWID) for a table seen for the first time, and the reason."""
        cols, origin = self.configured(table)
        if cols is not None:
            return cols, origin
        if origin == "--rowid-table":
            return None, "--rowid-table" if has_rid else ""
        if message_key:
            return message_key, "Kafka message key"
        if has_rid:
            return None, "no primary key known: ROWID (rid) used as the key"
        return None, ""
