"""usable_cores: the affinity mask, capped by a cgroup v2 CPU quota."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from replicator.ops.cores import usable_cores


def _affinity() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@pytest.mark.parametrize(
    ("text", "cap"),
    [("max 100000\n", None), ("100000 100000\n", 1), ("150000 100000\n", 2), ("50000 100000\n", 1)],
)
def test_quota_caps_the_affinity(tmp_path: Path, text: str, cap: int | None) -> None:
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text(text)
    expected = _affinity() if cap is None else min(_affinity(), cap)
    assert usable_cores(str(cpu_max)) == expected


@pytest.mark.parametrize("text", ["", "garbage", "100000 0\n"])
def test_unreadable_quota_leaves_the_affinity(tmp_path: Path, text: str) -> None:
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text(text)
    assert usable_cores(str(cpu_max)) == _affinity()
    assert usable_cores(str(tmp_path / "missing")) == _affinity()
