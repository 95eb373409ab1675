"""What the warm-up reached, as a cutover engineer asks it (pure): coverage per database and per
schema, the largest relations with their status, whether the priority order was followed, the
units that were not read with their cause, and the time to warm at the measured rate.

Everything comes from the plan (``plan.json``: segments and options), the planned units
(``units.json``: ranges and priority rank) and the unit items (status, cursor, times). A unit
that did not finish still counts what its committed cursor says it read: the ranges before the
cursor, and the blocks of the cursor's range before it. Planned blocks a unit found gone (the unit
item's ``gone``: the relation was truncated while the run ran) are neither read nor unread: they
leave the denominator, as a dropped object leaves the census's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from cutover_prep.dal.records.census import SegmentRead
from cutover_prep.dal.records.findings import (
    Coverage,
    CoverageGroup,
    HotSet,
    HotSetSource,
    Priority,
    RankGroup,
    Relation,
    SegmentRow,
    TimeToWarm,
    UnreadUnit,
)
from cutover_prep.dal.records.plan import PlanRange, PlanUnit, UnitSummary
from cutover_prep.dal.records.units import Cursor, UnitProgress, progress_by_unit
from cutover_prep.engines import keys as object_keys
from cutover_prep.models.status import UnitStatus
from cutover_prep.models.warmup import HotSet as HotSetInput

Items = Mapping[str, UnitProgress]  # unit id -> unit item (``units.progress_by_unit`` reads stored ones)
NOT_STARTED = UnitProgress()  # a unit without an item: PENDING, nothing read

LARGEST = 20
READ, PARTLY, FAILED, NOT_READ = "READ", "PARTLY", "FAILED", "NOT_READ"
GIB = 2**30


def _read_of_range(rng: PlanRange, index: int, status: str, cursor: Cursor | None) -> int:
    """Planned bytes of one range that its unit has read (DONE: all; else what the cursor passed)."""
    if status == UnitStatus.DONE:
        return rng.bytes
    if not cursor:
        return 0
    at = cursor.range
    if index < at:
        return rng.bytes
    if index > at or not rng.splittable:
        return 0
    blocks = sum(e[2] for e in rng.extents[: cursor.extent]) + cursor.offset
    return blocks * rng.block_size


def gone_of(item: UnitProgress) -> dict[int, int]:
    """Range index -> planned bytes of it that no longer existed when the unit read it (``Store.commit_progress``
    appends ``[segment, range index, blocks, bytes, reason]`` per chunk)."""
    out: dict[int, int] = {}
    for entry in item.gone_entries():
        out[entry.range_index] = out.get(entry.range_index, 0) + entry.bytes
    return out


def segment_reads(units: Iterable[PlanUnit], unit_items: Items) -> dict[str, SegmentRead]:
    """Per segment key: planned bytes in units, bytes read, planned bytes found gone (truncated while the run
    ran: not read, not unread), whether every unit holding it is done and whether any failed."""
    out: dict[str, SegmentRead] = {}
    items = progress_by_unit(unit_items)
    for unit in units:
        item = items.get(unit.unit_id) or NOT_STARTED
        status = item.status
        gone = gone_of(item)
        for g in item.gone_entries():  # why (the engine's word; PostgreSQL's before it said: truncated)
            out.setdefault(g.segment, {"planned": 0, "read": 0, "gone": 0, "done": True, "failed": False})[
                "gone_reason"] = g.reason
        for i, rng in enumerate(unit.ranges):
            entry = out.setdefault(rng.segment, {"planned": 0, "read": 0, "gone": 0, "done": True, "failed": False})
            entry["planned"] += rng.bytes
            entry["gone"] = entry["gone"] + gone.get(i, 0)
            entry["read"] += max(0, _read_of_range(rng, i, status, item.cursor) - gone.get(i, 0))
            entry["done"] = entry["done"] and status == UnitStatus.DONE
            entry["failed"] = entry["failed"] or status == UnitStatus.FAILED
    return out


def segment_status(read: SegmentRead | None) -> str:
    if not read:
        return NOT_READ
    if read["done"]:
        return READ
    if read["failed"]:
        return FAILED
    return PARTLY if read["read"] > 0 else NOT_READ


def _pct(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 3) if whole else 100.0


def _label(segment: SegmentRow, schema_only: bool = False) -> str | None:
    """The names of ``segment`` as its key writes them, each quoted where needed (``engines.keys``; issue 32:
    ``b``.``c.t`` and ``b.c``.``t`` are not both ``b.c.t`` in the report): ``schema.name[.index]``, or with
    ``schema_only`` ``database.schema``. None for a key ``engines.keys`` did not make (a plan of before)."""
    try:
        _db, names, _part, _kind, q = object_keys.parse(str(segment.key or ""))
    except object_keys.NotAKey:
        return None
    if not schema_only:
        return object_keys.label(names, None, q) if names else None
    parts = [p for p in (segment.database, segment.schema_) if p not in (None, "")]
    return ".".join(object_keys.quote(str(p), q) for p in parts) or None


@dataclass
class _Tally:
    """A coverage group's or a relation's sums, as segments are added to it."""

    first: SegmentRow
    segments: int = 0
    segments_read: int = 0
    bytes_planned: int = 0
    bytes_read: int = 0
    statuses: set[str] = field(default_factory=set)

    def add(self, s: SegmentRow) -> None:
        self.segments += 1
        self.segments_read += s.status == READ
        self.bytes_planned += s.bytes - s.bytes_gone  # gone: not planned now
        self.bytes_read += s.bytes_read
        self.statuses.add(s.status)


class Groups:
    """Coverage per database, or per database and schema (``by_schema``), of segments given one at a time."""

    def __init__(self, by_schema: bool) -> None:
        self.by_schema, self.groups = by_schema, {}

    def _name(self, s: SegmentRow) -> tuple[str | None, ...]:
        return (s.database, s.schema_) if self.by_schema else (s.database,)

    def add(self, s: SegmentRow) -> None:
        self.groups.setdefault(self._name(s), _Tally(s)).add(s)

    def rows(self) -> list[CoverageGroup]:
        rows = [(name, CoverageGroup(database=name[0], **({"schema": name[1], "label": _label(g.first, True)}
                                                          if self.by_schema else {}),
                                     segments=g.segments, segments_read=g.segments_read,
                                     bytes_planned=g.bytes_planned, bytes_read=g.bytes_read,
                                     pct=_pct(g.bytes_read, g.bytes_planned)))
                for name, g in self.groups.items()]
        return [row for _, row in sorted(rows, key=lambda r: (-r[1].bytes_planned, [str(k) for k in r[0]]))]


def _group(segments: list[SegmentRow], by_schema: bool) -> list[CoverageGroup]:
    groups = Groups(by_schema)
    for s in segments:
        groups.add(s)
    return groups.rows()


def relation_status(statuses: set[str]) -> str:
    """A relation's status from its segments': READ when all were, FAILED when one failed, NOT_READ when none was
    read, PARTLY otherwise."""
    return (READ if statuses == {READ} else FAILED if FAILED in statuses
            else NOT_READ if statuses == {NOT_READ} else PARTLY)


def coverage_section(segments: list[SegmentRow]) -> Coverage:
    """``coverage``: per database, per schema, and the ``LARGEST`` relations (table with its indexes,
    TOAST and forks summed by ``database.schema.name``) with their status."""
    relations: dict[tuple[str | None, ...], _Tally] = {}
    for s in segments:
        relations.setdefault((s.database, s.schema_, s.name), _Tally(s)).add(s)
    largest = sorted(relations.items(), key=lambda r: (-r[1].bytes_planned, str(r[0][1]), str(r[0][2])))[:LARGEST]
    rows = [Relation(database=db, schema=schema, name=name, label=_label(r.first), segments=r.segments,
                     bytes=r.bytes_planned, bytes_read=r.bytes_read, status=relation_status(r.statuses),
                     pct=_pct(r.bytes_read, r.bytes_planned)) for (db, schema, name), r in largest]
    return Coverage(by_database=_group(segments, False), by_schema=_group(segments, True), largest=rows,
                    relations=len(relations))


def _seconds(first: str | None, last: str | None) -> float | None:
    if not first or not last:
        return None
    return round(max(0.0, (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()), 3)


def _times(items: Iterable[UnitProgress]) -> tuple[str | None, str | None]:
    items = list(items)
    starts = [i.started_at for i in items if i.started_at]
    ends = [i.finished_at for i in items if i.finished_at]
    return (min(starts) if starts else None), (max(ends) if ends else None)


def _rank(unit: UnitSummary, last_rank: int) -> int:
    """The unit's plan rank (one without a ``priority``: the last)."""
    return last_rank if unit.priority is None else unit.priority


def rank_groups(labels: list[str | None], units: list[UnitSummary],
                unit_items: Items) -> tuple[list[RankGroup], bool]:
    """Per plan rank (``labels[rank]``; the last rank is the rest): its units, bytes, when they started and
    when the last of them finished (None until all are done), and whether the order was followed: every
    rank's units all finished no later than those of any lower one. ``priority`` and ``hot_set`` both."""
    progress = progress_by_unit(unit_items)
    t0, _ = _times(progress.values())
    last_rank = len(labels) - 1
    groups = []
    for rank, label in enumerate(labels):
        mine = [u for u in units if min(_rank(u, last_rank), last_rank) == rank]
        items = [progress.get(u.unit_id) or NOT_STARTED for u in mine]
        first, last = _times(items)
        done = sum(1 for i in items if i.status == UnitStatus.DONE)
        complete = bool(mine) and done == len(mine)
        groups.append(RankGroup(pattern=label, rank=rank, units=len(mine), units_done=done,
                                bytes=sum(u.bytes for u in mine), started_at=first,
                                finished_at=last if complete else None,
                                finished_after_s=_seconds(t0, last) if complete else None))
    # Units are handed out in rank order, but several read at once and a unit's start is recorded at its
    # first chunk: the order shows in when each rank's last unit finished.
    ends = [(g.rank, g.finished_at) for g in groups if g.units]
    followed = all(high is not None and (low is None or high <= low)
                   for i, (_, high) in enumerate(ends) for _, low in ends[i + 1:])
    return groups, followed


def priority_section(patterns: list[str], units: list[UnitSummary],
                     unit_items: Items, *, hot_set: bool = False) -> Priority | None:
    """``priority``: when each ``warmup.priority`` pattern's units finished against the rest, and whether
    the order was followed: every priority's units all finished no later than those of any lower one.
    With a hot set, its rank (right after the patterns) is a group of its own, ``hot_set`` true."""
    if not patterns:
        return None
    labels: list[str | None] = [*patterns, *([None] if hot_set else []), None]
    groups, followed = rank_groups(labels, units, unit_items)
    if hot_set:
        groups[len(patterns)].hot_set = True
    return Priority(patterns=list(patterns), groups=groups, followed=followed,
                    matched_nothing=[g.pattern for g in groups[:len(patterns)] if g.units == 0])


def _sources(patterns: list[str], hot: HotSetInput) -> list[HotSetSource]:
    """The hot set's sources in the order the run reads them (issue 23): the input's patterns, the profile's
    statistics, AWR history."""
    out: list[tuple[str, str]] = []
    if patterns:
        out.append(("warmup.priority", ", ".join(patterns)))
    for text in hot.sources:
        kind, _, views = str(text).partition(": ")
        out.append(("AWR history" if kind == "awr" else "hot-set profile statistics", views or kind))
    return [HotSetSource(order=i, source=source, detail=detail) for i, (source, detail) in enumerate(out, 1)]


def hot_set_section(hot: HotSetInput | None, patterns: list[str], known: Iterable[str], units: list[UnitSummary],
                    unit_items: Items) -> HotSet | None:
    """``hot_set``: where the hot set came from (in order), what it named and matched (``known``: the names the
    plan's segments answer to, ``PlanSegment.names``), its units, and when it was warm: ``warm_at`` /
    ``warm_after_s`` (since the warm-up's first unit started), None until all its units are done; ``followed`` as
    ``priority``'s rule over every rank, and how many later units finished before it was warm; ``buffer_cache``:
    its ranges were planned into the engine's buffer cache."""
    if not hot:
        return None
    labels: list[str | None] = [*patterns, "hot set", None]
    progress = progress_by_unit(unit_items)
    groups, followed = rank_groups(labels, units, progress)
    mine = groups[len(patterns)]
    names = list(hot.names)
    known = set(known)
    unmatched = [n for n in names if n not in known]
    t0, t_end = _times(progress.values())
    whole = _seconds(t0, t_end)
    warm_at = mine.finished_at
    later = [u for u in units if _rank(u, len(labels) - 1) > len(patterns)]
    finished = [(progress.get(u.unit_id) or NOT_STARTED).finished_at for u in later]
    before = sum(1 for at in finished if at and at < warm_at) if warm_at else None
    after_s = mine.finished_after_s
    return HotSet(
        sources=_sources(patterns, hot), engine=hot.engine, server=hot.server,
        taken_at=hot.taken_at, relations=hot.relations, names=len(names),
        names_matched=len(names) - len(unmatched), unmatched=unmatched[:20],
        units=mine.units, units_done=mine.units_done, bytes=mine.bytes,
        started_at=mine.started_at, warm_at=warm_at, warm_after_s=after_s,
        warmup_seconds=whole,
        pct_of_warmup=round(100.0 * after_s / whole, 1) if after_s is not None and whole else None,
        later_units_finished_first=before, followed=followed,
        # the plan asked the engine to read the hot set into its buffer cache (planning.cache_hot_set;
        # PostgreSQL: pg_prewarm 'buffer', where pg_prewarm is the read method)
        buffer_cache=any(u.cache for u in units if _rank(u, len(labels) - 1) == len(patterns)),
    )


def unread_units(units: Iterable[PlanUnit], unit_items: Items) -> list[UnreadUnit]:
    """``unread_units``: every unit not DONE, with its status, what it holds, what it read and why."""
    out = []
    progress = progress_by_unit(unit_items)
    for unit in units:
        item = progress.get(unit.unit_id) or NOT_STARTED
        status = item.status
        if status == UnitStatus.DONE:
            continue
        if status == UnitStatus.FAILED:
            cause = (": ".join(str(x) for x in (item.error, item.cause) if x)
                     or "failed (no cause recorded)")
        elif status == UnitStatus.RUNNING:
            cause = "cut off while being read: the warm-up ended (time limit, stop or failure) before it finished"
        else:
            cause = "never started: the warm-up ended before it reached this unit"
        gone = gone_of(item)  # truncated while the run ran: not read
        read = sum(max(0, _read_of_range(r, i, status, item.cursor) - gone.get(i, 0))
                   for i, r in enumerate(unit.ranges))
        keys = list(dict.fromkeys(r.segment for r in unit.ranges))
        out.append(UnreadUnit(unit_id=unit.unit_id, status=status, priority=unit.priority,
                              bytes=unit.bytes, bytes_read=read, segments=keys[:3],
                              more_segments=max(0, len(keys) - 3), cause=cause))
    return out


def time_to_warm(planned_bytes: int, wall_mib_per_s: float | None,
                 production_gb: float | None = None) -> TimeToWarm | None:
    """``time_to_warm``: the planned bytes at the measured wall rate, and the production size at it
    (``warmup.production_size_gb`` of the input) when given. Same concurrency assumed: a projection,
    not a measurement."""
    if not wall_mib_per_s or wall_mib_per_s <= 0:
        return None
    rate = wall_mib_per_s * 2**20
    production = ({"production_bytes": int(production_gb * GIB),
                   "production_seconds": round(production_gb * GIB / rate, 1)} if production_gb else {})
    return TimeToWarm(mib_per_s_wall=wall_mib_per_s, planned_bytes=planned_bytes,
                      planned_seconds=round(planned_bytes / rate, 3), **production)
