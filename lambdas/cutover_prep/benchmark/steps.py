"""The benchmark steps of the workflow: cold probe, warm probe, sweep plan, sweep points.

Every step records what it measured (a ``POINT#`` item and a JSON document in S3) before
it returns, and records its own failure before it raises, so a benchmark problem is
evidence in the findings and never costs the warm-up. A restarted run does not measure
again what it already has: above all, never a "cold" probe of blocks already read.

S3, under ``runs/<run_id>/``: ``probes/sample.json`` (the cold probe's blocks),
``probes/sample-warm.json`` (the warm probe's: a fresh sample without the cold ones), ``probes/<phase>.json``,
``sweep/plan.json``, ``sweep/points/<point_id>.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cutover_prep.benchmark.results import (
    BenchmarkFailureRecorded,
    PointFailureRecorded,
    PointResult,
    ProbeResult,
    SweepPlanned,
)
from cutover_prep.benchmark.scratch import ScratchStatus, scratch_for_run, scratch_summary, write_cap_bytes
from cutover_prep.dal.records import evidence
from cutover_prep.dal.records.findings import Scratch as ScratchSummary
from cutover_prep.dal.records.run import PointItem, ScratchItem
from cutover_prep.dal.records.sweep import Capabilities, Measured, SweepPlan
from cutover_prep.dal.store import Store, evidence_key, now_iso
from cutover_prep.engines.bench import BenchDriver, PointSpec, SweepOptions
from cutover_prep.engines.retry import Retries
from cutover_prep.engines.scratch import Dropped, Scratch, scratch_marker
from cutover_prep.measure.model import PointMeasurement
from cutover_prep.measure.runner import WRITE_KINDS, run_point, run_probe
from cutover_prep.measure.sample import (
    BlockPicker,
    SampledBlock,
    Unit,
    chunk_key,
    overlap,
    scan_target,
    seed_of,
    unit_ranges,
)
from cutover_prep.models.benchmark import Benchmark
from cutover_prep.models.steps import BenchmarkFailedEvent, RunContext, StepError, cause_message

ATTEMPTS = 3  # transient database errors: tries of one step (retry.Retries); the ASL does not retry them
# (run context, database or None) -> a connected driver
DriverOpener = Callable[[RunContext, str | None], BenchDriver]
# run context -> the free storage RDS reports for the target, in bytes (None when unknown)
FreeStorage = Callable[[RunContext], float | None]

SETTLED = {
    Dropped.DROPPED: (ScratchStatus.REMOVED, "dropped by the run"),
    Dropped.ABSENT: (ScratchStatus.REMOVED, "not there: dropped when the point ended, or never created"),
    Dropped.NOT_OURS: (ScratchStatus.NOT_CREATED, "an object of that name exists without this run's marker: "
                       "it is not the run's and was left untouched"),
    Dropped.NOT_EMPTY: (ScratchStatus.LEFT, "the run's scratch schema holds objects the run did not create: "
                        "left for you to inspect and drop"),
}


def sweep_options(bench: Benchmark) -> SweepOptions:
    """The drivers' sweep options from the run's ``benchmark`` section."""
    return SweepOptions.model_validate(bench.model_dump(include=set(SweepOptions.model_fields)))


def _units(store: Store, run_id: str) -> list[Unit]:
    return store.get_json(evidence_key(run_id, evidence.UNITS))


def _failed(store: Store, run_id: str, point_id: str, exc: Exception, *, retries: int = 0) -> None:
    store.put_point(run_id, PointItem.new(point_id=point_id, status="FAILED", error=type(exc).__name__,
                                          cause=str(exc)[:2000], retries=retries))


def _measured_point(point_id: str, result: dict[str, Any]) -> PointItem:
    """The point item of a measurement that finished: what it measured but its raw counters (kept in its evidence
    object only)."""
    return PointItem.new(**{"point_id": point_id, "status": "DONE",
                            **{k: v for k, v in result.items() if k != "counters"}})


def probe(run: RunContext, phase: str, *, store: Store, open_driver: DriverOpener,
          attempts: int = ATTEMPTS) -> ProbeResult:
    """Read a sample of blocks once, timed. ``phase`` is ``cold`` or ``warm``.

    The cold probe reads ``probes/sample.json``; the warm probe a fresh sample of the same
    distribution with the cold blocks left out (``probes/sample-warm.json``): the cold probe
    has hydrated its own blocks, so re-reading them would look warm whatever the warm-up
    did. Both samples are saved before they are read, so a retried probe reads the same blocks."""
    run_id, bench = run.run_id, run.benchmark
    point_id = f"probe-{phase}"
    done = store.get_point(run_id, point_id)
    if done and done.status == "DONE":
        return _probe_summary(Measured.read(done.stored()), reused=True)
    if phase == "warm":
        cold = store.get_point(run_id, "probe-cold")
        if not cold or cold.status != "DONE":
            store.put_point(run_id, PointItem.new(point_id=point_id, status="SKIPPED",
                                                  cause="there is no cold probe to compare with"))
            return ProbeResult(phase=phase, status="SKIPPED")
    sample_key = evidence_key(run_id, evidence.PROBE_SAMPLE)
    if store.exists(sample_key):
        cold_blocks = store.get_json(sample_key)
    else:
        picker = BlockPicker(unit_ranges(_units(store, run_id)), seed=seed_of(run_id))
        cold_blocks = picker.sample(picker.probe_size(bench.probe_blocks))
        store.put_json(sample_key, cold_blocks)
    blocks, sample_note = (cold_blocks, None) if phase == "cold" else _warm_sample(run_id, bench, cold_blocks,
                                                                                  store=store)
    if not blocks:
        store.put_point(run_id, PointItem.new(point_id=point_id, status="SKIPPED", cause="no table blocks to sample"))
        return ProbeResult(phase=phase, status="SKIPPED")
    warmed_units = sum(1 for u in store.units(run_id) if u.status == "DONE") if phase == "cold" else 0

    def once() -> dict[str, Any]:
        driver = open_driver(run, None)
        try:
            return run_probe(driver, blocks, phase=phase, max_seconds=float(bench.probe_max_seconds))
        finally:
            driver.close()

    # A cold probe is never retried: its first attempt has already warmed the blocks it read.
    retries = Retries(1 if phase == "cold" else attempts)
    try:
        result = retries.call(once)
    except Exception as exc:
        _failed(store, run_id, point_id, exc, retries=retries.count)
        raise
    result["retries"] = retries.count
    if phase == "warm":  # the evidence that the warm probe read blocks the cold one did not touch
        result["overlap_blocks"] = overlap(blocks[: result["blocks_read"]], cold_blocks)
        result["cold_sample_blocks"] = len(cold_blocks)
        if sample_note:
            result["note"] = sample_note
    sized = _sized_note(bench.probe_blocks, len(cold_blocks), store=store, run_id=run_id)
    if sized:
        result["sized"] = sized
    if warmed_units:
        result["note"] = (f"{warmed_units} units were already warmed when this cold probe ran (a restarted run): "
                          "some sampled blocks may not be cold")
    store.put_json(evidence_key(run_id, evidence.probe(phase)), result)
    store.put_point(run_id, _measured_point(point_id, result))
    return _probe_summary(Measured.read(result), reused=False)


def _warm_sample(run_id: str, bench: Benchmark, cold_blocks: list[SampledBlock], *,
                 store: Store) -> tuple[list[SampledBlock], str | None]:
    """The warm probe's blocks: ``probe_blocks`` fresh ones (own seed, the cold sample excluded).

    Only a database with no readable block outside the cold sample re-reads the cold
    blocks, and the probe then says so (its ``overlap_blocks`` counts them)."""
    key = evidence_key(run_id, evidence.PROBE_SAMPLE_WARM)
    if store.exists(key):
        saved = store.get_json(key)
        return saved["blocks"], saved["note"]  # both always written (below)
    picker = BlockPicker(unit_ranges(_units(store, run_id)), seed=seed_of(f"{run_id}/probe-warm"))
    blocks, note = picker.sample(len(cold_blocks), exclude=cold_blocks), None  # as many as the cold probe read
    shared = len({chunk_key(b) for b in blocks} & {chunk_key(b) for b in cold_blocks})
    if shared:
        note = (f"{shared} of the warm probe's {len(blocks)} blocks lie in 512 KiB snapshot blocks the cold probe "
                "had already read (the database is small for probe_blocks): those reads cannot show blocks the "
                "warm-up missed; lower probe_blocks")
    if not blocks and cold_blocks:
        blocks = cold_blocks
        note = (f"the database has no readable block outside the cold probe's {len(cold_blocks)}: the warm probe "
                "re-read them, so it cannot show blocks the warm-up missed")
    store.put_json(key, {"blocks": blocks, "note": note})
    return blocks, note


def _sized_note(wanted: int, planned: int, *, store: Store, run_id: str) -> str | None:
    """Why a probe read fewer blocks than ``benchmark.probe_blocks`` (``BlockPicker.probe_size``), or None."""
    if planned >= wanted:
        return None
    picker = BlockPicker(unit_ranges(_units(store, run_id)), seed=0)
    return (f"{planned} blocks, not the {wanted} of benchmark.probe_blocks: a probe reads at most a quarter of the "
            f"database's {picker.snapshot_blocks:,} readable 512 KiB snapshot blocks, so the warm probe's fresh blocks "
            "lie in snapshot blocks the cold probe did not read")


def _probe_summary(item: Measured, *, reused: bool) -> ProbeResult:
    summary = ProbeResult(phase=item.phase, status="DONE", blocks_read=item.blocks_read, iops=item.iops,
                          p50_us=item.latency_us.p50 if item.latency_us else None, reused=reused)
    if item.overlap_blocks is not None:
        summary.overlap_blocks = item.overlap_blocks
    return summary


def plan_sweep(run: RunContext, *, store: Store, open_driver: DriverOpener,
               free_storage: FreeStorage = lambda run: None, attempts: int = ATTEMPTS) -> SweepPlanned:
    """Choose the scan target and the points; returns the points for the workflow's Map.

    A restarted run keeps its plan, but write points are handed out only when this run's
    *current* input asks for the write test."""
    run_id, bench = run.run_id, run.benchmark
    key = evidence_key(run_id, evidence.SWEEP_PLAN)
    if store.exists(key):
        points = _allowed(SweepPlan.read(store.get_json(key)).points, bench)
        return SweepPlanned(points=points, count=len(points), reused=True)
    options = sweep_options(bench)
    target = scan_target(_units(store, run_id))
    def once() -> SweepPlan:  # what the engine's driver says: its engine, capabilities and IO-size points
        driver = open_driver(run, target.locator.database if target else None)
        try:
            return SweepPlan(run_id=run_id, engine=driver.engine, capabilities=driver.capabilities(), target=target,
                             points=driver.io_size_points(options, target) if target else [])
        finally:
            driver.close()

    found = Retries(attempts).call(once)
    points = [*found.points, *(PointSpec(point_id=f"random-{n:02d}s", kind="random", seconds=options.seconds_per_point,
                                         sessions=n) for n in options.sessions)]
    notes = list(Capabilities.model_validate(found.capabilities).notes)
    write_cap = None
    if options.write_test:
        points += [PointSpec(point_id=f"write-{k}", kind=f"write_{k}", seconds=options.seconds_per_point)
                   for k in ("direct", "random")]
        write_cap, cap_note = write_cap_bytes(float(bench.write_max_mib), float(bench.write_max_free_storage_pct),
                                              free_storage(run))
        notes.append(cap_note)
    if target is None:
        notes.append("no table segment to scan: the IO-size sweep was skipped")
    plan = found.model_copy(update={"created_at": now_iso(), "points": points, "write_cap_bytes": write_cap,
                                    "notes": notes})
    store.put_json(key, plan.document())
    store.update_run(run_id, step="benchmark", benchmark_status="RUNNING", benchmark_points=len(points))
    return SweepPlanned(points=points, count=len(points), reused=False)


def _allowed(points: list[PointSpec], bench: Benchmark) -> list[PointSpec]:
    return [p for p in points if p.kind not in WRITE_KINDS or bench.write_test]


def measure_point(run: RunContext, point: dict[str, Any], *, store: Store,
                  open_driver: DriverOpener, attempts: int = ATTEMPTS) -> PointResult:
    """Run one point of the sweep alone and record it (once: a retried or restarted point is kept).

    A write point checks the run's *current* input at the moment it runs: without
    ``benchmark.write_test: true`` nothing is written, whatever the saved plan says."""
    run_id = run.run_id
    spec = PointSpec.from_json(point)
    done = store.get_point(run_id, spec.point_id)
    if done and done.status == "DONE":
        return _point_summary(Measured.read(done.stored()), reused=True)
    if spec.kind in WRITE_KINDS and not run.benchmark.write_test:
        cause = "not run: this run's input does not ask for the write test (benchmark.write_test)"
        store.put_point(run_id, PointItem.new(point_id=spec.point_id, status="SKIPPED", kind=spec.kind, cause=cause))
        return PointResult(point_id=spec.point_id, status="SKIPPED", cause=cause, reused=False)
    plan = SweepPlan.read(store.get_json(evidence_key(run_id, evidence.SWEEP_PLAN)))
    target = plan.target
    ranges = list(unit_ranges(_units(store, run_id))) if spec.kind == "random" else []
    seed = seed_of(f"{run_id}/{spec.point_id}")
    database = target.locator.database if target else None

    def once() -> PointMeasurement:
        driver = open_driver(run, database)
        try:
            scratch = _register_scratch(run, plan, driver.engine, database, spec, store=store) \
                if spec.kind in WRITE_KINDS else None
            try:
                return run_point(driver, spec, target=target, picker=lambda i: BlockPicker(ranges, seed=seed + i),
                                 block_size=target.block_size if target else 8192, scratch=scratch)
            finally:
                if scratch is not None:
                    _settle_scratch(run_id, scratch, driver.drop_scratch(scratch), store=store)
        finally:
            driver.close()

    retries = Retries(attempts)  # a retried point runs again from its start, in its own window
    try:
        measurement = retries.call(once)
    except Exception as exc:
        _failed(store, run_id, spec.point_id, exc, retries=retries.count)
        raise
    doc = {**measurement.to_json(), "retries": retries.count}
    store.put_json(evidence_key(run_id, evidence.sweep_point(spec.point_id)), doc)
    store.put_point(run_id, _measured_point(spec.point_id, doc))
    return _point_summary(Measured.read(doc), reused=False)


def _register_scratch(run: RunContext, plan: SweepPlan, engine: str, database: str | None,
                      spec: PointSpec, *, store: Store) -> Scratch:
    """Record the scratch object before it exists: a killed write point still leaves its trace."""
    bench = run.benchmark
    cap, _ = write_cap_bytes(float(bench.write_max_mib), float(bench.write_max_free_storage_pct), None)
    if plan.write_cap_bytes is not None:
        cap = min(cap, plan.write_cap_bytes)
    scratch = scratch_for_run(run.run_id, engine, cap)
    store.put_scratch(run.run_id, ScratchItem.new(name=scratch.name, status=ScratchStatus.CREATING, engine=engine,
                                                  database=database, point_id=spec.point_id, max_bytes=cap,
                                                  created_at=now_iso()))
    return scratch


def _settle_scratch(run_id: str, scratch: Scratch, outcome: Dropped, *, store: Store) -> None:
    item = next((i for i in store.scratch_objects(run_id) if i.name == scratch.name), None)
    status, note = SETTLED[outcome]
    store.put_scratch(run_id, ScratchItem.new(**{**(item.carried() if item else {}), "name": scratch.name,
                                                 "status": status, "note": note, "settled_at": now_iso()}))


def _point_summary(doc: Measured, *, reused: bool) -> PointResult:
    return PointResult(point_id=doc.point_id, status="DONE", iops=doc.iops, throughput_kbps=doc.throughput_kbps,
                       started_at=doc.started_at, finished_at=doc.finished_at, reused=reused)


def cleanup_scratch(run: RunContext, *, store: Store, open_driver: DriverOpener) -> ScratchSummary:
    """The workflow's cleanup step (every path after the sweep, and a restart): drop what the run left.

    Only registered objects are looked at, and only those carrying the run's marker are
    dropped; a run that created nothing does not even connect."""
    run_id = run.run_id
    pending = [i for i in store.scratch_objects(run_id) if i.status in (ScratchStatus.CREATING, ScratchStatus.LEFT)]
    by_database: dict[str | None, list[ScratchItem]] = {}
    for item in pending:
        by_database.setdefault(item.database, []).append(item)
    for database, items in by_database.items():
        driver = open_driver(run, database)
        try:
            for item in items:
                scratch = Scratch(run_id=run_id, name=item.name, marker=scratch_marker(run_id), max_bytes=0)
                _settle_scratch(run_id, scratch, driver.drop_scratch(scratch), store=store)
        finally:
            driver.close()
    return scratch_summary(store.scratch_objects(run_id))


def record_point_failure(run_id: str, point_id: str, error: StepError, *, store: Store) -> PointFailureRecorded:
    """The Catch of one sweep point: a point that did not finish is recorded FAILED with its cause.

    RunPoint records its own errors; this records the ones it could not (a timeout, a
    killed or throttled invocation), and never overwrites a point that was measured."""
    name, cause = str(error.Error or "PointFailed"), cause_message(error)
    existing = store.get_point(run_id, point_id)
    if existing is not None and existing.status in ("DONE", "FAILED", "SKIPPED"):
        return PointFailureRecorded(point_id=point_id, status=existing.status, recorded=False)
    store.put_point(run_id, PointItem.new(point_id=point_id, status="FAILED", error=name, cause=cause[:2000] or name))
    return PointFailureRecorded(point_id=point_id, status="FAILED", error=name, recorded=True)


def record_benchmark_failure(run_id: str, error: StepError, *, store: Store) -> BenchmarkFailureRecorded:
    """The Catch of the benchmark steps: the run goes on to its findings with this recorded."""
    name, cause = str(error.Error or "BenchmarkFailed"), cause_message(error)
    store.update_run(run_id, benchmark_status="FAILED", benchmark_error=name, benchmark_cause=cause[:2000])
    return BenchmarkFailureRecorded(status="FAILED", error=name, cause=cause[:2000])


def record_failed(event: BenchmarkFailedEvent, *, store: Store) -> PointFailureRecorded | BenchmarkFailureRecorded:
    """RecordBenchmarkFailure: one sweep point's Catch (``point_id``) or the benchmark's."""
    if event.point_id:
        return record_point_failure(event.run_id, event.point_id, event.error, store=store)
    return record_benchmark_failure(event.run_id, event.error, store=store)
