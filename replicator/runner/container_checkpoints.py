"""``source.containers``: the schema checkpoints of each PDB beside the first one.

Each other PDB's files go to its own state folder, written at the same SCNs as the first
container's (batch and daemon runs alike): whenever the first container's folder gets a
checkpoint, every other folder gets one at that SCN, and a dictionary change in any PDB
(its tracker pending) forces one in every folder at once. So a restart point chosen from the
first container's folder (the daemon's, by its confirmed position) exists in every folder,
and pruning keeps in each other folder the SCNs the first one keeps (with the full-schema files
they refer to, which differ: a PDB's DDL makes a full file in its own folder only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from replicator.events import Checkpoint
from replicator.runner.checkpoint import CheckpointManager
from replicator.schema.document import SchemaCheckpoint


class ContainerView:
    """What CheckpointManager.after_lwn/after_rac_cut read of a parser, with another container's options."""

    def __init__(self, parser: Any, opt: Any) -> None:
        self.header, self.last_lwn, self.buffer, self.opt = parser.header, parser.last_lwn, parser.buffer, opt
        self.epoch = parser.epoch


class ContainerCheckpoints:
    """The other PDBs' CheckpointManagers, driven by the first container's (``first``)."""

    def __init__(self, first: CheckpointManager, containers: list[tuple[str, SchemaCheckpoint]]) -> None:
        self.first = first
        # [manager, base checkpoint (the last loaded or written, as the first's base), CON_ID]
        self.entries: list[tuple[CheckpointManager, list[SchemaCheckpoint], int]] = [
            (
                CheckpointManager(
                    path,
                    first.name,
                    first.keep,
                    first.force_interval,
                    first.interval_s,
                    first.interval_mb,
                    keep_all=first.keep_all,
                    start_scn=first.start_scn,
                ),
                [cp],
                cp.con_id,
            )
            for path, cp in containers
        ]
        for manager, _, _ in self.entries:
            manager.follows = first

    def changed(self, parser: Any) -> bool:
        """Whether another PDB's dictionary changed (its tracker pending): every folder writes now."""
        for _, _, con_id in self.entries:
            tracker = parser.primary.containers[con_id].tracker
            if tracker is not None and tracker.pending:
                return True
        return False

    def _wrote(self, scn: int) -> bool:
        written = self.first.written_scns
        return bool(written) and written[-1] == scn

    def after_lwn(self, cp: Checkpoint, parser: Any, final: bool) -> None:
        """After the first container's after_lwn: the same checkpoint in every other folder
        when the first one's was written at ``cp.scn``."""
        if not self._wrote(cp.scn):
            return
        for manager, base, con_id in self.entries:
            view = ContainerView(parser, parser.primary.containers[con_id])
            base[0], _ = manager.after_lwn(base[0], cp, view, force=True, final=final)

    def after_rac_cut(
        self,
        parser: Any,
        cut_scn: int,
        time_raw: int,
        threads: Callable[[], list[tuple[int, int, int, int]]],
        *,
        floor_scn: int,
        final: bool,
    ) -> None:
        """As :meth:`after_lwn`, for a RAC restart point at the merge's cut."""
        if not self._wrote(cut_scn):
            return
        for manager, base, con_id in self.entries:
            view = ContainerView(parser, parser.primary.containers[con_id])
            base[0], _ = manager.after_rac_cut(
                base[0], view, cut_scn, time_raw, threads, floor_scn=floor_scn, force=True, final=final
            )


def write_rac_cut(
    manager: CheckpointManager,
    containers: ContainerCheckpoints | None,
    base: SchemaCheckpoint,
    parser: Any,
    cut_scn: int,
    time_raw: int,
    threads: Callable[[], list[tuple[int, int, int, int]]],
    *,
    floor_scn: int,
    redo_bytes: int = 0,
    force: bool = False,
    final: bool = False,
    metrics: Any = None,
) -> SchemaCheckpoint:
    """A RAC restart point at the merge's cut (batch and daemon runs alike): the first container's
    (CheckpointManager.after_rac_cut, with ``threads()`` the per-thread positions,
    runner.driver.rac_restart_positions), then every other PDB's at the same cut; the new base.
    A dictionary change in another PDB forces it in every folder."""
    force = force or (containers is not None and containers.changed(parser))
    base, path = manager.after_rac_cut(
        base, parser, cut_scn, time_raw, threads, floor_scn=floor_scn, redo_bytes=redo_bytes, force=force, final=final
    )
    if path is not None and metrics is not None:
        metrics.checkpoint_written(cut_scn)
    if containers is not None:
        containers.after_rac_cut(parser, cut_scn, time_raw, threads, floor_scn=floor_scn, final=final)
    return base
