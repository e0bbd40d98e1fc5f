"""Daemon with a network/zeromq writer SIGKILLed mid-stream; the client reconnects (issue 15).

``replicator client --reconnect`` prints every message and confirms often. After each kill
(landing mid-stream: the client's output grew by a random amount since the run started)
the daemon restarts from its confirmed position and the client continues from the last
message it printed. The writer re-sends what was not confirmed; the client's CONTINUE
position drops what it already has, exactly: the restarted writer holds the replay until
the client's own message comes again (positions do not grow along the stream, so the
old skip "at or below the position" re-sent up to 123 confirmed lines). Expected: 0
lost, in order, and any duplicate lies after the last position the client confirmed
before the kill (``--confirm-log``); duplicates are counted and printed. For ZeroMQ this
needs the client to notice the restart (it used to wait forever).
"""

from __future__ import annotations

import random
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from crash_kills import assert_all_mid_stream, kill_mid_stream
from fixture_configs import fast_offline_config, write_config

from replicator.redogen import workloads
from replicator.redogen.generate import generate


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["network", "zeromq"])
def test_sigkill_with_a_reconnecting_client(tmp_path: Path, kind: str) -> None:
    rng = random.Random(int(time.time_ns() % 100000))
    # About 10 MB of messages: the daemon may be several MB ahead of what the client has written
    # (the kernel's socket buffers); over a 2.4 MB stream a kill then found the output complete.
    result = generate(workloads.oltp(seed=9, target_bytes=12 << 20), tmp_path / "gen")
    expected = result.expected.read_bytes()
    port = _free_port()
    uri = f"127.0.0.1:{port}" if kind == "network" else f"tcp://127.0.0.1:{port}"
    doc = fast_offline_config(result)
    doc["target"][0]["writer"] = {"type": kind, "uri": uri, "poll-interval-us": 20_000}
    cfg = write_config(tmp_path, doc, "stream.json")
    out = tmp_path / "client.out"
    confirms = tmp_path / "client.confirms"
    with open(out, "wb") as sink:
        client = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "replicator",
                "client",
                kind,
                uri,
                doc["source"][0]["name"],
                "--start",
                "now",
                "--reconnect",
                "--idle-exit",
                "6",
                "--confirm-every",
                "25",
                "--confirm-interval",
                "0.2",
                "--timeout",
                "3",
                "--confirm-log",
                str(confirms),
            ],
            stdout=sink,
            stderr=subprocess.PIPE,
        )

        last_confirmed: list[int] = []  # per kill: messages the client had confirmed when it was sent

        def size() -> int:  # called right before each kill: remember the confirmed count too
            last_confirmed[-1] = confirmed_count(confirms)
            return out.stat().st_size

        try:
            kills = []
            for _ in range(3):
                last_confirmed.append(0)
                kills.append(kill_mid_stream(cfg, size, len(expected), rng, grow=(0.05, 0.15)))
            daemon = subprocess.Popen(
                [sys.executable, "-m", "replicator", "run", "-f", str(cfg)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                _, client_err = client.communicate(timeout=180)
            finally:
                daemon.send_signal(signal.SIGTERM)
                _, daemon_err = daemon.communicate(timeout=60)
        finally:
            if client.poll() is None:
                client.kill()
                client.wait(10)
    assert client.returncode == 0, client_err.decode()[-3000:]
    assert daemon.returncode == 0, daemon_err[-3000:]
    assert_all_mid_stream(kills)
    lines, expected_lines = out.read_bytes().splitlines(), expected.splitlines()
    check_resumed_output(lines, expected_lines, last_confirmed, kind)
    resent = re.search(r"(\d+) messages the writer re-sent after reconnects were already printed", client_err.decode())
    print(
        f"{kind}: the writer re-sent {resent.group(1) if resent else 0} messages the client had "
        "(same position as another message: dropped by the client)"
    )


def confirmed_count(log: Path) -> int:
    """Messages the client had printed at its last CONFIRM (``--confirm-log``), 0 before any."""
    try:
        rows = log.read_bytes().splitlines()
    except FileNotFoundError:
        return 0
    return max((int(r.split()[0]) for r in rows if r.strip()), default=0)


def check_resumed_output(
    lines: list[bytes], expected_lines: list[bytes], last_confirmed: list[int], label: str
) -> None:
    """0 lost, in order; every duplicate lies after the client's last confirmed message before a kill.

    ``last_confirmed[k]`` is how many lines the client had printed at its last CONFIRM
    before kill k; a restart may go back (re-send) only to a line after that one.
    """
    lost = len(set(expected_lines) - set(lines))
    assert set(lines) <= set(expected_lines), "the client printed a line that is not in the stream"
    where = {line: i for i, line in enumerate(expected_lines)}
    assert len(where) == len(expected_lines), "the expected stream has repeated lines: duplicates are ambiguous"
    floors = sorted(c for c in last_confirmed if c)
    duplicates, p, confirmed_at = 0, 0, -1  # p: expected index of the next new line
    for n, line in enumerate(lines, 1):
        while floors and floors[0] < n:  # the client had confirmed its floors[0]-th line before printing this
            confirmed_at = max(confirmed_at, where[lines[floors.pop(0) - 1]])
        i = where[line]
        if i == p:
            p += 1
        else:
            assert i < p, f"{label}: the client's output skips ahead at line {n}"
            duplicates += 1
            assert i > confirmed_at, (
                f"{label}: line {n} re-sends stream line {i + 1}, at or before the "
                f"client's confirmed line {confirmed_at + 1}"
            )
    print(
        f"{label}: {len(lines)} lines, {duplicates} duplicated (all after the client's confirmed position), "
        f"{lost} lost after {len(last_confirmed)} SIGKILLs; confirmed at the kills: {last_confirmed}"
    )
    assert lost == 0 and p == len(expected_lines)
