"""Which parts of a changed config file can be applied while the daemon runs (hot reload).

Only the table filter (``source[0].filter``) is applied live. Everything else (writer,
format, reader, state...) takes effect at the next start: :func:`restart_keys` names
those keys so the daemon can say so instead of pretending the change was applied.
A reload acts only on a file whose content is complete: :class:`ConfigWatch` decides
by content hash, and waits until the new content has stayed the same for a moment, so
a file caught half-written by an editor or ``cp`` is never parsed.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Any

LIVE_PREFIXES = ("source[0].filter",)
SETTLE_S = 0.5  # new content must stay unchanged this long before it is parsed


def _flatten(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _flatten(item, f"{path}[{i}]", out)
        if not value:
            out[path] = []
    else:
        out[path] = value


def restart_keys(old: Any, new: Any) -> list[str]:
    """Key paths whose value differs between two decoded configs, outside the live parts."""
    a: dict[str, Any] = {}
    b: dict[str, Any] = {}
    _flatten(old, "", a)
    _flatten(new, "", b)
    changed = sorted(k for k in a.keys() | b.keys() if a.get(k, object) != b.get(k, object))
    return [k for k in changed if not k.startswith(LIVE_PREFIXES)]


class ConfigWatch:
    """Notices a config file's new content once it is complete (see the module docstring)."""

    def __init__(self, path: str, content: bytes) -> None:
        self.path = path
        self._applied = hashlib.sha256(content).digest()
        self._stat: tuple[float, int] | None = self._stat_of()
        self._pending: tuple[bytes, float] | None = None  # (hash, first seen) of unsettled content

    def _stat_of(self) -> tuple[float, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_mtime, st.st_size

    def poll(self) -> bytes | None:
        """The file's bytes when they changed and have settled; None otherwise."""
        stat = self._stat_of()
        if stat is None or (stat == self._stat and self._pending is None):
            return None
        self._stat = stat
        try:
            with open(self.path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        digest = hashlib.sha256(data).digest()
        if digest == self._applied:
            self._pending = None  # changed back, or only touched
            return None
        now = time.monotonic()
        if self._pending is None or self._pending[0] != digest:
            self._pending = (digest, now)  # maybe still being written: look again later
            return None
        if now - self._pending[1] < SETTLE_S:
            return None
        self._applied, self._pending = digest, None
        return data
