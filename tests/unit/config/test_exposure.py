"""check-config warns when a network/zeromq writer listens beyond loopback without auth (issue 15, fault 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replicator.cli import main
from replicator.config.exposure import is_loopback


def _check(tmp_path: Path, writer: dict, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    doc = {
        "version": "1.9.0",
        "source": [
            {"alias": "S", "name": "DB", "reader": {"type": "batch", "redo-log": ["x"]}, "format": {"type": "json"}}
        ],
        "target": [{"alias": "T", "source": "S", "writer": writer}],
    }
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(doc))
    rc = main(["check-config", "--config-only", "-f", str(path)])
    return rc, capsys.readouterr().out


@pytest.mark.parametrize(
    ("writer", "warned"),
    [
        ({"type": "network", "uri": "0.0.0.0:5000"}, True),
        ({"type": "network", "uri": "10.1.2.3:5000"}, True),
        ({"type": "network", "uri": "0.0.0.0:5000", "auth-token": "s3cret-token-0123"}, False),
        ({"type": "network", "uri": "127.0.0.1:5000"}, False),
        ({"type": "network", "uri": ":5000"}, False),  # no host: 127.0.0.1
        ({"type": "zeromq", "uri": "tcp://*:5001"}, True),
        ({"type": "zeromq", "uri": "tcp://[::1]:5001"}, False),
        ({"type": "zeromq", "uri": "ipc:///tmp/cdc"}, False),
        ({"type": "zeromq", "uri": "tcp://0.0.0.0:5001", "auth-token": "s3cret-token-0123"}, False),
        ({"type": "network", "uri": "0.0.0.0:5000", "auth-token": None}, True),  # the examples' placeholder
    ],
)
def test_check_config_exposure(tmp_path: Path, capsys: pytest.CaptureFixture[str], writer: dict, warned: bool) -> None:
    rc, out = _check(tmp_path, writer, capsys)
    assert rc == 0 and out.rstrip().endswith(": OK")
    assert ("WARN 60104" in out) == warned, out


def test_loopback_names() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("127.1.2.3") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("*") and not is_loopback("db.example.com")


@pytest.mark.parametrize(
    ("writer", "code", "text"),
    [
        ({"type": "network", "uri": "127.0.0.1:5000", "auth-token": "short"}, 30001, "16 to 256 characters"),
        ({"type": "zeromq", "uri": "tcp://127.0.0.1:5001", "tls-cert": "/c.pem"}, 20003, "network writer only"),
        ({"type": "file", "output": "o.json", "auth-token": "s3cret-token-0123"}, 20003, "network and zeromq"),
        ({"type": "zeromq", "uri": "inproc://cdc"}, 30008, "tcp://HOST:PORT"),
        ({"type": "zeromq", "uri": "tcp://127.0.0.1:port"}, 30008, "tcp://HOST:PORT"),
    ],
)
def test_stream_auth_keys_are_validated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], writer: dict, code: int, text: str
) -> None:
    """A short token, a key the writer type does not read, an endpoint the writer cannot serve: errors."""
    rc, out = _check(tmp_path, writer, capsys)
    assert rc == 1 and f"[{code}]" in out and text in out, out
    assert "short" not in out.replace("value: <hidden>", "")  # the token itself is never printed
