"""Typed interface of the native Debezium renderer (replicator/native/_debezium.pyx).

Checked against the built module by stubtest (tests/unit/test_gates.py, with
tests/unit/stubtest_allowlist.txt). Python reaches it as ``replicator.native.debezium()``.
"""

from typing_extensions import disjoint_base

from replicator.native._core import JsonCommitter

@disjoint_base
class DebeziumCommitter(JsonCommitter):
    """Commits transactions for the Debezium formats natively."""
