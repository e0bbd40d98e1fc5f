"""`replicator run` imports what the run uses, not the rest (issue 28: start-up time).

A batch run of the JSON format to a file, in a child process as the console script runs it:
the modules loaded when it exits must not include the daemon's event loop, the other writers'
and formats' libraries, the checkpoint digests' msgspec or pydantic's plugin lookup
(``importlib.metadata``). No time is measured here, only which modules were imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ops_helpers import free23_config

from replicator.config import plugins

# Imported only by the runs that need them (the reason in each comment).
NOT_IMPORTED_BY_A_FILE_RUN = [
    "asyncio",  # the daemon's event loop, sftp
    "uvloop",
    "confluent_kafka",  # the kafka writer
    "zmq",  # replicator client zeromq
    "prometheus_client",  # a metrics section
    "fastavro",  # the avro formats
    "google.protobuf",  # the protobuf format, the stream protocol
    "oracledb",  # reader.type online
    "asyncssh",  # reader.redo-source sftp
    "numpy",
    "yaml",  # redogen scenarios
    "msgspec",  # format.checkpoint-digests
    "importlib.metadata",  # pydantic's plugin lookup (replicator.config.plugins)
    "socket",  # systemd notifications, the network writers
    "difflib",  # "did you mean" in an error message
    "replicator.runner.daemon",
    "replicator.runner.daemon_engine",
    "replicator.formats.debezium",
    "replicator.formats.debezium_schema",  # imported by the native Debezium renderer, loaded when used
    "replicator.formats.framework",  # the event formats (and the native row-image renderers)
    "replicator.native._debezium",  # the native modules beside the core load when first asked for
    "replicator.native._rows",
    "replicator.formats._rowvalues",  # the typed row images, beside formats/rowvalues.py
    "replicator.formats._avro",
    "replicator.native._protobuf",
    "replicator.writers._kafka",
    "replicator.formats._dbztxn",  # the native Debezium renderer's transaction metadata
    "replicator.native._daemon_loop",  # the daemon's record loops
    "replicator.native._stage2",  # --decode-workers above 0
    "replicator.formats.protobuf",
    "replicator.writers.kafka",
    "replicator.writers.network",
    "replicator.writers.zeromq",
    "replicator.online",
    "replicator.redo.online",  # the redo follower (daemon, RAC)
    "replicator.redo.sftp_settings",  # reader.redo-source sftp
    "replicator.tools.client",
    "replicator.redogen",
    "replicator.bench",
    "replicator.verify",
    "replicator.spark",
    "replicator.spark._parse",  # the Spark job's compiled parse
]

_CHILD = """
import atexit, json, sys
out, config = sys.argv[1:]
atexit.register(lambda: open(out, "w").write(json.dumps(sorted(sys.modules))))
sys.argv = ["replicator", "run", "-f", config]
import replicator.cli
raise SystemExit(replicator.cli.console_main())
"""


def test_a_file_run_imports_none_of_the_modules_it_does_not_use(free23: Path, tmp_path: Path) -> None:
    config = free23_config(free23, tmp_path)
    out = tmp_path / "modules.json"
    # One thread (the default from 2 cores is one decode worker, which loads _stage2).
    env = dict(os.environ, REPLICATOR_DECODE_WORKERS="0")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(out), str(config)], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "finished batch processing" in done.stderr
    loaded = set(json.loads(out.read_text()))
    assert "pydantic" in loaded and "replicator.runner.batch" in loaded  # the run did import its own
    assert [name for name in NOT_IMPORTED_BY_A_FILE_RUN if name in loaded] == []


def test_help_imports_neither_pydantic_nor_logging_nor_the_runner() -> None:
    code = "import json, sys\nimport replicator.cli as c\nc.build_parser()\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert not {"pydantic", "logging", "replicator.config", "replicator.runner.batch", "replicator.native"} & loaded


def test_plugin_lookup_finds_a_pydantic_entry_point(tmp_path: Path) -> None:
    assert not plugins.plugins_may_exist([str(tmp_path)], meta_path=[])
    dist = tmp_path / "some_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "entry_points.txt").write_text("[console_scripts]\nx = y:z\n")
    assert not plugins.plugins_may_exist([str(tmp_path)], meta_path=[])
    (dist / "entry_points.txt").write_text("[console_scripts]\nx = y:z\n\n[pydantic]\nmine = some_plugin:plugin\n")
    assert plugins.plugins_may_exist([str(tmp_path)], meta_path=[])


def test_plugin_lookup_leaves_zip_files_and_other_finders_to_pydantic(tmp_path: Path) -> None:
    archive = tmp_path / "packages.zip"
    archive.write_bytes(b"PK\x05\x06" + bytes(18))
    assert plugins.plugins_may_exist([str(archive)], meta_path=[])

    class Finder:
        def find_distributions(self) -> list[object]:
            return []

    assert plugins.plugins_may_exist([str(tmp_path)], meta_path=[Finder()])


def test_config_validation_runs_without_pydantic_plugin_lookup_here() -> None:
    # This environment has no pydantic plugin: the loader pydantic imports is the stub.
    code = (
        "import sys\nimport replicator.config\n"
        "print(sys.modules['pydantic.plugin._loader'].get_plugins.__module__, 'importlib.metadata' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["replicator.config.plugins", "False"]
