"""Done-when 4: the README's two commands work on a fresh copy of the repository.

The files git would put in a clone (tracked ones plus new, not ignored ones, as they are
in the working tree) are copied to a temporary directory; each command is taken verbatim
from README.md and run there by the shell, so it makes its own fresh ``.venv``. The second
command runs the whole test suite inside the copy: ``REPLICATOR_README_INNER`` makes this
test skip there, so it does not recurse.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
INNER = "REPLICATOR_README_INNER"
TIMEOUT_S = 900

pytestmark = pytest.mark.slow


def readme_commands(text: str) -> list[str]:
    """The shell blocks of the README's "Two commands" section, in order."""
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def _copy_checkout(dest: Path) -> None:
    """Copy what a clone of the working tree would hold (no .venv, caches or ignored files)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True, timeout=60).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():  # deleted-but-tracked files are listed too
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get(INNER):
        pytest.skip("inside the README test's own run of the test suite")
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout to know which files a clone holds")
    dest = tmp_path_factory.mktemp("fresh") / "replicator"
    _copy_checkout(dest)
    return dest


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env[INNER] = "1"
    # The venv of the outer run must not shadow the fresh one.
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not p.startswith(str(REPO / ".venv")))
    return subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S)


def test_readme_has_the_two_commands() -> None:
    commands = readme_commands((REPO / "README.md").read_text())
    assert len(commands) == 2
    assert commands[0].endswith("replicator demo") and "pytest" in commands[1]
    ci = (REPO / ".ci" / "run").read_text()
    assert commands[1] in ci, ".ci/run must run the README's test command verbatim"


def test_main_job_command(checkout: Path) -> None:
    command = readme_commands((checkout / "README.md").read_text())[0]
    proc = _run(command, checkout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert (checkout / ".venv" / "bin" / "replicator").exists()


def test_test_suite_command(checkout: Path) -> None:
    command = readme_commands((checkout / "README.md").read_text())[1]
    proc = _run(command, checkout)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    assert re.search(r"\d+ passed", proc.stdout)
