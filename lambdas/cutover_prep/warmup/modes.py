"""``warmup.mode``: which passes read the database, and what the findings say about it (pure).

- ``segments`` (default): every segment the engine discovers, one read method each; a
  segment the engine cannot split (an index, a LOB segment) and bigger than one work unit
  is still read, whole, by its own unit, and is *named* in the findings as oversized: one
  such unit may need more than one Lambda invocation's time at the assumed cold rate.
- ``datafiles``: the engine's full datafile pass only (``base.DatafileEngine``): every block
  of every datafile, by block range, through the same units and the same continue/resume
  loop (``warmup.unit``). Segments are not discovered.
- ``both``: the segments that fit, then the datafile pass, which also reads the oversized
  segments (they get no unit of their own).

Only engines whose registry family lists the mode in ``warmup_modes`` offer it; any other
is ``registry.UnsupportedWarmupMode`` before anything connects.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from cutover_prep.dal.records.plan import BY_DATAFILES, BY_OWN_UNIT
from cutover_prep.engines.base import DiscoveryOptions, Segment
from cutover_prep.engines.registry import BOTH, DATAFILES, SEGMENTS, check_warmup_mode

DATAFILE_KIND = "DATAFILE"  # Segment.kind of what DatafileEngine.discover_datafiles lists


def reads_segments(mode: str) -> bool:
    return mode in (SEGMENTS, BOTH)


def reads_datafiles(mode: str) -> bool:
    return mode in (DATAFILES, BOTH)


def check(engine: str, mode: str) -> None:
    """One line (``UnsupportedWarmupMode``) when the engine does not offer ``mode``."""
    check_warmup_mode(engine, mode)


def discover(engine: Any, options: DiscoveryOptions, mode: str,
             pages: MutableMapping[str, Any] | None = None) -> list[Segment]:
    """The segments (when the mode reads them), then the datafiles (when it reads them). ``pages``: where an
    engine that discovers page by page (Oracle: ``engines.oracle.discovery``) keeps the pages it found, so a
    discovery that stopped resumes at the first page it had not found."""
    paged = pages is not None and "pages" in inspect.signature(engine.discover).parameters
    found = (list(engine.discover(options, pages=pages) if paged else engine.discover(options))
             if reads_segments(mode) else [])
    if reads_datafiles(mode):
        found += engine.discover_datafiles()
    if options.additional_volumes and hasattr(engine, "map_volumes"):  # RDS additional storage volumes
        found = engine.map_volumes(found, options.additional_volumes)
    return found


class Oversized(NamedTuple):
    """A segment one unit cannot hold that the engine cannot split, and how it is read (plan.json's
    ``oversized_segments``: ``_asdict``)."""

    key: str
    kind: str
    bytes: int
    read_by: str


class PlanFields(NamedTuple):
    """What plan.json carries for the findings: the mode, the oversized segments, the datafile units."""

    mode: str
    oversized_segments: list[dict[str, str | int]]
    datafile_units: list[str]


@dataclass
class Selection:
    """What to plan, in order, and the oversized segments to name."""

    mode: str
    segments: list[Segment]
    oversized: list[Oversized] = field(default_factory=list)


def oversized(segments: Iterable[Segment], unit_bytes: int) -> list[Segment]:
    """Segments one unit cannot hold that the engine cannot split."""
    return [s for s in segments if not s.splittable and s.bytes > unit_bytes and s.kind != DATAFILE_KIND]


def select(mode: str, found: list[Segment], unit_bytes: int) -> Selection:
    big = oversized(found, unit_bytes)
    by = BY_DATAFILES if reads_datafiles(mode) else BY_OWN_UNIT
    named = [Oversized(key=s.key, kind=s.kind, bytes=s.bytes, read_by=by) for s in big]
    if by == BY_DATAFILES:
        skip = {s.key for s in big}
        found = [s for s in found if s.key not in skip]
    return Selection(mode, found, named)


def plan_fields(selection: Selection, units: Iterable[Any]) -> PlanFields:
    """Fields plan.json carries for the findings: the mode, the oversized segments, the datafile units."""
    datafile_units = [u.unit_id for u in units if any(r.segment_key.endswith(f"#{DATAFILE_KIND}") for r in u.ranges)]
    return PlanFields(selection.mode, [o._asdict() for o in selection.oversized], datafile_units)
