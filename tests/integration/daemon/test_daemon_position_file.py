"""The daemon refuses an inconsistent ``<name>-chkpt.json`` with a code, touching nothing (issue 31, item 6).

One generated run goes to its end; then its confirmed position is broken in each way the
review tried and the daemon restarted on it. Before: a Python traceback (``[]``, ``null``,
``"scn":"abc"``, ``"scn":null``, ``"output":[p,"x"]``), exit 0 with nothing output and no
warning (``pos`` beyond the redo: every message lost to a later restart), the output cut
back to the halved size (confirmed lines lost), another layout read silently (``pos``
missing or with 3 elements), a misleading parse error (a valid file over 4,096 bytes).
Now: exit 1 with ``ERROR <code>`` and the output untouched, or (the long valid file) a
normal restart.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fixture_configs import fast_offline_config, write_config

from replicator.redogen import workloads
from replicator.redogen.generate import generate


@dataclass
class Finished:
    """A daemon run read to its end: config, state and output as it left them."""

    config: Path
    state: Path
    output: Path
    saved: dict[Path, bytes]  # every state file and the output, to put back before each case
    logs: int

    def restore(self) -> None:
        for p in self.state.iterdir():
            p.unlink()
        for path, data in self.saved.items():
            path.write_bytes(data)

    @property
    def position(self) -> dict[str, Any]:
        return json.loads(self.saved[self.state / "TEST-chkpt.json"])


def _run(config: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "replicator", "run", "-f", str(config)], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Finished]:
    tmp = tmp_path_factory.mktemp("position")
    sc = workloads.oltp(seed=5, target_bytes=1 << 20)
    sc.log_blocks = 1024
    result = generate(sc, tmp / "gen")
    cfg = fast_offline_config(result)
    cfg["source"][0]["debug"] = {"stop-log-switches": len(result.logs)}
    config = write_config(tmp, cfg, "offline.json")
    first = _run(config)
    assert first.returncode == 0, first.stderr[-3000:]
    assert result.output.read_bytes() == result.expected.read_bytes()
    # Restarts read the last log again and stop at its end (nothing new: the output stays).
    cfg["source"][0]["debug"] = {"stop-log-switches": 1}
    write_config(tmp, cfg, "offline.json")
    state = result.checkpoint.parent
    saved = {p: p.read_bytes() for p in [*state.iterdir(), result.output]}
    yield Finished(config, state, result.output, saved, len(result.logs))


def _text(f: Finished, change: Callable[[dict[str, Any]], None]) -> str:
    """The saved position with ``change`` applied to it (in place)."""
    doc = f.position
    change(doc)
    return json.dumps(doc)


CASES: dict[str, tuple[Callable[[Finished], str], int]] = {
    "empty array": (lambda f: "[]", 20001),
    "null": (lambda f: "null", 20001),
    "scn abc": (lambda f: _text(f, lambda d: d.update(scn="abc")), 20003),
    "scn null": (lambda f: _text(f, lambda d: d.update(scn=None)), 20003),
    "output size x": (lambda f: _text(f, lambda d: d.update(output=[d["output"][0], "x"])), 20003),
    "pos missing": (lambda f: _text(f, lambda d: d.__delitem__("pos")), 20003),
    "pos of 3": (lambda f: _text(f, lambda d: d.update(pos=d["pos"][:3])), 20003),
    "pos beyond the redo": (lambda f: _text(f, lambda d: d.update(pos=[f.logs + 5, 1024, 0, 0])), 20120),
    "pos past its log": (lambda f: _text(f, lambda d: d.update(pos=[f.logs, 1 << 40, 0, 0])), 20120),
    "output size halved": (lambda f: _text(f, lambda d: d.update(output=[d["output"][0], d["output"][1] // 2])), 20121),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_inconsistent_position_is_refused_untouched(finished: Finished, case: str) -> None:
    finished.restore()
    make, code = CASES[case]
    (finished.state / "TEST-chkpt.json").write_text(make(finished))
    proc = _run(finished.config)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert f"ERROR {code} " in proc.stderr, proc.stderr[-3000:]
    assert finished.output.read_bytes() == finished.saved[finished.output], "the output was changed"


def test_output_size_at_another_message_end_is_refused(finished: Finished) -> None:
    """The halved size moved to a line end: the message there is not the confirmed one."""
    finished.restore()
    data = finished.saved[finished.output]
    size = data.rfind(b"\n", 0, len(data) // 2) + 1
    (finished.state / "TEST-chkpt.json").write_text(_text(finished, lambda d: d.update(output=[d["output"][0], size])))
    proc = _run(finished.config)
    assert proc.returncode == 1 and "ERROR 20121 " in proc.stderr and "not the confirmed" in proc.stderr, proc.stderr[
        -3000:
    ]
    assert finished.output.read_bytes() == data


def test_valid_position_file_over_4096_bytes_restarts(finished: Finished) -> None:
    finished.restore()
    text = json.dumps(finished.position, indent=300)
    assert len(text) > 4096
    (finished.state / "TEST-chkpt.json").write_text(text)
    proc = _run(finished.config)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert finished.output.read_bytes() == finished.saved[finished.output]
