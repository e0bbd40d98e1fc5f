"""Development check: the reference OpenLogReplicator and this project read the same generated redo.

For each case of a matrix (every reference scenario and workload × database version × redo block
size, plus seeded ``mixed`` and ``oltp`` runs) redogen writes a test case; the reference binary
(``OpenLogReplicator -r -f CONFIG`` from the case directory) and ``replicator run`` then each read
it with the same config, each from its own copy of the checkpoint directory, and their outputs are
compared byte for byte. OLR's log is scanned for ``ERROR`` and ``WARN`` lines (it exits 0 even after
``ERROR ... aborting``).

Not part of CI: it needs the reference binary (built from OpenLogReplicator's source, see the
shared reference-olr notes). Run::

    REPLICATOR_OLR_BINARY=/path/to/OpenLogReplicator python -m replicator.redogen.reference_check

which prints one line per case that is not identical and the counts (cases, identical, differing,
OLR errors). ``--only REGEX`` picks cases by name, ``--quick`` one version/block size per source,
``--endian big`` (or ``both``) writes the redo as a big-endian platform (AIX, SPARC) does: OLR
reads either order, so each case checks the generator's and the parser's big-endian paths.
``--rac-single`` adds the RAC scenarios run on one redo thread (the reference OLR does not merge
threads).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from replicator.redogen.generate import GenerationResult
from replicator.redogen.olr_cases import (  # noqa: F401  (re-exported: the check's names)
    BENIGN,
    WORKLOAD_PARAMS,
    Case,
    _first_difference,
    _variant,
    build_scenario,
    generate_case,
    load_scenario,
    run_olr,
    run_ours,
    scan_log,
)

ENV_BINARY = "REPLICATOR_OLR_BINARY"
VERSIONS = ("11.2", "12.1", "12.2", "18", "19", "21", "23")
BLOCK_SIZES = (512, 1024, 4096)
ENDIANS = ("little", "big")
SEEDS = 20
# Sources that exist only on some versions (BOOLEAN columns need 23; redogen refuses others).
# Multitenant scenarios need CON_ID in the change vectors (12.1+).
ONLY_VERSIONS: dict[str, tuple[str, ...]] = {
    "boolean-type": ("23",),
    "multitenant-pdbs": VERSIONS[1:],
    "multitenant-ddl": VERSIONS[1:],
}
# The reference scenarios (rebuilt from OLR's real outputs) and extra ones written for this check.
SCENARIO_DIRS = tuple(
    Path(__file__).resolve().parents[2] / "tests" / "scenarios" / d for d in ("reference", "olr-check")
)
# The SQL scripts behind OLR's real outputs (the shared folder beside the repository), compiled by
# redogen.sqlscript with their schema checkpoints (``../schema/<name>/``): cases named ``sql-<name>``.
SQL_DIRS = (Path(__file__).resolve().parents[3] / "shared" / "reference" / "olr-real-outputs" / "sql",)


@dataclass(slots=True)
class CaseResult:
    """What one case showed."""

    case: Case
    identical: bool = False
    olr_errors: list[str] = field(default_factory=list)
    olr_warnings: list[str] = field(default_factory=list)
    detail: str = ""
    gen_seconds: float = 0.0
    olr_seconds: float = 0.0
    our_seconds: float = 0.0
    ours_vs_expected: bool | None = None

    @property
    def ok(self) -> bool:
        """Identical outputs and no ERROR or unexpected WARN in OLR's log."""
        return self.identical and not self.olr_errors and not self.olr_warnings


def scenario_files(directories: Iterable[Path] = SCENARIO_DIRS) -> list[Path]:
    """The scenario files of the check (sorted per folder)."""
    return [p for d in directories if d.is_dir() for p in sorted(d.glob("*.yaml"))]


def sql_files(directories: Iterable[Path] = SQL_DIRS) -> list[Path]:
    """The SQL scripts the compiler accepts (a refused one is named on stderr and left out)."""
    from replicator.errors import ReplicatorError

    out = []
    for p in (p for d in directories if d.is_dir() for p in sorted(d.glob("*.sql"))):
        try:
            load_scenario(p)
        except ReplicatorError as exc:
            print(f"not compiled: {p.name}: ERROR {exc.code:05d} {exc.message}", file=sys.stderr)
            continue
        out.append(p)
    return out


def single_thread(path: Path) -> bool:
    """False for a RAC scenario (``threads:`` above 1): the reference OLR 1.9 does not merge
    redo threads (on the RAC scenarios it wrote transactions out of commit order, or none when
    only thread 2 had any), so they are not compared here (docs/rac.md: the RAC reference
    outputs come from a fork)."""
    return load_scenario(path).threads <= 1


def matrix(
    *,
    quick: bool = False,
    seeds: int = SEEDS,
    scenario_dirs: Iterable[Path] = SCENARIO_DIRS,
    endians: Iterable[str] = ("little",),
    sql_dirs: Iterable[Path] = SQL_DIRS,
    rac_single: bool = False,
) -> list[Case]:
    """Every single-thread scenario, SQL script and workload × version × block size, then seeded
    mixed/oltp runs (seed i on version i mod 7 and block size i mod 3) and online mixed/oltp runs;
    the whole list once per byte order of ``endians``. ``rac_single`` adds the RAC scenarios run
    on one redo thread (``-threads1`` cases): what their statements write is compared, not the
    merge of threads."""
    base = _matrix(quick, seeds, scenario_dirs, sql_dirs)
    if rac_single:
        combos = [("19", 512)] if quick else [(v, b) for v in VERSIONS for b in BLOCK_SIZES]
        base += [
            Case(str(p), v, b, params=(("threads", 1),))
            for p in [*scenario_files(scenario_dirs), *sql_files(sql_dirs)]
            if not single_thread(p)
            for v, b in combos
        ]
    return [replace(c, endian=e) for e in endians for c in base]


def _matrix(quick: bool, seeds: int, scenario_dirs: Iterable[Path], sql_dirs: Iterable[Path] = ()) -> list[Case]:
    sources = [str(p) for p in [*scenario_files(scenario_dirs), *sql_files(sql_dirs)] if single_thread(p)] + list(
        WORKLOAD_PARAMS
    )
    combos = [("19", 512)] if quick else [(v, b) for v in VERSIONS for b in BLOCK_SIZES]
    cases = [Case(src, v, b) for src in sources for v, b in combos if v in ONLY_VERSIONS.get(Path(src).stem, (v,))]
    if quick:  # keep version-bound sources in the quick run
        cases += [
            Case(src, ONLY_VERSIONS[Path(src).stem][0], 512)
            for src in sources
            if "19" not in ONLY_VERSIONS.get(Path(src).stem, ("19",))
        ]
    for workload in ("mixed", "oltp"):
        for i in range(1, (3 if quick else seeds) + 1):
            cases.append(Case(workload, VERSIONS[i % len(VERSIONS)], BLOCK_SIZES[i % len(BLOCK_SIZES)], seed=i))
        for i in range(1, 3):
            cases.append(
                Case(workload, VERSIONS[(i * 3) % len(VERSIONS)], BLOCK_SIZES[i % 3], seed=100 + i, online=True)
            )
    return cases


def compare_case(
    case_dir: Path,
    config: Path,
    state: Path,
    binary: Path,
    result: CaseResult,
    expected: Path | None = None,
    container: str = "",
) -> CaseResult:
    """Run OLR and the replicator on a generated case and fill ``result``. ``container``: one
    container's run of a multitenant case (its own state, outputs and log); the result then
    adds to what the case's earlier containers showed."""
    suffix = f"-{container}" if container else ""
    olr_cfg, olr_out = _variant(config, state, case_dir, "olr" + suffix)
    our_cfg, our_out = _variant(config, state, case_dir, "ours" + suffix)
    log, seconds = run_olr(binary, olr_cfg, case_dir)
    result.olr_seconds += seconds
    (case_dir / f"olr{suffix}.log").write_text(log)
    errors, warnings = scan_log(log)
    result.olr_errors += errors
    result.olr_warnings += warnings
    rc, seconds = run_ours(our_cfg, case_dir)
    result.our_seconds += seconds
    ours = our_out.read_bytes() if our_out.exists() else b""
    theirs = olr_out.read_bytes() if olr_out.exists() else b""
    identical = rc == 0 and ours == theirs
    # a container's run adds to the earlier ones' (the caller starts the case as identical)
    result.identical = result.identical and identical if container else identical
    if expected is not None and expected.exists():
        matches = ours == expected.read_bytes()
        result.ours_vs_expected = matches if result.ours_vs_expected is None else result.ours_vs_expected and matches
    where = f"{container}: " if container else ""
    if rc != 0:
        result.detail = result.detail or f"{where}replicator run exited {rc}"
    elif ours != theirs:
        result.detail = result.detail or where + _first_difference(ours, theirs)
    return result


def _all_containers(case_dir: Path, gen: GenerationResult, result: CaseResult) -> None:
    """Multitenant: ours reads every container in one run (``source.containers``); its output
    must be ``expected-all.json`` (OLR 1.9 has no such run to compare)."""
    states = {}
    for c in gen.containers:
        states[c.name] = case_dir / f"state-ours-all-{c.name}"
        shutil.rmtree(states[c.name], ignore_errors=True)
        shutil.copytree(c.checkpoint.parent, states[c.name])
    cfg = gen.all_containers_config(states)
    output = case_dir / "output-ours-all.json"
    output.unlink(missing_ok=True)
    cfg["target"][0]["writer"]["output"] = str(output)
    path = case_dir / "config-ours-all.json"
    path.write_text(json.dumps(cfg))
    rc, seconds = run_ours(path, case_dir)
    result.our_seconds += seconds
    expected = case_dir / "expected-all.json"
    matches = rc == 0 and output.exists() and output.read_bytes() == expected.read_bytes()
    result.ours_vs_expected = matches if result.ours_vs_expected is None else result.ours_vs_expected and matches
    if not matches:
        result.detail = result.detail or f"all containers in one run: exit {rc}, output is not expected-all.json"


def _batch_config(config: Path, logs: list[Path]) -> Path:
    """An online ring's (offline-reader) config turned into a batch one over its archived logs:
    both programs' offline readers wait for the next log forever, a batch reader stops."""
    cfg = json.loads(config.read_text())
    reader = cfg["source"][0]["reader"]
    reader["type"] = "batch"
    reader["redo-log"] = [str(p) for p in logs]
    path = config.with_name("batch.json")
    path.write_text(json.dumps(cfg))
    return path


def run_case(case: Case, work: Path, binary: Path, keep: bool = False) -> CaseResult:
    """Generate ``case`` under ``work``, compare both programs; the directory is removed when the
    case is clean (unless ``keep``)."""
    case_dir = work / case.name
    if case_dir.exists():
        shutil.rmtree(case_dir)
    result = CaseResult(case)
    try:
        start = time.monotonic()
        gen = generate_case(case, case_dir)
        result.gen_seconds = time.monotonic() - start
        config = gen.config
        if case.online:
            config = _batch_config(gen.config, [log.path for log in gen.logs])
        if gen.containers:  # multitenant: OLR 1.9 reads one container per run
            result.identical = True
            for c in gen.containers:
                compare_case(case_dir, c.config, c.checkpoint.parent, binary, result, c.expected, c.name)
            _all_containers(case_dir, gen, result)
        else:
            compare_case(case_dir, config, gen.checkpoint.parent, binary, result, gen.expected)
    except Exception as exc:  # a generator or runner failure is a result too
        result.detail = f"{type(exc).__name__}: {exc}"
    if result.ok and not keep:
        shutil.rmtree(case_dir, ignore_errors=True)
    return result


def _worker(args: tuple[Case, Path, Path, bool]) -> CaseResult:
    import logging

    logging.disable(logging.CRITICAL)  # our run's log lines would drown the report
    return run_case(*args)


def run_matrix(
    cases: Iterable[Case], work: Path, binary: Path, jobs: int = 1, keep: bool = False, report=None
) -> list[CaseResult]:
    """Run every case (``jobs`` processes); ``report`` is called with each result as it comes."""
    todo = [(c, work, binary, keep) for c in cases]
    results: list[CaseResult] = []
    if jobs <= 1:
        for item in todo:
            results.append(_worker(item))
            if report:
                report(results[-1])
        return results
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=20) as pool:
        for res in pool.imap_unordered(_worker, todo):
            results.append(res)
            if report:
                report(res)
    return results


def summary(results: list[CaseResult]) -> dict[str, int]:
    """Counts: cases, identical, differing, cases with an OLR ERROR, with a WARN, all clean, and
    cases where our output is not redogen's expected.json (which does not depend on the byte
    order, so 0 there means big- and little-endian redo read alike)."""
    return {
        "cases": len(results),
        "identical": sum(r.identical for r in results),
        "differing": sum(not r.identical for r in results),
        "olr_errors": sum(bool(r.olr_errors) for r in results),
        "olr_warnings": sum(bool(r.olr_warnings) for r in results),
        "clean": sum(r.ok for r in results),
        "not_expected": sum(r.ours_vs_expected is False for r in results),
    }


def _describe(r: CaseResult) -> str:
    parts = [
        f"{'OK  ' if r.ok else 'FAIL'} {r.case.name} (redogen {r.gen_seconds:.1f}s, OLR {r.olr_seconds:.1f}s, "
        f"replicator {r.our_seconds:.1f}s)"
    ]
    if not r.identical:
        parts.append("differs" + (f" ({r.detail})" if r.detail else ""))
    if r.olr_errors:
        parts.append(f"OLR: {r.olr_errors[0].split(' ', 2)[-1]}")
    if r.olr_warnings:
        parts.append(f"OLR warn: {r.olr_warnings[0].split(' ', 2)[-1]}")
    if r.ours_vs_expected is False:
        parts.append("(ours != expected.json)")
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Command line of the check; exit 0 when every case is clean."""
    p = argparse.ArgumentParser(
        prog="python -m replicator.redogen.reference_check",
        description="compare the reference OpenLogReplicator and replicator on generated redo",
    )
    p.add_argument("--binary", default=os.environ.get(ENV_BINARY), help=f"OLR binary (default: ${ENV_BINARY})")
    p.add_argument("--work-dir", help="where cases are written (default: a temporary directory)")
    p.add_argument("--only", help="regular expression on case names")
    p.add_argument("--quick", action="store_true", help="one version and block size per source, 3 seeds")
    p.add_argument("--seeds", type=int, default=SEEDS, help="seeded mixed and oltp runs each")
    p.add_argument("--jobs", type=int, default=1, help="cases run in parallel")
    p.add_argument("--keep", action="store_true", help="keep the directories of clean cases too")
    p.add_argument("--list", action="store_true", help="list the case names and stop")
    p.add_argument("-v", "--verbose", action="store_true", help="a line for clean cases too, with wall times")
    p.add_argument(
        "--sql-dir",
        action="append",
        help="folder of SQL scripts to compile as cases (default: the shared reference scripts beside the repository)",
    )
    p.add_argument(
        "--rac-single",
        action="store_true",
        help="also the RAC scenarios and scripts, run on one redo thread (the reference OLR does not merge threads)",
    )
    p.add_argument("--source", help="run one case instead of the matrix: a workload or scenario file")
    p.add_argument("--size", help="with --source: redo to write (oltp and huge-transaction), e.g. 100MB")
    p.add_argument("--seed", type=int, help="with --source: the workload seed")
    p.add_argument("--db-version", default="19", help="with --source: database version")
    p.add_argument("--block-size", type=int, default=512, help="with --source: redo block size")
    p.add_argument(
        "--endian",
        choices=("little", "big", "both"),
        default="little",
        help="byte order of the generated redo (both: every case in each order)",
    )
    p.add_argument(
        "--options",
        action="store_true",
        help="the format-options matrix instead (redogen.options_check): every format option "
        "value, combinations, flags and filter rules, under both engines",
    )
    p.add_argument("--option", help="with --options: regular expression on variant labels (option=value)")
    p.add_argument("--engines", help="with --options: engines to run, comma-separated (default: python,native)")
    p.add_argument(
        "--record-goldens",
        action="store_true",
        help="write tests/golden/olr-options from OLR's output (redogen.options_golden)",
    )
    args = p.parse_args(argv)
    if args.options or args.record_goldens:
        return _options_mode(args)
    endians = ENDIANS if args.endian == "both" else (args.endian,)
    if args.source:
        from replicator.redogen.commands import parse_size

        params = (("target_bytes", parse_size(args.size)),) if args.size else ()
        cases = [
            Case(args.source, args.db_version, args.block_size, args.seed, params=params, endian=e) for e in endians
        ]
        args.verbose = True
    else:
        cases = matrix(
            quick=args.quick,
            seeds=args.seeds,
            endians=endians,
            sql_dirs=[Path(d) for d in args.sql_dir] if args.sql_dir else SQL_DIRS,
            rac_single=args.rac_single,
        )
    if args.only:
        cases = [c for c in cases if re.search(args.only, c.name)]
    if args.list:
        print("\n".join(c.name for c in cases))
        return 0
    if not args.binary or not Path(args.binary).is_file():
        print(f"no reference binary: set ${ENV_BINARY} or --binary", file=sys.stderr)
        return 2
    tmp = None if args.work_dir else tempfile.TemporaryDirectory(prefix="olr-check-")
    work = Path(args.work_dir or tmp.name).resolve()  # type: ignore[union-attr]
    work.mkdir(parents=True, exist_ok=True)

    def report(r: CaseResult) -> None:
        if args.verbose or not r.ok:
            print(_describe(r), flush=True)

    start = time.monotonic()
    try:
        results = run_matrix(cases, work, Path(args.binary).resolve(), args.jobs, args.keep, report)
    finally:
        if tmp is not None and not args.keep:
            tmp.cleanup()
    counts = summary(results)
    print(" ".join(f"{k}={v}" for k, v in counts.items()) + f" ({time.monotonic() - start:.0f}s)")
    if not args.work_dir and any(not r.ok for r in results):
        print("(use --work-dir DIR to keep the failing cases)")
    return 0 if counts["clean"] == counts["cases"] else 1


def _options_mode(args: argparse.Namespace) -> int:
    from replicator.redogen.options_check import options_main

    if not args.list and (not args.binary or not Path(args.binary).is_file()):
        print(f"no reference binary: set ${ENV_BINARY} or --binary", file=sys.stderr)
        return 2
    tmp = None if args.work_dir else tempfile.TemporaryDirectory(prefix="olr-options-")
    work = Path(args.work_dir or tmp.name).resolve()  # type: ignore[union-attr]
    work.mkdir(parents=True, exist_ok=True)
    try:
        if args.record_goldens:
            from replicator.redogen.options_golden import record

            return 1 if record(Path(args.binary).resolve(), work) else 0
        return options_main(args, Path(args.binary or "").resolve(), work)
    finally:
        if tmp is not None and not args.keep:
            tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
