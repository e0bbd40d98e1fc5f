"""Container health check: the metrics endpoint answers and the service is not aborting.

Exit 0 when ``http://127.0.0.1:$METRICS_PORT/metrics`` answers within the timeout and
``service_state{state="aborting"}`` is not 1; exit 1 otherwise (Docker's convention).
"""

from __future__ import annotations

import os
import sys
import urllib.request


def main() -> int:
    """Probe the metrics endpoint once."""
    port = os.environ.get("METRICS_PORT", "9161")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=4) as reply:
            body = reply.read().decode("utf-8", "replace")
    except OSError as exc:
        print(f"metrics endpoint not answering: {exc}", file=sys.stderr)
        return 1
    if 'service_state{state="aborting"} 1.0' in body:
        print("service is aborting", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
