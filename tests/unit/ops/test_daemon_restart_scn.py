"""A restart from an OpenLogReplicator writer checkpoint (c_scn, no stream position of ours).

c_scn is the confirmed transaction's begin SCN. Transactions committed below it came before
the confirmed one in the stream and are dropped; one committed at that very SCN may be the
confirmed transaction itself (the stream writers hold for it) or one after it, so it is
replayed (OLR #330 family: "at or below" stalled the hold and could lose the latter).
"""

from __future__ import annotations

from replicator.events import Message, Transaction
from replicator.formats.base import FormatOptions
from replicator.formats.olr_json import OlrJsonFormat
from replicator.redo.parser import Parser, ParserOptions
from replicator.runner.daemon_engine import DaemonEngine


class _OneMessage(OlrJsonFormat):
    """One message per transaction, whatever its changes (the rule under test is the engine's)."""

    def transaction(self, txn: Transaction) -> list[Message]:
        return [Message(data=b"{}", scn=txn.begin_scn, idx=0, xid=txn.xid)]


class _Record:
    def __init__(self, scn: int) -> None:
        self.scn = scn


def _engine(skip_commit_scn: int) -> DaemonEngine:
    engine = DaemonEngine(
        Parser(ParserOptions(tables={}), lambda t: None),
        _OneMessage(FormatOptions()),
        object(),  # no writer task here: what reaches the pending batch is checked
        None,  # type: ignore[arg-type]  # no follower: the parser callbacks only
        skip_commit_scn=skip_commit_scn,
    )
    engine.handoffs.limit = 1 << 30  # keep everything pending (no writer task here)
    return engine


def _txn(xid: int, begin: int, commit: int) -> Transaction:
    return Transaction(xid, begin, 0, commit, 0, changes=[], commit_pos=(7, 1024 * xid, 3))


def test_commits_at_the_restart_scn_are_replayed() -> None:
    engine = _engine(skip_commit_scn=1000)
    for txn in (_txn(1, 990, 999), _txn(2, 1000, 1000), _txn(3, 995, 1000), _txn(4, 1000, 1001)):
        engine._on_transaction(txn)
    # 1 committed before the confirmed transaction began: dropped; 2 (the confirmed one, begun
    # and committed at 1000), 3 (committed at the same SCN) and 4 are replayed.
    xids = [m.xid for m in engine.handoffs.pending]
    assert 1 not in xids and {2, 3, 4} <= set(xids)
    assert engine.state.new_transactions == 3


def test_the_native_path_declines_only_commits_below() -> None:
    engine = _engine(skip_commit_scn=1000)
    assert engine.commit_declines() is not None
    assert engine.native_declines(None, _Record(999))
    assert not engine.native_declines(None, _Record(1000))
    assert _engine(skip_commit_scn=0).commit_declines() is None  # a restart from our own position
