"""A batch run's output record (``<name>-batch.json``): a rerun rewrites its output, never appends it twice.

A batch run reads its ``redo-log`` list from ``start-scn`` every time, so a file output
appended to by each run would hold every earlier run's messages again (a tour step run
twice, a run again after Ctrl-C). Like the daemon, which stores the output size with its
confirmed position, a batch run with a file output records in the state folder where its
output began, which redo it read and whether it finished. At the next start (file writer
with a fixed, ``%i`` or ``%s`` name):

* the previous run of this config is recorded and this run reads all the redo that run
  read, from the same ``start-scn`` or an earlier one: the output is cut back to where
  that run began (the daemon's cut back, :attr:`FileWriter.resume_at`) and written again,
  so a rerun, finished or interrupted, leaves one copy;
* the output already holds messages and no run of this config is recorded for it
  (written by hand, by OpenLogReplicator, by another config, or the record was deleted):
  refused (10110), since appending would mix this run's messages after bytes it cannot
  account for; likewise a record of a run over other redo, whose output this run could not
  write again (cutting it back would lose it).

``%t`` names carry the time, so each run writes new files: nothing is appended to a
previous run's file and nothing is cut back. Writers other than ``file`` keep no record.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from replicator import log
from replicator.errors import RuntimeFailure
from replicator.fsutil import atomic_write
from replicator.redo.reader import RedoFile

REFUSED = 10110  # errors.CATALOGUE: the output holds bytes a rerun cannot account for


@dataclass(frozen=True)
class BatchRecord:
    """The content of ``<name>-batch.json``."""

    output: tuple[str, int]  # (file, size) where the run's first message went
    start_scn: int
    redo: tuple[tuple[str, int], ...]  # (absolute path, sequence) of every redo file read
    finished: bool

    def covered_by(self, redo: tuple[tuple[str, int], ...], start_scn: int) -> bool:
        """True when a run over ``redo`` from ``start_scn`` writes everything this run wrote."""
        return set(self.redo) <= set(redo) and start_scn <= self.start_scn


@dataclass(frozen=True)
class OutputPlan:
    """What a batch run does with its file output before the first message."""

    text: str  # for check-config
    resume_at: tuple[str, int] | None = None  # a rerun: cut the output back to this (file, size)
    record: Path | None = None  # where the run records itself (None: no state folder, or %t names)
    sequence_start: str | None = None  # %s names: the file of the first sequence read


def record_path(state_dir: str, name: str) -> Path:
    """``<state>/<name>-batch.json``."""
    return Path(state_dir) / f"{name}-batch.json"


def load_record(path: Path) -> BatchRecord | None:
    """The recorded run, or None when there is none (or it cannot be read: then nothing is cut)."""
    try:
        doc = json.loads(path.read_bytes())
        out = doc["output"]
        return BatchRecord(
            (str(out[0]), int(out[1])),
            int(doc["start-scn"]),
            tuple((str(p), int(s)) for p, s in doc["redo"]),
            bool(doc["finished"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise RuntimeFailure(
            f"file: {path} - the batch output record cannot be read ({exc}): move it away "
            f"together with the output it describes",
            10110,
        ) from None


def save_record(path: Path, record: BatchRecord) -> None:
    """Write the record atomically (a crash leaves the old one or the new one)."""
    doc = {
        "output": list(record.output),
        "start-scn": record.start_scn,
        "redo": [list(entry) for entry in record.redo],
        "finished": record.finished,
    }
    try:
        atomic_write(path, json.dumps(doc).encode() + b"\n")
    except OSError as exc:
        raise RuntimeFailure(
            f"file: {path} - the batch output record cannot be written: {exc.strerror}", 10006
        ) from exc


def redo_key(files: list[RedoFile]) -> tuple[tuple[str, int], ...]:
    """What a record keeps of the redo a run reads."""
    return tuple(sorted((os.path.abspath(f.path), f.sequence) for f in files))


def plan_output(writer_config: Any, state_dir: str, name: str, files: list[RedoFile], start_scn: int) -> OutputPlan:
    """Decide (without touching anything) what a batch run does with its output; 10110 when refused."""
    from replicator.writers.file import FileWriter

    if writer_config.type != "file" or not writer_config.output:
        return OutputPlan(f"{writer_config.type} writer" if writer_config.type != "file" else "stdout")
    writer = FileWriter(writer_config, lambda scn, idx: None)
    pattern = check_output_directory(writer_config)
    if pattern.mode == "timestamp":
        return OutputPlan(f"{writer_config.output}: new files named by the time (%t): a rerun writes new files")
    path = record_path(state_dir, name) if os.path.isdir(state_dir) else None
    if path is not None and not os.access(state_dir, os.W_OK | os.X_OK):
        raise RuntimeFailure(
            f"state directory {state_dir} is not writable by this user (uid {os.getuid()}): a batch "
            f"run with a file output records its output there ({path.name})",
            10006,
        )
    record = load_record(path) if path is not None else None
    redo = redo_key(files)
    if record is not None and writer.holds(record.output[0]):
        file, size = record.output
        state = "finished" if record.finished else "interrupted"
        if not record.covered_by(redo, start_scn):
            raise RuntimeFailure(
                f"output {file} holds, from byte {size}, the output of an earlier {state} run of this config over "
                f"other redo (see {path}): this run does not read all of that redo, so it can neither write that "
                f"output again nor append after it without mixing two runs; move the output and {path} away "
                f"(or set writer.output to a new file) to write this run's",
                REFUSED,
            )
        held = _size(file)
        if held < size:
            raise RuntimeFailure(
                f"output {file} holds {max(held, 0)} bytes, but the {state} run recorded in {path} began at byte "
                f"{size}: it was cut or replaced since; move the output and {path} away",
                REFUSED,
            )
        assert path is not None
        if size == 0:
            done = "removed and written again"
        elif held > size:
            done = f"cut back from {held} to {size} bytes and written on"
        else:
            done = f"written on from byte {size}"
        return OutputPlan(
            f"{file}: a rerun of the {state} run recorded in {path.name}: {done}", resume_at=(file, size), record=path
        )
    existing = _existing(writer, pattern)
    if existing:
        where = (
            f"{path.name} records no run of this config for it"
            if path is not None
            else f"there is no state folder {state_dir} to record batch runs in"
        )
        raise RuntimeFailure(
            f"output {existing} already holds {_size(existing)} bytes, and {where}: this run would append "
            f"its messages after them (a second copy if an earlier run wrote them); move or delete it, or set "
            f"writer.output to a new file",
            REFUSED,
        )
    first = pattern.name(str(min(f.sequence for f in files))) if pattern.mode == "sequence" and files else None
    kept = "" if path is not None else f" (not recorded: no state folder {state_dir}, so a rerun is refused)"
    return OutputPlan(f"{writer_config.output}: new output{kept}", record=path, sequence_start=first)


def check_output_directory(writer_config: Any) -> Any:
    """A file writer's output directory exists and is writable (10006); returns the parsed ``output``."""
    pattern = writer_config.pattern
    directory = pattern.directory
    if not os.path.isdir(directory):
        raise RuntimeFailure(
            f"output directory {directory} of writer.output {writer_config.output} does not exist: create it", 10006
        )
    if not os.access(directory, os.W_OK | os.X_OK):
        raise RuntimeFailure(
            f"output directory {directory} of writer.output {writer_config.output} is not "
            f"writable by this user (uid {os.getuid()})",
            10006,
        )
    return pattern


def _existing(writer: Any, pattern: Any) -> str | None:
    """The output file a fresh run would append to, if it holds anything."""
    if pattern.mode == "num" and not writer.config.append:
        return None  # a new number every run
    found = writer.existing_output()
    return found[-1] if found else None


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return -1


def prepare_writer(plan: OutputPlan, writer: Any) -> None:
    """Before :meth:`FileWriter.connect`: a rerun cuts the output back to where the recorded run began."""
    if plan.resume_at is None:
        return
    file, size = plan.resume_at
    if size == 0 and os.path.exists(file):
        # Written from its first byte: removed, so a %i name with append 0 is not skipped as taken.
        try:
            os.unlink(file)
        except OSError as exc:
            raise RuntimeFailure(f"file: {file} - remove returned: {exc.strerror}", 10007) from exc
        log.info(f"output file {file} removed: the previous run of this config wrote it; written again")
    writer.resume_at = plan.resume_at


def start_record(plan: OutputPlan, writer: Any, files: list[RedoFile], start_scn: int) -> BatchRecord | None:
    """Record the run about to write (after the writer connected); None when it is not recorded."""
    if plan.record is None:
        return None
    start = plan.resume_at or writer.start_position()
    if start is None and plan.sequence_start is not None:
        start = (plan.sequence_start, 0)  # refused earlier if it held anything
    if start is None:
        return None
    record = BatchRecord(start, start_scn, redo_key(files), False)
    save_record(plan.record, record)
    return record


def finish_record(plan: OutputPlan, record: BatchRecord | None) -> None:
    """The run wrote everything: say so (a rerun's message tells finished from interrupted runs)."""
    if plan.record is not None and record is not None:
        save_record(plan.record, replace(record, finished=True))
