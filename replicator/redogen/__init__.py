"""redogen: a writer of Oracle redo logs for testing and benchmarking the replicator.

A :class:`Scenario` (tables and a timeline of sessions doing DML) becomes archived redo
logs in the format of Oracle 11.2 to 23 (512/1024/4096-byte blocks), a schema checkpoint,
a ready ``OpenLogReplicator.json`` and the output OpenLogReplicator should produce::

    from replicator.redogen import Scenario, generate, workloads
    result = generate(workloads.oltp(seed=1, target_bytes=50 << 20), "out/")

A SQL*Plus script becomes a scenario with :func:`load_sql` (:mod:`.sqlscript`)::

    scenario = load_sql("basic-crud.sql", schema="schema/basic-crud/")

See :mod:`.scenario` for the model, :mod:`.workloads` for generated workloads and
:mod:`.online` for a ring of online logs written as a live database does.
"""

from replicator.redogen.generate import GenerationResult, generate
from replicator.redogen.scenario import ColumnSpec, Event, Scenario, SessionSpec, TableSpec
from replicator.redogen.sqlscript import compile_sql, load_sql

__all__ = [
    "ColumnSpec",
    "Event",
    "GenerationResult",
    "Scenario",
    "SessionSpec",
    "TableSpec",
    "compile_sql",
    "generate",
    "load_sql",
]
