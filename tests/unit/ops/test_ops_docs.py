"""The generated docs are current, every config key is explained, and doc links resolve."""

from __future__ import annotations

import re

from ops_helpers import REPO

from replicator.tools import docs_gen
from replicator.tools.docs_notes import NOTES


def test_generated_docs_are_up_to_date() -> None:
    assert docs_gen.main(["--check"]) == 0, "run: python -m replicator.tools.docs_gen"


def test_every_config_key_has_a_meaning_and_no_stale_notes() -> None:
    keys = {key for key, _, field in docs_gen.config_keys() if not field.description}
    assert sorted(keys - NOTES.keys()) == [], "explain them in replicator/tools/docs_notes.py or Field(description=...)"
    assert sorted(NOTES.keys() - {key for key, _, _ in docs_gen.config_keys()}) == []


def test_config_reference_shows_ranges_and_defaults() -> None:
    text = docs_gen.config_reference()
    assert "| `log-level` | unsigned 64-bit | 0..4 | `3` |" in text
    assert "| `timestamp-type` | unsigned 64-bit | 0..15 |" in text  # OLR's error text says "one of {0, 15}"
    assert '| `bind` | string | at most 256 bytes; "host:port" |' in text
    assert "## `target[0].writer (kafka)`" in text


def test_every_catalogue_code_and_metric_is_documented() -> None:
    from replicator.errors import CATALOGUE

    errors = (REPO / "docs" / "errors.md").read_text()
    assert all(f"| {code:05d} |" in errors for code in CATALOGUE)
    assert "`dml_ops_total`" in (REPO / "docs" / "metrics.md").read_text()


def test_markdown_links_resolve() -> None:
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text()):
            if "://" in target:
                continue
            assert (doc.parent / target).exists(), f"{doc.name}: broken link {target}"


def test_docs_cite_only_files_of_the_repository() -> None:
    """A document named in the docs (``olr-interfaces.md §6``) must be one a reader of the repository has."""
    known = {p.name for p in REPO.rglob("*.md") if ".venv" not in p.parts}
    docs = [REPO / "README.md", REPO / "config" / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for doc in docs:
        for name in re.findall(r"(?<![\w/.-])([\w.-]+\.md)\b", doc.read_text()):
            assert name in known, f"{doc.relative_to(REPO)} cites {name}, which is not in the repository"
