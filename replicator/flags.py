"""The bits of ``source.flags`` and ``reader.disable-checks``, by name (OpenLogReplicator's meanings).

One definition for the whole package: config checks them, the runners and the parser act on
them, the formats render by them. ``docs/configuration.md`` lists them for users.
"""

from __future__ import annotations

from typing import Final

# source.flags
FLAG_ARCHIVE_ONLY: Final = 0x1  # read archived logs only, never the online groups
FLAG_SCHEMALESS: Final = 0x2  # no dictionary: every table's rows as COL_<n> hex
FLAG_ADAPTIVE_SCHEMA: Final = 0x4  # a base dictionary for the database version (scripts/base-<version>.json)
FLAG_DIRECT_DISABLE: Final = 0x8  # no O_DIRECT reads (redo-verify-delay-us defaults to 500 ms)
FLAG_IGNORE_DATA_ERRORS: Final = 0x10  # log a data error (60013) and go on
FLAG_DDL: Final = 0x20  # emit DDL messages
FLAG_SHOW_HIDDEN: Final = 0x40  # hidden columns
FLAG_SHOW_GUARD: Final = 0x80  # guard columns
FLAG_SHOW_NESTED: Final = 0x100  # nested-table columns
FLAG_SHOW_UNUSED: Final = 0x200  # unused (dropped, not purged) columns
FLAG_INCOMPLETE_TXN: Final = 0x400  # transactions whose begin is before the start position
FLAG_SYSTEM_TXN: Final = 0x800  # transactions of SYS objects
FLAG_CHECKPOINT: Final = 0x1000  # checkpoint messages in the output
FLAG_KEEP_CHECKPOINTS: Final = 0x2000  # never delete old schema checkpoint files
FLAG_VERIFY_SCHEMA: Final = 0x4000  # online schema verification (the reference leaves it unused)
FLAG_RAW_HEX: Final = 0x8000  # every column as raw hex
FLAG_EXPERIMENTAL_XMLTYPE: Final = 0x10000  # decode binary XMLType
FLAG_EXPERIMENTAL_JSON: Final = 0x20000  # the JSON data type (hex)
FLAG_EXPERIMENTAL_NOT_NULL_MISSING: Final = 0x40000  # NOT NULL column NULL in an UPDATE: AFTER copied to BEFORE

# reader.disable-checks
DISABLE_CHECKS_GRANTS: Final = 0x1  # skip the online grant probes
DISABLE_CHECKS_SUPPLEMENTAL_LOG: Final = 0x2  # skip the supplemental-logging checks
DISABLE_CHECKS_BLOCK_SUM: Final = 0x4  # skip block checksum verification
DISABLE_CHECKS_JSON_TAGS: Final = 0x8  # skip the JSON key-name validation of config and schema files
