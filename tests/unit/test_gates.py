"""The code gates, run by the test suite so the README's test command runs them too.

* ruff: the rule set and the formatter of pyproject.toml ``[tool.ruff]``;
* mypy: the whole package (``[tool.mypy]``; no module is exempt, and the packages listed
  there are held to strict typing);
* import-linter: the package's layers (``[tool.importlinter]``): each package imports only the
  packages below it;
* stubtest: the native modules' stubs (replicator/native/_core.pyi and the .pyi beside each module
  split off it, replicator.native.MODULES, or standing alone, replicator.native.STANDALONE)
  against the built modules, with
  tests/unit/stubtest_allowlist.txt for what stubtest cannot see in Cython (skipped when the
  native core is not built).

Each failure prints the tool's own report. Run one by hand: ``ruff check replicator tests``,
``ruff format --check replicator tests``, ``mypy``, ``lint-imports``,
``python -m mypy.stubtest replicator.native._core replicator.writers._kafka
replicator.native._runframes replicator.formats._dbztxn --allowlist tests/unit/stubtest_allowlist.txt``.
"""

from __future__ import annotations

import os
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


def _run(*args: str, timeout: float = 600, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"


@pytest.mark.parametrize("check", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff(check: list[str]) -> None:
    _run(_tool("ruff"), *check, "replicator", "tests")


@pytest.mark.slow
def test_mypy() -> None:
    _run(_tool("mypy"))


def test_import_layers() -> None:
    _run(_tool("lint-imports"))


def test_native_stub() -> None:
    from replicator import native

    if not native.available():
        pytest.skip("the native core is not built")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this tree's module and stub, not an installed copy
    allowlist = str(ROOT / "tests" / "unit" / "stubtest_allowlist.txt")
    modules = [native.CORE, *native.MODULES, *native.STANDALONE]
    assert all((ROOT / Path(*m.split("."))).with_suffix(".pyi").exists() for m in modules)  # beside each module
    _run(sys.executable, "-m", "mypy.stubtest", *modules, "--allowlist", allowlist, env=env)
