"""Typed interface of the native metrics tally (replicator/native/_tally.pyx): nothing python calls.

The core calls tally_rows and tally_commit through _tally.pxd (C functions); the module has no
python-visible names. Checked by stubtest (tests/unit/test_gates.py).
"""
