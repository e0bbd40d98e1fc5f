"""The redo sources by config type: builds the one ``reader.redo-source`` asks for.

The implementations import only the interface (:mod:`replicator.redo.source`), and this
registry names them by module path: an implementation is imported when a config asks for its
type, so a local run never pays for asyncssh or python-oracledb, and there is no import cycle
between the interface and the implementations.
"""

from __future__ import annotations

import importlib
from typing import Any

from replicator.redo.source import LOCAL, RedoSource

# ``redo-source.type`` -> (module, class) whose ``from_config(section)`` builds the source.
IMPLEMENTATIONS: dict[str, tuple[str, str]] = {
    "sftp": ("replicator.redo.sftp", "SftpSource"),
    "asm": ("replicator.redo.asm", "AsmSource"),
}


def open_source(reader: Any) -> RedoSource:
    """The source a config's ``reader`` section asks for (``redo-source``; local by default)."""
    cfg = getattr(reader, "redo_source", None)
    kind = cfg.type if cfg is not None else "local"
    if kind == "local":
        return LOCAL
    module, name = IMPLEMENTATIONS[kind]
    return getattr(importlib.import_module(module), name).from_config(cfg)
