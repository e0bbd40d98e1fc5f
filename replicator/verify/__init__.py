"""``replicator verify``: prove that a sink holds exactly what the redo holds.

The redo is decoded again (:mod:`.truth`, the source of truth) and the sink is read back
(:mod:`.sinks`, one :class:`~replicator.verify.sinks.SinkReader` per kind of sink); both
sides become streams of changes, each with its identity and content digest
(:mod:`replicator.formats.olr_digest`), spooled to disk in buckets (:mod:`.spool`) and
compared bucket by bucket (:mod:`.compare`); :mod:`.report` prints the result as text or
JSON and :mod:`.command` is the command line. docs/operations.md "Prove it".
"""
