"""Development check: every OpenLogReplicator ``format`` option value, and some filter and source
flag settings, read by the reference OpenLogReplicator and by both engines of this project.

Each case of :func:`option_cases` (scenarios with every column type, LOBs, DDL, rollbacks,
multi-row statements, the demo and seeded mixed/oltp workloads) is generated once; then for every
:class:`Variant` of :func:`variants` (one option at one of its documented values on top of OLR's
defaults, hand-picked combinations, filter rules, source flags) the config's ``format`` (and
``filter``/``flags``) is replaced, OLR reads the redo once and ``replicator run`` reads it once per
engine (``--engine python`` and ``--engine native``); the outputs are compared byte for byte.

Run through the reference check::

    REPLICATOR_OLR_BINARY=/path/to/OpenLogReplicator python -m replicator.redogen.reference_check --options

which prints one line per differing (variant, case, engine), then the counts per option and in
total. ``--only`` picks cases, ``--option REGEX`` variants (by ``option=value`` label).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replicator.redogen.olr_cases import (
    Case,
    _first_difference,
    _variant,
    generate_case,
    run_olr,
    scan_log,
)

ENGINES = ("python", "native")
# Scenarios written for this check (not part of the default matrix).
OPTIONS_DIR = Path(__file__).resolve().parents[2] / "tests" / "scenarios" / "options"
REFERENCE_DIR = Path(__file__).resolve().parents[2] / "tests" / "scenarios" / "reference"
OLR_CHECK_DIR = Path(__file__).resolve().parents[2] / "tests" / "scenarios" / "olr-check"
# Reference scenarios that exercise the options (types, LOBs, rollbacks, several tables).
REFERENCE_SCENARIOS = (
    "data-types",
    "timestamp-variants",
    "number-precision",
    "lob-operations",
    "null-handling",
    "special-chars",
    "rollback",
    "multi-table",
    "interleaved-transactions",
    "partitioned-table",
    "basic-crud",
    "boolean-type",
)
# Values of each OLR format option (olr-interfaces.md §1.4); `message` leaves out what OLR
# rejects (skip begin/commit together with FULL).
OPTION_VALUES: dict[str, tuple[Any, ...]] = {
    "attributes": tuple(range(8)),
    "char": tuple(range(4)),
    "column": tuple(range(3)),
    "db": tuple(range(4)),
    "flush-buffer": (0, 1, 1048576),
    "interval-dts": tuple(range(11)),
    "interval-ytm": tuple(range(5)),
    "message": tuple(m for m in range(32) if not (m & 1 and m & 12)),
    "rid": (0, 1),
    "redo-thread": (0, 1),
    "schema": tuple(range(8)),
    "scn": (0, 1),
    "scn-type": tuple(range(16)),
    "timestamp": tuple(range(16)),
    "timestamp-metadata": tuple(range(16)),
    "timestamp-tz": tuple(range(12)),
    "timestamp-type": tuple(range(16)),
    "unknown": (0, 1),
    "unknown-type": (0, 1),
    "user-type": tuple(range(16)),
    "xid": tuple(range(4)),
    "type": ("json", "debezium", "protobuf"),
}
# Combinations: several options at once, where they interact (header fields, FULL mode, value
# formats together, the debezium preset overridden).
COMBINATIONS: dict[str, dict[str, Any]] = {
    "header-all": {
        "scn": 1,
        "scn-type": 15,
        "timestamp-type": 15,
        "timestamp-metadata": 8,
        "redo-thread": 1,
        "db": 3,
        "user-type": 15,
        "attributes": 7,
        "xid": 2,
    },
    "header-commit-values": {"scn-type": 5, "timestamp-type": 5, "timestamp-metadata": 13, "xid": 1},
    "full-schema-rid": {"message": 1, "schema": 7, "rid": 1, "column": 1},
    "full-num-offset": {"message": 19, "schema": 1, "db": 1, "attributes": 1, "user-type": 1},
    "num-offset-col2": {"message": 18, "column": 2, "rid": 1, "schema": 5},
    "skip-begin-commit": {"message": 12, "scn-type": 4, "timestamp-type": 4},
    "skip-begin-first": {"message": 4, "scn-type": 2, "timestamp-type": 2, "attributes": 2},
    "values-iso": {"timestamp": 8, "timestamp-tz": 4, "interval-dts": 9, "interval-ytm": 4},
    "values-strings": {"timestamp": 13, "timestamp-tz": 9, "interval-dts": 5, "interval-ytm": 1, "char": 2},
    "values-seconds": {"timestamp": 3, "timestamp-tz": 3, "interval-dts": 3, "timestamp-metadata": 3},
    "char-raw-unknown": {"char": 3, "unknown": 1, "unknown-type": 1, "column": 1},
    "column1-unknown-type": {"column": 1, "unknown-type": 1},
    "debezium-column0": {"type": "debezium", "column": 0},
    "debezium-full": {"type": "debezium", "message": 1},
    "debezium-values": {"type": "debezium", "timestamp": 10, "xid": 0, "scn": 1},
    "protobuf-full": {"type": "protobuf", "message": 1},
    "protobuf-options": {"type": "protobuf", "column": 2, "rid": 1, "schema": 7, "timestamp": 8, "xid": 1},
}
# Options the protobuf format reads, swept on type "protobuf" too.
PROTOBUF_OPTIONS = (
    "attributes",
    "char",
    "column",
    "db",
    "interval-dts",
    "interval-ytm",
    "message",
    "rid",
    "schema",
    "scn",
    "scn-type",
    "timestamp",
    "timestamp-type",
    "unknown-type",
    "xid",
)
# Source flags that change what the format prints (olr-interfaces.md §1.6), alone or with options.
FLAG_VARIANTS: dict[str, tuple[int, dict[str, Any]]] = {
    "checkpoints": (0x1000, {}),
    "checkpoints-header": (
        0x1000,
        {"scn": 1, "scn-type": 15, "timestamp-type": 15, "timestamp-metadata": 9, "redo-thread": 1},
    ),
    "checkpoints-full": (0x1000, {"message": 3}),
    "ddl": (0x20, {}),
    "ddl-header": (0x20, {"db": 2, "user-type": 8, "attributes": 2, "schema": 5, "message": 2}),
    "raw-hex": (0x8000, {}),
    "raw-hex-column1": (0x8000, {"column": 1}),
    "hidden-columns": (0x40 | 0x80 | 0x100 | 0x200, {"column": 1}),
    "incomplete-txn": (0x400, {}),
}
# Filter variants: name -> builder(scenario table names/columns, first xid) -> filter section.
FILTER_VARIANTS = (
    "one-table",
    "key-second-column",
    "key-two-columns",
    "condition-no-delete",
    "condition-update-only",
    "condition-user",
    "skip-first-xid",
    "tag-pk",
)


@dataclass(frozen=True, slots=True)
class Variant:
    """One config: a ``format`` section, extra source flags and an optional filter rule kind."""

    option: str  # the group reported: an option name, "combo", "flags" or "filter"
    value: str
    format: tuple[tuple[str, Any], ...] = (("type", "json"),)
    flags: int = 0
    filter: str = ""

    @property
    def label(self) -> str:
        """``option=value``, unique among the variants."""
        return f"{self.option}={self.value}"

    def format_section(self) -> dict[str, Any]:
        """The ``format`` object of the config."""
        return dict(self.format)


def _fmt(extra: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    section = {"type": "json"}
    section.update(extra)
    return tuple(section.items())


def variants() -> list[Variant]:
    """Every option value on OLR's defaults, then combinations, flags and filter rules."""
    out = [Variant("default", "json")]
    for option, values in OPTION_VALUES.items():
        for value in values:
            if option == "type":
                if value != "json":
                    out.append(Variant(option, str(value), _fmt({"type": value})))
            elif value != 0 or option == "flush-buffer":
                out.append(Variant(option, str(value), _fmt({option: value})))
    for option in PROTOBUF_OPTIONS:
        for value in OPTION_VALUES[option]:
            if value != 0:
                out.append(Variant("protobuf", f"{option}={value}", _fmt({"type": "protobuf", option: value})))
    out += [Variant("combo", name, _fmt(extra)) for name, extra in COMBINATIONS.items()]
    out += [Variant("flags", name, _fmt(extra), flags=bits) for name, (bits, extra) in FLAG_VARIANTS.items()]
    out += [Variant("filter", name, filter=name) for name in FILTER_VARIANTS]
    out.append(Variant("filter", "key-column1", _fmt({"column": 1}), filter="key-second-column"))
    return out


def option_cases() -> list[Case]:
    """The generated cases every variant runs on."""
    cases = [Case(str(p)) for p in sorted(OPTIONS_DIR.glob("*.yaml"))]
    cases += [
        Case(str(p), "23" if p.stem == "boolean-type" else "19")
        for p in (REFERENCE_DIR / f"{name}.yaml" for name in REFERENCE_SCENARIOS)
        if p.exists()
    ]
    cases += [Case(str(p), "23") for p in sorted(OLR_CHECK_DIR.glob("ddl-*.yaml"))]
    cases += [
        Case("demo"),
        Case("mixed", "21", 1024, seed=1),
        Case("oltp", "12.2", 4096, seed=2, params=(("target_bytes", 200_000),)),
    ]
    return cases


def protobuf_messages(data: bytes) -> list[Any]:
    """The ``RedoResponse`` messages of a protobuf output file (new-line 1: each message and a
    newline; a message starts with its code field, PAYLOAD = ``08 05``). A ``value_string``
    that is not UTF-8 (OLR's `char` 1 bytes) is read as ``value_bytes``: protobuf refuses it."""
    from replicator.proto import olr_pb2 as pb

    out = []
    for part in re.split(rb"\n(?=\x08\x05)", data[:-1] if data.endswith(b"\n") else data):
        message = pb.RedoResponse()
        message.ParseFromString(_non_utf8_strings_as_bytes(part))
        out.append(message)
    return out


# RedoResponse.payload = 9, Payload.before = 4 / after = 5, Value.value_string = 5 / value_bytes = 6
_PAYLOAD, _IMAGES, _VALUE_STRING, _VALUE_BYTES = 9, (4, 5), 5, 6


def _varint(data: bytes | bytearray, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _fields(data: bytearray, start: int, end: int) -> Any:
    """(field, wire type, tag offset, value start, value end) of each field in data[start:end]."""
    at = start
    while at < end:
        tag_at = at
        key, at = _varint(data, at)
        wire = key & 7
        if wire == 0:
            _, value_end = _varint(data, at)
        elif wire == 1:
            value_end = at + 8
        elif wire == 5:
            value_end = at + 4
        elif wire == 2:
            size, at = _varint(data, at)
            value_end = at + size
        else:
            raise ValueError(f"wire type {wire}")
        yield key >> 3, wire, tag_at, at, value_end
        at = value_end


def _non_utf8_strings_as_bytes(message: bytes) -> bytes:
    """``message`` with each Value's non-UTF-8 ``value_string`` retagged ``value_bytes`` (the
    same length: one tag byte changes)."""
    data = bytearray(message)
    for field_no, wire, _, start, end in list(_fields(data, 0, len(data))):
        if field_no != _PAYLOAD or wire != 2:
            continue
        for image, wire2, _, start2, end2 in list(_fields(data, start, end)):
            if image not in _IMAGES or wire2 != 2:
                continue
            for datum, wire3, tag_at, start3, end3 in list(_fields(data, start2, end2)):
                if datum == _VALUE_STRING and wire3 == 2:
                    try:
                        bytes(data[start3:end3]).decode("utf-8")
                    except UnicodeDecodeError:
                        data[tag_at] = _VALUE_BYTES << 3 | 2
    return bytes(data)


def documented_protobuf_difference(ours: bytes, theirs: bytes) -> bool:
    """True when two protobuf outputs differ only where docs/formats.md §8 says the replicator
    deliberately differs: RAW/BLOB bytes in ``value_bytes`` and one ``column`` entry per column
    in ``schema`` (OLR leaves the bytes out and overwrites a single entry), `char` 1 bytes that
    are not UTF-8 in ``value_bytes`` (OLR writes them into ``value_string``), and the DDL of a
    DDL-only transaction in FULL mode (OLR's protobuf message has no payload)."""
    try:
        a, b = protobuf_messages(ours), protobuf_messages(theirs)
    except Exception:  # not protobuf after all
        return False
    if len(a) != len(b):
        return False
    from replicator.proto import olr_pb2 as pb

    for mine, theirs_message in zip(a, b):
        # FULL mode: OLR's message of a DDL-only transaction has no payload (its JSON has the DDL)
        if not theirs_message.payload and mine.payload and all(p.op == pb.DDL for p in mine.payload):
            mine.ClearField("payload")
    for message in (*a, *b):
        for payload in message.payload:
            payload.schema.ClearField("column")
            for value in (*payload.before, *payload.after):
                if value.WhichOneof("datum") == "value_bytes":
                    value.ClearField("value_bytes")
    return [m.SerializeToString() for m in a] == [m.SerializeToString() for m in b]


@dataclass(slots=True)
class RunResult:
    """One (variant, case, engine) comparison."""

    case: str
    variant: Variant
    engine: str
    identical: bool
    detail: str = ""
    olr_errors: list[str] = field(default_factory=list)
    documented: bool = False  # differs only as docs/formats.md says it deliberately does


def _tables(case: Case) -> list[tuple[str, str, list[str]]]:
    """(owner, table, column names) of the case's tables, as its scenario declares them."""
    from replicator.redogen.olr_cases import build_scenario

    sc = build_scenario(case)
    return [(t.owner, t.name, [c.name for c in t.columns]) for t in sc.tables]


def _first_xid(olr_output: bytes) -> str | None:
    """The XID of the first message of a default-format output, for `skip-xid`."""
    for line in olr_output.splitlines():
        m = re.search(rb'"xid":"(0x[0-9a-f]{4}\.[0-9a-f]{3}\.[0-9a-f]{8})"', line)
        if m:
            return m.group(1).decode("ascii")
    return None


def filter_section(
    kind: str, config: dict[str, Any], tables: list[tuple[str, str, list[str]]], first_xid: str | None
) -> dict[str, Any]:
    """The ``filter`` object of a filter variant, built from the case's own tables."""
    base = dict(config["source"][0].get("filter", {}))
    rules = [dict(r) for r in base.get("table", [])]
    if kind == "one-table" and tables:
        owner, name, _ = tables[0]
        rules = [{"owner": owner, "table": re.escape(name)}]
    elif kind in ("key-second-column", "key-two-columns") and tables:
        width = 1 if kind == "key-second-column" else 2
        rules = [
            {"owner": o, "table": re.escape(n), "key": ",".join(cols[1 : 1 + width] or cols[:1])}
            for o, n, cols in tables
        ]
    elif kind.startswith("condition-"):
        condition = {
            "condition-no-delete": "[op] != 'd'",
            "condition-update-only": "[op] == 'u' || [op] == 'ddl'",
            "condition-user": "([op] != 'c') || ([login username] != 'NOBODY')",
        }[kind]
        rules = [dict(r, condition=condition) for r in rules]
    elif kind == "skip-first-xid" and first_xid:
        base["skip-xid"] = [first_xid]
    elif kind == "tag-pk":
        rules = [dict(r, tag="[pk]") for r in rules]
        base["separator"] = "|"
    base["table"] = rules
    return base


def _config_for(
    original: dict[str, Any],
    variant: Variant,
    tables: list[tuple[str, str, list[str]]],
    first_xid: str | None,
    path: Path,
) -> Path:
    cfg = json.loads(json.dumps(original))
    source = cfg["source"][0]
    source["format"] = variant.format_section()
    if variant.flags:
        source["flags"] = int(source.get("flags", 0)) | variant.flags
    if variant.filter:
        source["filter"] = filter_section(variant.filter, original, tables, first_xid)
    path.write_text(json.dumps(cfg))
    return path


def _run_ours(config: Path, cwd: Path, engine: str) -> tuple[int, str]:
    """``replicator run`` in-process from ``cwd``; exit code and its log (stderr) text."""
    import io
    import sys

    from replicator.cli import main

    old, old_err = os.getcwd(), sys.stderr
    sys.stderr = captured = io.StringIO()
    try:
        os.chdir(cwd)
        rc = main(["run", "-f", str(config), "--progress", "off", "--engine", engine])
    finally:
        os.chdir(old)
        sys.stderr = old_err
    return rc, captured.getvalue()


def error_codes(log: str) -> list[str]:
    """The codes of the ERROR lines of a log (OLR's or ours: both write ``ERROR CCCCC``)."""
    return re.findall(r"\bERROR\s+(\d{5})\b", log)


def run_case_variants(
    case: Case, work: Path, binary: Path, chosen: list[Variant], engines: Iterable[str] = ENGINES, keep: bool = False
) -> list[RunResult]:
    """Generate ``case`` once and compare OLR with each engine under every variant."""
    case_dir = work / case.name
    if case_dir.exists():
        shutil.rmtree(case_dir)
    try:
        gen = generate_case(case, case_dir)
    except Exception as exc:  # a generator failure is a result of every variant
        return [
            RunResult(case.name, v, e, False, f"redogen: {type(exc).__name__}: {exc}") for v in chosen for e in engines
        ]
    original = json.loads(gen.config.read_text())
    state = gen.checkpoint.parent
    tables = _tables(case)
    results: list[RunResult] = []
    first_xid: str | None = None
    failed = False
    for variant in chosen:
        vdir = case_dir / "variants" / re.sub(r"[^A-Za-z0-9_.=-]", "_", variant.label)
        vdir.mkdir(parents=True, exist_ok=True)
        config = _config_for(original, variant, tables, first_xid, vdir / "config.json")
        olr_cfg, olr_out = _variant(config, state, vdir, "olr")
        log, _ = run_olr(binary, olr_cfg, case_dir)
        (vdir / "olr.log").write_text(log)
        errors, _warnings = scan_log(log)
        theirs = olr_out.read_bytes() if olr_out.exists() else b""
        if variant.option == "default" and first_xid is None:
            first_xid = _first_xid(theirs)
        variant_ok = True
        olr_codes = error_codes("\n".join(errors))
        for engine in engines:
            our_cfg, our_out = _variant(config, state, vdir, f"ours-{engine}")
            detail = ""
            try:
                rc, our_log = _run_ours(our_cfg, case_dir, engine)
            except Exception as exc:  # a crash is a difference, not the end of the matrix
                rc, our_log, detail = -1, "", f"{type(exc).__name__}: {exc}"
            (vdir / f"ours-{engine}.log").write_text(our_log)
            ours = our_out.read_bytes() if our_out.exists() else b""
            our_codes = error_codes(our_log) if rc != 0 else []
            # Both stopping with the same error (and the same output up to it) is agreement.
            identical = ours == theirs and our_codes[:1] == olr_codes[:1] and not detail
            if not identical and not detail:
                if our_codes[:1] != olr_codes[:1]:
                    detail = (
                        f"OLR errors {olr_codes[:1] or 'none'} ({errors[0].split(' ', 2)[-1] if errors else ''}), "
                        f"replicator {our_codes[:1] or 'none'} (exit {rc})"
                    )
                else:
                    detail = _first_difference(ours, theirs)
            documented = (
                not identical
                and our_codes[:1] == olr_codes[:1]
                and dict(variant.format).get("type") == "protobuf"
                and documented_protobuf_difference(ours, theirs)
            )
            if documented:
                detail = (
                    "documented protobuf difference (RAW/BLOB bytes, schema columns, non-UTF-8 char 1, FULL-mode DDL)"
                )
            elif not identical and rc == 0 and olr_codes[:1] == ["50039"] and variant.filter == "skip-first-xid":
                documented, detail = True, "documented skip-xid difference (OLR aborts with 50039)"
            elif (
                not identical
                and rc == 0
                and olr_codes[:1] == ["10014"]
                and dict(variant.format).get("type") == "protobuf"
            ):
                documented, detail = True, "documented: OLR crashes (10014) writing protobuf of this case"
            variant_ok &= identical or documented
            results.append(RunResult(case.name, variant, engine, identical, detail, errors, documented))
        if variant_ok and not keep:
            shutil.rmtree(vdir, ignore_errors=True)
        failed |= not variant_ok
    if not failed and not keep:
        shutil.rmtree(case_dir, ignore_errors=True)
    return results


def _worker(args: tuple[Case, Path, Path, list[Variant], tuple[str, ...], bool]) -> list[RunResult]:
    return run_case_variants(*args)


def run_options(
    cases: list[Case],
    chosen: list[Variant],
    work: Path,
    binary: Path,
    jobs: int = 1,
    engines: tuple[str, ...] = ENGINES,
    keep: bool = False,
    report: Callable[[RunResult], None] | None = None,
) -> list[RunResult]:
    """Every variant on every case (``jobs`` cases at a time)."""
    todo = [(c, work, binary, chosen, engines, keep) for c in cases]
    results: list[RunResult] = []

    def take(batch: list[RunResult]) -> None:
        results.extend(batch)
        if report:
            for r in batch:
                report(r)

    if jobs <= 1:
        for item in todo:
            take(_worker(item))
        return results
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=1) as pool:
        for batch in pool.imap_unordered(_worker, todo):
            take(batch)
    return results


def summary_by_option(results: list[RunResult]) -> list[tuple[str, int, int, int, int, int]]:
    """(option, values, runs, identical, documented, differing) per option group, in variant order."""
    order: dict[str, tuple[set[str], list[RunResult]]] = {}
    for r in results:
        values, runs = order.setdefault(r.variant.option, (set(), []))
        values.add(r.variant.value)
        runs.append(r)
    rows = []
    for name, (values, runs) in order.items():
        same = sum(r.identical for r in runs)
        documented = sum(r.documented for r in runs)
        rows.append((name, len(values), len(runs), same, documented, len(runs) - same - documented))
    return rows


def options_main(args: Any, binary: Path, work: Path) -> int:
    """The ``--options`` mode of the reference check (see the module doc)."""
    cases = option_cases()
    if args.only:
        cases = [c for c in cases if re.search(args.only, c.name)]
    chosen = variants()
    if args.option:
        chosen = [v for v in chosen if v.option == "default" or re.search(args.option, v.label)]
    engines = tuple(args.engines.split(",")) if args.engines else ENGINES
    if args.list:
        print("\n".join(c.name for c in cases))
        print("\n".join(v.label for v in chosen))
        return 0
    start = time.monotonic()

    def report(r: RunResult) -> None:
        if not (r.identical or r.documented) or args.verbose:
            state = "OK  " if r.identical else "DOC " if r.documented else "DIFF"
            print(
                f"{state} {r.variant.label} {r.case} [{r.engine}]" + (f": {r.detail}" if r.detail else ""), flush=True
            )

    results = run_options(cases, chosen, work, binary, args.jobs, engines, args.keep, report)
    print(f"{'option':22} {'values':>6} {'runs':>6} {'same':>6} {'doc':>6} {'differ':>6}")
    for name, nvalues, runs, same, documented, differ in summary_by_option(results):
        print(f"{name:22} {nvalues:6} {runs:6} {same:6} {documented:6} {differ:6}")
    same = sum(r.identical for r in results)
    documented = sum(r.documented for r in results)
    differ = len(results) - same - documented
    print(
        f"variants={len(chosen)} cases={len(cases)} engines={len(engines)} runs={len(results)} "
        f"identical={same} documented={documented} differing={differ} ({time.monotonic() - start:.0f}s)"
    )
    return 0 if differ == 0 else 1
