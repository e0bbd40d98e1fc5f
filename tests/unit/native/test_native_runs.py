"""Message runs: the native batch path hands a transaction's messages over as one buffer.

The file and discard writers take a :class:`replicator.native._core.MessageRun` whole; the
output files must equal the python engine's for every writer layout (whole-buffer append
and the message-by-message fallback), and a run must behave as its sequence of Messages.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from native_diff import config_of
from run_capture import RunSink

from replicator.events import Message
from replicator.native import wiring
from replicator.redogen import generate, workloads
from replicator.runner.batch import build_job, run_job


@pytest.fixture(scope="module")
def oltp(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return generate(workloads.oltp(seed=5, target_bytes=1 << 20), tmp_path_factory.mktemp("gen"), with_expected=False)


def _run(cfg: dict[str, Any], work: Path, engine_name: str, writer: dict[str, Any], sink: Any = None) -> Path:
    """Run ``cfg`` with ``writer`` on a private state copy; returns the output folder."""
    cfg = json.loads(json.dumps(cfg))
    out = work / f"out-{engine_name}"
    out.mkdir()
    state = work / f"state-{engine_name}"
    shutil.copytree(cfg["state"]["path"], state)
    cfg["state"]["path"] = str(state)
    w = dict(writer)
    if "output" in w:
        w["output"] = str(out / w["output"])
    cfg["target"][0]["writer"] = w
    path = work / f"config-{engine_name}.json"
    path.write_text(json.dumps(cfg))
    run_job(build_job(str(path)), sink=sink, engine=engine_name)
    return out


WRITERS = {
    "fixed": {"type": "file", "output": "out.json", "new-line": 1, "append": 1},
    "sequence": {"type": "file", "output": "out-%s.json", "new-line": 1},
    "rotated": {"type": "file", "output": "out-%i.json", "new-line": 1, "max-file-size": 50000},
    "crlf": {"type": "file", "output": "out.json", "new-line": 2, "append": 1},
}


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_file_writer_output_equals_python(name: str, oltp: Any, tmp_path: Path) -> None:
    cfg = config_of(oltp)
    native = _run(cfg, tmp_path, "native", WRITERS[name])
    committer = wiring.last_committer
    assert committer is not None and committer.runs and committer.native_transactions > 0
    python = _run(cfg, tmp_path, "python", WRITERS[name])
    files = sorted(p.name for p in python.iterdir())
    assert files and files == sorted(p.name for p in native.iterdir())
    if name == "rotated":
        assert len(files) > 1
    for f in files:
        assert (native / f).read_bytes() == (python / f).read_bytes(), f


def test_run_is_a_sequence_of_messages(oltp: Any, tmp_path: Path) -> None:
    sink = RunSink()
    _run(config_of(oltp), tmp_path, "native", {"type": "discard"}, sink=sink)
    runs = [item for item in sink.items if type(item) is not Message]
    assert runs
    for run in runs[:50]:
        messages = list(run)
        assert len(messages) == len(run) > 0
        assert all(type(m) is Message for m in messages)
        assert run[-1] == messages[-1] and run[0] == messages[0]
        assert run[1:3] == messages[1:3]
        assert run.last_idx == messages[-1].idx
        assert run.body_bytes == sum(len(m.data) for m in messages)
        assert run.data == b"".join(m.data + b"\n" for m in messages)
        assert {m.scn for m in messages} == {run.scn} and {m.xid for m in messages} == {run.xid}
        assert messages[0].table is None and any(m.table is not None for m in messages)
        with pytest.raises(IndexError):
            run[len(run)]


def test_discard_writer_counts_runs(oltp: Any, tmp_path: Path) -> None:
    from replicator.writers.discard import DiscardWriter

    sent: dict[str, tuple[int, int, int]] = {}
    original = DiscardWriter.close

    def close(self: DiscardWriter) -> None:
        sent[str(len(sent))] = (self.messages_sent, self.bytes_sent, self.messages_confirmed)
        original(self)

    DiscardWriter.close = close  # type: ignore[method-assign]
    try:
        _run(config_of(oltp), tmp_path, "native", {"type": "discard"})
        _run(config_of(oltp), tmp_path, "python", {"type": "discard"})
    finally:
        DiscardWriter.close = original  # type: ignore[method-assign]
    assert len(sent) == 2 and sent["0"] == sent["1"] and sent["0"][0] > 0
