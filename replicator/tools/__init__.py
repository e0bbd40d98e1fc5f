"""Operator tools: the redo dump, docs generation, the stream-protocol client."""
