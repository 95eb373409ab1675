"""The write test's scratch object as an engine's benchmark driver sees it, and the drop rule every engine follows.

The opt-in write test writes only in an object the run creates itself, named for the run and carrying a
marker (a comment naming the run) that proves the run created it. An engine's driver
(``engines/<name>/bench.py``) creates it (``ScratchExists`` when an object of that name is there and is not
the run's) and drops it only through ``refuse_drop``: an object without this run's marker is never dropped.

How a run names its scratch object, registers it before creating it and settles it afterwards is the
benchmark's (``benchmark/scratch.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ScratchExists(Exception):
    """An object with the run's scratch name exists and is not the run's: it is left untouched."""


class Dropped(StrEnum):
    """What dropping a scratch object found."""

    DROPPED = "dropped"  # it carried this run's marker and is gone
    ABSENT = "absent"  # nothing of that name (never created, or already removed)
    NOT_OURS = "not_ours"  # it exists without this run's marker: never dropped
    NOT_EMPTY = "not_empty"  # ours, but holds objects the run did not create: left, named in the findings


@dataclass(frozen=True)
class Scratch:
    """One run's scratch object: its name in the engine, the marker it carries, its size cap."""

    run_id: str
    name: str
    marker: str
    max_bytes: int


def scratch_marker(run_id: str) -> str:
    return f"cutover-prep scratch object of run {run_id}; dropped by that run's cleanup"


def refuse_drop(found: bool, marker: str | None, scratch: Scratch) -> Dropped | None:
    """The rule every engine's drop follows, before it drops anything: nothing of that name is
    ``ABSENT``, an object without this run's marker is ``NOT_OURS`` (never dropped); ``None``: the
    object is this run's own and may be dropped."""
    if not found:
        return Dropped.ABSENT
    if marker != scratch.marker:
        return Dropped.NOT_OURS
    return None
