"""OLR-format log lines, log levels, time zones and warn-once."""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator

import pytest

from replicator import log


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    yield
    log.configure_logging(3, mock=True)
    log.set_trace(0)
    log.reset_once()


@pytest.fixture
def stream() -> io.StringIO:
    out = io.StringIO()
    log.configure_logging(3, stream=out, mock=True)
    log.reset_once()
    return out


def test_mock_format(stream: io.StringIO) -> None:
    log.error(10015, "caught signal: 2")
    log.warning(60027, "waiting")
    log.info("adding source: S1")
    log.debug("hidden at level 3")
    log.hint("check the grants")
    assert stream.getvalue().splitlines() == [
        "ERROR 10015 caught signal: 2",
        "WARN  60027 waiting",
        "INFO  00000 adding source: S1",
        "HINT  check the grants",
    ]


def test_timestamp_and_timezone() -> None:
    out = io.StringIO()
    log.configure_logging(4, stream=out, mock=False, log_timezone=3600)
    record = logging.LogRecord("replicator", logging.DEBUG, __file__, 1, "x", None, None)
    record.created = 0.0
    record.olr_code = 7
    assert log.logger.handlers[-1].format(record) == "1970-01-01 01:00:00 DEBUG 00007 x"
    log.set_log_timezone(-7200)
    assert log.logger.handlers[-1].format(record).startswith("1969-12-31 22:00:00 ")
    log.info("live")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d INFO  00000 live\n", out.getvalue())


@pytest.mark.parametrize(("level", "lines"), [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)])
def test_levels(stream: io.StringIO, level: int, lines: int) -> None:
    log.set_log_level(level)
    log.error(1, "e")
    log.warning(2, "w")
    log.info("i")
    log.debug("d")
    assert len(stream.getvalue().splitlines()) == lines


def test_child_logger_and_trace(stream: io.StringIO) -> None:
    logging.getLogger("replicator.redo").warning("plain", extra={"olr_code": 60023})
    log.set_trace(0x2000)
    log.trace(0x2000, "writer line")
    log.trace(0x1, "not enabled")
    log.set_trace(0)
    assert stream.getvalue().splitlines() == ["WARN  60023 plain", "TRACE WRITR writer line"]


def test_warn_once(stream: io.StringIO) -> None:
    assert log.warn_once(60040, "11.99", "unknown opcode 11.99")
    assert not log.warn_once(60040, "11.99", "unknown opcode 11.99")
    assert log.warn_once(60040, "5.99", "unknown opcode 5.99")
    assert stream.getvalue().count("60040") == 2


def test_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setenv("OLR_LOCALES", "MOCK")
    monkeypatch.setenv("OLR_LOG_TIMEZONE", "bogus")
    log.configure_logging(3, stream=out)
    assert out.getvalue() == "WARN  10070 invalid environment variable OLR_LOG_TIMEZONE value: bogus\n"
    monkeypatch.setenv("OLR_LOG_TIMEZONE", "+02:00")
    log.configure_logging(3, stream=out)
    assert log.logger.handlers[-1].formatter.tz_offset == 7200  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ("+00:00", 0),
        ("-05:30", -19800),
        ("+5:45", 20700),
        ("+14:00", 50400),
        ("UTC", 0),
        ("CET", 3600),
        ("EST", -18000),
        ("Etc/GMT-3", -10800),
        ("Etc/GMT+12", 43200),
        ("05:00", None),
        ("+5", None),
        ("+05-00", None),
        ("Europe/Paris", None),
        ("+0a:00", None),
    ],
)
def test_parse_timezone(text: str, offset: int | None) -> None:
    assert log.parse_timezone(text) == offset
