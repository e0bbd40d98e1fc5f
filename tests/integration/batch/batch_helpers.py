"""A small generated redo set (the demo scenario) and configs made from it, for batch-run tests."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from replicator.redogen.demo import demo_scenario
from replicator.redogen.generate import generate


def demo_set(directory: Path) -> Path:
    """Generate the demo scenario in ``directory``; returns its config file."""
    return generate(demo_scenario("19", 512), directory).config


def config_copy(base: Path, work: Path, change: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """A config of its own in ``work``: a copy of ``base``'s state folder, output ``work/output.json``,
    then ``change`` applied to the document."""
    doc = json.loads(base.read_text())
    work.mkdir(parents=True, exist_ok=True)
    state = work / "checkpoint"
    shutil.copytree(doc["state"]["path"], state)
    doc["state"]["path"] = str(state)
    doc["target"][0]["writer"]["output"] = str(work / "output.json")
    if change is not None:
        change(doc)
    path = work / "OpenLogReplicator.json"
    path.write_text(json.dumps(doc))
    return path


def error_codes(text: str) -> list[int]:
    """The codes of the ``ERROR CCCCC`` lines (or findings) in ``text``."""
    return [int(part.split("ERROR ", 1)[1][:5]) for part in text.splitlines() if "ERROR " in part]
