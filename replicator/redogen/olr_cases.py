"""Running one generated case with the reference OpenLogReplicator and with the replicator.

The pieces the reference check (:mod:`replicator.redogen.reference_check`) and the options
matrix (:mod:`replicator.redogen.options_check`) share: a :class:`Case` (workload or scenario,
version, block size, seed, byte order), its generation, a config variant with its own state and
output, OLR's run and log scan, ``replicator run`` in-process, and the first differing line.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Workloads at sizes that keep one case to seconds (their defaults make benchmarks).
WORKLOAD_PARAMS: dict[str, dict[str, Any]] = {
    "demo": {},
    "oltp": {"target_bytes": 1 << 20},
    "mixed": {},
    "huge-transaction": {"rows": 3000},
    # OLR gives each open transaction a 1 MB memory chunk: with the config's max-mb 256 it
    # waits for memory for ever past ~200 open at once, so the check keeps below that.
    "open-transactions": {"count": 150},
    "wide-rows": {"rows": 30},
    "big-values": {},
}
# OLR log lines that are expected on a first run and say nothing about the redo.
BENIGN = (re.compile(r"WARN\s+10003 file: .* - get metadata returned: No such file or directory"),)


@dataclass(frozen=True, slots=True)
class Case:
    """One generated test case: a workload name or scenario file, version, block size, seed."""

    source: str
    version: str = "19"
    block_size: int = 512
    seed: int | None = None
    online: bool = False
    params: tuple[tuple[str, Any], ...] = ()
    endian: str = "little"

    @property
    def name(self) -> str:
        """A unique, file-system-safe name."""
        base = (
            Path(self.source).stem
            if self.source.endswith((".yaml", ".yml", ".json"))
            else "sql-" + Path(self.source).name.split(".")[0]
            if self.source.endswith(".sql")
            else self.source
        )
        seed = "" if self.seed is None else f"-s{self.seed}"
        extra = "".join(f"-{k}{v}" for k, v in self.params)
        order = "-be" if self.endian == "big" else ""
        return f"{base}{'-online' if self.online else ''}-v{self.version}-b{self.block_size}{seed}{extra}{order}"


def load_scenario(path: Path):
    """A scenario file, or a SQL script compiled with its schema checkpoint (``../schema/<name>/``)."""
    from replicator.redogen.scenario import Scenario

    if path.suffix == ".sql":
        from replicator.redogen.sqlscript import load_sql

        schema = path.parent.parent / "schema" / path.name.split(".")[0]
        return load_sql(path, schema if schema.is_dir() else None)
    return Scenario.from_file(path)


def build_scenario(case: Case):
    """The :class:`Scenario` of ``case`` (as ``replicator redogen`` would build it)."""
    from replicator.redogen import workloads
    from replicator.redogen.demo import demo_scenario
    from replicator.redogen.scenario import Scenario

    params: dict[str, Any] = dict(WORKLOAD_PARAMS.get(case.source, {}))
    params.update(case.params)
    if case.source == "demo":
        return demo_scenario(case.version, case.block_size)
    if case.source in workloads.WORKLOADS:
        if case.seed is not None:
            params["seed"] = case.seed
        return workloads.WORKLOADS[case.source](version=case.version, block_size=case.block_size, **params)
    sc = load_scenario(Path(case.source)) if case.source.endswith(".sql") else Scenario.from_file(case.source)
    sc.version, sc.block_size = case.version, case.block_size
    for key, value in params.items():
        setattr(sc, key, value)
    if case.seed is not None:
        sc.seed = case.seed
    return sc


def generate_case(case: Case, out_dir: Path):
    """Write ``case`` into ``out_dir`` in its byte order; returns redogen's GenerationResult."""
    from replicator.redogen.byteorder import big_endian
    from replicator.redogen.generate import generate

    with big_endian(case.endian == "big"):
        sc = build_scenario(case)
        if case.online:
            from replicator.redogen.online import generate_online

            return generate_online(sc, out_dir, groups=3, rate_mb_s=0.0, final_switch=True)
        return generate(sc, out_dir)


def _variant(config: Path, state_src: Path, work: Path, label: str) -> tuple[Path, Path]:
    """A copy of ``config`` with its own state directory (a copy of ``state_src``) and output."""
    state = work / f"state-{label}"
    if state.exists():
        shutil.rmtree(state)
    shutil.copytree(state_src, state)
    cfg = json.loads(config.read_text())
    cfg["state"]["path"] = str(state)
    output = work / f"output-{label}.json"
    output.unlink(missing_ok=True)
    for target in cfg["target"]:
        target["writer"]["output"] = str(output)
    path = work / f"config-{label}.json"
    path.write_text(json.dumps(cfg))
    return path, output


def scan_log(text: str) -> tuple[list[str], list[str]]:
    """OLR's ERROR lines and its WARN lines (benign ones left out)."""
    errors, warnings = [], []
    for line in text.splitlines():
        if " ERROR " in line:
            errors.append(line)
        elif " WARN " in line and not any(p.search(line) for p in BENIGN):
            warnings.append(line)
    return errors, warnings


def run_olr(binary: Path, config: Path, cwd: Path, timeout: float = 300.0) -> tuple[str, float]:
    """``OpenLogReplicator -r -f config`` from ``cwd``; returns its log and wall time (a run
    that does not finish in ``timeout`` seconds is killed and its log gets an ERROR line)."""
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [str(binary), "-r", "-f", str(config)],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
            check=False,
        )
        text = proc.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as exc:
        text = (exc.stdout or b"").decode("utf-8", "replace") + f"\n- ERROR check: no exit after {timeout:.0f} s\n"
    return text, time.monotonic() - start


def run_ours(config: Path, cwd: Path) -> tuple[int, float]:
    """``replicator run -f config --progress off`` in-process from ``cwd``; exit code and wall time."""
    from replicator.cli import main

    old = os.getcwd()
    start = time.monotonic()
    try:
        os.chdir(cwd)
        rc = main(["run", "-f", str(config), "--progress", "off"])
    finally:
        os.chdir(old)
    return rc, time.monotonic() - start


def _first_difference(a: bytes, b: bytes) -> str:
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb, strict=False)):
        if x != y:
            return f"line {i + 1}: ours {x[:300]!r}\n    olr  {y[:300]!r}"
    return f"ours {len(la)} lines, olr {len(lb)} lines"
