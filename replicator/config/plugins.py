"""pydantic's plugin lookup, skipped when no plugin is installed (start-up time).

When pydantic builds a validator it asks ``importlib.metadata`` for the entry points of the
group ``pydantic`` of every installed distribution. Importing ``importlib.metadata`` (email,
zipfile, csv, tempfile ...) and reading every distribution's metadata is about half of the
first validation of a config file, on every ``replicator run``. :func:`skip_plugin_lookup_if_none`
looks for such an entry point itself, in the ``entry_points.txt`` of the ``*.dist-info`` and
``*.egg-info`` folders on ``sys.path`` (where ``importlib.metadata`` finds them), and only when
there is none replaces pydantic's loader module by one that answers what pydantic's would: no
plugins. An installed plugin, a zip file or another distribution finder on the path leave
pydantic's own loader in place.
"""

from __future__ import annotations

import os
import re
import sys
import types
from collections.abc import Iterable
from typing import Any

LOADER = "pydantic.plugin._loader"
_SECTION = re.compile(r"^\s*\[\s*pydantic\s*\]", re.MULTILINE)


def _no_plugins() -> Iterable[Any]:
    return ()


def plugins_may_exist(path: Iterable[str] | None = None, meta_path: Iterable[object] | None = None) -> bool:
    """True unless no distribution on ``path`` (default ``sys.path``) declares a pydantic entry point."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path if meta_path is None else meta_path:
        if finder is not PathFinder and hasattr(finder, "find_distributions"):
            return True  # distributions found elsewhere than in the path's folders
    for entry in sys.path if path is None else path:
        folder = entry or "."
        if os.path.isfile(folder):
            return True  # a zip file: importlib.metadata reads it, this lookup does not
        try:
            with os.scandir(folder) as it:
                names = [e.name for e in it if e.name.lower().endswith((".dist-info", ".egg-info"))]
        except OSError:
            continue  # not a folder: importlib.metadata finds nothing there either
        for name in names:
            try:
                with open(os.path.join(folder, name, "entry_points.txt"), encoding="utf-8", errors="replace") as f:
                    if _SECTION.search(f.read()):
                        return True
            except OSError:
                continue
    return False


def skip_plugin_lookup_if_none() -> bool:
    """Install the no-plugins loader when no plugin can be found; True when it is in place."""
    current = sys.modules.get(LOADER)
    if current is not None:
        return getattr(current, "get_plugins", None) is _no_plugins
    if plugins_may_exist():
        return False
    stub = types.ModuleType(LOADER, "pydantic's plugin loader when no plugin is installed (replicator.config.plugins)")
    stub.get_plugins = _no_plugins  # type: ignore[attr-defined]
    sys.modules[LOADER] = stub
    return True
