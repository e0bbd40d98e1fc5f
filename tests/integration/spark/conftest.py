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

# Settings for a loaded machine, for the session below and for the jobs the tests start as
# processes (PySpark reads PYSPARK_SUBMIT_ARGS when it launches its JVM): Python workers
# are reused rather than started per task, and socket and heartbeat timeouts are far from
# what a busy 2-core machine needs. (The streaming source's worker has a fixed 10 s
# connect-back limit in Spark; the Spark tests all run in one xdist worker so that they do
# not compete with each other for the CPU.)
LOADED_MACHINE_CONF = {
    "spark.python.worker.reuse": "true",
    "spark.python.authenticate.socketTimeout": "120s",
    "spark.network.timeout": "600s",
    "spark.executor.heartbeatInterval": "30s",
    "spark.ui.enabled": "false",
}
os.environ.setdefault(
    "PYSPARK_SUBMIT_ARGS",
    " ".join(f"--conf {key}={value}" for key, value in LOADED_MACHINE_CONF.items()) + " pyspark-shell",
)


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

    session = build_session(
        JobOptions(lake=str(tmp_path_factory.mktemp("lake"))),
        "local[2]",
        {**LOADED_MACHINE_CONF, "spark.sql.shuffle.partitions": "2"},
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A standalone Spark cluster on 127.0.0.1: a master and two 1-core workers (stopped at the end)."""
    _need_pyspark()
    from replicator.spark.standalone import StandaloneCluster

    with StandaloneCluster(workers=2, workdir=str(tmp_path_factory.mktemp("cluster"))) as cluster:
        yield cluster


@pytest.fixture(params=["local", "cluster"])
def where(request: pytest.FixtureRequest) -> Any:
    """Where a test's jobs run: local[2] (in this process when it can) or the standalone cluster."""
    from spark_pipeline import Where

    if request.param == "cluster":
        return Where(request.getfixturevalue("spark_cluster"))
    return Where(None, request.getfixturevalue("spark"))
