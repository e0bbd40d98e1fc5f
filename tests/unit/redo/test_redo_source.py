"""The redo source interface: local files as before, and the reader.redo-source config keys."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from replicator.cli import main
from replicator.config import parse_config
from replicator.config.redosource import default_connections
from replicator.errors import ConfigError
from replicator.redo.source import LOCAL, map_prefix
from replicator.redo.sources import open_source

BASE = {
    "version": "1.9.0",
    "state": {"type": "disk", "path": "."},
    "source": [
        {"alias": "S1", "name": "DB", "reader": {"type": "batch", "redo-log": ["/x"]}, "format": {"type": "json"}}
    ],
    "target": [{"alias": "T1", "source": "S1", "writer": {"type": "file", "output": "out.json"}}],
}


def _config(redo_source: dict) -> dict:
    doc = json.loads(json.dumps(BASE))
    doc["source"][0]["reader"]["redo-source"] = redo_source
    return doc


def test_local_source_reads_ranges_and_lists(tmp_path: Path) -> None:
    data = bytes(range(256)) * 100
    (tmp_path / "a.log").write_bytes(data)
    (tmp_path / "sub").mkdir()
    assert LOCAL.kind(str(tmp_path)) == "dir" and LOCAL.kind(str(tmp_path / "a.log")) == "file"
    assert LOCAL.kind(str(tmp_path / "none")) is None
    assert sorted((e.name, e.is_dir, e.size) for e in LOCAL.scan(str(tmp_path))) == [
        ("a.log", False, len(data)),
        ("sub", True, 0),
    ]
    with LOCAL.open(str(tmp_path / "a.log")) as h:
        assert h.size() == len(data) and h.read(10, 5) == data[10:15]
        pieces = list(h.stream(100, len(data), 4096))
    assert b"".join(pieces) == data[100:] and all(len(p) == 4096 for p in pieces[:-1])
    assert LOCAL.read_head(str(tmp_path / "none")) is None


def test_path_mapping_first_prefix_wins() -> None:
    pairs = [("/oradata/", "/srv/a/"), ("/oradata/X", "/srv/b/")]
    assert map_prefix("/oradata/X/redo1.log", pairs) == "/srv/a/X/redo1.log"
    assert map_prefix("/other/redo1.log", pairs) == "/other/redo1.log"


def test_default_is_local() -> None:
    cfg = parse_config(BASE)
    assert cfg.source[0].reader.redo_source.type == "local"
    assert open_source(cfg.source[0].reader) is LOCAL


def test_sftp_keys_and_secrets_not_shown() -> None:
    cfg = parse_config(
        _config(
            {
                "type": "sftp",
                "host": "db1",
                "user": "oracle",
                "key-file": "/k",
                "key-passphrase": "s3cret-pass",
                "path-mapping": ["/u01/", "/mnt/u01/"],
            }
        )
    )
    rs = cfg.source[0].reader.redo_source
    assert (rs.port, rs.read_requests, rs.read_size_kb, rs.accept_unknown_host_key) == (22, 8, 2048, 0)
    assert rs.path_mapping_pairs == [("/u01/", "/mnt/u01/")]
    assert "s3cret" not in repr(cfg) and "s3cret" not in rs.describe()
    asm = parse_config(_config({"type": "asm", "server": "//h/+ASM", "user": "asmsnmp", "password": "pw-XYZ"}))
    ars = asm.source[0].reader.redo_source
    assert (ars.privilege, ars.parallelism) == ("sysasm", 4) and "pw-XYZ" not in repr(asm)


@pytest.mark.parametrize(
    "source,needle",
    [
        ({"type": "nfs"}, '"type" value: nfs'),
        ({"type": "sftp", "user": "u", "key-file": "/k"}, "host"),
        ({"type": "sftp", "host": "h", "user": "u", "key-file": "/k", "port": 0}, "port"),
        ({"type": "sftp", "host": "h", "user": "u", "key-file": "/k", "read-requests": 65}, "read-requests"),
        ({"type": "sftp", "host": "h", "user": "u", "key-file": "/k", "path-mapping": ["/a"]}, "even number"),
        ({"type": "asm", "server": "s", "user": "u", "password": "p", "privilege": "sysoper"}, "privilege"),
        ({"type": "asm", "server": "s", "user": "u", "password": "p", "parallelism": 17}, "parallelism"),
        ({"type": "sftp", "host": "h", "user": "u", "key-file": "/k", "bogus": 1}, "bogus"),
    ],
)
def test_bad_redo_source_is_explained(source: dict, needle: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(_config(source))
    assert needle in exc.value.message


def test_check_config_describes_the_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            _config(
                {"type": "sftp", "host": "db1", "user": "oracle", "key-file": "/k", "key-passphrase": "s3cret-pass"}
            )
        )
    )
    assert main(["check-config", "--config-only", "-f", str(path)]) == 0
    out = capsys.readouterr().out
    assert "sftp://oracle@db1:22" in out and "s3cret" not in out and out.strip().endswith(": OK")
    path.write_text(json.dumps(_config({"type": "sftp", "host": "db1", "user": "oracle", "port": 70000})))
    assert main(["check-config", "-f", str(path)]) == 1
    out = capsys.readouterr().out
    assert "source[0].reader.redo-source" in out


@pytest.mark.parametrize(
    "source",
    [
        {"type": "sftp", "host": "db1", "user": "oracle", "key-file": "/k", "key-passphrase": ["s3cret-pass"]},
        {"type": "sftp", "host": "db1", "user": "oracle", "key-file": "/k", "key-passphrase": "s3cret-pass" * 100},
        {"type": "asm", "server": "//h/+ASM", "user": "u", "password": {"pw": "s3cret-pass"}},
    ],
)
def test_check_config_never_shows_a_bad_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: dict
) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps(_config(source)))
    assert main(["check-config", "-f", str(path)]) == 1
    captured = capsys.readouterr()
    assert "s3cret" not in captured.out + captured.err and "value not shown" in captured.out


def test_sftp_connections_key() -> None:
    base = {"type": "sftp", "host": "db1", "user": "oracle", "key-file": "/k"}
    section = parse_config(_config(base)).source[0].reader.redo_source
    assert section.connections is None and section.reader_connections == default_connections()
    assert parse_config(_config({**base, "connections": 0})).source[0].reader.redo_source.reader_connections == 0
    with pytest.raises(ConfigError) as exc:
        parse_config(_config({**base, "connections": 17}))
    assert "connections" in exc.value.message


def test_default_connections_follow_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    # The cores minus the parser's, at least 1, at most 2 (measured: see default_connections).
    for cores, expected in ((1, 1), (2, 1), (3, 2), (8, 2)):
        monkeypatch.setattr(os, "sched_getaffinity", lambda _pid, n=cores: set(range(n)))
        assert default_connections() == expected


def test_reader_processes_split_a_range_into_interleaved_pieces() -> None:
    from replicator.redo.sftp import SftpSettings, piece_ranges

    # Two reader processes, 4 KB pieces of [1000, 21000): process k takes pieces k, k+2, ...
    first = list(piece_ranges(1000, 21000, 4096, 2 * 4096))
    second = list(piece_ranges(1000 + 4096, 21000, 4096, 2 * 4096))
    merged = sorted(first + second)
    assert merged[0][0] == 1000 and sum(n for _, n in merged) == 20000
    assert all(a + n == b for (a, n), (b, _) in zip(merged, merged[1:]))
    assert [n for _, n in merged][-1] == 20000 - 4 * 4096
    s = SftpSettings(host="h", user="u", key_file="/k", key_passphrase="pw", path_mapping=[("/a/", "/b/")])
    assert SftpSettings.from_json(s.to_json()) == s and "pw" not in repr(s)


@pytest.mark.parametrize(
    "section",
    [
        {"type": "sftp", "host": "db1", "user": "oracle", "key-file": "/k"},
        {
            "type": "sftp",
            "host": "db1",
            "port": 2222,
            "user": "oracle",
            "key-file": "/k",
            "key-passphrase": "pw",
            "known-hosts": "/kh",
            "accept-unknown-host-key": 1,
            "read-requests": 4,
            "read-size-kb": 1024,
            "connect-timeout-ms": 3000,
            "reconnect-tries": 2,
            "reconnect-delay-ms": 50,
            "reconnect-max-delay-ms": 100,
            "connections": 2,
            "window-kb": 2048,
            "path-mapping": ["/oradata/", "/srv/"],
        },
    ],
)
def test_early_settings_equal_the_validated_ones(section: dict) -> None:
    # The reader processes started from the raw config file (sftp_early) are adopted only
    # when their settings equal the validated ones: the raw defaults must follow the models.
    from replicator.redo.sftp_settings import settings_from_config, settings_from_raw

    validated = settings_from_config(parse_config(_config(section)).source[0].reader.redo_source)
    assert settings_from_raw(section) == validated


@pytest.mark.parametrize(
    "section",
    [
        None,
        {"type": "local"},
        {"type": "asm"},
        {"type": "sftp", "host": "h"},
        {"type": "sftp", "host": "h", "user": "u", "key-file": "/k", "port": "22"},
        {"type": "sftp", "host": "h", "user": "u", "key-file": "/k", "path-mapping": ["/odd"]},
    ],
)
def test_early_settings_only_for_a_plain_sftp_section(section: object) -> None:
    from replicator.redo.sftp_settings import settings_from_raw

    assert settings_from_raw(section) is None


def test_early_reader_processes_end_unless_adopted(tmp_path: Path) -> None:
    # A config whose run never builds its source (here: nothing listens on the port) leaves no process.
    from replicator.redo import sftp_early

    path = tmp_path / "c.json"
    path.write_text(
        json.dumps(
            _config(
                {
                    "type": "sftp",
                    "host": "127.0.0.1",
                    "port": 9,
                    "user": "u",
                    "key-file": str(tmp_path / "none"),
                    "connections": 1,
                    "connect-timeout-ms": 200,
                }
            )
        )
    )
    assert sftp_early.prestart(str(path))
    procs = [w.proc for _, pool in sftp_early._early for w in pool.idle]
    assert len(procs) == 1
    sftp_early.discard()
    assert all(p.poll() is not None for p in procs) and not sftp_early._early
