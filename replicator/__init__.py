"""replicator: Oracle redo-log change data capture, compatible with OpenLogReplicator."""

__version__ = "0.9.0"
