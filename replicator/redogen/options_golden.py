"""Goldens of the format-options matrix: OpenLogReplicator's own output for chosen option values
on small generated cases, so the test suite checks them without the reference binary.

The redo is not stored: the test generates each case with redogen (deterministic), applies the
variant's ``format``/``flags``/``filter`` to the case's config and runs ``replicator run`` under
each engine; only OLR's output text and the config pieces are committed, in
``tests/golden/olr-options/`` (``manifest.json`` plus one ``<case>/<variant>.out`` per variant).

Recording needs the reference binary and keeps a variant only when both engines already give
OLR's bytes (a golden must pass)::

    REPLICATOR_OLR_BINARY=/path/to/OpenLogReplicator python -m replicator.redogen.reference_check --record-goldens
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Final

from replicator.redogen.olr_cases import Case, generate_case, run_olr, scan_log
from replicator.redogen.options_check import (
    ENGINES,
    Variant,
    _first_xid,
    _run_ours,
    _tables,
    error_codes,
    filter_section,
    variants,
)

GOLDEN_DIR: Final = Path(__file__).resolve().parents[2] / "tests" / "golden" / "olr-options"
_ROOT: Final = Path(__file__).resolve().parents[2]
# Cases (name -> scenario path relative to the repository, version, block size).
GOLDEN_CASES: Final[dict[str, tuple[str, str, int]]] = {
    "all-types": ("tests/scenarios/options/all-types.yaml", "19", 512),
    "ddl-timeline": ("tests/scenarios/olr-check/ddl-timeline.yaml", "23", 512),
    "timestamp-variants": ("tests/scenarios/reference/timestamp-variants.yaml", "19", 512),
}
# Variant labels (options_check.variants) per case: values that differed before the fixes of the
# options matrix, and the risky ones (rounding, BC dates, escapes, header bit combinations).
GOLDEN_SELECTION: Final[dict[str, tuple[str, ...]]] = {
    "all-types": (
        "default=json",
        *(f"timestamp={v}" for v in (1, 3, 5, 8, 9, 11, 12, 15)),
        *(f"timestamp-tz={v}" for v in (1, 4, 9, 11)),
        *(f"interval-dts={v}" for v in (1, 4, 8, 10)),
        "interval-ytm=1",
        "interval-ytm=3",
        "char=1",
        "char=2",
        "char=3",
        "column=1",
        "column=2",
        "unknown-type=1",
        "xid=3",
        "message=19",
        "message=30",
        "timestamp-metadata=9",
        "combo=header-all",
        "combo=header-commit-values",
        "combo=full-schema-rid",
        "combo=skip-begin-first",
        "combo=char-raw-unknown",
        "type=debezium",
        "flags=checkpoints-header",
        "flags=raw-hex",
        "flags=hidden-columns",
        "filter=condition-no-delete",
        "filter=condition-update-only",
        "filter=condition-user",
        "filter=key-second-column",
        "filter=key-two-columns",
        "filter=skip-first-xid",
    ),
    # (protobuf on DDL is left out: the reference OLR crashes on it, error 10014.)
    "ddl-timeline": ("default=json", "schema=1", "schema=7", "flags=ddl-header", "filter=condition-no-delete"),
    # Protobuf (binary goldens) on a case without RAW/BLOB columns, where OLR and the replicator agree.
    "timestamp-variants": (
        "type=protobuf",
        "protobuf=timestamp=15",
        "protobuf=timestamp=9",
        "protobuf=xid=3",
        "protobuf=scn-type=1",
        "protobuf=message=14",
    ),
}


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]", "_", label)


def variant_config(original: dict[str, Any], entry: dict[str, Any], state: Path, output: Path) -> dict[str, Any]:
    """The config of a golden ``entry`` (format, flags, filter) over a generated case's config,
    with its own state directory and output file."""
    cfg = json.loads(json.dumps(original))
    source = cfg["source"][0]
    source["format"] = entry["format"]
    if entry.get("flags"):
        source["flags"] = int(source.get("flags", 0)) | entry["flags"]
    if entry.get("filter") is not None:
        source["filter"] = entry["filter"]
    cfg["state"]["path"] = str(state)
    for target in cfg["target"]:
        target["writer"]["output"] = str(output)
    return cfg


def run_entry(
    case_dir: Path, original: dict[str, Any], checkpoint: Path, entry: dict[str, Any], engine: str, work: Path
) -> tuple[int, bytes, str]:
    """Run ``replicator run`` on one golden entry: exit code, output bytes, log text."""
    state = work / "state"
    if state.exists():
        shutil.rmtree(state)
    shutil.copytree(checkpoint, state)
    output = work / "output.json"
    output.unlink(missing_ok=True)
    config = work / "config.json"
    config.write_text(json.dumps(variant_config(original, entry, state, output)))
    rc, log = _run_ours(config, case_dir, engine)
    return rc, (output.read_bytes() if output.exists() else b""), log


def record(binary: Path, work: Path, out_dir: Path = GOLDEN_DIR) -> int:
    """Write the goldens of :data:`GOLDEN_SELECTION` from OLR's output; returns the number of
    variants left out because an engine differs (each is printed)."""
    by_label = {v.label: v for v in variants()}
    manifest: dict[str, Any] = {"cases": {}, "variants": []}
    left_out = 0
    if out_dir.exists():
        shutil.rmtree(out_dir)
    for name, labels in GOLDEN_SELECTION.items():
        source, version, block = GOLDEN_CASES[name]
        case = Case(str(_ROOT / source), version, block)
        case_dir = work / name
        if case_dir.exists():
            shutil.rmtree(case_dir)
        gen = generate_case(case, case_dir)
        original = json.loads(gen.config.read_text())
        tables = _tables(case)
        manifest["cases"][name] = {"source": source, "version": version, "block-size": block}
        first_xid = None
        for label in labels:
            variant: Variant = by_label[label]
            if variant.filter == "skip-first-xid" and first_xid is None:
                raise RuntimeError("skip-first-xid needs default=json first in the selection")
            expected = f"{name}/{_safe(label)}.out"
            entry = {
                "case": name,
                "label": label,
                "format": variant.format_section(),
                "flags": variant.flags,
                "filter": (filter_section(variant.filter, original, tables, first_xid) if variant.filter else None),
                "expected": expected,
            }
            vdir = case_dir / _safe(label)
            vdir.mkdir(parents=True)
            state = vdir / "state-olr"
            shutil.copytree(gen.checkpoint.parent, state)
            olr_out = vdir / "output-olr.json"
            cfg = vdir / "config-olr.json"
            cfg.write_text(json.dumps(variant_config(original, entry, state, olr_out)))
            log, _ = run_olr(binary, cfg, case_dir)
            errors, _ = scan_log(log)
            theirs = olr_out.read_bytes() if olr_out.exists() else b""
            if label == "default=json":
                first_xid = _first_xid(theirs)
            same = not errors
            for engine in ENGINES:
                edir = vdir / engine
                edir.mkdir()
                rc, ours, our_log = run_entry(case_dir, original, gen.checkpoint.parent, entry, engine, edir)
                same &= rc == 0 and ours == theirs and not error_codes(our_log)
            if not same:
                left_out += 1
                print(f"left out {name} {label}: " + (errors[0] if errors else "an engine differs"))
                continue
            target = out_dir / expected
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(theirs)
            manifest["variants"].append(entry)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
    print(f"recorded {len(manifest['variants'])} goldens in {out_dir}, left out {left_out}")
    return left_out
