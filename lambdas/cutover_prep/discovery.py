"""Discover what must be read and write the plan to S3 (idempotent per run id)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cutover_prep.connection import SecretReader, connection_spec
from cutover_prep.engines import ConnectionSpec, DiscoveryOptions, Engine
from cutover_prep.inputs import Benchmark
from cutover_prep.planning import MIB, PlanOptions, plan_units, unit_bytes_for
from cutover_prep.store import Store, evidence_key

EngineOpener = Callable[[ConnectionSpec, dict[str, Any]], Engine]


def run_context(run: dict[str, Any]) -> dict[str, Any]:
    """What every warm-unit invocation needs: the target and the read options, no secret."""
    warmup = run["warmup"]
    return {
        "run_id": run["run_id"],
        "target": run["target"],
        "instance": run.get("instance") or {},
        "warmup": {k: warmup[k] for k in ("chunk_mb", "assumed_cold_mib_per_s", "create_extension")},
        "benchmark": run.get("benchmark") or Benchmark().model_dump(mode="json"),
    }


def discover_and_plan(run: dict[str, Any], *, store: Store, read_secret: SecretReader,
                      open_engine: EngineOpener, lambda_timeout_s: float = 900) -> dict[str, Any]:
    run_id, warmup = run["run_id"], run["warmup"]
    plan_key, units_key = evidence_key(run_id, "plan.json"), evidence_key(run_id, "units.json")
    if store.exists(plan_key):  # a restarted run keeps its plan, so unit ids stay the same
        plan_doc = store.get_json(plan_key)
        store.update_run(run_id, step="planned", plan_reused=True)
        return {**_result(plan_doc["summary"], plan_key, units_key, run_id), "reused": True,
                "context": run_context(run)}

    spec = connection_spec(run, read_secret)
    engine = open_engine(spec, warmup)
    try:
        segments = engine.discover(DiscoveryOptions(
            include_schemas=tuple(warmup["include_schemas"]), exclude_schemas=tuple(warmup["exclude_schemas"]),
            databases=tuple(warmup["databases"]), include_system=warmup["include_system"],
        ))
        methods = engine.read_methods() if hasattr(engine, "read_methods") else {}
    finally:
        engine.close()
    unit_bytes = (warmup["unit_mb"] * MIB if warmup.get("unit_mb")
                  else unit_bytes_for(cold_mib_per_s=warmup["assumed_cold_mib_per_s"],
                                      lambda_timeout_s=lambda_timeout_s))
    plan = plan_units(segments, PlanOptions(unit_bytes=unit_bytes, priority=tuple(warmup["priority"])))
    summary = {**plan.summary(), "engine": spec.engine, "read_methods": methods,
               "assumed_cold_mib_per_s": warmup["assumed_cold_mib_per_s"]}
    unit_of_segment: dict[str, list[str]] = {}
    for unit in plan.units:
        for rng in unit.ranges:
            unit_of_segment.setdefault(rng.segment_key, []).append(unit.unit_id)
    store.put_json(units_key, [u.to_json() for u in plan.units])
    store.put_json(plan_key, {
        "run_id": run_id, "engine": spec.engine, "target": run["target"], "options": warmup,
        "summary": summary,
        "segments": [{"key": s.key, "database": s.database, "schema": s.schema, "name": s.name,
                      "partition": s.partition, "kind": s.kind, "bytes": s.bytes, "blocks": s.blocks,
                      "splittable": s.splittable, "units": unit_of_segment.get(s.key, [])}
                     for s in segments],
        "oversized_units": plan.oversized_units,
    })
    store.update_run(run_id, step="planned", engine=spec.engine, units_total=len(plan.units),
                     bytes_planned=plan.bytes, plan=summary, plan_key=plan_key, instance=_facts(run))
    return {**_result(summary, plan_key, units_key, run_id), "reused": False, "context": run_context(run)}


def _facts(run: dict[str, Any]) -> dict[str, Any]:
    """The instance facts DescribeInstance returned, for the findings (without the polling fields)."""
    return {k: v for k, v in (run.get("instance") or {}).items() if k not in ("status", "ready") and v is not None}


def _result(summary: dict[str, Any], plan_key: str, units_key: str, run_id: str) -> dict[str, Any]:
    return {"units": summary["units"], "bytes": summary["bytes"], "plan_key": plan_key,
            "units_key": units_key}
