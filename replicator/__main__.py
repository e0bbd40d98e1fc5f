"""Allow ``python -m replicator``."""

from replicator.cli import console_main

raise SystemExit(console_main())
