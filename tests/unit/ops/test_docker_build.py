"""The container image carries the native engine (issue 32, item 1).

Docker is not needed: the build context is made as Docker makes it (the repository's files
the ``.dockerignore`` lets through), the build stage's ``COPY`` lines lay it out, and its
``RUN`` lines run as written (all but the system package install) with this environment's
Python. The wheel must be platform-specific and hold the compiled extension, and the
runtime stage's check (``python -m replicator.native``) must pass on it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from ops_helpers import REPO

sys.path.insert(0, str(REPO / "deploy"))
from check_native_wheel import NATIVE_MODULES, PXD_FILES, problems  # noqa: E402

DOCKERFILE = REPO / "deploy" / "Dockerfile"


def _patterns() -> list[tuple[bool, re.Pattern[str]]]:
    """The .dockerignore as (exception, regex) pairs, in order (Docker's pattern syntax)."""
    rules = []
    for raw in (REPO / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        exception = line.startswith("!")
        pattern = os.path.normpath(line.lstrip("!").strip()).lstrip("/")
        regex = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                regex, i = regex + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                regex, i = regex + ".*", i + 2
            elif pattern[i] == "*":
                regex, i = regex + "[^/]*", i + 1
            elif pattern[i] == "?":
                regex, i = regex + "[^/]", i + 1
            else:
                regex, i = regex + re.escape(pattern[i]), i + 1
        rules.append((exception, re.compile(regex)))
    return rules


def _excluded(path: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parents decides."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]
    excluded = False
    for exception, regex in rules:
        if any(regex.fullmatch(p) for p in prefixes):
            excluded = not exception
    return excluded


def build_context(root: Path = REPO) -> list[str]:
    """The files (relative paths) ``docker build`` would send, from what is on disk now."""
    rules = _patterns()
    keep_dirs = [regex for exception, regex in rules if exception]
    found = []
    for directory, dirs, files in os.walk(root):
        rel_dir = os.path.relpath(directory, root)
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        # Descend into an excluded directory only when an exception could re-include something in it.
        dirs[:] = [
            d
            for d in dirs
            if not _excluded(rel_dir + d, rules) or any(r.pattern.startswith(re.escape(rel_dir + d)) for r in keep_dirs)
        ]
        found += [rel_dir + f for f in files if not _excluded(rel_dir + f, rules)]
    return sorted(found)


def _stage(name: str) -> list[str]:
    """The instructions of one stage of the Dockerfile (continuation lines joined)."""
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    stages = re.split(r"^FROM ", text, flags=re.M)[1:]
    body = next(s for s in stages if s.split("\n", 1)[0].split()[-1] == name)
    return [line.strip() for line in body.splitlines()[1:] if line.strip() and not line.lstrip().startswith("#")]


def test_context_holds_sources_only() -> None:
    context = build_context()
    assert context, "nothing in the build context"
    assert not [p for p in context if p.startswith((".venv/", "tests/", "docs/", ".git/"))]
    assert not [p for p in context if re.search(r"(\.so|\.c|\.pyc|_build_error\.txt)$", p)], (
        "build output of the native core would reach the image"
    )
    wanted = {"pyproject.toml", "setup.py", "README.md", "replicator/native/_core.pyx", "replicator/cli.py"}
    assert wanted <= set(context)
    size = sum((REPO / p).stat().st_size for p in context)
    assert size < 20e6, f"the build context is {size / 1e6:.0f} MB"
    for instruction in (i for stage in ("build", "spark", "runtime") for i in _stage(stage)):
        if instruction.startswith("COPY ") and "--from=" not in instruction:
            for source in instruction.split()[1:-1]:
                assert any(p == source or p.startswith(source.rstrip("/") + "/") for p in context), (
                    f"{instruction}: {source} is not in the build context"
                )


def test_build_stage_requires_the_native_core() -> None:
    runs = [i for i in _stage("build") if i.startswith("RUN ")]
    assert any("REPLICATOR_REQUIRE_NATIVE=1 pip wheel" in r for r in runs)
    assert any("check_native_wheel.py" in r for r in runs)
    for stage in ("spark", "runtime"):
        assert any("python -m replicator.native" in i for i in _stage(stage)), stage


def test_wheel_check(tmp_path: Path) -> None:
    pure = tmp_path / "replicator-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(pure, "w") as z:
        z.writestr("replicator/cli.py", "")
        z.writestr("replicator/native/_build_error.txt", "no compiler")
    assert len(problems(pure)) == 2 + len(NATIVE_MODULES) + len(PXD_FILES)
    native = tmp_path / "replicator-0.1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(native, "w") as z:
        for module in NATIVE_MODULES:
            z.writestr(f"{module.replace('.', '/')}.cpython-311-x86_64-linux-gnu.so", "")
        for pxd in PXD_FILES:
            z.writestr(pxd, "")
    assert problems(native) == []
    partial = tmp_path / "replicator-0.1.1-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(partial, "w") as z:
        z.writestr("replicator/native/_core.cpython-311-x86_64-linux-gnu.so", "")
        for pxd in PXD_FILES:
            z.writestr(pxd, "")
    assert problems(partial) == [f"no {m.replace('.', '/')}*.so in it" for m in NATIVE_MODULES[1:]]


def test_wheel_check_knows_every_native_module() -> None:
    """The wheel check's list is the package's (it runs without the package installed)."""
    from replicator import native

    assert NATIVE_MODULES == (native.CORE, *native.MODULES, *native.STANDALONE)
    built = re.findall(r'^    "(replicator\.[\w.]+)": \(', (REPO / "setup.py").read_text(), re.M)  # setup.py's MODULES
    assert tuple(built) == NATIVE_MODULES
    sources = {".".join(p.relative_to(REPO).with_suffix("").parts) for p in (REPO / "replicator").rglob("*.pyx")}
    assert sources == set(NATIVE_MODULES)  # every .pyx, wherever it lives, is built and checked
    assert set(PXD_FILES) == {p.relative_to(REPO).as_posix() for p in (REPO / "replicator").rglob("*.pxd")}


def _context_copy(tmp_path: Path) -> Path:
    context = tmp_path / "context"
    for rel in build_context():
        target = context / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target)
    return context


def test_required_native_core_fails_the_build_without_cython(tmp_path: Path) -> None:
    """REPLICATOR_REQUIRE_NATIVE=1: no Cython is an error, not a fallback to a pure-Python wheel."""
    context = _context_copy(tmp_path)
    hidden = tmp_path / "hide" / "Cython"
    hidden.mkdir(parents=True)
    (hidden / "__init__.py").write_text("raise ImportError('Cython hidden by the test')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "hide")}
    proc = subprocess.run(
        [sys.executable, "setup.py", "--name"],
        cwd=context,
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "REPLICATOR_REQUIRE_NATIVE": "1"},
    )
    assert proc.returncode != 0 and "the native core must build" in proc.stderr, proc.stdout + proc.stderr
    proc = subprocess.run(
        [sys.executable, "setup.py", "--name"], cwd=context, capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0 and "the python engine will be used" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.slow
def test_build_stage_makes_a_native_wheel(tmp_path: Path) -> None:
    """The build stage, step by step: COPY from the context, then its RUN lines (a few minutes: it compiles)."""
    context = _context_copy(tmp_path)
    src = tmp_path / "src"
    src.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for instruction in _stage("build"):
        op, _, rest = instruction.partition(" ")
        if op == "COPY":
            *sources, dest = rest.split()
            for source in sources:
                target = src / dest / Path(source).name if dest.endswith("/") else src / dest
                if (context / source).is_dir():
                    shutil.copytree(context / source, target)
                else:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(context / source, target)
        elif op == "RUN" and "apt-get" not in rest:  # the system compiler is this machine's
            proc = subprocess.run(["sh", "-c", rest], cwd=src, capture_output=True, text=True, timeout=1500, env=env)
            assert proc.returncode == 0, f"{instruction}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    wheels = list((src / "wheels").glob("replicator-*.whl"))
    assert len(wheels) == 1 and problems(wheels[0]) == [] and not wheels[0].name.endswith("none-any.whl")
    site = tmp_path / "site"  # the runtime stage's check, on the wheel installed alone
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheels[0])],
        check=True,
        timeout=300,
    )
    proc = subprocess.run(
        [sys.executable, "-m", "replicator.native"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
    )
    assert proc.returncode == 0 and str(site) in proc.stdout, proc.stdout + proc.stderr


def test_build_says_it_compiles(tmp_path: Path) -> None:
    """pip hides a build's output: setup.py writes its line to the terminal, else to stderr (no terminal here)."""
    pytest.importorskip("Cython", reason="Cython is not installed here (pip install -e '.[test]' brings it)")
    generated = [Path(*module.split(".")).with_suffix(".c") for module in NATIVE_MODULES]
    if not all((REPO / c).exists() for c in generated):
        pytest.skip("no generated replicator/**/*.c in this checkout (installed without building it here)")
    context = _context_copy(tmp_path)
    for c in generated:
        shutil.copy2(REPO / c, context / c)  # up to date: no translation
    env = {**os.environ, "CC": "false"}  # the compile fails at once: only the announcement is wanted
    proc = subprocess.run(
        [
            sys.executable,
            "setup.py",
            "-q",
            "build_ext",
            "--build-lib",
            str(tmp_path / "lib"),
            "--build-temp",
            str(tmp_path / "tmp"),
        ],
        cwd=context,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        start_new_session=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "replicator: compiling replicator.native._core with the C compiler" in proc.stderr, proc.stderr
    assert "translating" not in proc.stderr and "the python engine will be used" in proc.stdout
