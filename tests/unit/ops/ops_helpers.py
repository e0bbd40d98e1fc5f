"""Helpers for the operations tests: free ports, a fixture config, scraping /metrics.

A plain module (not conftest.py): several conftest modules share that name, so importing
from one is ambiguous.
"""

from __future__ import annotations

import socket
import urllib.request
from pathlib import Path
from typing import Any

from fixture_configs import free23_batch_config, write_config
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parents[3]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def parse_metrics(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Exposition text -> {(sample name, sorted labels): value}."""
    values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return values


def scrape(port: int, timeout: float = 2.0) -> str:
    """GET /metrics from 127.0.0.1:port."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as reply:
        return reply.read().decode("utf-8")


def value(samples: dict[Any, float], name: str, **labels: str) -> float | None:
    """One sample's value, or None when absent."""
    return samples.get((name, tuple(sorted(labels.items()))))


def free23_config(free23: Path, tmp_path: Path, **top: Any) -> Path:
    """The free23 fixture as a batch config (UTC host), with extra top-level sections."""
    cfg = free23_batch_config(free23, tmp_path)
    cfg.update(top)
    return write_config(tmp_path, cfg)
