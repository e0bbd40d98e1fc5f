"""The README's two commands, checked cheaply.

The test command is the suite itself: running it again from inside the suite would double the
time and can never finish within its own cap, so it is checked by its text: it must appear
verbatim in ``.ci/run``, which CI runs. The demo command is checked by running its last step
(``replicator demo``) with the console script of the environment the tests run in, and by
checking that the install step it relies on provides that script.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def readme_commands(text: str) -> list[str]:
    """The shell blocks of the README's "Two commands" section, in order."""
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, re.S)]


def test_readme_has_the_two_commands() -> None:
    commands = readme_commands((REPO / "README.md").read_text())
    assert len(commands) == 2
    assert commands[0].endswith("replicator demo") and "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    command = readme_commands((REPO / "README.md").read_text())[1]
    assert command == (
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest -q"
    )
    ci = (REPO / ".ci" / "run").read_text()
    assert command in ci.splitlines(), ".ci/run must run the README's test command verbatim"


def test_demo_command_installs_the_console_script() -> None:
    """The demo command installs the package (``pip install -e .``) whose script it then runs."""
    command = readme_commands((REPO / "README.md").read_text())[0]
    steps = [step.strip() for step in command.split("&&")]
    assert steps[0] == "python3 -m venv .venv" and steps[1].startswith(".venv/bin/pip install")
    assert steps[1].split()[-1] == "." and steps[2] == ".venv/bin/replicator demo"
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["scripts"]["replicator"] == "replicator.cli:console_main"


def test_demo_command_runs(tmp_path: Path) -> None:
    """``replicator demo`` as the README runs it: generates, replicates, says the output matches."""
    script = Path(sys.executable).with_name("replicator")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "replicator"]
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the demo's temporary directory goes here
    proc = subprocess.run([*argv, "demo"], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "output == expected: yes" in proc.stdout
