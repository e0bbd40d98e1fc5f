"""Fail the container build unless the replicator wheel in DIR carries the compiled native core.

Usage: python deploy/check_native_wheel.py WHEEL_DIR

A wheel built without a C compiler is ``py3-none-any`` and holds no extension: the image
would then run the python engine, at many times the CPU of the native one. The wheel must
be tagged for a platform (``cp311-cp311-linux_x86_64``) and hold every native module
(``replicator/native/_core*.so`` and the modules split off it, ``NATIVE_MODULES``), the
``.pxd`` they cimport, and no ``_build_error.txt`` (the reason a build fell back).
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

# The compiled modules (replicator.native: "_core", its MODULES and STANDALONE; setup.py's MODULES) and
# the C-level declarations they share. This script runs without the package installed.
NATIVE_MODULES = (
    "_core",
    "_values",
    "_kafka",
    "_runframes",
    "_dbztxn",
    "_tally",
    "_framing",
    "_debezium",
    "_rows",
    "_avro",
    "_protobuf",
    "_dispatch",
    "_daemon_loop",
    "_stage2",
    "_sparkevents",
)
PXD_FILES = (
    "_values.pxd",
    "_core.pxd",
    "_dbztxn.pxd",
    "_structs.pxd",
    "_tally.pxd",
    "_framing.pxd",
    "_dispatch.pxd",
    "_debezium.pxd",
    "_rows.pxd",
)


def problems(wheel: Path) -> list[str]:
    """What is wrong with ``wheel`` (empty when it carries the native core)."""
    found = []
    tag = wheel.stem.split("-", 2)[2]  # name-version-python-abi-platform
    if tag.endswith("none-any"):
        found.append(f"tag {tag}: pure Python, the native core was not compiled")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    for module in NATIVE_MODULES:
        if not any(n.startswith(f"replicator/native/{module}.") and n.endswith(".so") for n in names):
            found.append(f"no replicator/native/{module}*.so in it")
    for pxd in PXD_FILES:
        if f"replicator/native/{pxd}" not in names:
            found.append(f"no replicator/native/{pxd} in it (package-data in pyproject.toml)")
    if "replicator/native/_build_error.txt" in names:
        found.append("it holds replicator/native/_build_error.txt (the build fell back to the python engine)")
    return found


def main(argv: list[str]) -> int:
    """Check the one replicator wheel of ``argv[0]``; print what is wrong and return 1, else 0."""
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    wheels = sorted(Path(argv[0]).glob("replicator-*.whl"))
    if len(wheels) != 1:
        print(f"expected one replicator wheel in {argv[0]}, found {len(wheels)}", file=sys.stderr)
        return 1
    found = problems(wheels[0])
    for problem in found:
        print(f"{wheels[0].name}: {problem}", file=sys.stderr)
    if not found:
        print(f"{wheels[0].name}: native core included")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
