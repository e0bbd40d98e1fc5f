"""The Spark job's checkpoint-digest check (replicator.spark.streamcheck) on events made by the
job's own parser from signed messages (formats.olr_digest.CheckpointDigests, the producer's side):
segments verify across batches, events buffered from the batch before are taken once, a lost
message fails with 10403, several partitions turn the check off."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("pyarrow", reason="the Spark extra (pyarrow) is not installed: pip install -e '.[spark]'")

from replicator.events import Message  # noqa: E402
from replicator.formats.olr_digest import DIGEST_MISMATCH, CheckpointDigests, StreamCheckFailed  # noqa: E402


def _signed(transactions: int) -> list[bytes]:
    """Messages of ``transactions`` one-row transactions, a checkpoint after each, signed."""
    messages: list[Message] = []
    scn = 1000
    for t in range(transactions):
        scn += 10
        xid = f"1.{t}.0"
        for idx, el in enumerate(
            [
                {"op": "begin"},
                {"op": "c", "schema": {"owner": "APP", "table": "T"}, "after": {"ID": t, "A": "x"}},
                {"op": "commit"},
            ],
            start=1,
        ):
            doc = {"e_scn": scn + 5, "c_scn": scn, "c_idx": idx, "xid": xid, "payload": [el]}
            messages.append(Message(json.dumps(doc, separators=(",", ":")).encode(), scn, idx - 1))
        chkpt = {
            "scn": scn + 6,
            "c_scn": scn + 6,
            "c_idx": 0,
            "payload": [{"op": "chkpt", "seq": 1, "offset": 512 * (t + 2)}],
        }
        messages.append(Message(json.dumps(chkpt, separators=(",", ":")).encode(), scn + 6, 0, checkpoint=True))
    CheckpointDigests((1, 512)).observe(messages)
    return [m.data for m in messages]


def _events(bodies: list[tuple[int, int, bytes]]) -> Any:
    """The job's events of Kafka records (partition, offset, value), digests on."""
    import pyarrow as pa

    from replicator.spark.options import FormatHints
    from replicator.spark.parse import event_arrow_schema, parse_batch

    batch = pa.RecordBatch.from_pydict(
        {
            "key": pa.array([None] * len(bodies), pa.binary()),
            "value": [b for _, _, b in bodies],
            "partition": pa.array([p for p, _, _ in bodies], pa.int32()),
            "offset": pa.array([o for _, o, _ in bodies], pa.int64()),
            "timestamp": pa.array([None] * len(bodies), pa.timestamp("us", tz="UTC")),
        }
    )
    hints = FormatHints(scn_type=8, checkpoint_digests=1)
    return pa.Table.from_batches([parse_batch(batch, hints, event_arrow_schema())])


def test_segments_verify_across_batches_and_buffered_events_are_taken_once() -> None:
    from replicator.spark.streamcheck import StreamCheck

    records = [(0, offset, body) for offset, body in enumerate(_signed(6))]
    check = StreamCheck()
    first, second = records[:10], records[10:]
    assert check.take(_events(first)) == 1  # two checkpoints: the first synchronises
    # The batch after it gets the events kept back (an incomplete transaction) again, then its own.
    assert check.take(_events(records[8:10] + second)) == 4
    assert check.state == "on" and check.verifier.replayed == 0


def test_a_lost_message_fails_with_10403() -> None:
    from replicator.spark.streamcheck import StreamCheck

    records = [(0, offset, body) for offset, body in enumerate(_signed(4))]
    del records[9]  # the row change of the third transaction
    with pytest.raises(StreamCheckFailed) as failed:
        StreamCheck().take(_events(records))
    assert failed.value.code == DIGEST_MISMATCH and "table APP.T: 0 received" in failed.value.message


def test_several_partitions_turn_the_check_off() -> None:
    from replicator.spark.streamcheck import StreamCheck

    records = [(offset % 2, offset, body) for offset, body in enumerate(_signed(3))]
    check = StreamCheck()
    assert check.take(_events(records)) == 0
    assert check.state == "off: 2 partitions"
