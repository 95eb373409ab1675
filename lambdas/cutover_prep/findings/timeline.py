"""The warm-up's read rate over time, from the chunks each unit recorded (pure).

A unit item keeps ``chunks`` as ``[finished_at, bytes, seconds]``: the chunk was read
during ``[finished_at - seconds, finished_at]``. Its bytes are spread evenly over that
interval and summed per time bucket, across all units, so the series is the aggregate
MiB/s the database delivered, whatever the concurrency was.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timedelta

from cutover_prep.dal.records.findings import RatePoint, WarmupTimeline
from cutover_prep.dal.records.findings_storage import PctPoint
from cutover_prep.dal.records.units import UnitProgress, progress_list

Items = Iterable[UnitProgress]  # the unit items (``Store.units``; ``units.progress_list`` reads stored ones)

MIB = 2**20
MAX_BUCKETS = 120


def _intervals(unit_items: Items) -> list[tuple[datetime, datetime, int]]:
    found = []
    for item in progress_list(unit_items):
        for finished_at, nbytes, seconds in item.chunks:
            end = datetime.fromisoformat(finished_at)
            found.append((end - timedelta(seconds=float(seconds)), end, int(nbytes)))
    return found


def warmup_wall(unit_items: Items) -> tuple[float | None, int]:
    """The warm-up's time and bytes, as every figure of it is defined (findings ``timings.warmup_wall_seconds``,
    ``read_rate.mib_per_s_wall``, the report, summary.md and ``local``'s last progress line): from the first unit's
    start to the last unit's finish, and the bytes all units read. ``(None, bytes)`` before a unit finished."""
    items = progress_list(unit_items)
    starts = sorted(i.started_at for i in items if i.started_at)
    ends = sorted(i.finished_at for i in items if i.finished_at)
    nbytes = sum(i.bytes_read for i in items)
    if not starts or not ends:
        return None, nbytes
    return max(0.0, (datetime.fromisoformat(ends[-1]) - datetime.fromisoformat(starts[0])).total_seconds()), nbytes


def database_reading(unit_items: Items) -> tuple[float, int]:
    """The seconds during which at least one reader was inside a database read (the union of the recorded chunks'
    intervals, whatever the concurrency), and the bytes those chunks read: the database's own read rate is the one
    over the other, apart from the time the tool spent between reads (``read_rate.mib_per_s_database``)."""
    intervals = sorted((a, b, n) for a, b, n in _intervals(unit_items) if n > 0)
    busy, nbytes = 0.0, 0
    end: datetime | None = None
    for begin, finish, n in intervals:
        nbytes += n
        if end is None or begin > end:
            busy += (finish - begin).total_seconds()
            end = finish
        elif finish > end:
            busy += (finish - end).total_seconds()
            end = finish
    return busy, nbytes


def warmup_timeline(unit_items: Items, *, max_buckets: int = MAX_BUCKETS) -> WarmupTimeline:
    """``bucket_seconds``, ``started_at``, ``series`` (``t_s``, ``mib_per_s``); empty series without samples."""
    intervals = [i for i in _intervals(unit_items) if i[2] > 0]
    if not intervals:
        return WarmupTimeline(bucket_seconds=None, started_at=None, series=[])
    start = min(i[0] for i in intervals)
    span = max((i[1] - start).total_seconds() for i in intervals)
    bucket = max(1.0, math.ceil(span / max_buckets)) if span > max_buckets else max(span / max_buckets, 0.05)
    count = max(1, math.ceil(span / bucket))
    totals = [0.0] * count
    for begin, end, nbytes in intervals:
        a, b = (begin - start).total_seconds(), (end - start).total_seconds()
        if b <= a:  # recorded in no time: all of it in the bucket where it finished
            totals[min(count - 1, int(a // bucket))] += nbytes
            continue
        rate = nbytes / (b - a)
        for k in range(int(a // bucket), min(count - 1, int(b // bucket)) + 1):
            overlap = min(b, (k + 1) * bucket) - max(a, k * bucket)
            if overlap > 0:
                totals[k] += rate * overlap
    return WarmupTimeline(bucket_seconds=round(bucket, 3), started_at=start.isoformat(),
                          series=[RatePoint(t_s=round(k * bucket, 3), mib_per_s=round(total / bucket / MIB, 3))
                                  for k, total in enumerate(totals)])


def coverage_series(unit_items: Items, planned_bytes: int, *, max_points: int = MAX_BUCKETS) -> list[PctPoint]:
    """Our own coverage over time: ``[{"at", "pct"}]``, the share of the planned bytes read by the end
    of each chunk (capped at 100), at most ``max_points`` points (the last one always kept).

    Only the chunks each unit recorded count (``MAX_CHUNK_SAMPLES`` per unit), so a unit with more
    chunks than that is under-counted here, never over-counted."""
    ends = sorted((datetime.fromisoformat(end), int(nbytes)) for end, nbytes, _ in
                  (c for item in progress_list(unit_items) for c in item.chunks) if int(nbytes) > 0)
    if not ends or planned_bytes <= 0:
        return []
    points, total = [], 0
    for end, nbytes in ends:
        total += nbytes
        points.append(PctPoint(at=end.isoformat(), pct=round(min(100.0, 100.0 * total / planned_bytes), 3)))
    if len(points) <= max_points:
        return points
    last = len(points) - 1
    return [points[i] for i in sorted({round(k * last / (max_points - 1)) for k in range(max_points)})]
