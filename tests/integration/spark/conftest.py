"""Fixtures of the Spark consumer tests: one local[2] SparkSession for the whole run.

Tests here need PySpark (``pip install -e '.[test]'`` brings it); without it they are
skipped with a message saying so. The tansu broker fixture comes from the parent conftest.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # spark_pipeline, spark_values


def _need_pyspark() -> None:
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"PySpark/pyarrow not installed ({exc}): pip install -e '.[test]'")
    java_home = os.environ.get("JAVA_HOME", "")
    if not shutil.which("java") and not (java_home and Path(java_home, "bin", "java").exists()):
        pytest.skip("no Java runtime (java on PATH or JAVA_HOME): PySpark 4.3 needs Java 17+")


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local[2] session configured as the job configures its own (stopped at the end)."""
    _need_pyspark()
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from replicator.spark.job import build_session
    from replicator.spark.options import JobOptions

    session = build_session(JobOptions(lake=str(tmp_path_factory.mktemp("lake"))), "local[2]",
                            {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2"})
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
