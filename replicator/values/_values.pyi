"""Typed interface of the native value decoders (replicator/values/_values.pyx): nothing python calls.

The core and the renderers call the decoders through _values.pxd (C functions); the module has
no public python names. Checked by stubtest (tests/unit/test_gates.py).
"""
