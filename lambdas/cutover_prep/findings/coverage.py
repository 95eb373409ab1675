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
from datetime import datetime
from typing import Any

from cutover_prep.dal.records.census import SegmentRead
from cutover_prep.dal.records.findings import HotSet, HotSetSource, Priority, RankGroup, TimeToWarm, UnreadUnit
from cutover_prep.dal.records.units import Cursor, UnitProgress, progress_by_unit
from cutover_prep.engines import keys as object_keys
from cutover_prep.models.status import UnitStatus

Items = Mapping[str, UnitProgress | Mapping[str, Any]]  # unit id -> unit item (a record, or as stored)
NOT_STARTED = UnitProgress()  # a unit without an item: PENDING, nothing read

LARGEST = 20
READ, PARTLY, FAILED, NOT_READ = "READ", "PARTLY", "FAILED", "NOT_READ"
GIB = 2**30


def range_bytes(rng: dict[str, Any]) -> int:
    return sum(int(e[2]) for e in rng.get("extents") or []) * int(rng.get("block_size") or 0)


def _read_of_range(rng: dict[str, Any], index: int, status: str, cursor: Cursor | None) -> int:
    """Planned bytes of one range that its unit has read (DONE: all; else what the cursor passed)."""
    if status == UnitStatus.DONE:
        return range_bytes(rng)
    if not cursor:
        return 0
    at = cursor.range
    if index < at:
        return range_bytes(rng)
    if index > at or not rng.get("splittable", True):
        return 0
    extents = rng.get("extents") or []
    blocks = sum(int(e[2]) for e in extents[: cursor.extent]) + cursor.offset
    return blocks * int(rng.get("block_size") or 0)


def gone_of(item: UnitProgress) -> dict[int, int]:
    """Range index -> planned bytes of it that no longer existed when the unit read it (``Store.commit_progress``
    appends ``[segment, range index, blocks, bytes, reason]`` per chunk)."""
    out: dict[int, int] = {}
    for entry in item.gone_entries():
        out[entry.range_index] = out.get(entry.range_index, 0) + entry.bytes
    return out


def segment_reads(units: list[dict[str, Any]], unit_items: Items) -> dict[str, SegmentRead]:
    """Per segment key: planned bytes in units, bytes read, planned bytes found gone (truncated while the run
    ran: not read, not unread), whether every unit holding it is done and whether any failed."""
    out: dict[str, SegmentRead] = {}
    items = progress_by_unit(unit_items)
    for unit in units:
        item = items.get(unit["unit_id"]) or NOT_STARTED
        status = item.status
        gone = gone_of(item)
        for g in item.gone_entries():  # why (the engine's word; PostgreSQL's before it said: truncated)
            out.setdefault(g.segment, {"planned": 0, "read": 0, "gone": 0, "done": True, "failed": False})[
                "gone_reason"] = g.reason
        for i, rng in enumerate(unit.get("ranges") or []):
            entry = out.setdefault(rng["segment"], {"planned": 0, "read": 0, "gone": 0, "done": True,
                                                    "failed": False})
            entry["planned"] += range_bytes(rng)
            entry["gone"] += gone.get(i, 0)
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


def _label(segment: dict[str, Any], schema_only: bool = False) -> str | None:
    """The names of ``segment`` as its key writes them, each quoted where needed (``engines.keys``; issue 32:
    ``b``.``c.t`` and ``b.c``.``t`` are not both ``b.c.t`` in the report): ``schema.name[.index]``, or with
    ``schema_only`` ``database.schema``. None for a key ``engines.keys`` did not make (a plan of before)."""
    try:
        _db, names, _part, _kind, q = object_keys.parse(str(segment.get("key") or ""))
    except object_keys.NotAKey:
        return None
    if not schema_only:
        return object_keys.label(names, None, q) if names else None
    parts = [p for p in (segment.get("database"), segment.get("schema")) if p not in (None, "")]
    return ".".join(object_keys.quote(str(p), q) for p in parts) or None


class Groups:
    """Coverage per database, or per database and schema (``keys``), of segments given one at a time."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys, self.groups = keys, {}

    def add(self, s: dict[str, Any]) -> None:
        keys = self.keys
        name = tuple(s.get(k) for k in keys)
        g = self.groups.setdefault(name, {**dict(zip(keys, name, strict=True)),
                                          **({"label": _label(s, True)} if "schema" in keys else {}),
                                          "segments": 0, "segments_read": 0, "bytes_planned": 0, "bytes_read": 0})
        g["segments"] += 1
        g["segments_read"] += s["status"] == READ
        g["bytes_planned"] += int(s.get("bytes") or 0) - int(s.get("bytes_gone") or 0)  # gone: not planned now
        g["bytes_read"] += int(s.get("bytes_read") or 0)

    def rows(self) -> list[dict[str, Any]]:
        rows = [{**g, "pct": _pct(g["bytes_read"], g["bytes_planned"])} for g in self.groups.values()]
        return sorted(rows, key=lambda g: (-g["bytes_planned"], [str(g[k]) for k in self.keys]))


def _group(segments: list[dict[str, Any]], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    groups = Groups(keys)
    for s in segments:
        groups.add(s)
    return groups.rows()


def coverage_section(segments: list[dict[str, Any]]) -> dict[str, Any]:
    """``coverage``: per database, per schema, and the ``LARGEST`` relations (table with its indexes,
    TOAST and forks summed by ``database.schema.name``) with their status."""
    relations: dict[tuple[Any, ...], dict[str, Any]] = {}
    for s in segments:
        name = (s.get("database"), s.get("schema"), s.get("name"))
        r = relations.setdefault(name, {"database": name[0], "schema": name[1], "name": name[2],
                                        "label": _label(s), "segments": 0,
                                        "bytes": 0, "bytes_read": 0, "statuses": set()})
        r["segments"] += 1
        r["bytes"] += int(s.get("bytes") or 0) - int(s.get("bytes_gone") or 0)
        r["bytes_read"] += int(s.get("bytes_read") or 0)
        r["statuses"].add(s["status"])
    largest = sorted(relations.values(), key=lambda r: (-r["bytes"], str(r["schema"]), str(r["name"])))[:LARGEST]
    rows = []
    for r in largest:
        statuses = r.pop("statuses")
        status = (READ if statuses == {READ} else FAILED if FAILED in statuses
                  else NOT_READ if statuses == {NOT_READ} else PARTLY)
        rows.append({**r, "status": status, "pct": _pct(r["bytes_read"], r["bytes"])})
    return {"by_database": _group(segments, ("database",)), "by_schema": _group(segments, ("database", "schema")),
            "largest": rows, "relations": len(relations)}


def _seconds(first: str | None, last: str | None) -> float | None:
    if not first or not last:
        return None
    return round(max(0.0, (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()), 3)


def _times(items: Iterable[UnitProgress]) -> tuple[str | None, str | None]:
    items = list(items)
    starts = [i.started_at for i in items if i.started_at]
    ends = [i.finished_at for i in items if i.finished_at]
    return (min(starts) if starts else None), (max(ends) if ends else None)


def rank_groups(labels: list[str | None], units: list[dict[str, Any]],
                unit_items: Items) -> tuple[list[RankGroup], bool]:
    """Per plan rank (``labels[rank]``; the last rank is the rest): its units, bytes, when they started and
    when the last of them finished (None until all are done), and whether the order was followed: every
    rank's units all finished no later than those of any lower one. ``priority`` and ``hot_set`` both."""
    progress = progress_by_unit(unit_items)
    t0, _ = _times(progress.values())
    last_rank = len(labels) - 1
    groups = []
    for rank, label in enumerate(labels):
        mine = [u for u in units if min(int(u.get("priority", last_rank)), last_rank) == rank]
        items = [progress.get(u["unit_id"]) or NOT_STARTED for u in mine]
        first, last = _times(items)
        done = sum(1 for i in items if i.status == UnitStatus.DONE)
        complete = bool(mine) and done == len(mine)
        groups.append(RankGroup(pattern=label, rank=rank, units=len(mine), units_done=done,
                                bytes=sum(int(u.get("bytes") or 0) for u in mine), started_at=first,
                                finished_at=last if complete else None,
                                finished_after_s=_seconds(t0, last) if complete else None))
    # Units are handed out in rank order, but several read at once and a unit's start is recorded at its
    # first chunk: the order shows in when each rank's last unit finished.
    ends = [(g.rank, g.finished_at) for g in groups if g.units]
    followed = all(high is not None and (low is None or high <= low)
                   for i, (_, high) in enumerate(ends) for _, low in ends[i + 1:])
    return groups, followed


def priority_section(patterns: list[str], units: list[dict[str, Any]],
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


def _sources(patterns: list[str], hot: dict[str, Any]) -> list[HotSetSource]:
    """The hot set's sources in the order the run reads them (issue 23): the input's patterns, the profile's
    statistics, AWR history."""
    out: list[dict[str, Any]] = []
    if patterns:
        out.append({"source": "warmup.priority", "detail": ", ".join(patterns)})
    for text in hot.get("sources") or []:
        kind, _, views = str(text).partition(": ")
        out.append({"source": "AWR history" if kind == "awr" else "hot-set profile statistics",
                    "detail": views or kind})
    return [HotSetSource(order=i, **s) for i, s in enumerate(out, 1)]


def hot_set_section(hot: dict[str, Any] | None, patterns: list[str], segments: list[dict[str, Any]],
                    units: list[dict[str, Any]], unit_items: Items) -> HotSet | None:
    """``hot_set``: where the hot set came from (in order), what it named and matched, its units, and when it
    was warm: ``warm_at`` / ``warm_after_s`` (since the warm-up's first unit started), None until all its
    units are done; ``followed`` as ``priority``'s rule over every rank, and how many later units finished
    before it was warm; ``buffer_cache``: its ranges were planned into the engine's buffer cache."""
    if not hot:
        return None
    labels: list[str | None] = [*patterns, "hot set", None]
    progress = progress_by_unit(unit_items)
    groups, followed = rank_groups(labels, units, progress)
    mine = groups[len(patterns)]
    names = list(hot.get("names") or [])
    known = set()
    for s in segments:
        if s.get("labels"):  # as the planner matched them (planning.hot_set_labels)
            known.update(s["labels"])
            continue
        plain = f"{s.get('schema')}.{s.get('name')}"  # a plan of before issue 32: the names pasted
        known.add(plain)
        if s.get("database"):
            known.add(f"{s['database']}/{plain}")
    unmatched = [n for n in names if n not in known]
    t0, t_end = _times(progress.values())
    whole = _seconds(t0, t_end)
    warm_at = mine.finished_at
    later = [u for u in units if int(u.get("priority", len(labels) - 1)) > len(patterns)]
    finished = [(progress.get(u["unit_id"]) or NOT_STARTED).finished_at for u in later]
    before = sum(1 for at in finished if at and at < warm_at) if warm_at else None
    after_s = mine.finished_after_s
    return HotSet(
        sources=_sources(patterns, hot), engine=hot.get("engine"), server=hot.get("server"),
        taken_at=hot.get("taken_at"), relations=hot.get("relations"), names=len(names),
        names_matched=len(names) - len(unmatched), unmatched=unmatched[:20],
        units=mine.units, units_done=mine.units_done, bytes=mine.bytes,
        started_at=mine.started_at, warm_at=warm_at, warm_after_s=after_s,
        warmup_seconds=whole,
        pct_of_warmup=round(100.0 * after_s / whole, 1) if after_s is not None and whole else None,
        later_units_finished_first=before, followed=followed,
        # the plan asked the engine to read the hot set into its buffer cache (planning.cache_hot_set;
        # PostgreSQL: pg_prewarm 'buffer', where pg_prewarm is the read method)
        buffer_cache=any(_cached(u) for u in units if int(u.get("priority", len(labels) - 1)) == len(patterns)),
    )


def _cached(unit: dict[str, Any]) -> bool:
    """A range of ``unit`` asks for the engine's buffer cache (``plan_pass.slim_unit`` says it of a unit without its
    ranges)."""
    if "cache" in unit:
        return bool(unit["cache"])
    return any((r.get("locator") or {}).get("cache") for r in unit.get("ranges") or [])


def unread_units(units: list[dict[str, Any]], unit_items: Items) -> list[UnreadUnit]:
    """``unread_units``: every unit not DONE, with its status, what it holds, what it read and why."""
    out = []
    progress = progress_by_unit(unit_items)
    for unit in units:
        item = progress.get(unit["unit_id"]) or NOT_STARTED
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
        ranges = unit.get("ranges") or []
        gone = gone_of(item)  # truncated while the run ran: not read
        read = sum(max(0, _read_of_range(r, i, status, item.cursor) - gone.get(i, 0))
                   for i, r in enumerate(ranges))
        keys = list(dict.fromkeys(r["segment"] for r in ranges))
        out.append(UnreadUnit(unit_id=unit["unit_id"], status=status, priority=unit.get("priority"),
                              bytes=int(unit.get("bytes") or 0), bytes_read=read, segments=keys[:3],
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
