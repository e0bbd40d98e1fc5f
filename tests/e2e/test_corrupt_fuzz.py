"""Corrupt-input fuzz on the real free23 archives (issue 15): never "exit 0 with other output".

Each mutant of the two redo files -- a bit flipped in a block (header blocks 0 and 1
included), the file truncated, two blocks swapped, a block zeroed -- is replicated with
``replicator run``. A run may stop with a coded error (non-zero exit, no traceback); a
run that exits 0 must have produced exactly the clean run's output. Seeded; the sweep
over every block is marked slow.
"""

from __future__ import annotations

import json
import random
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from fixture_configs import free23_batch_config, write_config

from replicator.cli import main

FILES = ("arch1_15_1224959854.dbf", "arch1_16_1224959854.dbf")
BS = 512
Mutation = Callable[[bytearray], bytearray]


def _flip(block: int, rng: random.Random) -> Mutation:
    return _flip_at(block * BS + rng.randrange(BS), 1 << rng.randrange(8))


def _flip_at(offset: int, bit: int) -> Mutation:
    block = offset // BS

    def mutate(d: bytearray) -> bytearray:
        d[offset] ^= bit
        return d

    mutate.__doc__ = f"flip bit {bit:#04x} at {offset} (block {block})"
    return mutate


def _truncate(size: int) -> Mutation:
    def mutate(d: bytearray) -> bytearray:
        return d[:size]

    mutate.__doc__ = f"truncate to {size}"
    return mutate


def _swap(a: int, b: int) -> Mutation:
    def mutate(d: bytearray) -> bytearray:
        d[a * BS : (a + 1) * BS], d[b * BS : (b + 1) * BS] = d[b * BS : (b + 1) * BS], d[a * BS : (a + 1) * BS]
        return d

    mutate.__doc__ = f"swap blocks {a} and {b}"
    return mutate


def _zero(block: int) -> Mutation:
    def mutate(d: bytearray) -> bytearray:
        d[block * BS : (block + 1) * BS] = bytes(BS)
        return d

    mutate.__doc__ = f"zero block {block}"
    return mutate


def _mutants(free23: Path, rng: random.Random, every_block: bool) -> list[tuple[str, Mutation]]:
    out: list[tuple[str, Mutation]] = []
    for name in FILES:
        blocks = (free23 / name).stat().st_size // BS
        chosen = (
            range(blocks) if every_block else sorted({0, 1, 2, blocks - 1, *rng.sample(range(blocks), min(12, blocks))})
        )
        out += [(name, _flip(b, rng)) for b in chosen]
        out += [(name, _flip_at(BS + 156, bit)) for bit in (0x02, 0x04, 0x10, 0x40)]  # NAB (byte 668)
        out += [
            (name, _truncate(size))
            for size in (
                rng.randrange(1, 2 * BS),
                2 * BS,
                rng.randrange(2, blocks) * BS,
                rng.randrange(2 * BS, blocks * BS),
                blocks * BS - 1,
            )
        ]
        out += [
            (name, _swap(a, b))
            for a, b in ((1, 2), (2, 3), *(sorted(rng.sample(range(2, blocks), 2)) for _ in range(2)))
        ]
        out += [(name, _zero(b)) for b in (0, 1, rng.randrange(2, blocks), blocks - 1)]
    return out


def _run(free23: Path, work: Path, files: dict[str, bytes]) -> tuple[int, bytes | None]:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    cfg = free23_batch_config(free23, work)
    paths = []
    for name, data in files.items():
        (work / name).write_bytes(data)
        paths.append(str(work / name))
    cfg["source"][0]["reader"]["redo-log"] = paths
    rc = main(["run", "-f", str(write_config(work, cfg)), "--progress", "off"])
    out = work / "output.json"
    return rc, out.read_bytes() if out.exists() else None


def _fuzz(free23: Path, tmp_path: Path, every_block: bool, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(15)
    clean_files = {name: (free23 / name).read_bytes() for name in FILES}
    rc, clean = _run(free23, tmp_path / "clean", clean_files)
    assert rc == 0 and clean and len(clean.splitlines()) == 3
    outcomes: Counter[str] = Counter()
    wrong = []
    for name, mutate in _mutants(free23, rng, every_block):
        files = dict(clean_files)
        files[name] = bytes(mutate(bytearray(files[name])))
        rc, out = _run(free23, tmp_path / "m", files)
        err = capsys.readouterr().err
        assert "Traceback" not in err, f"{name}: {mutate.__doc__}: {err[-2000:]}"
        if rc == 0:
            outcomes["same output"] += 1
            if out != clean:
                wrong.append(
                    f"{name}: {mutate.__doc__}: exit 0 with {0 if out is None else len(out.splitlines())} "
                    f"lines instead of 3"
                )
        else:
            codes = [line.split()[3] for line in err.splitlines() if " ERROR " in line]
            outcomes[f"ERROR {codes[-1] if codes else '?'}"] += 1
    print(f"{sum(outcomes.values())} mutants: {json.dumps(dict(sorted(outcomes.items())))}")
    assert not wrong, "\n".join(wrong)


def test_corrupt_redo_never_gives_other_output(
    free23: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fuzz(free23, tmp_path, False, capsys)


@pytest.mark.slow
def test_corrupt_redo_every_block(free23: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fuzz(free23, tmp_path, True, capsys)
