"""Logging in OpenLogReplicator's line format, on top of the stdlib :mod:`logging` module.

Every line goes to stderr as ``YYYY-MM-DD HH:MM:SS LEVEL CCCCC message`` where LEVEL is
``ERROR``, ``WARN ``, ``INFO `` or ``DEBUG`` (always five characters) and CCCCC the code
with leading zeros (``00000`` for plain information). ``HINT `` lines carry no code and
``TRACE`` lines carry a five-letter trace area instead. With ``OLR_LOCALES=MOCK`` the
timestamp and its separating space are dropped, which is what OLR's test-suite compares.

The timestamp is wall-clock UTC shifted by the *log time zone*: the host's local offset by
default, ``OLR_LOG_TIMEZONE`` (``±HH:MM`` or an alias) when set, and ``reader.log-timezone``
once the configuration has been read (:func:`set_log_timezone`).

Modules log through the ``replicator`` logger (or a ``replicator.*`` child) with
:func:`error`, :func:`warning`, :func:`info`, :func:`debug`; a code travels in the record as
``extra={"olr_code": N}`` so plain ``logging`` calls work too.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import TextIO

LOGGER_NAME = "replicator"
logger = logging.getLogger(LOGGER_NAME)

# OLR's log-level (0 silent .. 4 debug) -> stdlib threshold.
_LEVELS = {0: logging.CRITICAL + 100, 1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO, 4: logging.DEBUG}
# Trace lines are printed whatever the log level (OLR checks only the trace mask); they
# sit above ERROR so only "silent" hides them.
TRACE_LEVEL = logging.CRITICAL + 10
logging.addLevelName(TRACE_LEVEL, "TRACE")

# Trace mask bit -> the five-character area OLR prints (olr-interfaces.md §1.1 `trace`).
TRACE_AREAS: dict[int, str] = {
    0x1: "DML  ",
    0x2: "DUMP ",
    0x4: "LOB  ",
    0x8: "LWN  ",
    0x10: "THRD ",
    0x20: "SQL  ",
    0x40: "FILE ",
    0x80: "DISK ",
    0x100: "PERFM",
    0x200: "TRANX",
    0x400: "REDO ",
    0x800: "ARCHL",
    0x1000: "SCHEM",
    0x2000: "WRITR",
    0x4000: "CHKPT",
    0x8000: "SYSTM",
    0x10000: "LOBDT",
    0x20000: "SLEEP",
    0x40000: "CONDT",
    0x80000: "STRM ",
}

# Time zone names OpenLogReplicator accepts besides ±HH:MM. The Etc/GMT±N signs follow
# OLR, not POSIX (OLR maps "Etc/GMT-5" to -05:00); kept so one config means the same here.
_TZ_ALIASES: dict[str, str] = {
    "HST": "-10:00",
    "PST": "-08:00",
    "PST8PDT": "-08:00",
    "MST": "-07:00",
    "MST7MDT": "-07:00",
    "CST": "-06:00",
    "CST6CDT": "-06:00",
    "EST": "-05:00",
    "EST5EDT": "-05:00",
    "GMT": "+00:00",
    "Etc/GMT": "+00:00",
    "Greenwich": "+00:00",
    "Etc/Greenwich": "+00:00",
    "GMT0": "+00:00",
    "Etc/GMT0": "+00:00",
    "GMT+0": "+00:00",
    "Etc/GMT-0": "+00:00",
    "Etc/GMT+0": "+00:00",
    "UTC": "+00:00",
    "Etc/UTC": "+00:00",
    "UCT": "+00:00",
    "Etc/UCT": "+00:00",
    "Universal": "+00:00",
    "Etc/Universal": "+00:00",
    "WET": "+00:00",
    "MET": "+01:00",
    "CET": "+01:00",
    "EET": "+02:00",
    "PRC": "+08:00",
    "ROC": "+08:00",
}
_TZ_ALIASES.update({f"Etc/GMT-{n}": f"-{n:02d}:00" for n in range(1, 15)})
_TZ_ALIASES.update({f"Etc/GMT+{n}": f"+{n:02d}:00" for n in range(1, 13)})


def parse_timezone(text: str) -> int | None:
    """Return the offset in seconds east of UTC for ``±HH:MM``, ``±H:MM`` or an alias.

    Returns None when the text is not a time zone OpenLogReplicator accepts.
    """
    text = _TZ_ALIASES.get(text, text)
    if len(text) not in (5, 6) or text[0] not in "+-":
        return None
    hours, sep, minutes = text[1:].partition(":")
    if sep != ":" or len(minutes) != 2 or not (hours + minutes).isdigit() or not (hours + minutes).isascii():
        return None
    seconds = int(hours) * 3600 + int(minutes) * 60
    return -seconds if text[0] == "-" else seconds


def _local_offset() -> int:
    return int(time.localtime().tm_gmtoff)


class OlrFormatter(logging.Formatter):
    """Formats records as OpenLogReplicator log lines (see the module docstring)."""

    def __init__(self, *, mock: bool = False, tz_offset: int | None = None) -> None:
        super().__init__()
        self.mock = mock
        self.tz_offset = _local_offset() if tz_offset is None else tz_offset

    def format(self, record: logging.LogRecord) -> str:
        """Render one record; exceptions are appended so nothing is lost."""
        message = record.getMessage()
        if getattr(record, "olr_hint", False):
            head = "HINT "
        elif record.levelno == TRACE_LEVEL:
            head = "TRACE " + getattr(record, "olr_trace", "     ")
        else:
            head = f"{_label(record.levelno)} {int(getattr(record, 'olr_code', 0)):05d}"
        line = f"{head} {message}"
        if not self.mock:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(record.created) + self.tz_offset))
            line = f"{stamp} {line}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def _label(levelno: int) -> str:
    if levelno >= logging.ERROR:
        return "ERROR"
    if levelno >= logging.WARNING:
        return "WARN "
    if levelno >= logging.INFO:
        return "INFO "
    return "DEBUG"


_handler: logging.Handler | None = None
_trace_mask = 0
_once: set[tuple[int, str]] = set()
_once_lock = threading.Lock()


def configure_logging(
    level: int = 3, *, stream: TextIO | None = None, mock: bool | None = None, log_timezone: int | None = None
) -> None:
    """Install the OLR-format stderr handler on the ``replicator`` logger.

    ``mock`` defaults to ``OLR_LOCALES == "MOCK"``; ``log_timezone`` (seconds east of UTC)
    defaults to ``OLR_LOG_TIMEZONE`` or the host's offset. An unparsable
    ``OLR_LOG_TIMEZONE`` logs WARN 10070 and keeps the host offset. Calling it again
    replaces the previous handler, so tests can redirect ``stream``.
    """
    global _handler
    if mock is None:
        mock = os.environ.get("OLR_LOCALES", "") == "MOCK"
    bad_env = None
    if log_timezone is None:
        env = os.environ.get("OLR_LOG_TIMEZONE")
        if env is not None:
            log_timezone = parse_timezone(env)
            if log_timezone is None:
                bad_env = env
    if _handler is not None:
        logger.removeHandler(_handler)
    _handler = logging.StreamHandler(sys.stderr if stream is None else stream)
    _handler.setFormatter(OlrFormatter(mock=mock, tz_offset=log_timezone))
    logger.addHandler(_handler)
    logger.propagate = False  # our lines must not be duplicated by a root handler
    set_log_level(level)
    if bad_env is not None:
        warning(10070, f"invalid environment variable OLR_LOG_TIMEZONE value: {bad_env}")


def set_log_level(level: int) -> None:
    """Apply OLR's ``log-level`` (0 silent, 1 error, 2 warning, 3 info, 4 debug)."""
    logger.setLevel(_LEVELS[max(0, min(4, level))])


def set_log_timezone(offset_seconds: int) -> None:
    """Use this offset for timestamps (``reader.log-timezone`` overrides the environment)."""
    if _handler is not None and isinstance(_handler.formatter, OlrFormatter):
        _handler.formatter.tz_offset = offset_seconds


def set_trace(mask: int) -> None:
    """Set the ``trace`` bitmask that :func:`trace` consults."""
    global _trace_mask
    _trace_mask = mask


def trace_enabled(mask: int) -> bool:
    """True when any bit of ``mask`` is set in the configured ``trace`` value."""
    return bool(_trace_mask & mask)


def error(code: int, message: str) -> None:
    """Log ``ERROR CCCCC message``."""
    logger.error(message, extra={"olr_code": code})


def warning(code: int, message: str) -> None:
    """Log ``WARN  CCCCC message``."""
    logger.warning(message, extra={"olr_code": code})


def info(message: str, code: int = 0) -> None:
    """Log ``INFO  CCCCC message`` (code 0 for plain information)."""
    logger.info(message, extra={"olr_code": code})


def debug(message: str, code: int = 0) -> None:
    """Log ``DEBUG CCCCC message``."""
    logger.debug(message, extra={"olr_code": code})


def hint(message: str) -> None:
    """Log a ``HINT`` line: no code, shown whenever errors are shown."""
    logger.error(message, extra={"olr_hint": True})


def trace(mask: int, message: str) -> None:
    """Log a ``TRACE AREA message`` line when ``mask`` is enabled by the ``trace`` option."""
    if _trace_mask & mask:
        logger.log(TRACE_LEVEL, message, extra={"olr_trace": TRACE_AREAS.get(mask, "     ")})


def warn_once(code: int, key: str, message: str) -> bool:
    """Log a warning only the first time this (code, key) pair is seen; True if logged.

    Used for "logged once" warnings such as unknown opcodes or a too small rotation size.
    """
    with _once_lock:
        if (code, key) in _once:
            return False
        _once.add((code, key))
    warning(code, message)
    return True


def reset_once() -> None:
    """Forget which warnings were logged once (for tests and config reloads)."""
    with _once_lock:
        _once.clear()
