"""The open-transaction buffer of a run of several PDBs: keyed by (CON_ID, USN, slot), with a
memory pool keyed by XID, so one XID open in two containers at once is an error (40130)."""

from __future__ import annotations

import pytest

from replicator.errors import RedoLogError
from replicator.txn.buffer import TransactionBuffer

XID = (5 << 48) | (3 << 32) | 1200


def test_one_container_run_keeps_the_same_xid_per_container_apart_without_a_check() -> None:
    buffer = TransactionBuffer()  # one container (OLR's): other containers never reach it
    first = buffer.begin(3, XID, 100, 0, 1, 0)
    assert buffer.get(3, XID) is first
    assert buffer.get(4, (5 << 48) | (3 << 32) | 1201) is not first  # same slot, other XID


def test_the_same_slot_with_other_sequences_in_two_containers_is_fine() -> None:
    buffer = TransactionBuffer()
    buffer.containers = (3, 4)
    a = buffer.begin(3, XID, 100, 0, 1, 0)
    b = buffer.begin(4, XID + 1, 101, 0, 1, 0)  # local undo: same USN and slot, other SQN
    assert a is not b and buffer.get(3, XID) is a and buffer.get(4, XID + 1) is b


@pytest.mark.parametrize("second", ["begin", "change"])
def test_one_xid_open_in_two_containers_is_40130(second: str) -> None:
    buffer = TransactionBuffer()
    buffer.containers = (3, 4)
    buffer.begin(3, XID, 100, 0, 1, 0)
    with pytest.raises(RedoLogError) as raised:
        if second == "begin":
            buffer.begin(4, XID, 101, 0, 1, 0)
        else:
            buffer.get(4, XID)  # a change without a begin, while the XID is open in CON_ID 3
    assert raised.value.code == 40130 and "CON_ID 3 and CON_ID 4" in raised.value.message
    buffer.end(3, XID)  # once it ended there, the XID may start in the other container
    assert buffer.begin(4, XID, 102, 0, 1, 0).xid == XID
