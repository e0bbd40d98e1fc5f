"""Output sinks: one module per ``writer.type``, created through :func:`create_writer`."""

from replicator.writers.base import ConfirmCallback, Writer, create_writer, register_writer, writer_class

__all__ = ["ConfirmCallback", "Writer", "create_writer", "register_writer", "writer_class"]
