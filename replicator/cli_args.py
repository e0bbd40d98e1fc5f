"""Argument parsing for every ``replicator`` subcommand: bad arguments are coded errors.

argparse reports a bad argument as ``prog: error: ...`` with exit code 2; here the same
message carries the project's code for invalid command-line arguments (30002), like every
other error the CLI prints (``ERROR 30002 ...``), and the exit code stays 2 (usage error).
The ``type=`` helpers reject out-of-range numbers at parse time, so no bad value reaches
the code that would fail on it with a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import NoReturn

ARGUMENT_ERROR = 30002  # errors.CATALOGUE: invalid command-line arguments


class ArgumentParser(argparse.ArgumentParser):
    """An ``argparse.ArgumentParser`` whose errors read ``ERROR 30002 prog: message``."""

    def error(self, message: str) -> NoReturn:
        """Print the usage and the coded message, exit 2 (argparse's usage-error code)."""
        self.print_usage(sys.stderr)
        self.exit(2, f"ERROR {ARGUMENT_ERROR:05d} {self.prog}: {message}\n")


def _number(conv: Callable[[str], float], low: float, inclusive: bool, what: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = conv(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None
        if value != value or value < low or (value == low and not inclusive):  # NaN too
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
        return value

    parse.__name__ = what  # argparse names the type in some messages
    return parse


positive_float = _number(float, 0.0, False, "a number > 0")
non_negative_float = _number(float, 0.0, True, "a number >= 0")
positive_int = _number(int, 1, True, "an integer >= 1")
non_negative_int = _number(int, 0, True, "an integer >= 0")


def int_at_least(low: int) -> Callable[[str], float]:
    """A ``type=`` for integers ``>= low``."""
    return _number(int, low, True, f"an integer >= {low}")
