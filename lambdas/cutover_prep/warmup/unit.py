"""Warm one work unit, chunk by chunk, inside one Lambda invocation's time budget.

- Idempotent: a unit whose item says DONE is not read again; a unit in progress resumes
  from its committed cursor (a retried or restarted run never re-reads committed chunks).
  Chunks are committed a chunk's worth at a time (``Batch``: small ranges together, decision 92).
- Sized from a measured rate: each chunk is what the current rate reads in about
  ``planning.CHUNK_SECONDS`` (at most ``chunk_mb``). The rate is this invocation's own
  chunks' once it has read one; before that the rate handed in with the event: a previous
  invocation's first chunks (``rate.source == "first_chunks"``), the cold probe's, or the
  assumed ``assumed_cold_mib_per_s`` (``slots.acquire`` chose, the findings say which).
- Time-budget aware: before each chunk it estimates the chunk's duration at half that
  rate and, when that would not fit in the remaining time less a safety margin, commits
  the cursor and returns CONTINUE with the rate it measured; the workflow calls it again
  with the cursor. A chunk is never cut off silently.
- Transient database errors are retried here and only here (``retry.Retries``: bounded,
  exponential backoff, counted per unit in ``retries``); other errors are raised with
  their name so the workflow records the unit as FAILED.
- A restart or failover is ridden out (issue 32 §4): a lost session or a database that does not
  answer is retried with jittered backoff for ``warmup.reconnect_minutes`` from the first failure
  (the connection too is made inside the retries: a unit that starts during the outage waits for
  it), the engine reconnecting; the unit goes on from its last committed chunk. When this
  invocation's time runs out first, it returns CONTINUE with the outage (``outage``) and the next
  invocation goes on counting; past the bound the unit fails by name (``DatabaseUnreachable``).
  Each unit counts its ``reconnects`` and its ``longest_outage_seconds`` for the findings.
- Coverage counts what the engine confirmed it read: a chunk that comes back with fewer
  blocks than planned raises ``ShortRead`` before anything is committed for it, so the
  unit never becomes DONE on a short read (the chunks before it stay counted). Planned
  blocks the engine found gone (``ReadResult.gone``: the relation was truncated since the
  plan) are not short: they are committed as gone with the chunk, and a unit whose missing
  blocks are all gone is DONE (issue 32: a VACUUM's truncation failed units for good).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from cutover_prep.dal.records.units import Cursor, UnitProgress
from cutover_prep.dal.store import StaleProgress, Store
from cutover_prep.engines import Engine, Extent, ReadRange, ShortRead
from cutover_prep.engines.base import GONE_TRUNCATED
from cutover_prep.engines.retry import Outage, OutageContinues, Retries
from cutover_prep.models.status import UnitStatus, WarmStep
from cutover_prep.models.steps import CarriedWarmProgress, UnitRate, WarmProgress, WarmUnitEvent
from cutover_prep.warmup.planning import CHUNK_SECONDS, MIB, chunk_bytes_for


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


def chunks(ranges: list[ReadRange], cursor: dict[str, int], chunk_bytes: int | Callable[[], int]) -> Iterator[Chunk]:
    """The chunks left to read from ``cursor`` on; unsplittable ranges are one chunk. A callable
    ``chunk_bytes`` is asked before each chunk (the size follows the rate measured so far)."""
    size = chunk_bytes if callable(chunk_bytes) else (lambda: chunk_bytes)
    for ri in range(cursor["range"], len(ranges)):
        rng = ranges[ri]
        if not rng.splittable:
            yield Chunk(ri, 0, 0, rng)
            continue
        # an engine whose every call has a fixed cost (starting a process) asks for bigger chunks in its locator
        least = int(rng.locator.chunk_bytes or 0)
        first_extent = cursor["extent"] if ri == cursor["range"] else 0
        for ei in range(first_extent, len(rng.extents)):
            ext = rng.extents[ei]
            offset = cursor["offset"] if (ri == cursor["range"] and ei == first_extent) else 0
            while offset < ext.blocks:
                n = min(max(1, max(size(), least) // rng.block_size), ext.blocks - offset)
                piece = ReadRange(rng.segment_key, rng.locator, (Extent(ext.file_id, ext.first_block + offset, n),),
                                  rng.block_size, True)
                yield Chunk(ri, ei, offset, piece)
                offset += n


def _cursor_after(chunk: Chunk, ranges: list[ReadRange]) -> dict[str, int]:
    rng = ranges[chunk.range_index]
    if not rng.splittable:
        return {"range": chunk.range_index + 1, "extent": 0, "offset": 0}
    return chunk.cursor_after(len(rng.extents), rng.extents[chunk.extent_index].blocks)


def step_result(event: WarmUnitEvent, progress: WarmProgress) -> WarmProgress:
    """The step's result: the progress (``ResultPath: $.warm``); for a definition of before, whose WarmUnit
    had no ResultPath, also the run context as it came and the unit (the next state's whole input)."""
    if event.hands_on_context:
        return CarriedWarmProgress(run=event.run, unit=event.unit,
                                   **dict(progress))
    return progress


def warm_unit(event: WarmUnitEvent, *, store: Store, engine: Callable[[], Engine], budget: Budget,
              read_attempts: int = 3, sleep: Callable[[float], None] | None = None,
              on_chunk: Callable[[int], None] | None = None, clock: Callable[[], float] = time.time) -> WarmProgress:
    """``on_chunk(bytes)``: told of each chunk once it is committed (the live view's metrics, ``steps.live_emit``).
    ``sleep`` and ``clock``: the retries' (tests pass fakes)."""
    unit, opts = event.unit, event.run.warmup
    run_id, unit_id = event.run.run_id, unit["unit_id"]
    item = store.get_unit(run_id, unit_id) or UnitProgress()
    if item.status == UnitStatus.DONE:
        return WarmProgress(status=WarmStep.ALREADY_DONE)
    seq = item.seq
    cursor = (item.cursor or Cursor()).model_dump()
    ranges = [ReadRange.from_json(r) for r in unit["ranges"]]
    prior = known_rate((event.previous_rate, event.slot.rate if event.slot else None), opts.assumed_cold_mib_per_s)
    seen_bytes, seen_seconds, done_here, finished = 0, 0.0, 0, False

    def rate() -> float:  # bytes/s: this invocation's own chunks once there are any
        return seen_bytes / seen_seconds if seen_seconds > 0 and seen_bytes > 0 else prior.mib_per_s * MIB

    def measured() -> UnitRate:
        if seen_seconds > 0 and seen_bytes > 0:
            return UnitRate(mib_per_s=round(seen_bytes / seen_seconds / MIB, 3), source="first_chunks")
        return prior

    retries = Retries(read_attempts, sleep=sleep, clock=clock, reconnect_seconds=opts.reconnect_minutes * 60,
                      time_left=lambda: budget.remaining_seconds() - budget.safety_margin_seconds,
                      outage=Outage.from_json(event.previous_outage))
    longest = float(item.longest_outage_seconds or 0)
    held: list[Engine] = []

    def read(rng: ReadRange) -> Any:  # connects inside the retries: the database may be down right now
        if not held:
            held.append(engine())
        return held[0].read_range(rng)

    def confirmed(chunk: Chunk) -> tuple[Any, int]:
        """The chunk read (retried) and its blocks found gone; ``ShortRead`` when the engine confirms fewer."""
        result = retries.call(lambda: read(chunk.rng))
        gone = max(0, min(int(result.gone), chunk.rng.blocks))
        if result.blocks + gone < chunk.rng.blocks or result.bytes + gone * chunk.rng.block_size < chunk.rng.bytes:
            raise ShortRead(f"unit {unit_id}: {chunk.rng.segment_key} read {result.blocks} of "
                            f"{chunk.rng.blocks - gone} planned blocks that exist ({result.method}; {gone} "
                            "no longer exist); the unit is not done")
        return result, gone

    cap = opts.chunk_mb * MIB
    batch = Batch(cursor)

    def commit(done: bool, gone: tuple[str, int, int, int, str] | None = None) -> bool:
        """The batch committed (False: another invocation moved the unit on); each of its chunks told."""
        nonlocal seq, batch
        try:
            store.commit_progress(run_id, unit_id, seq=seq, cursor=None if done else batch.cursor,
                                  blocks=batch.blocks, bytes_=batch.bytes, seconds=batch.seconds,
                                  method=batch.method, done=done, planned_bytes=int(unit["bytes"]),
                                  retries=batch.retries, reconnects=batch.reconnects, chunks=len(batch.chunk_bytes),
                                  longest_outage_seconds=longest if batch.reconnects else None, gone=gone)
        except StaleProgress:  # a parallel or earlier invocation moved this unit on: stop here
            return False
        seq += 1
        for n in batch.chunk_bytes if on_chunk is not None else ():
            on_chunk(n)
        batch = Batch(batch.cursor)
        return True

    def stop(progress: WarmProgress) -> WarmProgress:
        """``progress`` once what was read is committed (ALREADY_DONE when another invocation moved the unit on)."""
        return progress if not batch.chunk_bytes or commit(False) else WarmProgress(status=WarmStep.ALREADY_DONE)

    for chunk in chunks(ranges, cursor, lambda: chunk_bytes_for(rate(), cap_bytes=cap)):
        estimate = chunk.rng.bytes / max(rate() / 2, 1.0)  # half the rate: a safety factor
        if done_here and budget.remaining_seconds() - budget.safety_margin_seconds < estimate:
            return stop(WarmProgress(status=WarmStep.CONTINUE, cursor=batch.cursor, rate=measured()))
        retried, reconnected = retries.count, retries.reconnects
        try:
            result, gone = confirmed(chunk)
        except OutageContinues as cont:  # this invocation's time is spent: the next one goes on waiting
            return stop(WarmProgress(status=WarmStep.CONTINUE, cursor=batch.cursor, rate=measured(),
                                     outage=cont.outage.to_json()))
        except Exception:  # a failed or short read: the chunks before it stay counted
            _commit_before_raising(lambda: batch.chunk_bytes and commit(False))
            raise
        longest = max(longest, retries.longest_outage_seconds)
        cursor = _cursor_after(chunk, ranges)
        finished = all(not r.extents and r.splittable for r in ranges[cursor["range"]:])
        batch.add(result, cursor=cursor, retries=retries.count - retried, reconnects=retries.reconnects - reconnected)
        done_here += 1
        seen_bytes += result.bytes
        seen_seconds += result.seconds
        if finished or gone or batch.full(chunk_bytes_for(rate(), cap_bytes=cap)):
            if not commit(finished, (chunk.rng.segment_key, chunk.range_index, gone, gone * chunk.rng.block_size,
                                     str(result.details.get("gone_reason") or GONE_TRUNCATED)) if gone else None):
                return WarmProgress(status=WarmStep.ALREADY_DONE)
    if not finished:  # nothing left to read (an empty unit, or every range read before a restart)
        store.commit_progress(run_id, unit_id, seq=seq, cursor=None, blocks=0, bytes_=0, seconds=0.0,
                              method="none", done=True, planned_bytes=int(unit["bytes"]))
    return WarmProgress(status=WarmStep.DONE, rate=measured())


@dataclass
class Batch:
    """Chunks read and not yet committed. A unit commits once its batch holds a chunk's worth (``chunk_bytes_for``:
    what the rate reads in ``CHUNK_SECONDS``, at most ``chunk_mb``) or ``CHUNK_SECONDS`` of reading, at a range
    with gone blocks, at its end, and before it returns or raises: a unit of many small relations (a catalog:
    hundreds of ranges of a few blocks) made one DynamoDB transaction per relation. A restart re-reads at most one
    batch, as it re-read at most one chunk. ``cursor``: where the unit stands once the batch is committed."""

    cursor: dict[str, int]
    blocks: int = 0
    bytes: int = 0
    seconds: float = 0.0
    method: str = "none"
    retries: int = 0
    reconnects: int = 0
    chunk_bytes: list[int] = field(default_factory=list)

    def add(self, result: Any, *, cursor: dict[str, int], retries: int, reconnects: int) -> None:
        self.cursor, self.method = cursor, result.method
        self.blocks, self.bytes, self.seconds = self.blocks + result.blocks, self.bytes + result.bytes, \
            self.seconds + result.seconds
        self.retries, self.reconnects = self.retries + retries, self.reconnects + reconnects
        self.chunk_bytes.append(result.bytes)

    def full(self, chunk_bytes: int) -> bool:
        return self.bytes >= chunk_bytes or self.seconds >= CHUNK_SECONDS


def _commit_before_raising(commit: Callable[[], Any]) -> None:
    """Commit what was read before an error is raised; a failed commit does not hide the error."""
    try:
        commit()
    except Exception:  # noqa: BLE001, S110 - the error being raised is the one to report
        pass


def known_rate(rates: Iterable[UnitRate | None], assumed_mib_per_s: float) -> UnitRate:
    """The rate a new invocation starts from: the first of ``rates`` that is known, in the order the WarmUnit event
    gives them: the previous invocation's (a continuation), then the one the slot came with (the cold probe's
    or the assumed one); else the assumed one."""
    for found in rates:
        if found is not None and found.mib_per_s > 0:
            return UnitRate(mib_per_s=float(found.mib_per_s), source=found.source or "assumed")
    return UnitRate(mib_per_s=assumed_mib_per_s, source="assumed")
