"""Every code the source raises or logs is in the catalogue (so in docs/errors.md), and the docs cite no other."""

from __future__ import annotations

import re
from pathlib import Path

from replicator.errors import CATALOGUE

ROOT = Path(__file__).resolve().parents[3]
# A five-digit code as the first argument of a log call or a warn() helper, or as the code
# argument of an error class: `log.warning(60024, ...`, `RuntimeFailure("...", 10062)`.
LOGGED = re.compile(r"\b(?:log\.(?:warning|error|info|critical)|warn|_warn)\(\s*([1-7]\d{4})\b")
RAISED = re.compile(r"(?:Error|Failure)\((?:[^()]|\([^()]*\))*?,\s*([1-7]\d{4})\s*[,)]", re.S)
CODE_CLASS = re.compile(r"^\s+code(?::\s*int)?\s*=\s*([1-7]\d{4})\b", re.M)


def _used_codes() -> dict[int, str]:
    used: dict[int, str] = {}
    for path in sorted((ROOT / "replicator").rglob("*.py")):
        if path.name == "errors.py" and path.parent.name == "replicator":
            continue
        text = path.read_text()
        for pattern in (LOGGED, RAISED, CODE_CLASS):
            for match in pattern.finditer(text):
                used.setdefault(int(match[1]), f"{path.relative_to(ROOT)}:{text[: match.start()].count(chr(10)) + 1}")
    return used


def test_every_raised_or_logged_code_is_catalogued() -> None:
    used = _used_codes()
    assert len(used) > 50, "the patterns no longer find the codes"
    missing = {code: where for code, where in used.items() if code not in CATALOGUE}
    assert not missing, f"codes used but missing from errors.CATALOGUE (docs/errors.md): {missing}"


def test_docs_cite_only_catalogued_codes() -> None:
    """A code named in the prose docs ("error 10072", "WARN 60024") is one the replicator can give."""
    cited = re.compile(r"(?:error|ERROR|WARN|warning|code)s? ([1-7]\d{4})\b")
    stray = {}
    for path in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        for match in cited.finditer(path.read_text()):
            if int(match[1]) not in CATALOGUE:
                stray[int(match[1])] = path.name
    assert not stray, f"docs cite codes the replicator never gives: {stray}"
