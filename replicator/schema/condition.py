"""The ``filter.table[].condition`` row filter (olr-interfaces.md §9.2), evaluated as OLR does.

A condition is a boolean expression over the operation and the transaction's attributes::

    [op] != 'd' && ([login username] == 'APP' || [client info] != '')

* ``[op]`` is ``'i'``, ``'u'`` or ``'d'`` (OLR's letter for insert, update, delete, not the
  ``c`` of the output); ``[true]`` and ``[false]`` are constants; any other ``[name]`` is a
  transaction attribute (the names of the ``attrs`` output), ``''`` when the transaction has
  none or the name is not an attribute name.
* ``'text'`` is a string literal (no escapes); numbers are rejected.
* ``==`` and ``!=`` compare two strings; ``&&``, ``||`` and the prefix ``!`` combine booleans.
  Parsing is OLR's shift-reduce over the tokens with no operator precedence: a reduction
  happens as soon as the top of the stack allows one, so ``a || b && c`` means
  ``(a || b) && c`` and ``! [op] == 'd'`` means ``!([op] == 'd')``. Operator characters
  (``|&!=``) run together into one token, so ``&&!`` is an error, as in OLR.

A condition that does not parse to one boolean is error 50067, raised when the table is
selected (at startup or a filter reload), as OLR does when it builds the table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Final

from replicator.errors import InternalError
from replicator.events import ATTRIBUTE_ORDER

# Attribute names a condition may name (OLR's attribute list, as printed in `attrs`).
ATTRIBUTE_NAMES: Final = frozenset(ATTRIBUTE_ORDER)

Attributes = Mapping[str, str]
Condition = Callable[[str, Attributes], bool]
_Text = Callable[[str, Attributes], str]

_OPERATOR_CHARS: Final = "|&!="
_SPACE: Final = " \t\n\r"


class _Token:
    """A token left on the parse stack: parenthesis, comma or operator."""

    __slots__ = ("kind", "text")

    def __init__(self, kind: str, text: str):
        self.kind = kind
        self.text = text


class _Str:
    """A string-valued node."""

    __slots__ = ("eval",)

    def __init__(self, fn: _Text):
        self.eval = fn


class _Bool:
    """A boolean-valued node."""

    __slots__ = ("eval",)

    def __init__(self, fn: Condition):
        self.eval = fn


def _error(condition: str, detail: str) -> InternalError:
    return InternalError(f"invalid condition: {condition} {detail}", 50067)


def tokenize(condition: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: ``(``, ``)``, ``,``, ``op``, ``id``, ``str``, ``num``."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(condition)
    while i < n:
        ch = condition[i]
        if ch in _SPACE:
            i += 1
        elif ch in "(),":
            tokens.append((ch, ch))
            i += 1
        elif ch == "[" or ch == "'":
            end = condition.find("]" if ch == "[" else "'", i + 1)
            if end < 0:
                raise _error(condition, f"unfinished token: {condition[i + 1 :]}")
            tokens.append(("id" if ch == "[" else "str", condition[i + 1 : end]))
            i = end + 1
        elif ch in _OPERATOR_CHARS:
            j = i + 1
            if ch == "!":
                if j < n and condition[j] == "=":  # "!=" may go on; a lone "!" ends here
                    j += 1
                    while j < n and condition[j] in _OPERATOR_CHARS:
                        j += 1
            else:
                while j < n and condition[j] in _OPERATOR_CHARS:
                    j += 1
            tokens.append(("op", condition[i:j]))
            i = j
        elif ch.isascii() and (ch.isdigit() or ch == "."):
            j = i + 1
            while j < n and ((condition[j].isascii() and condition[j].isdigit()) or condition[j] in ".eE"):
                j += 1
            if j < n and ("a" <= condition[j] <= "z" or condition[j] == "_"):
                raise _error(condition, f"number on position: {j}")
            tokens.append(("num", condition[i:j]))
            i = j
        else:
            raise _error(condition, f"position: {i}")
    return tokens


def _leaf(kind: str, text: str) -> _Str | _Bool:
    if kind == "str":
        return _Str(lambda op, attrs: text)
    if text == "op":
        return _Str(lambda op, attrs: op)
    if text == "true":
        return _Bool(lambda op, attrs: True)
    if text == "false":
        return _Bool(lambda op, attrs: False)
    if text not in ATTRIBUTE_NAMES:
        return _Str(lambda op, attrs: "")
    return _Str(lambda op, attrs: attrs.get(text, ""))


def _reduce(stack: list[object]) -> bool:
    """One reduction at the top of ``stack``; False when none applies."""
    if len(stack) >= 2:
        first, second = stack[-2], stack[-1]
        if isinstance(first, _Token) and isinstance(second, _Bool) and first.kind == "op" and first.text == "!":
            inner = second.eval
            stack[-2:] = [_Bool(lambda op, attrs: not inner(op, attrs))]
            return True
    if len(stack) >= 3:
        left, middle, right = stack[-3], stack[-2], stack[-1]
        if isinstance(left, _Token) and isinstance(right, _Token) and left.kind == "(" and right.kind == ")":
            stack[-3:] = [middle]
            return True
        if isinstance(middle, _Token):
            if isinstance(left, _Str) and isinstance(right, _Str) and middle.text in ("==", "!="):
                a, b = left.eval, right.eval
                if middle.text == "==":
                    stack[-3:] = [_Bool(lambda op, attrs: a(op, attrs) == b(op, attrs))]
                else:
                    stack[-3:] = [_Bool(lambda op, attrs: a(op, attrs) != b(op, attrs))]
                return True
            if isinstance(left, _Bool) and isinstance(right, _Bool) and middle.text in ("&&", "||"):
                p, q = left.eval, right.eval
                if middle.text == "&&":
                    stack[-3:] = [_Bool(lambda op, attrs: p(op, attrs) and q(op, attrs))]
                else:
                    stack[-3:] = [_Bool(lambda op, attrs: p(op, attrs) or q(op, attrs))]
                return True
    return False


@lru_cache(maxsize=256)
def compile_condition(condition: str) -> Condition:
    """The predicate ``(op, attributes) -> bool`` of ``condition``; raises error 50067."""
    tokens = tokenize(condition)
    stack: list[object] = []
    i = 0
    while len(stack) > 1 or i < len(tokens):
        if _reduce(stack):
            continue
        if i >= len(tokens):
            raise _error(condition, f"stack size: {len(stack)}")
        kind, text = tokens[i]
        i += 1
        if kind in ("id", "str"):
            stack.append(_leaf(kind, text))
        elif kind == "num":
            raise _error(condition, f"stack size: {len(stack)}")
        else:
            stack.append(_Token(kind, text))
    if len(stack) != 1 or not isinstance(stack[0], _Bool):
        raise _error(condition, "is not evaluated to bool")
    return stack[0].eval


# OLR's letter for the operation a condition sees, by the output's op.
CONDITION_OP: Final = {"c": "i", "u": "u", "d": "d"}
