"""Allow ``python -m replicator``."""

from replicator.cli import main

raise SystemExit(main())
