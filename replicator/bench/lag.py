"""Tailing lag benchmark: commit written to an online log -> its message in the output file.

Runs redogen's online mode (a live ring of online groups at a given MB/s) in a thread,
the daemon in a subprocess tailing it, and a watcher tailing the daemon's output file.
The generator reports when each LWN is on disk; the watcher when each commit message
(``e_scn`` = commit SCN, from ``scn-type`` bit 8) appears. Prints p50/p99/max lag and
the throughput while tailing. Run: ``python -m replicator.bench.lag [--size MB] [--rate MB/s]``.
"""

from __future__ import annotations

import argparse
import bisect
import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from replicator.redogen import workloads
from replicator.redogen.online import generate_online


def _watch_output(path: Path, seen: dict[int, float], stop: threading.Event) -> None:
    """Record when each commit message (by commit SCN) reaches the output file."""
    pos = 0
    tail = b""
    while not stop.is_set():
        try:
            with open(path, "rb") as f:
                f.seek(pos)
                data = f.read()
        except FileNotFoundError:
            data = b""
        now = time.monotonic()
        if data:
            pos += len(data)
            lines = (tail + data).split(b"\n")
            tail = lines.pop()
            for line in lines:
                if b'"op":"commit"' in line:
                    m = json.loads(line)
                    scn = m["e_scn"] if "e_scn" in m else int(m["e_scns"], 16)
                    seen.setdefault(scn, now)
        else:
            time.sleep(0.002)


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0..100) of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    ap = argparse.ArgumentParser(prog="python -m replicator.bench.lag")
    ap.add_argument("--size", type=float, default=20, help="MB of redo to generate (default 20)")
    ap.add_argument("--rate", type=float, default=2.0, help="redo generation rate in MB/s (default 2)")
    ap.add_argument("--dir", default=None, help="work directory (default: a temp dir)")
    args = ap.parse_args(argv)
    out = Path(args.dir or tempfile.mkdtemp(prefix="replicator-lag-"))
    sc = workloads.oltp(seed=5, target_bytes=int(args.size * (1 << 20)))
    sc.format = dict(sc.format, **{"scn-type": 8})  # e_scn: the commit SCN in begin/commit messages
    lwn_times: list[tuple[int, float]] = []  # (last SCN of the LWN, when it was on disk)
    ready = threading.Event()
    gen_thread = threading.Thread(
        target=lambda: generate_online(
            sc,
            out,
            groups=3,
            rate_mb_s=args.rate,
            ready=ready,
            with_expected=False,
            on_lwn_written=lambda first, last: lwn_times.append((last, time.monotonic())),
        ),
        daemon=True,
    )
    gen_thread.start()
    ready.wait()
    cfg = out / "OpenLogReplicator.json"
    doc = json.loads(cfg.read_text())
    doc["source"][0]["redo-read-sleep-us"] = 5000
    doc["target"][0]["writer"]["poll-interval-us"] = 5000
    cfg.write_text(json.dumps(doc))
    seen: dict[int, float] = {}
    stop = threading.Event()
    watcher = threading.Thread(target=_watch_output, args=(out / "output.json", seen, stop), daemon=True)
    watcher.start()
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "replicator", "run", "-f", str(cfg)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    gen_thread.join()
    generated_at = time.monotonic()
    last_scn = lwn_times[-1][0] if lwn_times else 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not seen or max(seen) < last_scn - 5):
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    stop.set()
    watcher.join()
    scns = [scn for scn, _ in lwn_times]
    lags = []
    for commit_scn, shown in seen.items():
        i = bisect.bisect_left(scns, commit_scn)
        if i < len(lwn_times):
            lags.append(shown - lwn_times[i][1])
    if not lags:
        print("no commit was observed in the output")
        return 1
    elapsed = max(seen.values()) - t0
    print(f"redo generated    {args.size:.0f} MB at {args.rate} MB/s in {generated_at - t0:.1f} s")
    print(f"commits measured  {len(lags)}")
    print(f"lag p50           {percentile(lags, 50) * 1000:.0f} ms")
    print(f"lag p99           {percentile(lags, 99) * 1000:.0f} ms")
    print(f"lag max           {max(lags) * 1000:.0f} ms")
    print(f"tailing rate      {args.size / elapsed:.1f} MB/s of redo, {len(seen) / elapsed:.0f} txn/s")
    print(f"work directory    {out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
