"""Metrics: OLR's series names and quirks, batched publishing, the HTTP endpoint."""

from __future__ import annotations

import socket

import pytest
from ops_helpers import parse_metrics, scrape, value

from replicator.errors import RuntimeFailure
from replicator.events import RowChange, Table, Transaction
from replicator.ops.metrics import SERVICE_STATES, Metrics, parse_bind
from replicator.ops.metrics_tally import Tally, ddl_type

OLR_FAMILIES = [
    "bytes_confirmed",
    "bytes_parsed",
    "bytes_read",
    "bytes_sent",
    "messages_confirmed",
    "messages_sent",
    "checkpoints",
    "checkpoint_lag",
    "ddl_ops",
    "dml_ops",
    "log_switches",
    "log_switches_lag",
    "memory_allocated_mb",
    "memory_used_total_mb",
    "memory_used_mb",
    "service_state",
    "swap_operations_mb",
    "swap_usage_mb",
]


def _row(op: str, owner: str = "APP", name: str = "T", system: bool = False) -> RowChange:
    table = Table(obj=1, data_obj=1, owner=owner, name=name, columns=[], system=system)
    return RowChange(op=op, obj=1, data_obj=1, table=table, before=None, after=None, scn=1, time=0, bdba=0, slot=0)


def _txn(*rows: RowChange) -> Transaction:
    return Transaction(xid=1, begin_scn=1, begin_time=0, commit_scn=2, commit_time=0, changes=list(rows))


class FakePool:
    in_memory, swapped, swap_writes_mb, swap_reads_mb = 5, 2, 3, 1
    free_chunks = [bytearray()] * 4


class FakeWriter:
    type_name = "file"
    messages_sent, bytes_sent, messages_confirmed, retries = 10, 1000, 10, 2


def test_every_olr_family_is_registered_under_its_name() -> None:
    names = {name for name, *_ in Metrics().catalogue}
    assert set(OLR_FAMILIES) <= names
    assert all(n in OLR_FAMILIES or n.startswith("replicator_") for n in names)
    text = Metrics().render()
    assert "# TYPE bytes_read_total counter" in text  # prometheus-client adds _total
    assert "_created" not in text
    assert text.count("# TYPE memory_used_total_mb gauge") == 1  # [quirk dropped] registered once


def test_publish_adds_differences_and_never_goes_back() -> None:
    m = Metrics(process_collector=False)
    tally = Tally()
    tally.bytes_read = tally.bytes_parsed = 4096
    tally.transaction(_txn(_row("c"), _row("c"), _row("u"), _row("d")))
    m.publish(tally, pool=FakePool(), writers=[FakeWriter()])
    m.publish(tally, pool=FakePool(), writers=[FakeWriter()])  # nothing new: nothing added
    tally.bytes_read = 8192
    tally.transaction(_txn(_row("c")))
    m.publish(tally)
    s = parse_metrics(m.render())
    assert value(s, "bytes_read_total") == 8192
    assert value(s, "bytes_parsed_total") == 4096
    assert value(s, "dml_ops_total", type="insert", filter="out") == 3
    assert value(s, "dml_ops_total", type="update", filter="out") == 1
    assert value(s, "dml_ops_total", type="commit", filter="out") == 2  # [quirk] transactions in dml_ops
    assert value(s, "messages_sent_total") == 10 and value(s, "bytes_confirmed_total") == 1000
    assert value(s, "replicator_writer_messages_total", writer="file") == 10
    assert value(s, "replicator_writer_retries_total", writer="file") == 2
    assert value(s, "memory_used_mb", type="transactions") == 5
    assert value(s, "memory_allocated_mb") == 9 and value(s, "swap_usage_mb") == 2
    assert value(s, "swap_operations_mb_total", type="write") == 3
    fresh = Tally()  # a new run's tally starts from 0 again: counters keep growing
    fresh.bytes_read = 100
    m.publish(fresh)
    assert value(parse_metrics(m.render()), "bytes_read_total") == 8292


@pytest.mark.parametrize(
    ("mode", "user", "system"),
    [
        ("none", ("", ""), ("", "")),
        ("filter", ("APP", "T"), ("", "")),
        ("sys", ("", ""), ("SYS", "OBJ$")),
        ("all", ("APP", "T"), ("SYS", "OBJ$")),
    ],
)
def test_tag_names_add_owner_and_table(mode: str, user: tuple[str, str], system: tuple[str, str]) -> None:
    m = Metrics(mode, process_collector=False)
    tally = Tally(mode)
    tally.transaction(_txn(_row("c"), _row("d", "SYS", "OBJ$", system=True)))
    m.publish(tally)
    s = parse_metrics(m.render())
    extra = lambda names: {} if mode == "none" else dict(owner=names[0], table=names[1])  # noqa: E731
    assert value(s, "dml_ops_total", type="insert", filter="out", **extra(user)) == 1
    assert value(s, "dml_ops_total", type="delete", filter="out", **extra(system)) == 1


def test_service_state_has_one_current_state() -> None:
    m = Metrics(process_collector=False)
    for state in SERVICE_STATES:
        m.set_state(state)
        s = parse_metrics(m.render())
        assert [st for st in SERVICE_STATES if value(s, "service_state", state=st) == 1] == [state]
    with pytest.raises(ValueError):
        m.set_state("sleeping")


def test_ddl_types_and_checkpoint_age() -> None:
    assert [ddl_type(x) for x in ("ALTER TABLE x", " create table", "drop index i", "grant x", "")] == [
        "alter",
        "create",
        "drop",
        "other",
        "other",
    ]
    m = Metrics(process_collector=False)
    assert value(parse_metrics(m.render()), "replicator_checkpoint_age_seconds") != 0  # NaN before any
    m.checkpoint_written(123, wall_time=1.0)
    s = parse_metrics(m.render())
    assert value(s, "replicator_checkpoint_scn") == 123
    assert value(s, "replicator_checkpoint_age_seconds") > 1e9


def test_parse_bind() -> None:
    assert parse_bind("127.0.0.1:9161") == ("127.0.0.1", 9161)
    assert parse_bind("[::1]:80") == ("::1", 80)
    for bad in ("localhost", ":80", "host:http", "host:70000"):
        with pytest.raises(ValueError):
            parse_bind(bad)


def test_server_serves_metrics_and_stops() -> None:
    m = Metrics(process_collector=False)
    host, port = m.start_server("127.0.0.1:0")
    try:
        assert host == "127.0.0.1" and port > 0
        assert value(parse_metrics(scrape(port)), "service_state", state="initializing") == 1
    finally:
        m.stop_server()
    m.stop_server()  # idempotent
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0


def test_bind_failure_is_10073() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(RuntimeFailure) as err:
            Metrics(process_collector=False).start_server(f"127.0.0.1:{port}")
    assert err.value.code == 10073 and str(port) in err.value.message


def test_rac_threads_have_their_own_sequence_scn_and_lag() -> None:
    import time

    m = Metrics(process_collector=False)
    tally = Tally()
    now = time.time()
    tally.threads = {1: (12, 5000, now - 30.0), 2: (7, 4990, now - 2.0)}
    m.publish(tally)
    s = parse_metrics(m.render())
    assert value(s, "replicator_thread_sequence", thread="1") == 12
    assert value(s, "replicator_thread_sequence", thread="2") == 7
    assert value(s, "replicator_thread_scn", thread="2") == 4990
    assert 29 <= value(s, "replicator_thread_lag_seconds", thread="1") < 60  # the idle thread lags
    assert value(s, "replicator_thread_lag_seconds", thread="2") < 29


def test_skipped_container_vectors_are_counted_per_con_id() -> None:
    from replicator.redo.parser import ParserStats

    class FakeParser:
        stats = ParserStats(rollbacks=0, other_containers={1: 5, 4: 23})

    m = Metrics(process_collector=False)
    parser = FakeParser()
    m.publish(parser=parser)
    parser.stats.other_containers[4] = 30
    m.publish(parser=parser)
    s = parse_metrics(m.render())
    assert value(s, "replicator_container_vectors_skipped_total", con_id="1") == 5
    assert value(s, "replicator_container_vectors_skipped_total", con_id="4") == 30
