"""The daemon's whole run against the batch run, on the same files and writer.

Takes a ``replicator redogen`` output directory (its ``OpenLogReplicator.json``, schema
checkpoint and archived logs), and runs ``replicator run`` on it in turn as a batch run
(``reader.type: batch``, the file list) and as the daemon (``reader.type: offline``, the
archives found through the checkpoint, ``debug.stop-log-switches`` = the number of logs so
it stops after the last one), each time with a fresh state directory and output file.
Prints wall and CPU seconds per run and their medians, and whether the outputs are
identical. Figures only, nothing asserted. Run:
``python -m replicator.bench.modes DIR [--runs 3]`` (e.g. DIR from
``replicator redogen oltp --seed 5 --size 100MB -o DIR --progress off``).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("batch", "daemon")


def _configs(src: Path, work: Path) -> dict[str, Path]:
    """The two configs and a pristine schema checkpoint (the daemon's names the archives)."""
    doc = json.loads((src / "OpenLogReplicator.json").read_text())
    files = doc["source"][0]["reader"]["redo-log"]
    source = doc["source"][0]
    name = f"{source['name']}-chkpt-{source['reader']['start-scn']}.json"  # the run's start checkpoint
    cp = json.loads((Path(doc["state"]["path"]) / name).read_text())
    cp["log-archive-dest"] = str(Path(files[0]).parent)
    (work / "pristine").mkdir(parents=True, exist_ok=True)
    (work / "pristine" / name).write_text(json.dumps(cp))
    paths = {}
    for mode in MODES:
        d = json.loads(json.dumps(doc))
        d["state"]["path"] = str(work / f"state-{mode}")
        d["target"][0]["writer"]["output"] = str(work / f"output-{mode}.json")
        if mode == "daemon":
            reader = d["source"][0]["reader"]
            reader["type"] = "offline"
            del reader["redo-log"]
            d["source"][0]["debug"] = {"stop-log-switches": len(files)}
        paths[mode] = work / f"{mode}.json"
        paths[mode].write_text(json.dumps(d))
    return paths


def _run(mode: str, config: Path, work: Path) -> tuple[float, float]:
    """One run from a fresh state: (wall seconds, CPU seconds)."""
    state = work / f"state-{mode}"
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(work / "pristine", state)
    (work / f"output-{mode}.json").unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(config)], capture_output=True, text=True
    )
    wall = time.monotonic() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(f"{mode} run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main(argv: list[str] | None = None) -> int:
    """Run both modes ``--runs`` times, alternating which goes first, and print the figures."""
    ap = argparse.ArgumentParser(prog="python -m replicator.bench.modes")
    ap.add_argument("dir", help="a replicator redogen output directory")
    ap.add_argument("--runs", type=int, default=3, help="runs of each mode (default 3)")
    ap.add_argument("--work", default=None, help="work directory (default: a temp dir)")
    args = ap.parse_args(argv)
    work = Path(args.work or tempfile.mkdtemp(prefix="replicator-modes-"))
    configs = _configs(Path(args.dir).resolve(), work)
    walls: dict[str, list[float]] = {m: [] for m in MODES}
    cpus: dict[str, list[float]] = {m: [] for m in MODES}
    for i in range(args.runs):
        for mode in MODES if i % 2 == 0 else tuple(reversed(MODES)):
            wall, cpu = _run(mode, configs[mode], work)
            walls[mode].append(wall)
            cpus[mode].append(cpu)
    for mode in MODES:
        print(
            f"{mode:7s} wall {' '.join(f'{w:.2f}' for w in walls[mode])}  median {statistics.median(walls[mode]):.2f} s"
            f" | CPU {' '.join(f'{c:.2f}' for c in cpus[mode])}  median {statistics.median(cpus[mode]):.2f} s"
        )
    ratio = statistics.median(walls["daemon"]) / statistics.median(walls["batch"])
    print(f"daemon / batch wall  {ratio:.2f}")
    same = (work / "output-batch.json").read_bytes() == (work / "output-daemon.json").read_bytes()
    print(f"outputs identical    {same}")
    print(f"work directory       {work}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
