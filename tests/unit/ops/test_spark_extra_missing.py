"""`replicator spark` without the spark extra stops at once and says how to install it (issue 32, item 8).

The modules are hidden from the child process (``sys.modules[name] = None``: no import finds
them). ``spark run`` points at a closed port: before the check it waited there for ever.
"""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest


def _spark(hidden: list[str], argv: list[str]) -> subprocess.CompletedProcess[str]:
    code = (
        f"import sys\nfor name in {hidden!r}: sys.modules[name] = None\n"
        f"from replicator.spark.cli import spark_main\nraise SystemExit(spark_main({argv!r}))\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(
    ("command", "hidden", "named"),
    [
        (["run", "--topic", "t", "--lake"], ["pyspark"], "pyspark is not installed"),
        (["bench", "--workdir"], ["pandas", "deltalake"], "pandas, deltalake are not installed"),
        (["tables", "--lake"], ["deltalake"], "deltalake is not installed"),
    ],
)
def test_missing_extra_is_named_first(tmp_path: object, command: list[str], hidden: list[str], named: str) -> None:
    argv = [*command, str(tmp_path)]
    if command[0] == "run":
        argv += ["--bootstrap-servers", f"127.0.0.1:{_closed_port()}"]
    proc = _spark(hidden, argv)
    assert proc.returncode == 1, proc.stderr
    assert "ERROR 30002" in proc.stderr and named in proc.stderr and "pip install 'replicator[spark]'" in proc.stderr
    assert "PySpark is not installed" not in proc.stderr and "Traceback" not in proc.stderr
