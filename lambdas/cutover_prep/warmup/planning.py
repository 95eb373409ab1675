"""Turn discovered segments into balanced work units.

A work unit is sized in bytes so that one unit finishes well inside one Lambda
invocation even at a pessimistic cold read rate:

    unit_bytes = assumed_cold_rate * lambda_timeout * budget_fraction

The default cold rate is 8 MiB/s: seed 002 measured ~18 MB/s for a cold direct-path
full scan on a db.t2.medium (630,808 blocks of 8 KiB in 4:44); we assume half of that.
With a 900 s Lambda and a third of its time, a unit is 2,400 MiB. The warm-unit Lambda
still watches its own time budget and continues in a new invocation if it must.

Segments larger than a unit are split into near-equal block ranges (only where the
engine can read a sub-range: ``Segment.splittable``); small segments are grouped, each
weighed with ``RANGE_COST_BYTES`` beyond its size (a *time*, what one cold reader reads in it: a unit is
balanced by time, and the weight is never counted in the plan's or a unit's bytes, which are exactly
what the units read), so many tiny ones spread over units; but a unit
takes at least ``MIN_RANGES_PER_UNIT`` tiny ranges (small units would otherwise hold one catalogue
fork each: a unit's own cost, a Map item, an invocation and a commit, is more than a read). Units
are filled in priority order (first matching pattern wins), then the hot set (``warmup.hot_set``: exact
segment names from a hot-set profile, hottest first; ``hotset``), then the rest, each in discovery order.
The hot set is one rank, right after the patterns' ranks: the units come out in this order, and the
WarmUp Map hands them to its slots in it, so the hot set is read first at the run's full concurrency.

The hot set into the engine's buffer cache (``cache_hot_set``): the warm-up's reads hydrate the volume
but need not fill the engine's cache (PostgreSQL's pg_prewarm 'read' and pg_read_binary_file do not), so
the application would still fault each hot page in from the volume, sharing its IOPS with the warm-up
(benchmarks/hotset.py: pgbench read its 9,573 hot pages itself, 5 tps while 8 sessions read the rest). The hot
set's ranges that fit ``HOT_SET_CACHE_SHARE`` of the engine's buffer cache carry ``cache: true`` in their
locator (all of them when the hot set fits; else the indexes first, then the hottest: a hot set a little over
the share once went in not at all), and an engine that can load its cache with a read does (PostgreSQL:
pg_prewarm 'buffer').
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from cutover_prep.engines import keys
from cutover_prep.engines.base import Extent, ReadRange, Segment
from cutover_prep.models.warmup import RANGE_COST_BYTES

MIB = 1024 * 1024
DEFAULT_COLD_MIB_PER_S = 8.0
DEFAULT_LAMBDA_TIMEOUT_S = 900
DEFAULT_BUDGET_FRACTION = 1 / 3
DEFAULT_MAX_RANGES_PER_UNIT = 400  # keeps one Map item far below the 256 KiB payload limit
UNITS_PER_SLOT = 4  # units per slot of max_concurrency: the controller needs waiting units to raise the level
MIN_UNIT_BYTES = 64 * MIB  # below this a unit's invocation overhead (Map item, Lambda, commit) dominates
CHUNK_SECONDS = 10.0  # a chunk is sized to take about this long at the rate known before it
MIN_CHUNK_BYTES = 1 * MIB
# ... yet a unit holds at least this many tiny ranges: with warmup.unit_mb 2, each of a database's ~300
# catalogue forks was a unit of its own (359 units for 36 MiB: the Map's items, not the reads, took the time)
MIN_RANGES_PER_UNIT = 16


# What of the hot set is read into the engine's buffer cache: at most this share of it. pg_prewarm's documentation
# warns that prewarming more than the cache holds evicts the blocks read first; below that, a page the warm-up loaded
# and the application then does not use goes first (PostgreSQL's clock sweep evicts a buffer whose usage count has
# fallen to 0: a loaded page starts at 1, one the application uses climbs to 5), so the application's own pages
# keep their place. It was 0.5, and all or nothing: a hot set a little over half went in not at all (decision 0091).
HOT_SET_CACHE_SHARE = 0.9


def unit_bytes_for(
    *,
    cold_mib_per_s: float = DEFAULT_COLD_MIB_PER_S,
    lambda_timeout_s: float = DEFAULT_LAMBDA_TIMEOUT_S,
    budget_fraction: float = DEFAULT_BUDGET_FRACTION,
    total_bytes: int | None = None,
    max_concurrency: int | None = None,
) -> int:
    """Bytes one unit may hold so it is read in ``budget_fraction`` of a Lambda's time; with
    ``total_bytes`` and ``max_concurrency``, also at most an even share of
    ``UNITS_PER_SLOT * max_concurrency`` units (not below ``MIN_UNIT_BYTES``)."""
    by_time = int(cold_mib_per_s * MIB * lambda_timeout_s * budget_fraction)
    if not total_bytes or not max_concurrency:
        return by_time
    share = math.ceil(total_bytes / (UNITS_PER_SLOT * max_concurrency))
    return max(1, min(by_time, max(MIN_UNIT_BYTES, share)))


def chunk_bytes_for(rate_bytes_per_s: float, *, cap_bytes: int, seconds: float = CHUNK_SECONDS,
                    floor_bytes: int = MIN_CHUNK_BYTES) -> int:
    """Bytes of the next chunk: what ``rate_bytes_per_s`` reads in ``seconds``, between
    ``floor_bytes`` and ``cap_bytes`` (the run input's ``chunk_mb``). At a slow rate a chunk
    shrinks, so one chunk never outlasts the invocation; at a fast one it grows to the cap,
    so a unit does not spend its time committing tiny chunks."""
    if rate_bytes_per_s <= 0:
        return min(cap_bytes, floor_bytes)
    return int(max(min(floor_bytes, cap_bytes), min(cap_bytes, rate_bytes_per_s * seconds)))


@dataclass(frozen=True)
class PlanOptions:
    unit_bytes: int = unit_bytes_for()
    priority: tuple[str, ...] = ()
    hot_set: tuple[str, ...] = ()  # exact [database/]schema.name of segments, hottest first
    max_ranges_per_unit: int = DEFAULT_MAX_RANGES_PER_UNIT
    range_cost_bytes: int = RANGE_COST_BYTES


@dataclass
class WorkUnit:
    unit_id: str
    priority: int
    ranges: list[ReadRange] = field(default_factory=list)
    bytes: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "unit_id": self.unit_id,
            "priority": self.priority,
            "bytes": self.bytes,
            "blocks": sum(r.blocks for r in self.ranges),
            "ranges": [r.to_json() for r in self.ranges],
        }


@dataclass
class Plan:
    units: list[WorkUnit]
    segments: int
    bytes: int
    unit_bytes: int
    oversized_units: list[str]

    def summary(self) -> dict[str, Any]:
        sizes = [u.bytes for u in self.units]
        return {
            "units": len(self.units),
            "segments": self.segments,
            "bytes": self.bytes,  # what the units read: their ranges' blocks x block size, nothing added
            "ranges": sum(len(u.ranges) for u in self.units),
            "unit_bytes_target": self.unit_bytes,
            "max_unit_bytes": max(sizes, default=0),
            "mean_unit_bytes": int(sum(sizes) / len(sizes)) if sizes else 0,
            "oversized_units": len(self.oversized_units),
        }


def priority_rank(segment: Segment, patterns: Sequence[str]) -> int:
    """Index of the first pattern matching ``schema.name`` (the names as they are, the documented
    ``SCHEMA.NAME`` globs), the same quoted where needed (``Segment.label`` without the database: ``b."c.t"``
    picks one of two objects ``b.c.t`` names), the segment key, or the schema."""
    quoted = keys.label(segment.names, None, segment.quote_char)
    names = (f"{segment.schema}.{segment.name}", quoted, segment.key, segment.schema)
    for rank, pattern in enumerate(patterns):
        if any(fnmatch.fnmatchcase(n, pattern) for n in names):
            return rank
    return len(patterns)


def hot_set_labels(segment: Segment) -> list[str]:
    """The names a hot set may give ``segment``: ``database/schema.name`` and ``schema.name``, each name quoted
    where needed (``Segment.label``, as the engines' hotset hooks write them)."""
    return list(dict.fromkeys((segment.label, keys.label(segment.names, None, segment.quote_char))))


def hot_set_index(segment: Segment, names: dict[str, int]) -> int | None:
    """The position in the hot set of ``database/schema.name`` or ``schema.name`` (exact names, each quoted
    where needed as the engine's hotset hook writes them: ``Segment.label``), else None."""
    for name in hot_set_labels(segment):
        if name in names:
            return names[name]
    return None


def ranks(segment: Segment, options: PlanOptions, hot: dict[str, int]) -> tuple[int, int]:
    """(rank, place within it): a priority pattern's index; then the hot set's rank (``len(priority)``,
    ordered hottest first); then the rest (the last rank)."""
    rank = priority_rank(segment, options.priority)
    if rank < len(options.priority) or not hot:
        return rank, 0
    index = hot_set_index(segment, hot)
    return (rank, index) if index is not None else (rank + 1, 0)


def split_extents(extents: Sequence[Extent], pieces: int) -> Iterator[tuple[Extent, ...]]:
    """Cut a run of extents into ``pieces`` parts of near-equal block counts."""
    total = sum(e.blocks for e in extents)
    if pieces <= 1 or total == 0:
        yield tuple(extents)
        return
    per_piece = math.ceil(total / pieces)
    current: list[Extent] = []
    room = per_piece
    for extent in extents:
        start, left = extent.first_block, extent.blocks
        while left > 0:
            take = min(left, room)
            current.append(Extent(extent.file_id, start, take))
            start += take
            left -= take
            room -= take
            if room == 0:
                yield tuple(current)
                current, room = [], per_piece
    if current:
        yield tuple(current)


def _pieces(segment: Segment, unit_bytes: int) -> Iterator[ReadRange]:
    if segment.splittable and segment.bytes > unit_bytes:
        count = math.ceil(segment.blocks / max(1, unit_bytes // segment.block_size))
        parts: Iterable[tuple[Extent, ...]] = split_extents(segment.extents, count)
    else:
        parts = (segment.extents,)
    # ``whole_pieces``: the engine reads each planned piece in one call and cannot read a smaller one (Oracle's LOB
    # slices, engines.oracle.lobsplit): the pieces are not chunked further (warmup.unit.chunks)
    whole = segment.locator.whole_pieces
    for extents in parts:
        yield ReadRange(segment.key, segment.locator, extents, segment.block_size, segment.splittable and not whole)


def plan_units(segments: Iterable[Segment], options: PlanOptions = PlanOptions()) -> Plan:
    """Plan work units: split big segments, group small ones, keep priority order."""
    if options.unit_bytes <= 0:
        raise ValueError("unit size must be positive")
    hot = {name: i for i, name in reversed(list(enumerate(options.hot_set)))}
    ordered = [(rank, i, s) for (rank, _, i), s in sorted(
        ((*ranks(s, options, hot), i), s) for i, s in enumerate(segments))]
    units: list[WorkUnit] = []
    oversized: list[str] = []
    total = 0
    range_cost = min(options.range_cost_bytes, options.unit_bytes // MIN_RANGES_PER_UNIT)
    current: WorkUnit | None = None

    def close() -> None:
        nonlocal current
        if current is not None and current.ranges:
            units.append(current)
            if current.bytes > options.unit_bytes:
                oversized.append(current.unit_id)
        current = None

    for rank, _, segment in ordered:
        for piece in _pieces(segment, options.unit_bytes):
            size = piece.bytes
            total += size
            if current is not None and (
                current.priority != rank
                or current.bytes + size + (len(current.ranges) + 1) * range_cost > options.unit_bytes
                or len(current.ranges) >= options.max_ranges_per_unit
            ):
                close()
            if current is None:
                current = WorkUnit(unit_id=f"u{len(units) + 1:06d}", priority=rank)
            current.ranges.append(piece)
            current.bytes += size
    close()
    return Plan(
        units=units,
        segments=len(ordered),
        bytes=total,
        unit_bytes=options.unit_bytes,
        oversized_units=oversized,
    )


class HotSetCache(NamedTuple):
    """Whether the hot set was marked to be read into the engine's buffer cache: its bytes, the cache's, the share
    of it the hot set may take, and the answer (the plan summary's ``hot_set_cache``: ``_asdict``)."""

    bytes: int
    cache_bytes: int | None
    share: float
    marked: bool  # the whole hot set
    marked_bytes: int = 0  # what of it was marked: all of it, or what fits (first fit, the indexes first)


def cache_hot_set(plan: Plan, hot_rank: int | None, cache_bytes: int | None,
                  share: float = HOT_SET_CACHE_SHARE) -> HotSetCache | None:
    """Mark the hot set's ranges ``cache: true`` (read into the engine's buffer cache) while they fit ``share`` of
    ``cache_bytes``: the whole hot set when it fits, else what fits of it (first fit, each range whole), the
    indexes first (a lookup reads the index's pages before the table's, and an index page holds many rows), then
    in the hot set's order (hottest first); what was decided (None without a hot set). ``cache_bytes`` None: the
    engine does not say (nothing marked)."""
    if hot_rank is None:
        return None
    hot = [u for u in plan.units if u.priority == hot_rank]
    size = sum(u.bytes for u in hot)
    room = share * int(cache_bytes or 0)
    places = [(u, i) for u in hot for i in range(len(u.ranges))]
    order = sorted(range(len(places)), key=lambda n: (not _is_index(places[n][0].ranges[places[n][1]].segment_key), n))
    marked = 0
    for n in order:
        unit, i = places[n]
        piece = unit.ranges[i]
        left = int(room) - marked
        if piece.bytes <= left:
            unit.ranges[i] = replace(piece, locator=piece.locator.with_fields(cache=True))
            marked += piece.bytes
        elif piece.splittable and not piece.locator.whole_pieces and left >= piece.block_size:
            head, tail = _cut(piece.extents, left // piece.block_size)  # the cache's last room: part of this range
            unit.ranges[i:i + 1] = [replace(piece, extents=head, locator=piece.locator.with_fields(cache=True)),
                                    replace(piece, extents=tail)]
            places = [(u, j + 1 if u is unit and j > i else j) for u, j in places]
            marked += sum(e.blocks for e in head) * piece.block_size
    return HotSetCache(bytes=size, cache_bytes=cache_bytes, share=share, marked=bool(hot) and marked == size,
                       marked_bytes=marked)


def _cut(extents: Sequence[Extent], blocks: int) -> tuple[tuple[Extent, ...], tuple[Extent, ...]]:
    """The first ``blocks`` blocks of a run of extents, and the rest."""
    head: list[Extent] = []
    tail: list[Extent] = []
    for e in extents:
        take = min(e.blocks, max(0, blocks))
        if take:
            head.append(Extent(e.file_id, e.first_block, take))
        if e.blocks > take:
            tail.append(Extent(e.file_id, e.first_block + take, e.blocks - take))
        blocks -= take
    return tuple(head), tuple(tail)


def _is_index(segment_key: str) -> bool:
    """Whether a segment is an index, by the kind its key ends with (``Segment.key``'s ``#kind``: PostgreSQL
    ``index.main`` and ``toast_index.main``, MySQL ``index``, Oracle ``INDEX``, ``INDEX PARTITION``, ``LOBINDEX``)."""
    return "INDEX" in segment_key.rpartition("#")[2].split(".")[0].upper()
