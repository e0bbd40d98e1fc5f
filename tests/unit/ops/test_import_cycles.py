"""No import cycles between the modules of the replicator package.

Every import counts, including those inside functions and under ``if TYPE_CHECKING:`` (a
function-local or type-only import hides a cycle, it does not remove it: the two modules still
cannot be read apart; where two parts need each other, the lower one declares a port, e.g.
``redogen/ports.py``). ``from pkg import name`` depends on ``pkg.name`` when that is a module,
else on ``pkg``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import replicator

ROOT = Path(replicator.__file__).resolve().parent

# Known cycles other branches are removing at the time of writing; remove each entry once
# its fix is merged (the test then fails if the cycle comes back).
KNOWN_CYCLES: list[set[str]] = []


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that ``name`` imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    pending: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    while pending:
        node = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    source = ".".join(base + ([child.module] if child.module else []))
                else:
                    source = child.module or ""
                for alias in child.names:
                    sub = f"{source}.{alias.name}"
                    found.add(sub if sub in modules else source)
            pending.append(child)
    return {m for m in found if m in modules and m != name}


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected groups of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)
    return groups


def test_cycle_finder() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [{"a", "b", "c"}]


def test_imports_count_function_local_and_type_checking_ones(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "from replicator.pkg import sub, name\n"
        "if TYPE_CHECKING:\n    from replicator.typed import T\n"
        "def f():\n    from .local import g\n"
    )
    modules = dict.fromkeys(
        ["replicator.pkg.m", "replicator.pkg", "replicator.pkg.sub", "replicator.pkg.local", "replicator.typed"], path
    )
    assert _imports("replicator.pkg.m", path, modules) == {
        "replicator.pkg",
        "replicator.pkg.sub",
        "replicator.pkg.local",
        "replicator.typed",
    }


def test_no_import_cycles() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    found = [group for group in _cycles(graph) if group not in KNOWN_CYCLES]
    assert not found, "import cycles: " + "; ".join(" <-> ".join(sorted(group)) for group in found)
