"""Build of the optional native decode core (replicator/native/_core.pyx, Cython).

Everything else is declared in pyproject.toml. The extension is optional: when Cython or
the C compiler fails, the install still succeeds, the reason is kept in
``replicator/native/_build_error.txt`` and the run-time warning 60190 quotes it (the
python engine is used).
"""

from __future__ import annotations

import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ERROR_FILE = os.path.join("replicator", "native", "_build_error.txt")


def _extensions() -> tuple[list[Extension], str]:
    try:
        from Cython.Build import cythonize

        native = os.path.join("replicator", "native")
        ext = Extension("replicator.native._core", [os.path.join(native, "_core.pyx")],
                        # the files _core.pyx includes (other formats): rebuilt and shipped with it
                        depends=[os.path.join(native, name) for name in (
                            "_dbztxn.pxi", "_debezium.pxi", "_rows.pxi", "_avro.pxi", "_protobuf.pxi", "_stage2.pxi",
                            "_tally.pxi", "_daemon_loop.pxi")],
                        extra_compile_args=["-O2"])
        return cythonize([ext], language_level=3, quiet=True), ""
    except Exception as exc:  # Cython missing or the .pyx does not translate
        return [], f"Cython could not translate the native core: {exc}"


class OptionalBuildExt(build_ext):
    """build_ext that records a failure instead of failing the install."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:
            self._record(f"building the native core failed: {exc}")
        else:
            self._record("")

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._record(f"compiling {ext.name} failed: {exc}")

    def _record(self, reason: str) -> None:
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
    os.makedirs(os.path.dirname(ERROR_FILE), exist_ok=True)
    with open(ERROR_FILE, "w", encoding="utf-8") as f:
        f.write(CYTHON_ERROR + "\n")
    print(f"WARNING: {CYTHON_ERROR}; the python engine will be used")

setup(ext_modules=EXTENSIONS, cmdclass={"build_ext": OptionalBuildExt})
