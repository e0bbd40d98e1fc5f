"""Typed interface of the native value decoders (replicator/values/_values.pyx).

The core and the renderers call the decoders and value texts through _values.pxd (C functions);
python calls only ``float_repr`` (the tests, as ``replicator.native.values()``). Checked by
stubtest (tests/unit/test_gates.py).
"""

def float_repr(data: bytes, single: bool) -> bytes | None:
    """The native shortest text of a BINARY_FLOAT/DOUBLE value (tests), or None (python)."""
