"""``python -m replicator.native``: say whether the compiled modules load; exit 1 when they do not.

The container build runs it after installing the wheel, so an image whose native engine
would not load (the python engine at many times the CPU) fails to build instead.
"""

from __future__ import annotations

import sys

from replicator.errors import ConfigError
from replicator.native import available, load_all, spark_events, unavailable_reason


def main() -> int:
    """Print the engine ``run`` would use by default and where the compiled core is."""
    if not available():
        print(f"native engine: unavailable: {unavailable_reason()}", file=sys.stderr)
        return 1
    try:
        compiled, *siblings = load_all()
    except ConfigError as exc:
        print(f"native engine: unavailable: {exc.message}", file=sys.stderr)
        return 1
    print(f"native engine: {compiled.__file__}")
    for module in siblings:
        print(f"  with {module.__file__}")
    parse = spark_events()
    if parse is None:  # built with the others: an image without it would parse in python
        print("the Spark job's compiled parse (replicator.spark._parse) does not load", file=sys.stderr)
        return 1
    print(f"  the Spark job's parse: {parse.__file__}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
