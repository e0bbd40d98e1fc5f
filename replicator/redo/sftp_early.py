"""Start a run's SFTP reader processes before the replicator's own start-up.

A reader process costs some 0.3 s of imports and an SSH login before it delivers; the
replicator's start (config models, parser, dictionary, checkpoint) costs as much again.
:func:`prestart` reads only the config file's JSON, and when its first source's
``reader.redo-source`` is sftp it starts the reader processes at once, so the two starts
overlap. The source built later from the validated config adopts them
(:func:`adopt`) when its settings are the same; otherwise, and when the run never gets
that far (a config error), :func:`discard` ends them. A process also ends by itself when
the replicator is gone (its stdin closes), even after a SIGKILL.
"""

from __future__ import annotations

import atexit
import json
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from replicator.redo.sftp_pool import ReaderPool
    from replicator.redo.sftp_settings import SftpSettings

_lock = threading.Lock()
_early: list[tuple[dict[str, Any], ReaderPool]] = []


def prestart(config_path: str | None) -> bool:
    """Start the reader processes of ``config_path``'s sftp source, if it has one; never raises.

    Returns True when processes were started. A config that cannot be read or is not plainly
    an sftp source starts nothing: the normal start-up then reports what is wrong.
    """
    if not config_path:
        return False
    try:
        with open(config_path, "rb") as f:
            data = json.loads(f.read())
        section = data["source"][0]["reader"]["redo-source"]
        if section.get("type") != "sftp":
            return False  # a local run does not import the settings module (start-up time)
        from replicator.redo.sftp_settings import settings_from_raw

        settings = settings_from_raw(section)
    except Exception:  # noqa: BLE001 - any problem is the validating load's to report
        return False
    if settings is None or settings.connections <= 0:
        return False
    # Imported here: a local run does not import it.
    from replicator.redo.sftp_pool import ReaderPool

    label = f"sftp://{settings.user}@{settings.host}:{settings.port}"
    pool = ReaderPool(settings.to_json(), settings.connections, label)
    try:
        pool.prestart()
    except Exception:  # noqa: BLE001 - the source starts its own processes later and reports it
        pool.close()
        return False
    with _lock:
        _early.append((settings.to_json(), pool))
    return True


def adopt(settings: SftpSettings) -> ReaderPool | None:
    """The early-started processes for exactly these settings (taken: adopted once), else None."""
    want = settings.to_json()
    with _lock:
        for i, (have, pool) in enumerate(_early):
            if have == want:
                del _early[i]
                return pool
    return None


def discard() -> None:
    """End the early-started processes nobody adopted."""
    with _lock:
        pools = [pool for _, pool in _early]
        _early.clear()
    for pool in pools:
        pool.close()


atexit.register(discard)
