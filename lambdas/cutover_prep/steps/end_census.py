"""The end census (issue 21, item 4): after the warm-up, take the census again and catch up.

What was created or grew since the start census and the run may read is read in a catch-up pass:
the engine's own ``read_range`` over the new blocks (a new relation: all of it; a grown one: the
blocks past what the plan read), chunk by chunk, each confirmed by the server as in a work unit
(``ShortRead`` when less was read), within a time budget and at most ``MAX_CATCH_UP_BYTES``. What the
pass did not reach is named by the findings ("created after the census", "grew after the census");
what was dropped since leaves the denominator (``findings.census``).

Idempotent: ``census-end.json`` in the run's evidence is written once (after the census itself,
``census-end.jsonl``); a retried or restarted step returns what it says. A census that a transient error
kept from ending (a lock held past the session's lock bound, ``LockWaitTimeout``, after ``attempts``) is
written with ``census: null`` and its ``error`` (the relation and who held the lock): the findings name it
(``census.end_census_failure``; the verdict fails END_CENSUS), and a restarted step takes the census again.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from cutover_prep.access.connection import SecretReader, connection_spec
from cutover_prep.access.secret_binding import TagReader
from cutover_prep.dal.plan_evidence import plan_segments
from cutover_prep.dal.records.census import CENSUS_END, census_json, census_ref, census_rows
from cutover_prep.dal.records.plan import Plan
from cutover_prep.dal.records.units import UnitProgress
from cutover_prep.dal.store import Store, evidence_key, now_iso
from cutover_prep.engines import DiscoveryOptions, EngineError, Extent, ReadRange, TransientDatabaseError
from cutover_prep.engines.base import GONE_REBUILT
from cutover_prep.engines.registry import server_started
from cutover_prep.engines.retry import Retries
from cutover_prep.findings.census import recreated
from cutover_prep.models.steps import (
    CensusScope,
    EndCensusEvent,
    EndCensusPlan,
    EndCensusResult,
    StepError,
    cause_message,
)
from cutover_prep.models.warmup import Warmup

END_CENSUS = "census-end.json"
MAX_CATCH_UP_BYTES = 4 * 2**30  # more than this was created during the warm-up: named, for a new run to read
MIB = 2**20


def options_of(scope: CensusScope) -> DiscoveryOptions:
    return DiscoveryOptions(include_schemas=tuple(scope.include_schemas), exclude_schemas=tuple(scope.exclude_schemas),
                            databases=tuple(scope.databases), include_system=scope.include_system)


def plan_of(event: EndCensusEvent, store: Store) -> EndCensusPlan:
    """What the end census takes of the plan: Discover's ``end_census``, in the event; an execution started by a
    definition of before hands none on, and the plan it wrote (``dal.records.plan.Plan``) says the same."""
    if event.plan is not None:
        return event.plan
    return Plan.read(store.get_json(evidence_key(event.run.run_id, "plan.json"))).end_census()


def catch_up_targets(planned: dict[str, int], end: list[dict[str, Any]], start: list[dict[str, Any]] | None = None
                     ) -> dict[str, int]:
    """Key -> bytes already planned (0 for a new object), for every readable, selected object of the end
    census that is not planned or is larger than planned, or that the start census knew under another
    identity (``findings.census.recreated``: the plan read the object that was there before)."""
    out = {}
    again = recreated(start or [], end)
    for obj in end:
        if obj.get("reason") or not obj.get("readable", True):
            continue
        before = 0 if obj["key"] in again else planned.get(obj["key"], 0)
        if int(obj.get("bytes") or 0) > before:
            out[obj["key"]] = before
    return out


def gone_by_segment(unit_items: Iterable[UnitProgress]) -> tuple[dict[str, int], set[str]]:
    """Segment key -> planned bytes the units found gone (truncated while the run ran): what exists of the plan is
    its bytes less these, so a table truncated then grown again is caught up past what is left of the plan. And the
    keys whose storage was replaced (``GONE_REBUILT``: an Oracle TRUNCATE or MOVE, a new DATA_OBJECT_ID): nothing
    of the plan exists there, so the catch-up pass reads the new segment whole."""
    out: dict[str, int] = {}
    rebuilt: set[str] = set()
    for item in unit_items:
        for key, _, _, nbytes, *reason in item.gone:
            out[str(key)] = out.get(str(key), 0) + int(nbytes)
            if reason and reason[0] == GONE_REBUILT:
                rebuilt.add(str(key))
    return out, rebuilt


def slices(extents: tuple[Extent, ...], skip: int, chunk: int) -> list[tuple[Extent, ...]]:
    """The segment's blocks past the first ``skip``, in pieces of at most ``chunk`` blocks (in extent order)."""
    out: list[tuple[Extent, ...]] = []
    piece: list[Extent] = []
    room = chunk
    for ext in extents:
        first, left = ext.first_block, ext.blocks
        if skip >= left:
            skip -= left
            continue
        first, left, skip = first + skip, left - skip, 0
        while left:
            take = min(left, room)
            piece.append(Extent(ext.file_id, first, take))
            first, left, room = first + take, left - take, room - take
            if not room:
                out.append(tuple(piece))
                piece, room = [], chunk
    if piece:
        out.append(tuple(piece))
    return out


def _read(engine: Any, segment: Any, from_block: int, chunk_blocks: int, deadline: float) -> tuple[int, str | None]:
    """Blocks of ``segment`` past ``from_block`` read and confirmed, and why it stopped short (None: all)."""
    read = 0
    for piece in slices(segment.extents, from_block, chunk_blocks):
        if time.monotonic() > deadline:
            return read, "the catch-up pass ran out of time"
        rng = ReadRange(segment_key=segment.key, locator=segment.locator, extents=piece,
                        block_size=segment.block_size, splittable=segment.splittable)
        try:
            result = engine.read_range(rng)
        except Exception as exc:  # named, never fatal to the run: the findings say what was not read
            return read, f"{type(exc).__name__}: {str(exc).strip()[:300]}"
        read += result.blocks
    return read, None


def end_census_step(event: EndCensusEvent, *, store: Store, read_secret: SecretReader,
                    open_engine: Callable[[Any, Warmup], Any], read_secret_tags: TagReader | None,
                    remaining_seconds: float, safety_margin_seconds: float, attempts: int) -> EndCensusResult:
    """EndCensus, or with the Catch's ``error`` RecordEndCensusFailure (the same function). The census's budget:
    what is left of the invocation (``remaining_seconds``) less twice the margin, at least 30 s."""
    if event.error is not None:
        return record_end_census_failure(event.run.run_id, event.error, store=store)
    return take_end_census(event, store=store, read_secret=read_secret, read_secret_tags=read_secret_tags,
                           open_engine=open_engine, attempts=attempts,
                           budget_seconds=max(30.0, remaining_seconds - 2 * safety_margin_seconds))


def record_end_census_failure(run_id: str, error: StepError, *, store: Store) -> EndCensusResult:
    """The Catch of EndCensus (its retries spent, or an error not retried): the run goes on to its findings
    with the error recorded on the run item; Finalize gives it to the census section and the verdict fails
    END_CENSUS naming it. Nothing is read or written in the database."""
    name = str(error.Error or "EndCensusFailed")
    cause = cause_message(error)[:2000]
    store.update_run(run_id, end_census_error=name, end_census_cause=cause)
    return EndCensusResult(taken=False, error=name, cause=cause)


def take_end_census(event: EndCensusEvent, *, store: Store, read_secret: SecretReader,
                    open_engine: Callable[[Any, Warmup], Any], read_secret_tags: TagReader | None = None,
                    budget_seconds: float = 600, attempts: int = 3) -> EndCensusResult:
    """Census again, catch up on what was created or grew, write ``census-end.json``; return a summary."""
    run = event.run
    run_id = run.run_id
    key = evidence_key(run_id, END_CENSUS)
    if store.exists(key) and (done := store.get_json(key)).get("census") is not None:
        return EndCensusResult.model_validate({**done["summary"], "reused": True})
    plan = plan_of(event, store)
    if plan.census is None:  # the engine takes none, or the plan is older than the census
        return EndCensusResult(taken=False)
    deadline = time.monotonic() + budget_seconds
    spec = connection_spec(run.target, run.instance, read_secret, read_tags=read_secret_tags)
    engine = open_engine(spec, run.warmup)  # create_extension: the context carries it (CONTEXT_WARMUP)
    catch_up: list[dict[str, Any]] = []
    try:
        # when the server last started: the findings compare it with Discover's (a restart under the run)
        store.update_run(run_id, server_started_at_end=server_started(engine))
        options = options_of(plan.scope)
        try:
            end = census_json(Retries(attempts).call(lambda: engine.census(options)))
        except TransientDatabaseError as exc:  # named in the findings, not fatal to the run
            error = {"error": type(exc).__name__ if isinstance(exc, EngineError) else "TransientDatabaseError",
                     "cause": str(exc)[:4000]}
            summary = {"taken": False, **error}
            store.put_json(key, {"taken_at": now_iso(), "census": None, "catch_up": [], "error": error,
                                 "summary": summary})
            return EndCensusResult.model_validate(summary)
        gone, rebuilt = gone_by_segment(store.units(run_id))
        planned = {s["key"]: 0 if s["key"] in rebuilt else int(s["bytes"]) - gone.get(s["key"], 0)
                   for s in plan_segments({"segments": plan.segments}, store)}
        targets = catch_up_targets(planned, end, census_rows(plan.census, store))
        if targets:
            segments = {s.key: s for s in engine.discover(options) if s.key in targets}
            budget = MAX_CATCH_UP_BYTES
            for seg_key, before in sorted(targets.items()):
                segment = segments.get(seg_key)
                entry = {"key": seg_key, "planned_bytes": before, "bytes": 0, "bytes_read": 0}
                if segment is None:  # gone again, or no longer readable: the census entry names it
                    catch_up.append({**entry, "status": "NOT_READ", "cause": "not found by discovery at the end"})
                    continue
                first = before // segment.block_size if segment.splittable else 0  # else: all of it again
                entry["bytes"] = segment.bytes
                want = (segment.blocks - first) * segment.block_size
                if want > budget:
                    catch_up.append({**entry, "status": "NOT_READ",
                                     "cause": f"over the catch-up pass's limit of {MAX_CATCH_UP_BYTES // MIB} MiB"})
                    continue
                chunk = max(1, run.warmup.chunk_mb * MIB // segment.block_size)
                blocks, cause = _read(engine, segment, first, chunk, deadline)
                budget -= blocks * segment.block_size
                entry["bytes_read"] = before + blocks * segment.block_size
                catch_up.append({**entry, "status": "READ" if cause is None else "NOT_READ",
                                 **({"cause": cause} if cause else {})})
    finally:
        engine.close()
    summary = {"taken": True, "objects": len(end), "caught_up": sum(c["status"] == "READ" for c in catch_up),
               "not_caught_up": sum(c["status"] != "READ" for c in catch_up),
               "bytes_caught_up": sum(c["bytes_read"] - c["planned_bytes"] for c in catch_up)}
    census_key = evidence_key(run_id, CENSUS_END)  # its own object, in parts, read as a stream (issue 32)
    store.put_json_lines(census_key, end)
    store.put_json(key, {"taken_at": now_iso(), "census": census_ref(census_key, end), "catch_up": catch_up,
                         "summary": summary})
    return EndCensusResult.model_validate(summary)
