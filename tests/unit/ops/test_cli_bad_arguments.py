"""Every subcommand given a bad argument: a coded error (``ERROR CCCCC ...``), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicator.cli import main


def _run(argv: list[str], capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> tuple[int, str]:
    """Exit code and everything printed or logged (an uncaught exception fails the test)."""
    try:
        rc = main(argv)
    except SystemExit as stop:  # argparse's usage errors
        rc = int(stop.code or 0)
    out, err = capsys.readouterr()
    return rc, out + err + caplog.text


USAGE = [  # argparse-level problems: exit 2 with ERROR 30002
    ["run", "--read-limit", "-1"],
    ["run", "--metrics-linger", "-5"],
    ["run", "--metrics-linger", "abc"],
    ["run", "--progress", "maybe"],
    ["bench", "--repeat", "0"],
    ["bogus"],
    [],
    ["redogen", "demo", "-o", "{tmp}", "--db-version", "99"],
    ["redogen", "demo", "-o", "{tmp}", "--groups", "1", "--online"],
    ["redogen", "demo", "-o", "{tmp}", "--rate", "-1", "--online"],
    ["redogen", "demo", "-o", "{tmp}", "--flags", "-1"],
    ["redogen", "demo", "-o", "{tmp}", "--log-blocks", "0"],
    ["redogen", "demo", "-o", "{tmp}", "--seed", "abc"],
    ["redogen", "demo"],
    ["demo", "--db-version", "99"],
    ["demo", "--lines", "-1"],
    ["demo", "--block-size", "100"],
    ["client", "network", "nohost", "TEST"],
    ["client", "network", "127.0.0.1:abc", "TEST"],
    ["client", "network", "127.0.0.1:1", "TEST", "--start", "scn:abc"],
    ["client", "network", "127.0.0.1:1", "TEST", "--start", "c:1,x"],
    ["client", "network", "127.0.0.1:1", "TEST", "--timeout", "-1"],
    ["client", "bogus", "127.0.0.1:1", "TEST"],
    ["bench-writers", "--writers", "foo"],
    ["bench-writers", "--count", "0"],
    ["spark", "run", "--buckets", "x"],
    ["spark"],
]


@pytest.mark.parametrize("argv", USAGE, ids=lambda a: " ".join(a) or "(none)")
def test_usage_errors_are_coded(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    rc, text = _run([a.replace("{tmp}", str(tmp_path / "out")) for a in argv], capsys, caplog)
    assert rc == 2 and "ERROR 30002" in text and "Traceback" not in text, text


def _not_redo(tmp_path: Path) -> str:
    path = tmp_path / "notes.txt"
    path.write_text("not a redo log\n" * 100)
    return str(path)


CODED = [  # (argv, code); {tmp} is a fresh directory, {text} a file that is not a redo log
    (["redogen", "demo", "-o", "{tmp}/g", "--format", "{bad"], 30002),
    (["redogen", "demo", "-o", "{tmp}/g", "--format", "[1]"], 30002),
    (["redogen", "oltp", "-o", "{tmp}/g", "--param", "rows=abc"], 30002),
    (["redogen", "oltp", "-o", "{tmp}/g", "--param", "nosuch=1"], 30002),
    (["redogen", "huge-transaction", "-o", "{tmp}/g", "--param", "rows=1.5"], 30002),
    (["redogen", "mixed", "-o", "{tmp}/g", "--param", "wide=maybe"], 30002),
    (["redogen", "demo", "-o", "{tmp}/g", "--size", "0"], 30002),
    (["redogen", "demo", "-o", "{tmp}/g", "--size", "lots"], 30002),
    (["redogen", "no-such-workload", "-o", "{tmp}/g"], 30002),
    (["redogen", "demo", "-o", "{text}"], 10006),
    (["redogen", "demo", "-o", "{text}/below"], 10006),
    (["demo", "-o", "{text}"], 10006),
    (["bench", "{text}"], 40005),
    (["bench", "{tmp}"], 30120),
    (["bench"], 30002),
    (["bench", "{tmp}/absent"], 10001),
    (["dump", "{text}"], 40005),
    (["run", "-f", "{tmp}/absent.json"], 10001),
    (["run", "-f", "{tmp}"], 10001),
    (["client", "zeromq", "no-scheme", "TEST", "--timeout", "1"], 10062),
    (["spark", "run", "--lake", "{tmp}/lake"], 30002),
]


@pytest.mark.parametrize("argv,code", CODED, ids=lambda a: " ".join(a) if isinstance(a, list) else str(a))
def test_bad_values_are_coded(
    argv: list[str], code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    if argv[0] == "spark":
        pytest.importorskip("pyspark")
    text_file = _not_redo(tmp_path)
    argv = [a.replace("{tmp}", str(tmp_path)).replace("{text}", text_file) for a in argv]
    rc, text = _run(argv, capsys, caplog)
    assert rc == 1 and f"{code:05d}" in text and "Traceback" not in text, text


def test_redogen_checked_params_still_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    """Typed --param values (a tuple, a bool, an int) are accepted and used."""
    rc, text = _run(
        [
            "redogen",
            "mixed",
            "-o",
            str(tmp_path),
            "--param",
            "events=5",
            "--param",
            "wide=0",
            "--param",
            "big=false",
            "--no-expected",
        ],
        capsys,
        caplog,
    )
    assert rc == 0, text
    rc, text = _run(
        ["redogen", "oltp", "-o", str(tmp_path / "o"), "--param", "rows=1,3", "--size", "64k", "--no-expected"],
        capsys,
        caplog,
    )
    assert rc == 0, text


@pytest.mark.parametrize(
    ("target", "phrase"),
    [("{tmp}", "is a directory: dump takes redo log files"), ("{tmp}/absent.dbf", "absent.dbf does not exist")],
)
def test_dump_names_the_path(
    target: str, phrase: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    path = target.format(tmp=tmp_path)
    rc, text = _run(["dump", path], capsys, caplog)
    assert rc == 1 and f"ERROR 10001 {path}" in text.replace("redo log ", "") and phrase in text, text
