"""The progress line (TTY only), its log-line manners, and the read-rate pacer."""

from __future__ import annotations

import io

import pytest

from replicator import log
from replicator.ops.progress import Pacer, Progress, format_duration, progress_wanted


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The line is cut to the terminal's width: make it wide whatever runs the tests (xdist workers too)."""
    monkeypatch.setenv("COLUMNS", "200")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_shown_only_on_a_terminal_unless_forced() -> None:
    assert progress_wanted("auto", Tty()) and not progress_wanted("auto", io.StringIO())
    assert progress_wanted("on", io.StringIO()) and not progress_wanted("off", Tty())


def test_line_has_files_mb_scn_rate_and_eta() -> None:
    clock = Clock()
    out = Tty()
    p = Progress(4, 40_000_000, out, clock=clock, log_name=None)
    clock.now = 10.0
    p.update(1, 10_000_000, 2267707, 5000)
    line = p.last_line
    assert "1/4 files" in line and "10.0/40.0 MB" in line and "SCN 2267707" in line
    assert "500 rows/s" in line and "1.0 MB/s" in line and "ETA 0:00:30" in line
    assert line.startswith("[#####...............]")


def test_updates_are_throttled_and_finish_ends_the_line() -> None:
    clock = Clock()
    out = Tty()
    p = Progress(1, 100, out, clock=clock, interval=1.0, log_name=None)
    p.update(0, 10, 1, 0)
    p.update(0, 20, 2, 0)  # within the interval: not drawn
    assert out.getvalue().count("\r") == 1
    clock.now = 2.0
    p.finish(1, 100, 3, 0)
    assert out.getvalue().endswith("\n") and "SCN 3" in out.getvalue()


def test_a_log_line_erases_the_progress_line_first() -> None:
    out = Tty()
    log.configure_logging(stream=out, mock=True)
    p = Progress(1, 100, out, clock=Clock())
    p.update(0, 50, 7, 0)
    log.info("hello")
    p.finish(1, 100, 8, 0)
    text = out.getvalue()
    erased = text.index("\r" + " " * len(p.render(0, 50, 7, 0, 0.0)) + "\r")
    assert erased < text.index("INFO  00000 hello")
    log.configure_logging()


def test_durations() -> None:
    assert format_duration(3725) == "1:02:05" and format_duration(float("nan")) == "--:--:--"


def test_pacer_holds_the_average_rate() -> None:
    clock = Clock()
    pacer = Pacer(2.0, clock=clock, sleep=clock.sleep, max_sleep=0.25)
    pacer.pace(1_000_000)
    assert clock.now == pytest.approx(0.5)
    pacer.pace(1_000_000)  # already on schedule: no sleep
    assert clock.now == pytest.approx(0.5)
    pacer.pace(4_000_000)
    assert clock.now == pytest.approx(2.0)
    with pytest.raises(ValueError):
        Pacer(0)
