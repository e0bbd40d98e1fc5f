"""The redo sources by config type: builds the one ``reader.redo-source`` asks for.

The implementations import only the interface (:mod:`replicator.redo.source`); this
module imports them all, so there is no import cycle between the interface and them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from replicator.redo.asm import AsmSource
from replicator.redo.sftp import SftpSource
from replicator.redo.source import LOCAL, RedoSource

# ``redo-source.type`` -> how to build it from the validated section.
FACTORIES: dict[str, Callable[[Any], RedoSource]] = {
    "local": lambda _cfg: LOCAL,
    "sftp": SftpSource.from_config,
    "asm": AsmSource.from_config,
}


def open_source(reader: Any) -> RedoSource:
    """The source a config's ``reader`` section asks for (``redo-source``; local by default)."""
    cfg = getattr(reader, "redo_source", None)
    kind = cfg.type if cfg is not None else "local"
    return FACTORIES[kind](cfg)
