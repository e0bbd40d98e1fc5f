"""Protobuf messages of the OpenLogReplicator protocol and format (``olr.proto``).

``olr_pb2`` is generated code, committed (see :mod:`replicator.proto.regenerate` for how to
rebuild it and which generator version produced it). Import it as
``from replicator.proto import olr_pb2 as pb``.
"""
