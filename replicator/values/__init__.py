"""Oracle column value decoders, one module per type family.

Each module turns the raw internal bytes of one family into what OpenLogReplicator prints:
:mod:`.number`, :mod:`.floats`, :mod:`.datetime` and :mod:`.timefmt` (dates, timestamps and
their renderings), :mod:`.interval`, :mod:`.charset` (character sets; tables in
:mod:`.charset_tables`, malformed Unicode in :mod:`.unicode`), :mod:`.timezones`,
:mod:`.rowid` and :mod:`.raw`. They also hold encoders for tests and the redo generator.
"""
