"""One call from a scenario to a ready test case on disk.

``generate(scenario, out_dir)`` writes::

    out_dir/redo/<log-archive-format names>        archived redo logs, one per sequence
    out_dir/checkpoint/<name>-chkpt-<scn>.json     the schema checkpoint (OLR state dir)
    out_dir/OpenLogReplicator.json                 batch reader + file writer to output.json
    out_dir/expected.json                          what OLR should write to output.json

A multitenant scenario (``containers:``) gets those for its first container and, for every
other one, ``checkpoint-<PDB>/``, ``OpenLogReplicator-<PDB>.json`` and ``expected-<PDB>.json``:
OLR 1.9 reads one PDB per run, chosen by the checkpoint's ``con-id``. ``expected-all.json``
holds every container's transactions in commit order (one run over all containers).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from replicator.redogen import expected, schema
from replicator.redogen.generator import RedoGenerator
from replicator.redogen.scenario import Scenario
from replicator.redogen.writer import ArchivedLog


@dataclass(slots=True)
class ContainerCase:
    """One container's run of a multitenant case: its config, checkpoint and expected output."""

    name: str
    config: Path
    checkpoint: Path
    output: Path
    expected: Path | None


@dataclass(slots=True)
class GenerationResult:
    """Paths and numbers of one generated test case."""

    out_dir: Path
    logs: list[ArchivedLog]
    config: Path
    checkpoint: Path
    output: Path  # where `replicator run` / OLR will write (not created here)
    expected: Path | None
    stats: dict[str, int] = field(default_factory=dict)
    containers: list[ContainerCase] = field(default_factory=list)  # multitenant: one per container

    @property
    def redo_bytes(self) -> int:
        """Total size of the redo files."""
        return sum(log.path.stat().st_size for log in self.logs)

    def all_containers_config(self, states: dict[str, Path] | None = None) -> dict[str, Any]:
        """Multitenant: the first container's batch config reading every container in one run
        (``source.containers``, the python engine's), whose output is ``expected-all.json``;
        returned, not written. ``states``: another state folder for a container (by name)."""
        states = states or {}
        cfg = json.loads(self.config.read_text())
        source = cfg["source"][0]
        first = self.containers[0]
        if first.name in states:
            cfg["state"]["path"] = str(states[first.name])
        source["containers"] = [
            {"state-path": str(states.get(c.name, c.checkpoint.parent))} for c in self.containers[1:]
        ]
        rules: list[dict[str, Any]] = []
        for c in self.containers:  # every container's filter rules, once each
            for rule in json.loads(c.config.read_text())["source"][0]["filter"]["table"]:
                if rule not in rules:
                    rules.append(rule)
        source["filter"]["table"] = rules
        return cfg

    def offline_config(self, archive_dir: Path | None = None) -> dict[str, Any]:
        """The batch config turned into the offline daemon's (returned, not written).

        The daemon finds archived logs through the schema checkpoint's ``log-archive-dest``
        instead of a file list: it is set (in the checkpoint file) to ``archive_dir``,
        by default the folder the logs were written to.
        """
        cfg = json.loads(self.config.read_text())
        reader = cfg["source"][0]["reader"]
        reader["type"] = "offline"
        del reader["redo-log"]
        checkpoint = json.loads(self.checkpoint.read_text())
        checkpoint["log-archive-dest"] = str(archive_dir or self.logs[0].path.parent)
        self.checkpoint.write_text(json.dumps(checkpoint))
        return cfg


def generate(
    sc: Scenario,
    out_dir: str | Path,
    *,
    with_expected: bool = True,
    clean: bool = True,
    on_engine: Callable[[RedoGenerator], None] | None = None,
) -> GenerationResult:
    """Run ``sc`` and write redo, schema checkpoint, config and (optionally) expected output.

    ``on_engine`` is given the engine before it runs (a progress display reads
    ``engine.stream.bytes_written`` from another thread).
    """
    out = Path(out_dir).resolve()
    redo_dir, state_dir = out / "redo", out / "checkpoint"
    if clean:
        for d in (redo_dir, state_dir):
            if d.exists():
                shutil.rmtree(d)
        for name in ("output.json", "expected.json"):
            (out / name).unlink(missing_ok=True)
        for c in sc.containers:
            shutil.rmtree(out / f"checkpoint-{c.name}", ignore_errors=True)
    redo_dir.mkdir(parents=True, exist_ok=True)
    state_dir.mkdir(parents=True, exist_ok=True)
    engine = RedoGenerator(sc, redo_dir, keep_expected=with_expected)
    if on_engine is not None:
        on_engine(engine)
    gen = engine.run()
    checkpoint = state_dir / f"{sc.name}-chkpt-{sc.start_scn}.json"
    schema.write_json(checkpoint, schema.schema_checkpoint(sc, gen))
    output = out / "output.json"
    config = out / "OpenLogReplicator.json"
    schema.write_json(config, schema.olr_config(sc, gen.logs, state_dir, output))
    expected_path = None
    if with_expected:
        expected_path = out / "expected.json"
        expected_path.write_bytes(expected.render(gen, sc, engine.stream.lwn_log))
    stats = dict(gen.stats, logs=len(gen.logs))
    result = GenerationResult(out, gen.logs, config, checkpoint, output, expected_path, stats)
    for i, c in enumerate(sc.containers):
        if i == 0:
            result.containers.append(ContainerCase(c.name, config, checkpoint, output, expected_path))
            continue
        c_state = out / f"checkpoint-{c.name}"
        c_state.mkdir(parents=True, exist_ok=True)
        c_checkpoint = c_state / checkpoint.name
        schema.write_json(c_checkpoint, schema.schema_checkpoint(sc, gen, c))
        c_output = out / f"output-{c.name}.json"
        c_config = out / f"OpenLogReplicator-{c.name}.json"
        schema.write_json(c_config, schema.olr_config(sc, gen.logs, c_state, c_output, c))
        c_expected = None
        if with_expected:
            c_expected = out / f"expected-{c.name}.json"
            c_expected.write_bytes(expected.render(gen, sc, engine.stream.lwn_log, containers=frozenset({c.name})))
        result.containers.append(ContainerCase(c.name, c_config, c_checkpoint, c_output, c_expected))
    if sc.containers and with_expected:
        every = frozenset(c.name for c in sc.containers)
        (out / "expected-all.json").write_bytes(expected.render(gen, sc, engine.stream.lwn_log, containers=every))
    return result
