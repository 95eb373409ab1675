"""After the sweep: collect what AWS recorded for each point's window, then analyse.

``collect_metrics`` is called by the workflow until every window's CloudWatch datapoints
have arrived or ``benchmark.metrics_wait_minutes`` is used up; what is still absent is
recorded as missing, never invented. ``analyze_run`` turns the probes, the points and
the metrics into ``analysis.json`` and ``sweep/points.csv`` (the ``cutover-prep analyze``
CSV format, so the analysis can be re-run offline with other limits).

S3, under ``runs/<run_id>/``: ``metrics/cloudwatch.json``, ``metrics/enhanced.json``,
``analysis.json``, ``sweep/points.csv``.
"""

from __future__ import annotations

import csv
import io
import math
from datetime import datetime
from typing import Any

from cutover_prep.analysis import InvalidStorage, UnknownInstanceClass, analyze, expected_limits
from cutover_prep.dal.records import evidence
from cutover_prep.dal.records.run import PointItem, RecordedInput
from cutover_prep.dal.store import Store, evidence_key
from cutover_prep.engines.registry import DEFAULT_ENGINE
from cutover_prep.metrics import collect_enhanced, collect_windows
from cutover_prep.models.steps import RunContext
from cutover_prep.rds.instances import instance_facts

CSV_COLUMNS = ("point_id", "kind", "sessions", "io_size_kb", "iops", "throughput_kbps", "latency_p50_us",
               "latency_p99_us", "burst_balance", "seconds")


def _windows(store: Store, run_id: str) -> list[dict[str, Any]]:
    return [{"point_id": p.point_id, "started_at": p.started_at, "finished_at": p.finished_at}
            for p in store.points(run_id) if p.status == "DONE" and p.started_at]


def _instance(run: RunContext, rds: Any) -> dict[str, Any]:
    instance = dict(run.instance)
    if not instance.get("dbi_resource_id") and rds is not None:
        found = rds.describe_db_instances(DBInstanceIdentifier=run.target.db_instance_identifier)
        instance.update(instance_facts(found["DBInstances"][0]))
    return instance


def collect_metrics(run: RunContext, attempt: int, *, store: Store, cloudwatch: Any, logs: Any, rds: Any,
                    now: datetime | None = None) -> dict[str, Any]:
    run_id, bench = run.run_id, run.benchmark
    windows = _windows(store, run_id)
    polls_allowed = math.ceil(bench.metrics_wait_minutes * 60 / bench.metrics_poll_seconds)
    final = attempt >= polls_allowed
    if not windows:
        return {"attempt": attempt + 1, "done": True, "complete": True, "windows": 0, "missing": 0}
    identifier = run.target.db_instance_identifier
    cw = collect_windows(cloudwatch, identifier, windows, final=final, now=now)
    cw.update(db_instance_identifier=identifier, attempt=attempt + 1, final=final)
    store.put_json(evidence_key(run_id, evidence.CLOUDWATCH), cw)
    done = bool(cw["complete"]) or final
    if done:
        instance = _instance(run, rds)
        if instance.get("dbi_resource_id") and instance.get("monitoring_interval"):
            enhanced = collect_enhanced(logs, instance["dbi_resource_id"], windows)
        else:
            enhanced = {"available": False,
                        "reason": "Enhanced Monitoring is off for this instance (MonitoringInterval 0)"}
        store.put_json(evidence_key(run_id, evidence.ENHANCED_MONITORING), enhanced)
    return {"attempt": attempt + 1, "done": done, "complete": bool(cw["complete"]), "windows": len(windows),
            "missing": len(cw.get("missing", []))}


def _cw_mean(cw: dict[str, Any] | None, point_id: str, metric: str) -> float | None:
    window = ((cw or {}).get("windows") or {}).get(point_id) or {}
    return ((window.get("metrics") or {}).get(metric) or {}).get("mean")


def analysis_rows(points: list[dict[str, Any]], cw: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per measured read point, in the ``cutover-prep analyze`` CSV format."""
    rows = []
    for p in points:
        if p["kind"] not in ("sequential", "random") or not p.get("requests"):
            continue
        latency = p.get("latency_us") or {}
        rows.append({
            "point_id": p["point_id"], "kind": p["kind"], "sessions": p.get("sessions", 1),
            "io_size_kb": p.get("io_size_kb") or p.get("effective_io_kb"),
            "iops": p["iops"], "throughput_kbps": p["throughput_kbps"],
            "latency_p50_us": latency.get("p50"), "latency_p99_us": latency.get("p99"),
            "burst_balance": _cw_mean(cw, p["point_id"], "BurstBalance"), "seconds": p.get("seconds"),
        })
    return rows


def rows_csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: "" if row.get(k) is None else row[k] for k in CSV_COLUMNS})
    return out.getvalue()


def _limits(instance: dict[str, Any], engine: str) -> tuple[dict[str, Any] | None, str | None]:
    klass, storage = instance.get("db_instance_class"), instance.get("storage_type")
    if not klass or not storage or not instance.get("allocated_storage_gb"):
        return None, "the instance class and storage are unknown here: limits are not compared"
    try:
        limits = expected_limits(klass, storage, int(instance["allocated_storage_gb"]), iops=instance.get("iops"),
                                 throughput_mbps=instance.get("storage_throughput"), engine=engine)
        return limits, None
    except (UnknownInstanceClass, InvalidStorage) as exc:
        return None, f"limits not compared: {exc}"


def _burst_series(cw: dict[str, Any] | None) -> list[float] | None:
    points = []
    for window in ((cw or {}).get("windows") or {}).values():
        points += ((window.get("metrics") or {}).get("BurstBalance") or {}).get("points") or []
    values = [v for _, v in sorted({ts: v for ts, v in points}.items())]
    return values or None


def analyze_run(run: RunContext, *, store: Store) -> dict[str, Any]:
    """Analyze: the run's probes and sweep points into analysis.json and sweep/points.csv, its conclusions judged
    by the verdict's thresholds the context carries."""
    run_id = run.run_id
    items = {p.point_id: p for p in store.points(run_id)}
    done = {pid for pid, p in items.items() if p.status == "DONE"}
    plan_key = evidence_key(run_id, evidence.SWEEP_PLAN)
    sweep_plan = store.get_json(plan_key) if store.exists(plan_key) else {"points": [], "notes": []}
    points = [store.get_json(evidence_key(run_id, evidence.sweep_point(p["point_id"])))
              for p in sweep_plan["points"] if p["point_id"] in done]
    cw_key = evidence_key(run_id, evidence.CLOUDWATCH)
    cw = store.get_json(cw_key) if store.exists(cw_key) else None
    probes = {phase: items[f"probe-{phase}"].stored() for phase in ("cold", "warm") if f"probe-{phase}" in done}
    engine = run.target.engine or sweep_plan.get("engine") or DEFAULT_ENGINE
    if run.benchmark.compare_limits:
        limits, limits_note = _limits(run.instance, engine)
    else:
        limits, limits_note = None, "limits not compared: the database read is not an RDS instance (local run)"
    rows = analysis_rows(points, cw)
    # as Finalize judges; a context made before it carried them (decision 52): the run item's
    if run.verdict is not None:
        thresholds = run.verdict
    else:
        run_item = store.get_run(run_id)
        thresholds = (run_item.recorded_input() if run_item else RecordedInput.of({})).thresholds()
    result = analyze(rows, limits=limits, probes=probes or None, burst_balance=_burst_series(cw),
                     thresholds=thresholds) if rows or probes \
        else {"points": [], "conclusions": [], "crossover_kb": None, "limits": limits}
    notes = list(sweep_plan.get("notes", [])) + ([limits_note] if limits_note else [])
    failed = failed_points(sweep_plan["points"], items,
                           write_test=run.benchmark.write_test)
    doc = {"run_id": run_id, "capabilities": sweep_plan.get("capabilities"), "target": sweep_plan.get("target"),
           "planned_points": len(sweep_plan["points"]), "measured_points": len(points), "failed_points": failed,
           "notes": notes, "metrics": {"complete": (cw or {}).get("complete"), "missing": (cw or {}).get("missing")},
           **result}
    store.put_json(evidence_key(run_id, evidence.ANALYSIS), doc)
    store.put_text(evidence_key(run_id, evidence.SWEEP_POINTS_CSV), rows_csv(rows), evidence.CSV)
    status = "DONE" if not failed else "PARTIAL"
    store.update_run(run_id, benchmark_status=status, benchmark_conclusions=len(doc.get("conclusions") or []))
    return {"status": status, "points": len(points), "failed": len(failed), "crossover_kb": doc.get("crossover_kb"),
            "conclusions": len(doc.get("conclusions") or [])}


def failed_points(planned: list[dict[str, Any]], items: dict[str, PointItem], *,
                  write_test: bool) -> list[dict[str, Any]]:
    """Every planned point that was not measured, with its cause: recorded failures, and points
    with no record at all (a killed or timed-out invocation). Write points count only when
    this run's input asks for the write test."""
    failed = []
    for point in planned:
        pid = point["point_id"]
        item = items.get(pid)
        status = item.status if item else None
        if status == "DONE" or (point.get("kind", "").startswith("write_") and not write_test):
            continue
        if item is not None and status == "FAILED":
            failed.append({"point_id": pid, "error": item.error, "cause": item.cause})
        else:
            failed.append({"point_id": pid, "error": "NotMeasured",
                           "cause": f"the point did not finish and left no record ({status or 'no item'})"})
    return failed
