"""Whether the writer can deliver: the daemon is READY (systemd) and "replicating" only then.

A stream writer is ready once a client asked for the stream. A writer that talks to a
broker (:class:`DeliveryProbe`, the Kafka writer) is ready once the broker answered: before
it, the daemon waits (WARN 60120 once, STATUS ``waiting for the Kafka broker: ...``, the
metrics state stays ``ready``), so ``systemctl start`` does not report a service that cannot
deliver as started. Later, while the broker is unreachable and messages wait for delivery,
STATUS reads ``degraded: ...`` instead of ``replicating: ...`` (docs/operations.md).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class DeliveryProbe(Protocol):
    """A writer that can tell whether it reaches where it delivers."""

    def unreachable(self, timeout: float) -> str | None:
        """None when the destination answered within ``timeout`` seconds, else why not."""

    def delivery_problem(self) -> str | None:
        """Why messages are not being delivered now (None while deliveries go on)."""
