"""Every ``--help`` is complete (issue 32, item 10): each argument has a help text, each default is
shown, and no text carries raw reStructuredText markup (double backquotes)."""

from __future__ import annotations

import argparse
from typing import Any

import pytest

from replicator import cli_args

ENTRIES = [
    ("replicator", lambda: __import__("replicator.cli", fromlist=["x"]).build_parser().parse_args(["-h"])),
    ("redogen", lambda: __import__("replicator.redogen.commands", fromlist=["x"]).redogen_main(["-h"])),
    ("demo", lambda: __import__("replicator.redogen.commands", fromlist=["x"]).demo_main(["-h"])),
    ("client", lambda: __import__("replicator.tools.client", fromlist=["x"]).client_main(["-h"])),
    ("bench-writers", lambda: __import__("replicator.bench.writers", fromlist=["x"]).main(["-h"])),
    ("spark", lambda: __import__("replicator.spark.cli", fromlist=["x"]).spark_main(["-h"])),
]


class _Caught(Exception):
    pass


def _parser(entry: Any, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    seen: list[argparse.ArgumentParser] = []

    def parse_args(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        seen.append(self)
        raise _Caught

    monkeypatch.setattr(cli_args.ArgumentParser, "parse_args", parse_args)
    with pytest.raises(_Caught):
        entry()
    return seen[0]


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def _shows_default(action: argparse.Action) -> bool:
    if action.default in (None, False, [], "", argparse.SUPPRESS) or action.nargs == 0:
        return True
    text = action.help or ""
    return "%(default)" in text or "default" in text.lower()


@pytest.mark.parametrize("entry", [e for _, e in ENTRIES], ids=[name for name, _ in ENTRIES])
def test_help_is_complete(entry: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    problems = []
    for parser in _parsers(_parser(entry, monkeypatch)):
        for text in (parser.description or "", *(a.help or "" for a in parser._actions)):
            if "``" in text:
                problems.append(f"{parser.prog}: raw markup in {text[:60]!r}")
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
                continue
            if action.nargs == argparse.REMAINDER:
                continue  # handed to the subcommand's own parser
            name = "/".join(action.option_strings) or action.dest
            if not action.help:
                problems.append(f"{parser.prog} {name}: no help text")
            elif not _shows_default(action):
                problems.append(f"{parser.prog} {name}: default {action.default!r} not shown")
    assert not problems, "\n".join(problems)


def _printed(parse: Any, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as stop:
        parse(argv)
    out, err = capsys.readouterr()
    return int(stop.value.code or 0), out, err


@pytest.mark.parametrize("name", ["run", "dump", "bench", "check-config", "config"])
def test_a_subcommand_parsed_alone_prints_what_the_whole_parser_prints(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `replicator run` builds only its own subparser (start-up time): help, usage errors and
    # unknown options must read as they do with every subcommand's parser built.
    cli = __import__("replicator.cli", fromlist=["x"])
    for argv in ([name, "--help"], [name, "--no-such-option"], [name, "--file"]):
        whole = _printed(cli.build_parser().parse_args, argv, capsys)
        alone = _printed(cli._parse, argv, capsys)
        assert alone == whole, argv
