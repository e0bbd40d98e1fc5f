"""The bench's CPU accounting: the driver, a JVM below it and the processes below the JVM apart.

(Other tests' processes in the same pytest process -- the session's Spark JVM, the broker --
may add to any component meanwhile: only growth from the processes started here is asserted.)"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replicator.spark.benchprocs import component_cpu, process_tree_cpu

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs Linux /proc")
def test_cpu_of_a_child_process_is_counted_as_other_and_excluded_on_request() -> None:
    before = component_cpu()
    child = subprocess.Popen([sys.executable, "-c", BURN + "time.sleep(30)"])
    try:
        deadline = time.monotonic() + 20
        while component_cpu()["other"] - before["other"] < 0.25 and time.monotonic() < deadline:
            time.sleep(0.05)
        now = component_cpu()
        assert now["other"] - before["other"] >= 0.25  # the child's burn, seen while it runs
        assert process_tree_cpu({child.pid}) < process_tree_cpu() - 0.2  # excluded: the broker's case
    finally:
        child.kill()
        child.wait()


@pytest.mark.skipif(not Path("/proc").is_dir() or shutil.which("java") is None, reason="needs Linux /proc and java")
def test_a_java_child_and_its_children_are_the_jvm_and_the_workers(tmp_path: Path) -> None:
    # A real JVM that starts a real Python process and waits for it (as Spark's JVM runs its workers).
    src = tmp_path / "Spawn.java"
    src.write_text(
        "public class Spawn { public static void main(String[] a) throws Exception {"
        " new ProcessBuilder(a).inheritIO().start().waitFor(); Thread.sleep(30000); } }"
    )
    before = component_cpu()
    jvm = subprocess.Popen(["java", str(src), sys.executable, "-c", BURN])
    try:
        deadline = time.monotonic() + 60
        while component_cpu()["workers"] - before["workers"] < 0.25 and time.monotonic() < deadline:
            time.sleep(0.1)
        now = component_cpu()
        assert now["workers"] - before["workers"] >= 0.25  # the Python child of the JVM, reaped or not
        assert now["jvm"] > 0  # compiling and running Spawn
    finally:
        jvm.kill()
        jvm.wait()
