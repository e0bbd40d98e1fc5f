"""Mutated redo through both engines, in one process (run as a subprocess by the tests).

``python mutant_worker.py WORKDIR COUNT SEED [stream] [FORMAT]`` generates a small scenario in WORKDIR, then
for COUNT mutants (bit flips, truncations, random bytes over a record) runs the batch job
with the python and the native engine (in one thread, and with 1 or 2 decode workers) and compares messages, counts, coded errors and log
lines. With ``stream``, every transaction is streamed and swapped (4 KB pool chunks, a 1 KB
stream threshold, swapping past 4 KB): the native engine's huge-transaction path. Prints one line per mismatch and a summary; exit status 0 when all matched. A crash
of the native code shows as a signal exit status, a hang as a timeout in the caller.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from native_diff import config_of, run_engine  # noqa: E402

from replicator.redogen import generate, workloads  # noqa: E402


def mutate(data: bytearray, rng: random.Random, block_size: int) -> tuple[bytearray, str]:
    """One mutant of a redo file: never the two header blocks (they fail the same way in both)."""
    out = bytearray(data)
    body = 2 * block_size
    kind = rng.choice(("flip", "flip", "bytes", "truncate", "zero"))
    pos = rng.randrange(body, len(out))
    if kind == "flip":
        for _ in range(rng.randint(1, 4)):
            p = rng.randrange(body, len(out))
            if p % block_size >= 16:  # keep block headers: a mutated header is the reader's case
                out[p] ^= 1 << rng.randrange(8)
    elif kind == "bytes":
        n = rng.randint(1, 64)
        for p in range(pos, min(pos + n, len(out))):
            if p % block_size >= 16:
                out[p] = rng.randrange(256)
    elif kind == "zero":
        n = rng.randint(2, 32)
        for p in range(pos, min(pos + n, len(out))):
            if p % block_size >= 16:
                out[p] = 0
    else:
        del out[pos - pos % block_size :]
    return out, f"{kind}@{pos}"


def main(work: Path, count: int, seed: int, stream: bool = False, fmt: str = "") -> int:
    work.mkdir(parents=True, exist_ok=True)
    sc = workloads.mixed(seed=seed, events=24, wide=False, big=False)
    result = generate(sc, work / "gen", with_expected=False)
    cfg = config_of(result, {"type": fmt} if fmt else None)
    if fmt:  # the other formats' wall-clock fields: one fixed clock for both engines
        from types import SimpleNamespace

        from replicator.formats import framework

        framework.time = SimpleNamespace(time=lambda: 1_700_000_000.0)  # type: ignore[assignment]
    if stream:
        from replicator.redo import parser as parser_module
        from replicator.txn import pool as pool_module

        pool_module.CHUNK = 4 << 10
        parser_module.STREAM_BYTES = 1 << 10
        (work / "swap").mkdir(exist_ok=True)
        cfg["memory"] = {"min-mb": 32, "max-mb": 4096, "swap-mb": 1, "swap-path": str(work / "swap")}
    reader = cfg["source"][0]["reader"]
    reader["disable-checks"] = 4  # no checksum check: mutants reach the parser and the native code
    originals = [Path(p) for p in reader["redo-log"]]
    blobs = [p.read_bytes() for p in originals]
    rng = random.Random(seed)
    mismatches = 0
    errors = 0
    for n in range(count):
        which = rng.randrange(len(originals))
        mutant, how = mutate(bytearray(blobs[which]), rng, sc.block_size)
        originals[which].write_bytes(mutant)
        try:
            py = run_engine(cfg, work, "python")
            # the native engine in one thread and with 1 or 2 decode workers (stage 2 threads)
            nats = [(w, run_engine(cfg, work, "native", w)) for w in (0, 1 + n % 2)]
        finally:
            originals[which].write_bytes(blobs[which])
        if py["error"]:
            errors += 1
        for workers, nat in nats:
            if py != nat:
                mismatches += 1
                keys = [k for k in py if py[k] != nat[k]]
                print(
                    f"MISMATCH mutant {n} ({how} in file {which}, {workers} decode workers): {keys}: "
                    f"python {py['error']} native {nat['error']}",
                    flush=True,
                )
    print(json.dumps({"mutants": count, "python_errors": errors, "mismatches": mismatches}), flush=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    extra = sys.argv[4:]
    sys.exit(
        main(
            Path(sys.argv[1]),
            int(sys.argv[2]),
            int(sys.argv[3]),
            "stream" in extra,
            next((a for a in extra if a != "stream"), ""),
        )
    )
