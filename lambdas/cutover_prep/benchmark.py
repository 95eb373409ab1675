"""The benchmark steps of the workflow: cold probe, warm probe, sweep plan, sweep points.

Every step records what it measured (a ``POINT#`` item and a JSON document in S3) before
it returns, and records its own failure before it raises, so a benchmark problem is
evidence in the findings and never costs the warm-up. A restarted run does not measure
again what it already has: above all, never a "cold" probe of blocks already read.

S3, under ``runs/<run_id>/``: ``probes/sample.json``, ``probes/<phase>.json``,
``sweep/plan.json``, ``sweep/points/<point_id>.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cutover_prep.findings import cause_message
from cutover_prep.store import Store, evidence_key, now_iso
from cutover_prep.sweep.model import BenchDriver, PointSpec, SweepOptions, SweepTarget
from cutover_prep.sweep.runner import run_point, run_probe
from cutover_prep.sweep.sample import BlockPicker, scan_target, seed_of, unit_ranges

# (run context, database or None) -> a connected driver
DriverOpener = Callable[[dict[str, Any], str | None], BenchDriver]


def sweep_options(bench: dict[str, Any]) -> SweepOptions:
    return SweepOptions(seconds_per_point=float(bench["seconds_per_point"]),
                        mbrc_values=tuple(bench["mbrc_values"]),
                        io_combine_kb_values=tuple(bench["io_combine_kb_values"]),
                        sessions=tuple(bench["sessions"]), write_test=bool(bench["write_test"]))


def _units(store: Store, run_id: str) -> list[dict[str, Any]]:
    return store.get_json(evidence_key(run_id, "units.json"))


def _failed(store: Store, run_id: str, point_id: str, exc: Exception) -> None:
    store.put_point(run_id, point_id, {"status": "FAILED", "error": type(exc).__name__, "cause": str(exc)[:2000]})


def probe(run: dict[str, Any], phase: str, *, store: Store, open_driver: DriverOpener) -> dict[str, Any]:
    """Read the fixed sample of blocks once, timed. ``phase`` is ``cold`` or ``warm``."""
    run_id, bench = run["run_id"], run["benchmark"]
    point_id = f"probe-{phase}"
    done = store.get_point(run_id, point_id)
    if done and done.get("status") == "DONE":
        return _probe_summary(done, reused=True)
    if phase == "warm":
        cold = store.get_point(run_id, "probe-cold")
        if not cold or cold.get("status") != "DONE":
            store.put_point(run_id, point_id, {"status": "SKIPPED", "cause": "there is no cold probe to compare with"})
            return {"phase": phase, "status": "SKIPPED"}
    sample_key = evidence_key(run_id, "probes/sample.json")
    if store.exists(sample_key):
        blocks = store.get_json(sample_key)
    else:
        picker = BlockPicker(unit_ranges(_units(store, run_id)), seed=seed_of(run_id))
        blocks = picker.sample(int(bench["probe_blocks"]))
        store.put_json(sample_key, blocks)
    if phase == "warm":  # exactly the blocks the cold probe read, no more
        blocks = blocks[: int(store.get_point(run_id, "probe-cold")["blocks_read"])]
    if not blocks:
        store.put_point(run_id, point_id, {"status": "SKIPPED", "cause": "no table blocks to sample"})
        return {"phase": phase, "status": "SKIPPED"}
    warmed_units = sum(1 for u in store.units(run_id) if u.get("status") == "DONE") if phase == "cold" else 0
    try:
        driver = open_driver(run, None)
        try:
            result = run_probe(driver, blocks, phase=phase, max_seconds=float(bench["probe_max_seconds"]))
        finally:
            driver.close()
    except Exception as exc:
        _failed(store, run_id, point_id, exc)
        raise
    if warmed_units:
        result["note"] = (f"{warmed_units} units were already warmed when this cold probe ran (a restarted run): "
                          "some sampled blocks may not be cold")
    store.put_json(evidence_key(run_id, f"probes/{phase}.json"), result)
    store.put_point(run_id, point_id, {"status": "DONE", **{k: v for k, v in result.items() if k != "counters"}})
    return _probe_summary(result, reused=False)


def _probe_summary(item: dict[str, Any], *, reused: bool) -> dict[str, Any]:
    return {"phase": item.get("phase"), "status": "DONE", "blocks_read": item.get("blocks_read"),
            "iops": item.get("iops"), "p50_us": (item.get("latency_us") or {}).get("p50"), "reused": reused}


def plan_sweep(run: dict[str, Any], *, store: Store, open_driver: DriverOpener) -> dict[str, Any]:
    """Choose the scan target and the points; returns the points for the workflow's Map."""
    run_id, bench = run["run_id"], run["benchmark"]
    key = evidence_key(run_id, "sweep/plan.json")
    if store.exists(key):
        plan = store.get_json(key)
        return {"points": plan["points"], "count": len(plan["points"]), "reused": True}
    options = sweep_options(bench)
    target = scan_target(_units(store, run_id))
    driver = open_driver(run, target.locator.get("database") if target else None)
    try:
        capabilities = driver.capabilities()
        points: list[PointSpec] = driver.io_size_points(options, target) if target else []
    finally:
        driver.close()
    points += [PointSpec(point_id=f"random-{n:02d}s", kind="random", seconds=options.seconds_per_point, sessions=n)
               for n in options.sessions]
    if options.write_test:
        points += [PointSpec(point_id=f"write-{k}", kind=f"write_{k}", seconds=options.seconds_per_point)
                   for k in ("direct", "random")]
    notes = list(capabilities.get("notes", []))
    if target is None:
        notes.append("no table segment to scan: the IO-size sweep was skipped")
    plan = {"run_id": run_id, "created_at": now_iso(), "engine": driver.engine, "capabilities": capabilities,
            "target": target.to_json() if target else None, "points": [p.to_json() for p in points],
            "notes": notes}
    store.put_json(key, plan)
    store.update_run(run_id, step="benchmark", benchmark_status="RUNNING", benchmark_points=len(points))
    return {"points": plan["points"], "count": len(points), "reused": False}


def measure_point(run: dict[str, Any], point: dict[str, Any], *, store: Store,
                  open_driver: DriverOpener) -> dict[str, Any]:
    """Run one point of the sweep alone and record it (once: a retried or restarted point is kept)."""
    run_id = run["run_id"]
    spec = PointSpec.from_json(point)
    done = store.get_point(run_id, spec.point_id)
    if done and done.get("status") == "DONE":
        return _point_summary(done, reused=True)
    plan = store.get_json(evidence_key(run_id, "sweep/plan.json"))
    target = SweepTarget.from_json(plan["target"]) if plan.get("target") else None
    ranges = list(unit_ranges(_units(store, run_id))) if spec.kind == "random" else []
    seed = seed_of(f"{run_id}/{spec.point_id}")
    try:
        driver = open_driver(run, target.locator.get("database") if target else None)
        try:
            measurement = run_point(driver, spec, target=target,
                                    picker=lambda i: BlockPicker(ranges, seed=seed + i),
                                    block_size=target.block_size if target else 8192)
        finally:
            driver.close()
    except Exception as exc:
        _failed(store, run_id, spec.point_id, exc)
        raise
    doc = measurement.to_json()
    store.put_json(evidence_key(run_id, f"sweep/points/{spec.point_id}.json"), doc)
    store.put_point(run_id, spec.point_id, {"status": "DONE", **{k: v for k, v in doc.items() if k != "counters"}})
    return _point_summary(doc, reused=False)


def _point_summary(doc: dict[str, Any], *, reused: bool) -> dict[str, Any]:
    return {"point_id": doc["point_id"], "status": "DONE", "iops": doc.get("iops"),
            "throughput_kbps": doc.get("throughput_kbps"), "started_at": doc.get("started_at"),
            "finished_at": doc.get("finished_at"), "reused": reused}


def record_benchmark_failure(run_id: str, error: dict[str, Any], *, store: Store) -> dict[str, Any]:
    """The Catch of the benchmark steps: the run goes on to its findings with this recorded."""
    name, cause = str(error.get("Error") or "BenchmarkFailed"), cause_message(error)
    store.update_run(run_id, benchmark_status="FAILED", benchmark_error=name, benchmark_cause=cause[:2000])
    return {"status": "FAILED", "error": name, "cause": cause[:2000]}
