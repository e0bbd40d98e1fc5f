"""Crash safety: SIGKILL the daemon mid-stream; the output must equal an uninterrupted run.

Every kill lands after the run wrote new output and before the end (asserted; see
crash_kills.py). The restart uses the confirmed position (``<name>-chkpt.json``), cuts the
output back to the size saved with it and, with ``%i`` names, removes the files written
after it, so the expectation is exact: 0 lost, 0 torn, 0 duplicated.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest
from crash_kills import assert_all_mid_stream, kill_mid_stream, run_to_end
from fixture_configs import fast_offline_config, write_config

from replicator.redogen import workloads
from replicator.redogen.generate import generate

KILLS = 4


def _seed() -> random.Random:
    seed = int(os.environ.get("REPLICATOR_CRASH_SEED", time.time_ns() % 100000))
    print(f"crash test seed {seed}")
    return random.Random(seed)


def _crash_config(result) -> dict:
    """The offline daemon config with the file buffer flushed every 64 KiB instead of 1 MiB: the
    output then grows in steps small enough that a kill sent once it grew lands before its end
    (with 1 MiB flushes each kill overshot by up to 1 MiB of the 4 MB stream, and after a few
    kills one could only land at the end)."""
    cfg = fast_offline_config(result)
    cfg["target"][0]["writer"]["write-buffer-flush-size"] = 64 * 1024
    return cfg


def _generated(tmp_path: Path):
    sc = workloads.oltp(seed=11, target_bytes=6 << 20)
    sc.log_blocks = 2048
    return generate(sc, tmp_path / "gen")


@pytest.mark.slow
def test_sigkill_mid_stream_plain_file(tmp_path: Path) -> None:
    rng = _seed()
    result = _generated(tmp_path)
    cfg = write_config(tmp_path, _crash_config(result), "offline.json")
    expected = result.expected.read_bytes()
    output = result.output

    def size() -> int:
        return output.stat().st_size if output.exists() else 0

    kills = [kill_mid_stream(cfg, size, len(expected), rng) for _ in range(KILLS)]
    run_to_end(cfg, size, len(expected))
    assert_all_mid_stream(kills)
    lines, expected_lines = output.read_bytes().splitlines(), expected.splitlines()
    print(f"crash test: {len(lines)} lines ({len(expected_lines)} expected) after {KILLS} SIGKILLs")
    # Line for line: stricter than deduplicating by (c_scn, c_idx), which is not a unique key.
    assert output.read_bytes() == expected, "output after the crashes differs from the uninterrupted run"


def _split(data: bytes, limit: int) -> list[bytes]:
    """How the %i file writer splits ``data`` (whole lines; a new file before one would overflow)."""
    files: list[bytes] = [b""]
    for line in data.splitlines(keepends=True):
        if files[-1] and len(files[-1]) + len(line) > limit:
            files.append(b"")
        files[-1] += line
    return files


@pytest.mark.slow
def test_sigkill_mid_stream_with_rotation(tmp_path: Path) -> None:
    """%i rotation: files written after the checkpoint are removed on restart (they duplicated lines)."""
    rng = _seed()
    result = _generated(tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    limit = 256 * 1024
    cfg_doc = _crash_config(result)
    cfg_doc["target"][0]["writer"].update({"output": str(out_dir / "cdc-%i.json"), "max-file-size": limit, "append": 1})
    cfg = write_config(tmp_path, cfg_doc, "offline.json")
    expected = result.expected.read_bytes()

    def files() -> list[Path]:
        return sorted(out_dir.iterdir(), key=lambda p: int(p.stem.split("-")[1]))

    def size() -> int:  # a restart removes files written after its checkpoint: one may vanish while listed
        total = 0
        for p in files():
            try:
                total += p.stat().st_size
            except FileNotFoundError:
                pass
        return total

    kills = [kill_mid_stream(cfg, size, len(expected), rng) for _ in range(KILLS)]
    run_to_end(cfg, size, len(expected))
    assert_all_mid_stream(kills)
    got = [p.read_bytes() for p in files()]
    joined = b"".join(got)
    print(
        f"rotation crash test: {len(got)} files, {len(joined.splitlines())} lines "
        f"({len(expected.splitlines())} expected) after {KILLS} SIGKILLs"
    )
    assert joined == expected, "output after the crashes differs from the uninterrupted run"
    assert got == _split(expected, limit), "files rotate at other points than an uninterrupted run's"


@pytest.mark.slow
def test_sigkill_mid_stream_while_redo_is_written(tmp_path: Path) -> None:
    """The online ring: kills while the "database" writes its online logs (and reuses them)."""
    import json

    from replicator.redogen.online import OnlineRun

    rng = _seed()
    sc = workloads.oltp(seed=5, target_bytes=4 << 20)
    sc.log_blocks = 1024  # 512 KB logs: switches and group reuse during the test
    gen = OnlineRun(sc, tmp_path, groups=3, rate_mb_s=1.0)
    cfg = tmp_path / "OpenLogReplicator.json"
    doc = json.loads(cfg.read_text())
    doc["source"][0].update({"redo-read-sleep-us": 20_000, "arch-read-sleep-us": 100_000, "arch-read-tries": 600})
    doc["target"][0]["writer"]["poll-interval-us"] = 20_000
    doc["target"][0]["writer"]["write-buffer-flush-size"] = 64 * 1024  # as _crash_config: kills land before the end
    cfg.write_text(json.dumps(doc))
    output = tmp_path / "output.json"

    def size() -> int:
        return output.stat().st_size if output.exists() else 0

    estimate = 2 * 1024 * 1024  # the stream is not known before the generator ends; kills stay early
    kills, while_writing = [], 0
    for _ in range(3):
        kills.append(kill_mid_stream(cfg, size, estimate, rng, grow=(0.03, 0.08)))
        while_writing += gen.thread.is_alive()
    expected = gen.finish(120).expected.read_bytes()
    for kill in kills:
        kill.total = len(expected)
    run_to_end(cfg, size, len(expected))
    assert_all_mid_stream(kills)
    assert while_writing >= 1, "no kill landed while the redo was being written"
    print(f"online crash test: {while_writing} of {len(kills)} kills while the redo was written")
    assert output.read_bytes() == expected, "output after the crashes differs from the uninterrupted run"
