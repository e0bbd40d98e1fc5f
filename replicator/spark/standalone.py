"""A Spark standalone cluster on 127.0.0.1: one master and N workers, for tests and the benchmark.

pyspark's wheel ships no ``sbin/start-master.sh``; the daemons are started with its own
launcher, ``$SPARK_HOME/bin/spark-class org.apache.spark.deploy.master.Master`` and
``...deploy.worker.Worker``, bound to loopback (``SPARK_LOCAL_IP``, ``--host``), web UIs off
(port 0). Start-up waits, with a deadline, for the master to print its URL and to register
every worker; :meth:`StandaloneCluster.stop` ends them by PID (SIGTERM, then SIGKILL).
A driver joins with :meth:`StandaloneCluster.conf` (driver bound to 127.0.0.1 as well).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from replicator.errors import RuntimeFailure

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"


def spark_home() -> Path:
    """The pyspark package folder (it holds ``bin/spark-class`` and the jars)."""
    import pyspark

    return Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).resolve().parent)


class StandaloneCluster:
    """``with StandaloneCluster(workers=2) as c:`` ... ``c.url`` (``spark://127.0.0.1:PORT``)."""

    def __init__(
        self,
        workers: int = 2,
        cores: int = 1,
        memory: str = "1g",
        executor_memory: str = "768m",
        workdir: str | None = None,
        deadline: float = 120.0,
    ):
        self.workers, self.cores, self.memory, self.executor_memory = workers, cores, memory, executor_memory
        self.dir = Path(workdir or tempfile.mkdtemp(prefix="replicator-spark-cluster-"))
        self.deadline = deadline
        self.procs: list[subprocess.Popen[bytes]] = []
        self.url = ""

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            SPARK_HOME=str(spark_home()),
            SPARK_LOCAL_IP="127.0.0.1",
            PYSPARK_PYTHON=sys.executable,
            SPARK_LOG_DIR=str(self.dir),
            SPARK_WORKER_DIR=str(self.dir / "work"),
            SPARK_NO_DAEMONIZE="1",
        )
        env.pop("PYSPARK_SUBMIT_ARGS", None)
        return env

    def _start(self, name: str, *args: str) -> Path:
        log = self.dir / f"{name}.log"
        with open(log, "wb") as out:
            self.procs.append(
                subprocess.Popen(
                    [str(spark_home() / "bin" / "spark-class"), *args],
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=self._env(),
                    start_new_session=True,
                )
            )
        return log

    def _wait(self, log: Path, pattern: str, count: int, until: float) -> re.Match[str]:
        while True:
            text = log.read_text(errors="replace") if log.exists() else ""
            found = list(re.finditer(pattern, text))
            if len(found) >= count:
                return found[-1]
            dead = [p for p in self.procs if p.poll() is not None]
            if dead or time.monotonic() > until:
                why = "a daemon exited" if dead else f"no {pattern!r} within {self.deadline:.0f} s"
                raise RuntimeFailure(
                    f"the standalone Spark cluster did not start ({why}); see {log}: {text[-1500:]}", 10048
                )
            time.sleep(0.2)

    def start(self) -> StandaloneCluster:
        """Start the master and the workers; return when every worker is registered."""
        until = time.monotonic() + self.deadline
        (self.dir / "work").mkdir(parents=True, exist_ok=True)
        master_log = self._start("master", MASTER, "--host", "127.0.0.1", "--port", "0", "--webui-port", "0")
        m = self._wait(master_log, r"Starting Spark master at (spark://127\.0\.0\.1:\d+)", 1, until)
        self.url = m[1]
        for i in range(self.workers):
            self._start(
                f"worker-{i}",
                WORKER,
                "--host",
                "127.0.0.1",
                "--cores",
                str(self.cores),
                "--memory",
                self.memory,
                "--webui-port",
                "0",
                "--work-dir",
                str(self.dir / "work"),
                self.url,
            )
        self._wait(master_log, r"Registering worker", self.workers, until)
        return self

    def conf(self) -> dict[str, str]:
        """Settings of a driver running on this machine against the cluster."""
        return {
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.memory": self.executor_memory,
            "spark.executor.cores": str(self.cores),
            "spark.cores.max": str(self.cores * self.workers),
        }

    def pids(self) -> list[int]:
        """PIDs of the daemons (their executors run below the workers)."""
        return [p.pid for p in self.procs]

    def stop(self) -> None:
        """SIGTERM every daemon (and what it started), SIGKILL what is left after 15 s."""
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        until = time.monotonic() + 15
        for p in self.procs:
            try:
                p.wait(max(0.1, until - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the executors below a worker, too
            except ProcessLookupError:
                pass
            p.wait(10)
        self.procs = []

    def __enter__(self) -> StandaloneCluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: Any) -> None:
        self.stop()
