"""Build of the optional native decode core (Cython .pyx files, most in replicator/native; MODULES below).

Everything else is declared in pyproject.toml. The extension is optional: when Cython or
the C compiler fails, the install still succeeds, the reason is kept in
``replicator/native/_build_error.txt`` and the run-time warning 60190 quotes it (the
python engine is used). With ``REPLICATOR_REQUIRE_NATIVE=1`` (the container build) a failure
fails the build instead.

Translating and compiling take a few minutes and pip hides a build's output (``-q``, or
without ``-v``), so one line is written to the terminal before each long step.
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NATIVE = os.path.join("replicator", "native")
ERROR_FILE = os.path.join(NATIVE, "_build_error.txt")
# The native extension modules, by full name: each is its module's path .pyx (most in
# replicator/native, the engine; a few beside the python module they mirror), rebuilt (translated
# and compiled again) when it or one of the files it reads changes: the .pxi files it includes and
# the .pxd files it declares or cimports, given relative to replicator/ (values/_buf.pxd: the byte
# buffer and the inline byte and value helpers; native/_structs.pxd: phase A's C structs;
# native/_core.pxd: the core's classes the other modules use; values/_values.pxd: the value
# decoders; redo/_framing.pxd: the block checks; native/_dispatch.pxd: the record dispatch and loop;
# formats/_rowvalues.pxd: the typed row images).
# A module split off _core is one more entry (docs/native-engine.md "Native modules").
MODULES: dict[str, tuple[str, ...]] = {
    "replicator.native._core": (
        "native/_core.pxd",
        "values/_values.pxd",
        "values/_buf.pxd",
        "native/_structs.pxd",
        "native/_defs.pxi",
        "native/_tally.pxd",
    ),
    # the value decoders and the renderers' value texts (the core and the renderers call them),
    # beside the python decoders
    "replicator.values._values": ("values/_values.pxd", "values/_buf.pxd"),
    # the native Kafka producer (reads MessageRun's fields), beside the kafka writer
    "replicator.writers._kafka": ("native/_core.pxd", "values/_buf.pxd", "native/_structs.pxd"),
    # stream framing and positions of MessageRuns
    "replicator.native._runframes": ("native/_core.pxd", "values/_buf.pxd", "native/_structs.pxd"),
    # Debezium's transaction metadata (_debezium calls it), beside the Debezium format
    "replicator.formats._dbztxn": ("formats/_dbztxn.pxd",),
    # output metrics of a native commit (the core calls it)
    "replicator.native._tally": ("native/_tally.pxd", "native/_structs.pxd", "native/_defs.pxi"),
    # block checks and framing errors (the record loop calls them), beside redo/blocks.py
    "replicator.redo._framing": ("redo/_framing.pxd", "values/_buf.pxd"),
    # The renderers split off the core: each subclasses the core's committer and plan (_core.pxd).
    "replicator.native._debezium": (
        "native/_core.pxd",
        "values/_values.pxd",
        "values/_buf.pxd",
        "native/_structs.pxd",
        "native/_defs.pxi",
        "formats/_dbztxn.pxd",
    ),
    # the typed row images (RowImages: the cells, their texts), beside formats/rowvalues.py
    "replicator.formats._rowvalues": ("formats/_rowvalues.pxd", "values/_values.pxd", "values/_buf.pxd"),
    # EventCommitter: phase A's rows into RowImages (_rowvalues.pxd) for the formats' on_native_row
    "replicator.native._rows": (
        "formats/_rowvalues.pxd",
        "native/_core.pxd",
        "values/_buf.pxd",
        "native/_structs.pxd",
        "native/_defs.pxi",
    ),
    # avro, dts-avro, OMS light types from the row images, beside formats/avro.py
    "replicator.formats._avro": ("formats/_rowvalues.pxd", "values/_values.pxd", "values/_buf.pxd"),
    "replicator.native._protobuf": (
        "native/_core.pxd",
        "values/_values.pxd",
        "values/_buf.pxd",
        "native/_structs.pxd",
        "native/_defs.pxi",
    ),
    # stage 1: the record dispatch, OLR's field checks, the batch record loop (grow of _core.pxd)
    "replicator.native._dispatch": (
        "native/_dispatch.pxd",
        "native/_core.pxd",
        "redo/_framing.pxd",
        "values/_buf.pxd",
        "native/_structs.pxd",
        "native/_defs.pxi",
    ),
    # the daemon's record loops: subclass _dispatch's RecordLoop and RecordDispatcher (_dispatch.pxd)
    "replicator.native._daemon_loop": ("native/_dispatch.pxd", "values/_buf.pxd", "native/_defs.pxi"),
    # stage 2 (--decode-workers): drives the core's JsonCommitter (_core.pxd)
    "replicator.native._stage2": (
        "native/_core.pxd",
        "values/_values.pxd",
        "native/_tally.pxd",
        "values/_buf.pxd",
        "native/_structs.pxd",
        "native/_defs.pxi",
    ),
    # the Spark job's OLR JSON parse (replicator/spark/parse.py), standalone
    "replicator.spark._parse": (),
}
REQUIRED = os.environ.get("REPLICATOR_REQUIRE_NATIVE") == "1"


def announce(text: str) -> None:
    """One line on the terminal even when pip captures the build's output (stderr otherwise)."""
    line = f"replicator: {text}\n"
    try:
        with open("/dev/tty", "w", encoding="utf-8") as tty:
            tty.write(line)
    except OSError:
        sys.stderr.write(line)


def _source(name: str) -> str:
    return os.path.join(*name.split(".")) + ".pyx"


def _depends(name: str) -> list[str]:
    return [os.path.join("replicator", *dep.split("/")) for dep in MODULES[name]]


def _c_file_stale(name: str) -> bool:
    source = _source(name)
    c_file = source[:-4] + ".c"
    if not os.path.exists(c_file):
        return True
    inputs = [p for p in [source, *_depends(name)] if os.path.exists(p)]
    return os.path.getmtime(c_file) < max(os.path.getmtime(p) for p in inputs)


def _extensions() -> tuple[list[Extension], str]:
    try:
        from Cython.Build import cythonize

        stale = [name for name in MODULES if _c_file_stale(name)]
        if stale:
            wait = "about a minute; the C compiler follows" if "replicator.native._core" in stale else "seconds"
            announce(f"translating the native modules {', '.join(stale)} to C with Cython ({wait})")
        exts = [
            Extension(name, [_source(name)], depends=_depends(name), extra_compile_args=["-O2"]) for name in MODULES
        ]
        return cythonize(exts, language_level=3, quiet=True), ""
    except Exception as exc:  # Cython missing or a .pyx does not translate
        return [], f"Cython could not translate the native core: {exc}"


class OptionalBuildExt(build_ext):
    """build_ext that records a failure instead of failing the install (unless REQUIRED)."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            self._record(f"building the native core failed: {exc}")
        else:
            self._record("")

    def build_extension(self, ext: Extension) -> None:
        if self._out_of_date(ext):
            c_size = sum(os.path.getsize(p) for p in ext.sources if p.endswith(".c") and os.path.exists(p))
            wait = "1 to 3 minutes; the install waits for it" if c_size > 2_000_000 else "a few seconds"
            announce(f"compiling {ext.name} with the C compiler ({wait})")
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._record(f"compiling {ext.name} failed: {exc}")

    def _out_of_date(self, ext: Extension) -> bool:
        try:
            from setuptools.modified import newer_group
        except ImportError:  # setuptools < 69
            from distutils.dep_util import newer_group  # type: ignore[no-redef]
        target = self.get_ext_fullpath(ext.name)
        return bool(self.force or newer_group([*ext.sources, *(ext.depends or [])], target, "newer"))

    def _record(self, reason: str) -> None:
        if reason and REQUIRED:
            raise SystemExit(f"error: {reason} (REPLICATOR_REQUIRE_NATIVE=1: the native core must build)")
        for root in {self.build_lib, "."} if self.inplace else {self.build_lib}:
            path = os.path.join(root, ERROR_FILE)
            if reason:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(reason + "\n")
            elif os.path.exists(path) and not getattr(self, "_failed", False):
                os.unlink(path)
        if reason:
            self._failed = True
            print(f"WARNING: {reason}; the python engine will be used")


EXTENSIONS, CYTHON_ERROR = _extensions()
if CYTHON_ERROR:
    if REQUIRED:
        raise SystemExit(f"error: {CYTHON_ERROR} (REPLICATOR_REQUIRE_NATIVE=1: the native core must build)")
    os.makedirs(os.path.dirname(ERROR_FILE), exist_ok=True)
    with open(ERROR_FILE, "w", encoding="utf-8") as f:
        f.write(CYTHON_ERROR + "\n")
    print(f"WARNING: {CYTHON_ERROR}; the python engine will be used")

setup(ext_modules=EXTENSIONS, cmdclass={"build_ext": OptionalBuildExt})
