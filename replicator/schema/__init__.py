"""The data dictionary: schema checkpoint files, SYS.* rows, and the replicated tables.

* :mod:`replicator.schema.rows` describes the dictionary row arrays of a checkpoint.
* :mod:`replicator.schema.document` is the checkpoint dataclass and its JSON text.
* :mod:`replicator.schema.store` reads and writes ``<name>-chkpt-<scn>.json`` files.
* :mod:`replicator.schema.dictionary` mirrors the rows by ROWID and builds tables.
* :mod:`replicator.schema.filter` applies the ``filter.table`` rules.
"""
