"""One version: the package's, the project's metadata and the changelog's newest entry agree."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from replicator import __version__

ROOT = Path(__file__).resolve().parents[3]


def test_the_version_is_the_same_everywhere() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    newest = re.search(r"^## (\S+) ", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert newest is not None, "CHANGELOG.md has no '## <version> — <date>' entry"
    assert __version__ == project == newest[1]
