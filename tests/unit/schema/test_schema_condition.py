"""The filter ``condition`` language: OLR's tokens, its precedence-free shift-reduce, error 50067."""

from __future__ import annotations

import pytest

from replicator.errors import ReplicatorError
from replicator.schema.condition import compile_condition, tokenize

USER = {"login username": "SCOTT", "client info": "batch"}


@pytest.mark.parametrize(
    ("condition", "op", "expected"),
    [
        ("[op] != 'd'", "d", False),
        ("[op] != 'd'", "i", True),
        ("[op] == 'u' || [op] == 'ddl'", "u", True),
        ("[op] == 'c'", "i", False),  # OLR's letter for an insert is i
        ("([op] != 'i') || ([login username] != 'NOBODY')", "i", True),
        ("[login username] == 'SCOTT' && [client info] == 'batch'", "d", True),
        ("! [op] == 'd'", "d", False),  # the ! waits for the comparison: !([op] == 'd')
        ("!([op] == 'd' && [login username] == 'SCOTT')", "u", True),
        ("[true] || [false] && [false]", "i", False),  # no precedence: ([true] || [false]) && [false]
        ("[false] && [false] || [true]", "i", True),
        ("[true] && ([false] || [true])", "i", True),
        ("[no such attribute] == ''", "i", True),  # unknown names read as ''
        ("[os username] == ''", "i", True),  # an attribute the transaction lacks reads as ''
        ("'a'=='a'", "i", True),
        ("( ( [op]=='i' ) )", "i", True),
    ],
)
def test_evaluation(condition: str, op: str, expected: bool) -> None:
    assert compile_condition(condition)(op, USER) is expected


@pytest.mark.parametrize(
    "condition",
    [
        "",  # nothing to evaluate
        "[op]",  # a string, not a boolean
        "[op] == 1",  # numbers are rejected
        "[op] == 'd' &&! [true]",  # operator characters run together: "&&!"
        "[op] == 'd",  # unfinished string
        "[op == 'd'",  # unfinished identifier
        "(([op] == 'd')",  # unbalanced
        "[op] = 'd'",  # "=" is no operator
        "[op] == 'd' ; [true]",  # unknown character
        "[true] [false]",
    ],
)
def test_errors_are_50067(condition: str) -> None:
    with pytest.raises(ReplicatorError) as info:
        compile_condition(condition)
    assert info.value.code == 50067


def test_tokens() -> None:
    assert tokenize("!([a]!='x')||[true]") == [
        ("op", "!"),
        ("(", "("),
        ("id", "a"),
        ("op", "!="),
        ("str", "x"),
        (")", ")"),
        ("op", "||"),
        ("id", "true"),
    ]
