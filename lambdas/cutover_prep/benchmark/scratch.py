"""Scratch objects of the opt-in write test: named for the run, marked as its own.

A run writes to the customer database only in objects it creates itself, under a name
derived from its run id (two runs never share one) and carrying a marker (a comment
naming the run) that proves the run created them. Cleanup drops an object only when it
carries this run's marker; an object of that name without the marker is the customer's:
creating over it is ``ScratchExists``, and it is never dropped.

Every object is registered in the findings store *before* it is created, so a killed
Lambda leaves a record that the cleanup step (and ``cutover-prep local`` on Ctrl-C)
follows; the findings list what was created, removed and left behind.

The scratch object as an engine sees it (``Scratch``, ``Dropped``, ``ScratchExists``, the marker) and the
drop rule (``refuse_drop``) are the engines' (``engines/scratch.py``); here is the run's side: the name, the
size cap, the registration's states and the findings' summary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from enum import StrEnum

from cutover_prep.dal.records.findings import Scratch as ScratchSummary
from cutover_prep.dal.records.run import ScratchItem
from cutover_prep.engines.registry import family
from cutover_prep.engines.scratch import Scratch, scratch_marker

MIB = 2**20


class ScratchStatus(StrEnum):
    """A registered scratch object's state in the findings store."""

    CREATING = "CREATING"  # registered, maybe created: the cleanup step looks at it
    REMOVED = "REMOVED"
    LEFT = "LEFT"  # still in the database: a failing verdict reason names it
    NOT_CREATED = "NOT_CREATED"  # the name was taken by an object that is not the run's


def _digest(run_id: str, n: int) -> str:
    return hashlib.sha256(run_id.encode()).hexdigest()[:n]


def scratch_name(run_id: str, engine: str) -> str:
    """Unique per run id, a valid unquoted identifier in every engine (each family's prefix and case,
    e.g. Oracle: 30 bytes, upper case)."""
    return family(engine).scratch_name(_digest(run_id, 12))


def scratch_for_run(run_id: str, engine: str, max_bytes: int) -> Scratch:
    """The run's scratch object in ``engine``: its name, its marker, its size cap."""
    return Scratch(run_id=run_id, name=scratch_name(run_id, engine), marker=scratch_marker(run_id),
                   max_bytes=max_bytes)


def write_cap_bytes(max_mib: float, max_free_pct: float, free_bytes: float | None) -> tuple[int, str]:
    """The write points' size cap: ``max_mib``, and never more than ``max_free_pct`` % of the free storage."""
    cap = int(max_mib * MIB)
    if free_bytes is None:
        return cap, (f"write test capped at {max_mib:g} MiB (benchmark.write_max_mib); the instance's free storage "
                     "was not known, so the share of it could not be applied")
    share = int(free_bytes * max_free_pct / 100)
    if share < cap:
        return share, (f"write test capped at {share / MIB:,.1f} MiB: {max_free_pct:g} % of the "
                       f"{free_bytes / MIB:,.0f} MiB free storage RDS reports (benchmark.write_max_free_storage_pct)")
    return cap, f"write test capped at {max_mib:g} MiB (benchmark.write_max_mib)"


def scratch_summary(objects: Iterable[ScratchItem]) -> ScratchSummary:
    """What the write test created, removed and left (the findings' ``scratch`` section)."""
    items = list(objects)

    def names(*statuses: str) -> list[str]:
        return sorted(i.name for i in items if i.status in statuses)

    return ScratchSummary(created=names(ScratchStatus.CREATING, ScratchStatus.REMOVED, ScratchStatus.LEFT),
                          removed=names(ScratchStatus.REMOVED), left=names(ScratchStatus.CREATING, ScratchStatus.LEFT),
                          not_created=names(ScratchStatus.NOT_CREATED),
                          notes=sorted({i.note for i in items if i.note}))
