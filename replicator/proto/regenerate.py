"""Regenerate ``olr_pb2.py`` and its type stub ``olr_pb2.pyi`` from ``olr.proto``:
``python -m replicator.proto.regenerate``.

The generated module is committed so a normal install needs only the ``protobuf`` runtime.
Generation needs ``grpcio-tools`` (``pip install grpcio-tools==1.85.1``, which bundles
libprotoc 35.1); the versions used are written into the module's first lines so a
reviewer sees which generator produced it. The runtime must be at least as new as the
generator's protobuf version (the generated code checks this at import time).
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROTO = HERE / "olr.proto"
OUTPUT = HERE / "olr_pb2.py"
STUB = HERE / "olr_pb2.pyi"


def _versions() -> str:
    tools = metadata.version("grpcio-tools")
    runtime = metadata.version("protobuf")
    return (
        f"# Generator: grpcio-tools {tools} (its bundled protoc); protobuf runtime {runtime} installed.\n"
        "# Needs a protobuf runtime at least as new as the 'Protobuf Python Version' below.\n"
    )


def main() -> int:
    """Run protoc (from grpcio-tools) and stamp the generator versions into the output."""
    try:
        from grpc_tools import protoc  # type: ignore[import-untyped]
    except ImportError:
        print("grpcio-tools is not installed: pip install grpcio-tools==1.85.1", file=sys.stderr)
        return 1
    code = protoc.main(["protoc", f"--proto_path={HERE}", f"--python_out={HERE}", f"--pyi_out={HERE}", str(PROTO)])
    if code != 0:
        print(f"protoc failed with exit code {code}", file=sys.stderr)
        return int(code)
    text = OUTPUT.read_text(encoding="utf-8")
    header = "# Generated from olr.proto by replicator/proto/regenerate.py: do not edit.\n" + _versions()
    OUTPUT.write_text(header + text, encoding="utf-8")
    STUB.write_text(header + STUB.read_text(encoding="utf-8"), encoding="utf-8")
    print(f"wrote {OUTPUT.name} and {STUB.name}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
