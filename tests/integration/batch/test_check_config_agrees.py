"""``check-config`` and ``run`` agree on every broken config (issue 32, item 2).

Each case breaks one thing of a working demo config (state folder, redo file, filter, owner
case, checkpoint, output); ``check-config`` must report exactly the error ``run`` stops with,
same code and same text, and both must pass the warning of a filter that selects nothing.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from batch_helpers import config_copy, error_codes

from replicator.cli import main


def _filter(table: list[dict[str, str]] | None) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        if table is None:
            doc["source"][0].pop("filter", None)
        else:
            doc["source"][0]["filter"] = {"table": table}

    return change


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(doc: dict[str, Any]) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _drop_start_scn(doc: dict[str, Any]) -> None:
    del doc["source"][0]["reader"]["start-scn"]


def _missing_redo(doc: dict[str, Any]) -> None:
    logs = doc["source"][0]["reader"]["redo-log"]
    logs[-1] = logs[-1] + ".missing"


def _output_dir_missing(doc: dict[str, Any]) -> None:
    writer = doc["target"][0]["writer"]
    writer["output"] = str(Path(writer["output"]).parent / "no-such-dir" / "output.json")


def _foreign_output(doc: dict[str, Any]) -> None:
    Path(doc["target"][0]["writer"]["output"]).write_text('{"written by someone else": 1}\n')


def _empty_state(doc: dict[str, Any]) -> None:
    for entry in Path(doc["state"]["path"]).iterdir():
        entry.unlink()


# (id, change, expected error code or None, a phrase the message must hold)
CASES = [
    ("missing state folder", _set(("state", "path"), "/nonexistent/state"), 10012, "does not exist"),
    ("missing redo file", _missing_redo, 10001, ".missing does not exist"),
    ("bad filter regex", _filter([{"owner": "SHOP", "table": "(("}]), 30001, "filter.table[0].table"),
    ("lowercase owner", _filter([{"owner": "shop", "table": ".*"}]), 20007, "did you mean 'SHOP'"),
    ("no filter section", _filter(None), 20007, "SHOP is redundant"),
    ("no start-scn", _drop_start_scn, 10052, "set reader.start-scn"),
    ("no checkpoint", _empty_state, 10052, "none is there"),
    ("output directory missing", _output_dir_missing, 10006, "does not exist"),
    ("output written by someone else", _foreign_output, 10110, "records no run of this config"),
    ("filter matching nothing", _filter([{"owner": "SHOP", "table": "ORDER"}]), None, "did you mean 'ORDERS'"),
]


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    rc = main(argv)
    captured = capsys.readouterr()
    return rc, captured.out + captured.err


@pytest.mark.parametrize(("change", "code", "phrase"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_check_config_and_run_agree(
    demo_config: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, Any]], None],
    code: int | None,
    phrase: str,
) -> None:
    path = config_copy(demo_config, tmp_path / "case", change)
    check_rc, check_out = _cli(["check-config", "-f", str(path)], capsys)
    run_rc, run_out = _cli(["run", "-f", str(path)], capsys)
    if code is None:  # a warning: both say it, both go on
        assert check_rc == 0 and run_rc == 0, check_out + run_out
        warned = [line.split("WARN ", 1)[1] for line in check_out.splitlines() if "WARN " in line]
        assert warned and phrase in warned[0], check_out
        assert warned[0].split(" ", 1)[1] in run_out, run_out
        return
    assert check_rc == 1 and run_rc == 1, check_out + run_out
    assert error_codes(check_out) == [code], check_out
    assert error_codes(run_out) == [code], run_out
    found = next(line for line in check_out.splitlines() if f"ERROR {code:05d}" in line)
    message = found.split(f"ERROR {code:05d} ", 1)[1]
    assert phrase in message, message
    assert message in run_out, f"run printed another text:\n{run_out}\ncheck-config:\n{message}"


def test_check_config_lists_every_problem(
    demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Independent problems are all listed; a step that needs a failed one says it was skipped."""

    def change(doc: dict[str, Any]) -> None:
        _set(("state", "path"), str(tmp_path / "missing"))(doc)
        _filter([{"owner": "SHOP", "table": "(("}])(doc)
        _missing_redo(doc)
        _output_dir_missing(doc)

    path = config_copy(demo_config, tmp_path / "case", change)
    rc, out = _cli(["check-config", "-f", str(path)], capsys)
    assert rc == 1
    assert sorted(error_codes(out)) == [10001, 10012, 30001], out
    assert "schema checkpoint: skipped (needs the state folder)" in out
    assert "output: skipped (needs the redo files)" in out


def test_a_good_config_lists_each_check(demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = config_copy(demo_config, tmp_path / "case")
    rc, out = _cli(["check-config", "-f", str(path)], capsys)
    assert rc == 0 and out.rstrip().endswith(": OK"), out
    for step in ("state folder", "schema checkpoint", "filter vs schema", "redo files", "output", "writer"):
        assert f": {step}: OK" in out, out
    assert "SHOP.ORDERS" in out


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file of mode 000")
def test_unreadable_redo_file(demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    redo = tmp_path / "redo"
    shutil.copytree(demo_config.parent / "redo", redo)

    def change(doc: dict[str, Any]) -> None:
        doc["source"][0]["reader"]["redo-log"] = [str(p) for p in sorted(redo.iterdir())]

    path = config_copy(demo_config, tmp_path / "case", change)
    first = sorted(redo.iterdir())[0]
    first.chmod(0)
    try:
        check_rc, check_out = _cli(["check-config", "-f", str(path)], capsys)
        run_rc, run_out = _cli(["run", "-f", str(path)], capsys)
    finally:
        first.chmod(0o644)
    assert (check_rc, run_rc) == (1, 1) and error_codes(check_out) == error_codes(run_out) == [10001]


def test_offline_mode_checks(demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An offline config: the checks its start shares with a batch run, with the daemon's codes."""

    def offline(doc: dict[str, Any]) -> None:
        doc["source"][0]["reader"]["type"] = "offline"
        _empty_state(doc)

    path = config_copy(demo_config, tmp_path / "case", offline)
    check_rc, check_out = _cli(["check-config", "-f", str(path)], capsys)
    run_rc, run_out = _cli(["run", "-f", str(path)], capsys)
    assert (check_rc, run_rc) == (1, 1), check_out + run_out
    assert error_codes(check_out) == error_codes(run_out) == [10040], check_out + run_out
    doc = json.loads(path.read_text())
    shutil.rmtree(doc["state"]["path"])
    check_rc, check_out = _cli(["check-config", "-f", str(path)], capsys)
    run_rc, run_out = _cli(["run", "-f", str(path)], capsys)
    assert error_codes(check_out) == error_codes(run_out) == [10012], check_out + run_out


def test_writer_reachability_is_a_warning(
    demo_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Kafka brokers that do not answer, a listening address already taken: warned, not an error."""
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        dead = closed.getsockname()[1]
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        for writer, phrase in (
            (
                {"type": "kafka", "topic": "t", "properties": {"bootstrap.servers": f"127.0.0.1:{dead}"}},
                f"Kafka brokers 127.0.0.1:{dead} do not answer",
            ),
            ({"type": "network", "uri": f"127.0.0.1:{port}"}, f"network writer: cannot listen on 127.0.0.1:{port}"),
        ):
            path = config_copy(demo_config, tmp_path / writer["type"], _set(("target", 0, "writer"), writer))
            rc, out = _cli(["check-config", "-f", str(path)], capsys)
            assert rc == 0 and f"writer: WARN 60111 {phrase}" in out, out
