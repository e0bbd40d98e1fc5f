"""Helpers for writer tests: build writer configs and messages, record confirmations."""

from __future__ import annotations

from typing import Any

from replicator.config import FileWriterConfig, parse_config
from replicator.events import Message

BASE: dict[str, Any] = {
    "version": "1.9.0",
    "source": [
        {"alias": "S", "name": "DB", "reader": {"type": "batch", "redo-log": ["x"]}, "format": {"type": "json"}}
    ],
    "target": [{"alias": "T", "source": "S", "writer": {"type": "file"}}],
}


def writer_config(**keys: Any) -> Any:
    """A validated writer section built from JSON keys (``type`` defaults to file)."""
    doc = {**BASE, "target": [{"alias": "T", "source": "S", "writer": {"type": "file", **keys}}]}
    return parse_config(doc).writer


def file_config(**keys: Any) -> FileWriterConfig:
    """A validated file writer section; keys use their JSON names."""
    config = writer_config(**keys)
    assert isinstance(config, FileWriterConfig)
    return config


def msg(data: bytes, scn: int = 100, idx: int = 0, *, seq: int = 1, checkpoint: bool = False) -> Message:
    """A message at position (scn, idx)."""
    return Message(data=data, scn=scn, idx=idx, seq=seq, checkpoint=checkpoint)


class Confirmed(list[tuple[int, int]]):
    """An ``on_confirm`` callback that records the positions."""

    def __call__(self, scn: int, idx: int) -> None:
        self.append((scn, idx))
