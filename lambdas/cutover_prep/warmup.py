"""Warm one work unit, chunk by chunk, inside one Lambda invocation's time budget.

- Idempotent: a unit whose item says DONE is not read again; a unit in progress resumes
  from its committed cursor (a retried or restarted run never re-reads finished chunks).
- Time-budget aware: before each chunk it estimates the chunk's duration (the slower of
  the assumed cold rate and half the rate seen so far) and, when that would not fit in
  the remaining time less a safety margin, commits the cursor and returns CONTINUE; the
  workflow calls it again with the cursor. A chunk is never cut off silently.
- Transient database errors are retried with exponential backoff; other errors are
  raised with their name so the workflow records the unit as FAILED.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from cutover_prep.engines import Engine, Extent, ReadRange, TransientDatabaseError
from cutover_prep.planning import MIB
from cutover_prep.store import StaleProgress, Store


@dataclass(frozen=True)
class Budget:
    remaining_seconds: Callable[[], float]
    safety_margin_seconds: float = 30.0


@dataclass(frozen=True)
class Chunk:
    range_index: int
    extent_index: int
    offset: int  # blocks into the extent
    rng: ReadRange

    def cursor_after(self, extents_in_range: int, extent_blocks: int) -> dict[str, int]:
        offset = self.offset + self.rng.blocks
        if offset < extent_blocks:
            return {"range": self.range_index, "extent": self.extent_index, "offset": offset}
        if self.extent_index + 1 < extents_in_range:
            return {"range": self.range_index, "extent": self.extent_index + 1, "offset": 0}
        return {"range": self.range_index + 1, "extent": 0, "offset": 0}


def chunks(ranges: list[ReadRange], cursor: dict[str, int], chunk_bytes: int) -> Iterator[Chunk]:
    """The chunks left to read from ``cursor`` on; unsplittable ranges are one chunk."""
    for ri in range(cursor["range"], len(ranges)):
        rng = ranges[ri]
        if not rng.splittable:
            yield Chunk(ri, 0, 0, rng)
            continue
        step = max(1, chunk_bytes // rng.block_size)
        first_extent = cursor["extent"] if ri == cursor["range"] else 0
        for ei in range(first_extent, len(rng.extents)):
            ext = rng.extents[ei]
            offset = cursor["offset"] if (ri == cursor["range"] and ei == first_extent) else 0
            while offset < ext.blocks:
                n = min(step, ext.blocks - offset)
                piece = ReadRange(rng.segment_key, rng.locator, (Extent(ext.file_id, ext.first_block + offset, n),),
                                  rng.block_size, True)
                yield Chunk(ri, ei, offset, piece)
                offset += n


def _cursor_after(chunk: Chunk, ranges: list[ReadRange]) -> dict[str, int]:
    rng = ranges[chunk.range_index]
    if not rng.splittable:
        return {"range": chunk.range_index + 1, "extent": 0, "offset": 0}
    return chunk.cursor_after(len(rng.extents), rng.extents[chunk.extent_index].blocks)


def warm_unit(event: dict[str, Any], *, store: Store, engine: Callable[[], Engine], budget: Budget,
              read_attempts: int = 3, sleep: Callable[[float], None] | None = None) -> dict[str, Any]:
    run, unit = event["run"], event["unit"]
    run_id, unit_id = run["run_id"], unit["unit_id"]
    item = store.get_unit(run_id, unit_id) or {}
    if item.get("status") == "DONE":
        return {"run": run, "unit": unit, "status": "ALREADY_DONE"}
    seq = int(item.get("seq", 0))
    cursor = item.get("cursor") or {"range": 0, "extent": 0, "offset": 0}
    ranges = [ReadRange.from_json(r) for r in unit["ranges"]]
    opts = run["warmup"]
    assumed_rate = float(opts["assumed_cold_mib_per_s"]) * MIB
    seen_bytes, seen_seconds, done_here = 0, 0.0, 0
    retry_kwargs: dict[str, Any] = {
        "stop": stop_after_attempt(read_attempts), "reraise": True,
        "wait": wait_exponential(multiplier=1, min=1, max=20),
        "retry": retry_if_exception_type(TransientDatabaseError),
    }
    if sleep is not None:
        retry_kwargs["sleep"] = sleep
    db = engine()
    pending = list(chunks(ranges, cursor, int(opts["chunk_mb"]) * MIB))
    for i, chunk in enumerate(pending):
        rate = assumed_rate if not seen_seconds else min(assumed_rate, seen_bytes / seen_seconds / 2)
        estimate = chunk.rng.bytes / max(rate, 1.0)
        if done_here and budget.remaining_seconds() - budget.safety_margin_seconds < estimate:
            return {"run": run, "unit": unit, "status": "CONTINUE", "cursor": cursor}
        result = None
        for attempt in Retrying(**retry_kwargs):
            with attempt:
                result = db.read_range(chunk.rng)
        assert result is not None
        last = i == len(pending) - 1
        cursor = _cursor_after(chunk, ranges)
        try:
            store.commit_progress(run_id, unit_id, seq=seq, cursor=None if last else cursor,
                                  blocks=result.blocks, bytes_=result.bytes, seconds=result.seconds,
                                  method=result.method, done=last, planned_bytes=int(unit["bytes"]))
        except StaleProgress:  # a parallel or earlier invocation moved this unit on: stop here
            return {"run": run, "unit": unit, "status": "ALREADY_DONE"}
        seq += 1
        done_here += 1
        seen_bytes += result.bytes
        seen_seconds += result.seconds
    if not pending:  # an empty unit (every range already read before a restart)
        store.commit_progress(run_id, unit_id, seq=seq, cursor=None, blocks=0, bytes_=0, seconds=0.0,
                              method="none", done=True, planned_bytes=int(unit["bytes"]))
    return {"run": run, "unit": unit, "status": "DONE"}
