"""Fail the container build unless the replicator wheel in DIR carries the compiled native core.

Usage: python deploy/check_native_wheel.py WHEEL_DIR

A wheel built without a C compiler is ``py3-none-any`` and holds no extension: the image
would then run the python engine, at many times the CPU of the native one. The wheel must
be tagged for a platform (``cp311-cp311-linux_x86_64``) and hold every native module
(``replicator/native/_core*.so`` and the modules split off it, ``NATIVE_MODULES``, a few of
them beside their python twins), the
``.pxd`` they cimport, and no ``_build_error.txt`` (the reason a build fell back).
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

# The compiled modules by full name (replicator.native: its CORE, MODULES and STANDALONE; setup.py's
# MODULES) and the C-level declarations they share. This script runs without the package installed.
NATIVE_MODULES = (
    "replicator.native._core",
    "replicator.values._values",
    "replicator.writers._kafka",
    "replicator.native._runframes",
    "replicator.formats._dbztxn",
    "replicator.native._tally",
    "replicator.redo._framing",
    "replicator.native._debezium",
    "replicator.formats._rowvalues",
    "replicator.native._rows",
    "replicator.formats._avro",
    "replicator.native._protobuf",
    "replicator.native._dispatch",
    "replicator.native._daemon_loop",
    "replicator.native._stage2",
    "replicator.spark._parse",
)
PXD_FILES = (
    "replicator/values/_buf.pxd",
    "replicator/values/_values.pxd",
    "replicator/native/_core.pxd",
    "replicator/formats/_dbztxn.pxd",
    "replicator/native/_structs.pxd",
    "replicator/native/_tally.pxd",
    "replicator/redo/_framing.pxd",
    "replicator/native/_dispatch.pxd",
    "replicator/formats/_rowvalues.pxd",
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
        path = module.replace(".", "/")
        if not any(n.startswith(f"{path}.") and n.endswith(".so") for n in names):
            found.append(f"no {path}*.so in it")
    for pxd in PXD_FILES:
        if pxd not in names:
            found.append(f"no {pxd} in it (package-data in pyproject.toml)")
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
