"""Settings the job passes when it launches the driver JVM itself (no JVM started here)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from replicator.spark.job import DRIVER_JAVA_OPTIONS, _launch_conf  # noqa: E402
from replicator.spark.options import JobOptions  # noqa: E402

KEY, FAST = DRIVER_JAVA_OPTIONS


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("PYSPARK_GATEWAY_PORT", "PYSPARK_SUBMIT_ARGS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))  # no spark-defaults.conf


def test_the_job_launches_a_c1_only_driver_jvm() -> None:
    conf = _launch_conf(JobOptions(lake="x"), None)
    assert conf is not None and conf.get(KEY) == FAST


def test_user_settings_win(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert _launch_conf(JobOptions(lake="x"), {KEY: "-Xmx2g"}).get(KEY) == "-Xmx2g"  # the job's --conf, at launch
    (tmp_path / "spark-defaults.conf").write_text(f"{KEY} -Xss4m\n")
    assert _launch_conf(JobOptions(lake="x"), None) is None
    (tmp_path / "spark-defaults.conf").unlink()
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", f"--conf {KEY}=-Xss4m pyspark-shell")
    assert _launch_conf(JobOptions(lake="x"), None) is None
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS")
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "12345")  # spark-submit started the JVM already
    assert _launch_conf(JobOptions(lake="x"), None) is None
