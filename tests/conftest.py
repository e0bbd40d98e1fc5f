"""Shared fixtures: where the shared reference data lives (``../shared`` beside the repo)."""

from __future__ import annotations

import compileall
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
FREE23 = SHARED / "fixtures" / "redo" / "free23-basic"
ORA19 = SHARED / "fixtures" / "redo" / "ora19-lob"


def need(path: Path) -> Path:
    """Skip the calling test with a clear message when a shared file is absent."""
    if not path.exists():
        pytest.skip(f"shared test data not found: {path} (place the shared/ folder beside the repository)")
    return path


@pytest.fixture
def free23() -> Path:
    return need(FREE23)


@pytest.fixture
def ora19() -> Path:
    return need(ORA19)


@pytest.fixture(autouse=True)
def _olr_log_lines(caplog: pytest.LogCaptureFixture) -> None:
    """Captured log text in OpenLogReplicator's line format, codes included."""
    from replicator.log import OlrFormatter

    caplog.handler.setFormatter(OlrFormatter(mock=True))


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the package once, in the controller, before any worker starts.

    Where PYTHONDONTWRITEBYTECODE is set (CI images often set it) nothing writes ``.pyc`` files,
    so every ``replicator`` subprocess a test starts would compile about a hundred modules
    again (~0.1 s of CPU each time); compiled once here, every process imports them.
    """
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(REPO / "replicator", quiet=1)


SPARK_TESTS = Path(__file__).resolve().parent / "integration" / "spark"


def _join_group(item: pytest.Item, group: str) -> None:
    """Put ``item`` in xdist group ``group`` under ``--dist loadgroup``.

    xdist groups by a ``@group`` suffix it appends to the node id in the worker; pytest 9.2
    keeps node ids in ``_id`` and no longer reads the ``_nodeid`` xdist 3.8 writes, so the
    marker alone no longer groups anything. The suffix is set here on whichever attribute
    this pytest reads.
    """
    item.add_marker(pytest.mark.xdist_group(group))
    if not getattr(item.config.option, "loadgroup", False):  # xdist sets it in its workers
        return
    grouped = f"{item.nodeid}@{group}"
    if hasattr(item, "_id"):
        from _pytest.nodeid import coerce_node_id

        item._id = coerce_node_id(grouped)
    else:
        item._nodeid = grouped


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The Spark tests share one SparkSession (one JVM): one xdist worker runs them all, first, as slow tests."""
    for item in items:
        if SPARK_TESTS in item.path.parents:
            _join_group(item, "spark")
            item.add_marker(pytest.mark.slow)
    # The Spark group is the longest run of one worker: scheduled first, it overlaps the rest.
    items.sort(key=lambda item: SPARK_TESTS not in item.path.parents)
