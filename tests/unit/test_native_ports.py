"""The native engine uses only public members of python objects (the ports of runner/stages.py).

A ``.pyx/.pxi`` that reads ``parser._epoch`` breaks, only on the native path and only at run
time, when ``parser.py`` renames it; so the native sources may touch a private member
(``x._name``) only of ``self`` or of a variable typed as one of the native modules' own cdef
classes (their internals are the native modules' own; the modules cimport one another through
``.pxd`` files), and import no private name of another module.
Comments and strings (docstrings naming the python counterparts) are not code and not checked.

The compiled modules also keep to the package layers (``[tool.importlinter]`` in pyproject.toml,
which import-linter checks for python files only): a module (or ``.pxd``) beside its python twin
imports and cimports only what its package's layer may (docs/native-engine.md "Where the modules
live").
"""

from __future__ import annotations

import inspect
import io
import re
import tokenize
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NATIVE = REPO / "replicator" / "native"
# The native sources: replicator/native's and the modules beside their python twins (setup.py MODULES).
SOURCES = sorted(p for ext in ("pyx", "pxi", "pxd") for p in (REPO / "replicator").rglob(f"*.{ext}"))
# The compiled modules and .pxd files by full name (replicator.native._core, replicator.writers._kafka,
# ...): they cimport one another.
NATIVE_NAMES = {".".join(p.relative_to(REPO).with_suffix("").parts) for p in SOURCES}
_CDEF_CLASS = re.compile(r"^cdef\s+class\s+(\w+)", re.M)


def _cdef_typed_names(texts: list[str]) -> set[str]:
    """The module's cdef classes and the names declared with one as their C type (``cdef
    JsonCommitter c``, a ``RowImages rows`` parameter): their private members are cdef internals
    of this module."""
    classes = {name for text in texts for name in _CDEF_CLASS.findall(text)}
    typed = set(classes)
    for text in texts:
        code = _code(list(tokenize.generate_tokens(io.StringIO(text).readline)))
        for a, b, c in zip(code, code[1:], code[2:]):
            if a.string in classes and b.type == tokenize.NAME and c.string != "(" and b.string not in classes:
                typed.add(b.string)
    return typed


def _code(tokens: list[tokenize.TokenInfo]) -> list[tokenize.TokenInfo]:
    """The tokens that are code: no comments, strings (docstrings) or line ends."""
    return [t for t in tokens if t.type not in (tokenize.COMMENT, tokenize.STRING, tokenize.NL, tokenize.NEWLINE)]


def violations(source: str, typed: set[str]) -> list[tuple[int, str]]:
    """(line, text) of every private member of a foreign object and private import in ``source``."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    found = _private_imports(tokens)
    code = _code(tokens)
    for i, tok in enumerate(code):
        name = tok.string
        if tok.type != tokenize.NAME or i < 2 or code[i - 1].string != "." or not _private(name):
            continue
        j, chain = i - 2, []  # the receiver chain: a.b.c before ``._name``
        while j >= 0 and code[j].type == tokenize.NAME:
            chain.insert(0, code[j].string)
            if j >= 1 and code[j - 1].string == ".":
                j -= 2
            else:
                break
        if not chain:
            continue  # ``(<_Plan>plan)._x``: a cast to one of the module's cdef classes
        receiver = ".".join(chain)
        if receiver == "self" or f"{receiver}.{name}" in NATIVE_NAMES or chain[-1] in typed:
            continue  # NATIVE_NAMES: ``from replicator.native._core cimport ...``, a native module's own
        found.append((tok.start[0], f"{receiver}.{name}"))
    return sorted(found)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_imports(tokens: list[tokenize.TokenInfo]) -> list[tuple[int, str]]:
    """``from x import _name`` (an ``as _alias`` is the importer's own name)."""
    found = []
    i = 0
    while i < len(tokens):
        if tokens[i].string == "from" and tokens[i].type == tokenize.NAME:
            j = i + 1
            while j < len(tokens) and tokens[j].string != "import" and tokens[j].type != tokenize.NEWLINE:
                j += 1
            if j < len(tokens) and tokens[j].string == "import":
                expect = True  # a name right after ``import`` or a comma is an imported one
                j += 1
                while j < len(tokens) and tokens[j].type != tokenize.NEWLINE:
                    tok = tokens[j]
                    if tok.type == tokenize.NAME and expect and tok.string != "cimport":
                        if _private(tok.string):
                            found.append((tok.start[0], f"import {tok.string}"))
                        expect = False
                    elif tok.string in (",", "("):
                        expect = True
                    j += 1
            i = j
        i += 1
    return found


def test_the_checker_finds_foreign_private_members() -> None:
    """The rule catches what it names (else the real check below could pass vacuously)."""
    sample = (
        "from replicator.native._core cimport MessageRun\n"
        "cdef class Loop:\n"
        "    cdef Loop other\n"
        "    def run(self, parser, fmt):\n"
        "        from replicator.formats.debezium import _TXN_SCHEMA\n"
        "        x = parser._epoch(1)  # parser._rank in a comment is fine\n"
        "        fmt.header._scn_all = self._own + self.other._cache\n"
        '        """fmt._lwn_idx in a docstring is fine"""\n'
    )
    assert violations(sample, _cdef_typed_names([sample])) == [
        (5, "import _TXN_SCHEMA"),
        (6, "parser._epoch"),
        (7, "fmt.header._scn_all"),
    ]


def test_sources_are_found() -> None:
    assert any(p.name == "_core.pyx" for p in SOURCES), f"no native sources under {NATIVE}"
    assert len(SOURCES) > 1
    assert any(p.parent != NATIVE for p in SOURCES)  # the modules beside their python twins are checked too


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(REPO / "replicator").as_posix())
def test_native_sources_use_public_ports_only(path: Path) -> None:
    typed = _cdef_typed_names([p.read_text() for p in SOURCES])
    found = violations(path.read_text(), typed)
    assert not found, (
        f"{path.name} touches private members of python objects (make them public "
        f"members, declared in replicator/runner/stages.py): "
        + ", ".join(f"line {line}: {text}" for line, text in found)
    )


def _layers() -> dict[str, tuple[int, bool]]:
    """Each layered package's layer in [tool.importlinter] (0: the top) and whether the packages
    of its layer may import one another (``a : b``; ``a | b`` are independent)."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return {
        package.strip(): (index, ":" in layer)
        for index, layer in enumerate(contract["layers"])
        for package in re.split(r"[|:]", layer)
    }


LAYERS = _layers()


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])  # replicator.values._buf -> replicator.values


def imported_modules(source: str) -> list[tuple[int, str]]:
    """(line, module) of every ``import``, ``cimport`` and ``from ... (c)import`` statement (at
    any indentation; not in comments or strings)."""
    skip = (tokenize.INDENT, tokenize.DEDENT)
    code = [t for t in _code(list(tokenize.generate_tokens(io.StringIO(source).readline))) if t.type not in skip]
    found = []
    for i, tok in enumerate(code):
        if tok.type != tokenize.NAME or tok.string not in ("from", "import", "cimport"):
            continue
        if i and code[i - 1].start[0] == tok.start[0]:
            continue  # ``from x import y``'s import, or not a statement's first word
        name = []  # the dotted name after the keyword, on its line
        for t in code[i + 1 :]:
            if t.start[0] != tok.start[0] or t.string in ("import", "cimport", "as", ","):
                break
            name.append(t.string)
        found.append((tok.start[0], "".join(name)))
    return found


def layer_violations(module: str, source: str) -> list[tuple[int, str]]:
    """(line, module) of every import or cimport in ``source`` (the compiled module or ``.pxd``
    ``module``) that its package's layer may not make: only its own package, lower layers, and
    the other packages of a ``:`` layer."""
    own = LAYERS[_package(module)]
    found = []
    for line, target in imported_modules(source):
        theirs = LAYERS.get(_package(target)) if target.startswith("replicator.") else None
        if theirs is None or _package(target) == _package(module) or theirs[0] > own[0]:
            continue
        if theirs[0] == own[0] and own[1]:
            continue
        found.append((line, target))
    return found


def test_the_layer_check_finds_imports_from_above() -> None:
    source = (
        '"""from replicator.runner import x (a docstring)"""\n'
        "from libc.stdint cimport uint8_t\n"
        "from replicator.values._buf cimport Buf  # its own package\n"
        "from replicator.native._structs cimport Work\n"
        "cimport replicator.redo._framing\n"
        "def f():\n"
        "    from replicator.errors import RedoLogError\n"
        "    import replicator.formats.escape as escape\n"
    )
    assert layer_violations("replicator.values._x", source) == [
        (4, "replicator.native._structs"),
        (5, "replicator.redo._framing"),
        (8, "replicator.formats.escape"),
    ]
    assert layer_violations("replicator.native._x", source) == []
    assert layer_violations("replicator.redo._x", "from replicator.txn.pool import MemoryPool\n") == []  # txn : redo


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(REPO / "replicator").as_posix())
def test_native_sources_keep_to_their_layer(path: Path) -> None:
    module = ".".join(path.relative_to(REPO).with_suffix("").parts)
    found = layer_violations(module, path.read_text())
    assert not found, f"{module} imports above its layer ([tool.importlinter]): " + ", ".join(
        f"line {line}: {target}" for line, target in found
    )


def _port_members(port: type) -> set[str]:
    """The attributes and methods a port Protocol declares (its own and its base ports')."""
    names: set[str] = set()
    for klass in port.__mro__:
        if klass.__module__ != "replicator.runner.stages":
            continue
        names |= set(inspect.get_annotations(klass))
        names |= {n for n, v in klass.__dict__.items() if callable(v) and not n.startswith("_")}
    return names


def _has_member(cls: type, name: str) -> bool:
    """Whether ``cls`` defines ``name``: a class member, or an attribute its methods assign."""
    import inspect

    if hasattr(cls, name):
        return True
    assigns = re.compile(r"self\.%s\s*(?::[^=\n]*)?=|self\.(?:\w+, self\.)*%s(?:, self\.\w+)* =" % (name, name))
    return any(assigns.search(inspect.getsource(k)) for k in cls.__mro__ if k.__module__.startswith("replicator."))


def _implementations() -> list[tuple[str, type, list[type]]]:
    from replicator.formats.debezium import DebeziumFormat
    from replicator.formats.framework import EventFormat
    from replicator.formats.olr_columns import TablePlan
    from replicator.formats.olr_header import HeaderBuilder
    from replicator.formats.olr_json import OlrJsonFormat
    from replicator.formats.olr_rows import UpdateReducer
    from replicator.formats.protobuf import ProtobufFormat
    from replicator.formats.protobuf_plan import PbTablePlan
    from replicator.redo.parser import Parser
    from replicator.runner import stages
    from replicator.runner.checkpoint import CheckpointManager
    from replicator.runner.daemon_engine import DaemonEngine
    from replicator.runner.driver import Driver
    from replicator.runner.pipeline import Pipeline
    from replicator.runner.rac_engine import RacEngine
    from replicator.txn.buffer import OpenTransaction, TransactionBuffer
    from replicator.txn.pool import MemoryPool

    return [
        ("HeaderPort", stages.HeaderPort, [HeaderBuilder]),
        ("ReducerPort", stages.ReducerPort, [UpdateReducer]),
        ("TablePlanPort", stages.TablePlanPort, [TablePlan]),
        ("PbTablePlanPort", stages.PbTablePlanPort, [PbTablePlan]),
        ("JsonFormatPort", stages.JsonFormatPort, [OlrJsonFormat]),
        ("ProtobufFormatPort", stages.ProtobufFormatPort, [ProtobufFormat]),
        ("EventFormatPort", stages.EventFormatPort, [EventFormat]),
        ("DebeziumFormatPort", stages.DebeziumFormatPort, [DebeziumFormat]),
        ("PoolPort", stages.PoolPort, [MemoryPool]),
        ("OpenTransactionPort", stages.OpenTransactionPort, [OpenTransaction]),
        ("BufferPort", stages.BufferPort, [TransactionBuffer]),
        ("ParserPort", stages.ParserPort, [Parser]),
        ("CheckpointPort", stages.CheckpointPort, [CheckpointManager]),
        ("CommitSink", stages.CommitSink, [Driver, Pipeline, DaemonEngine]),
        ("NativeDriver", stages.NativeDriver, [Driver, Pipeline, DaemonEngine, RacEngine]),
        ("DaemonDriverPort", stages.DaemonDriverPort, [DaemonEngine]),
        ("RacDriverPort", stages.RacDriverPort, [RacEngine]),
    ]


def test_the_python_classes_have_what_their_ports_declare() -> None:
    """Each port's members exist on the classes the native engine is given (a rename of one in the
    python class fails here, not on the native path at run time)."""
    missing = [
        f"{cls.__name__}.{name} ({label})"
        for label, port, classes in _implementations()
        for cls in classes
        for name in sorted(_port_members(port))
        if not _has_member(cls, name)
    ]
    assert not missing, "members the native engine relies on are missing: " + ", ".join(missing)
    from replicator.runner.stages import ParserPort

    assert len(_port_members(ParserPort)) > 20  # the members are found (else the check is empty)
