"""Output formats: one module per format, chosen by ``format.type`` (see :mod:`.registry`)."""
