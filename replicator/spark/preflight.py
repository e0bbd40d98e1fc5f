"""Before the Spark job starts: the ``spark`` extra is installed, and the Kafka brokers answer.

:func:`require_extra` comes first, before anything waits: without PySpark, pyarrow, pandas or
deltalake the command stops at once with ``pip install 'replicator[spark]'``, naming what is missing.

Without this, a job started before its brokers (or pointed at a wrong address) sits silent
in Spark's planning of the first batch and then fails with a long JVM stack trace. Here the
driver asks the brokers for metadata first: one log line when they do not answer, and on a
terminal a line that counts the wait; the job starts as soon as they answer.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import Any

from replicator import log
from replicator.errors import ConfigError
from replicator.ops.brokers import PROBE_TIMEOUT_S, brokers_answer
from replicator.ops.progress import format_duration
from replicator.ops.ticker import Ticker

# The modules of the spark extra (pyproject.toml) each command imports; msgspec is optional.
EXTRA_MODULES = {
    "run": ("pyspark", "pyarrow", "pandas", "deltalake"),
    "bench": ("pyspark", "pyarrow", "pandas", "deltalake"),
    "tables": ("pyarrow", "deltalake"),
    "compact": ("pyarrow", "deltalake"),
    "vacuum": ("pyarrow", "deltalake"),
}
INSTALL_HINT = "pip install 'replicator[spark]'"


def require_extra(command: str) -> None:
    """ConfigError 30002 naming the missing modules of the spark extra that ``command`` needs."""
    missing = [name for name in EXTRA_MODULES.get(command, ()) if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(
            f"replicator spark {command} needs the spark extra, and {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {INSTALL_HINT}",
            30002,
        )


def wait_for_brokers(
    bootstrap: str,
    properties: dict[str, str],
    progress: str = "auto",
    stop: threading.Event | None = None,
    probe_timeout: float = PROBE_TIMEOUT_S,
) -> bool:
    """Block until the brokers answer (True), or ``stop`` is set (False). Ctrl-C interrupts."""
    if brokers_answer(bootstrap, properties, probe_timeout):
        return True
    log.info(f"Kafka brokers {bootstrap} do not answer yet: waiting for them before starting Spark")
    stop = stop or threading.Event()
    state: dict[str, Any] = {"tries": 1}
    with Ticker(
        lambda elapsed: (
            f"waiting for the Kafka brokers {bootstrap} ... {format_duration(elapsed)} ({state['tries']} tries)"
        ),
        mode=progress,
    ):
        while not stop.is_set():
            if brokers_answer(bootstrap, properties, probe_timeout):
                log.info(f"Kafka brokers {bootstrap} answer: starting")
                return True
            state["tries"] += 1
            stop.wait(1.0)
    return False
