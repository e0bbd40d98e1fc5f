"""The code gates, run by the test suite so the README's test command runs them too.

* ruff: the rule set and the formatter of pyproject.toml ``[tool.ruff]``;
* mypy: the whole package (``[tool.mypy]``; the modules listed there as not yet clean are
  checked without reporting, and the list only shrinks);
* import-linter: the package's layers (``[tool.importlinter]``): each package imports only the
  packages below it.

Each failure prints the tool's own report. Run one by hand: ``ruff check replicator tests``,
``ruff format --check replicator tests``, ``mypy``, ``lint-imports``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool(name: str) -> str:
    beside = Path(sys.executable).with_name(name)  # the venv's own copy (pinned in the test extra)
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
    return found


def _run(*args: str, timeout: float = 600) -> None:
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"


@pytest.mark.parametrize("check", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff(check: list[str]) -> None:
    _run(_tool("ruff"), *check, "replicator", "tests")


@pytest.mark.slow
def test_mypy() -> None:
    _run(_tool("mypy"))


def test_import_layers() -> None:
    _run(_tool("lint-imports"))
