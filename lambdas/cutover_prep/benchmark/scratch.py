"""Scratch objects of the opt-in write test: named for the run, marked as its own.

A run writes to the customer database only in objects it creates itself, under a name
derived from its run id (two runs never share one) and carrying a marker (a comment
naming the run) that proves the run created them. Cleanup drops an object only when it
carries this run's marker; an object of that name without the marker is the customer's:
creating over it is ``ScratchExists``, and it is never dropped.

Every object is registered in the findings store *before* it is created, so a killed
Lambda leaves a record that the cleanup step (and ``cutover-prep local`` on Ctrl-C)
follows; the findings list what was created, removed and left behind.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cutover_prep.engines.registry import family

MIB = 2**20


class ScratchExists(Exception):
    """An object with the run's scratch name exists and is not the run's: it is left untouched."""


class Dropped(StrEnum):
    """What dropping a scratch object found."""

    DROPPED = "dropped"  # it carried this run's marker and is gone
    ABSENT = "absent"  # nothing of that name (never created, or already removed)
    NOT_OURS = "not_ours"  # it exists without this run's marker: never dropped
    NOT_EMPTY = "not_empty"  # ours, but holds objects the run did not create: left, named in the findings


class ScratchStatus(StrEnum):
    """A registered scratch object's state in the findings store."""

    CREATING = "CREATING"  # registered, maybe created: the cleanup step looks at it
    REMOVED = "REMOVED"
    LEFT = "LEFT"  # still in the database: a failing verdict reason names it
    NOT_CREATED = "NOT_CREATED"  # the name was taken by an object that is not the run's


def _digest(run_id: str, n: int) -> str:
    return hashlib.sha256(run_id.encode()).hexdigest()[:n]


@dataclass(frozen=True)
class Scratch:
    """One run's scratch object: its name in the engine, the marker it carries, its size cap."""

    run_id: str
    name: str
    marker: str
    max_bytes: int

    @classmethod
    def for_run(cls, run_id: str, engine: str, max_bytes: int) -> Scratch:
        return cls(run_id=run_id, name=scratch_name(run_id, engine), marker=scratch_marker(run_id),
                   max_bytes=max_bytes)


def scratch_name(run_id: str, engine: str) -> str:
    """Unique per run id, a valid unquoted identifier in every engine (each family's prefix and case,
    e.g. Oracle: 30 bytes, upper case)."""
    return family(engine).scratch_name(_digest(run_id, 12))


def refuse_drop(found: bool, marker: str | None, scratch: Scratch) -> Dropped | None:
    """The rule every engine's drop follows, before it drops anything: nothing of that name is
    ``ABSENT``, an object without this run's marker is ``NOT_OURS`` (never dropped); ``None``: the
    object is this run's own and may be dropped."""
    if not found:
        return Dropped.ABSENT
    if marker != scratch.marker:
        return Dropped.NOT_OURS
    return None


def scratch_marker(run_id: str) -> str:
    return f"cutover-prep scratch object of run {run_id}; dropped by that run's cleanup"


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


def scratch_summary(items: list[dict[str, Any]]) -> dict[str, Any]:
    """What the write test created, removed and left (the findings' ``scratch`` section)."""
    def names(*statuses: str) -> list[str]:
        return sorted(i["name"] for i in items if i.get("status") in statuses)

    return {"created": names(ScratchStatus.CREATING, ScratchStatus.REMOVED, ScratchStatus.LEFT),
            "removed": names(ScratchStatus.REMOVED), "left": names(ScratchStatus.CREATING, ScratchStatus.LEFT),
            "not_created": names(ScratchStatus.NOT_CREATED),
            "notes": sorted({i["note"] for i in items if i.get("note")})}
