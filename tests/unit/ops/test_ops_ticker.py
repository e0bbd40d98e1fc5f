"""Progress for long silent steps: the ticker line (TTY only unless asked), redogen, metrics linger, Kafka wait."""

from __future__ import annotations

import io
import json
import logging
import socket
import threading
import time
from pathlib import Path

import pytest

from replicator.cli import main
from replicator.ops.ticker import Ticker, elapsed_text


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _until(predicate, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def test_ticker_redraws_on_a_terminal_and_erases_at_the_end() -> None:
    out = Tty()
    with Ticker(elapsed_text("generating"), stream=out, interval=0.01):
        assert _until(lambda: out.getvalue().count("generating ... 0:00:0") >= 2)
    text = out.getvalue()
    assert text.startswith("\rgenerating ... ") and text.endswith("\r")  # erased: the next line starts clean


def test_ticker_is_silent_off_a_terminal_unless_asked() -> None:
    quiet, forced = io.StringIO(), io.StringIO()
    with (
        Ticker(elapsed_text("x"), stream=quiet, interval=0.01),
        Ticker(elapsed_text("y"), stream=forced, interval=0.01, mode="on"),
    ):
        assert _until(lambda: "y ..." in forced.getvalue())
    assert quiet.getvalue() == ""
    with Ticker(elapsed_text("z"), stream=Tty(), interval=0.01, mode="off") as off:
        assert not off.enabled


def test_a_failing_text_never_breaks_the_work() -> None:
    out = Tty()
    with Ticker(lambda _: 1 / 0, stream=out, interval=0.01):  # type: ignore[arg-type, return-value]
        time.sleep(0.05)
    assert "Traceback" not in out.getvalue()


def test_redogen_progress_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Redraws every 10 ms: a generation faster than the usual 0.5 s still shows a line.
    monkeypatch.setattr("replicator.ops.ticker.INTERVAL", 0.01)
    assert main(["redogen", "oltp", "-o", str(tmp_path / "a"), "--size", "256k", "--no-expected"]) == 0
    assert "writing redo" not in capsys.readouterr().err  # stderr is not a terminal here
    assert (
        main(["redogen", "oltp", "-o", str(tmp_path / "b"), "--size", "3MB", "--no-expected", "--progress", "on"]) == 0
    )
    assert "writing redo: " in capsys.readouterr().err


def test_metrics_linger_says_it_lingers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["redogen", "demo", "-o", str(tmp_path)]) == 0
    cfg = json.loads((tmp_path / "OpenLogReplicator.json").read_text())
    cfg["metrics"] = {"type": "prometheus", "bind": "127.0.0.1:0"}
    (tmp_path / "OpenLogReplicator.json").write_text(json.dumps(cfg))
    (tmp_path / "output.json").unlink(missing_ok=True)
    assert main(["run", "-f", str(tmp_path / "OpenLogReplicator.json"), "--metrics-linger", "0.1"]) == 0
    err = capsys.readouterr().err  # main() logs to stderr
    assert "serving /metrics on 127.0.0.1:" in err and "--metrics-linger" in err


def test_spark_waits_for_unreachable_brokers_and_says_so(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("confluent_kafka")
    import replicator.spark.preflight as preflight
    from replicator import log

    monkeypatch.setattr(log.logger, "propagate", True)  # main() in other tests may have turned it off
    caplog.set_level(logging.INFO, logger="replicator")

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    assert not preflight.brokers_answer(address, {}, timeout=0.5)
    out = Tty()
    monkeypatch.setattr(preflight, "Ticker", lambda text, mode: Ticker(text, mode=mode, stream=out, interval=0.05))
    stop = threading.Event()
    timer = threading.Timer(1.5, stop.set)
    timer.start()
    try:
        assert preflight.wait_for_brokers(address, {}, "auto", stop, probe_timeout=0.2) is False
    finally:
        timer.cancel()
    assert f"Kafka brokers {address} do not answer yet" in caplog.text
    assert f"waiting for the Kafka brokers {address} ... 0:00:0" in out.getvalue()
