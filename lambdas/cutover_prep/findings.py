"""Findings of a run: aggregate units, write ``findings.json``, close the run item.

``findings.json`` (schema_version 1) is documented in docs/findings.md.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from cutover_prep.events import NOT_STARTED, completion_detail, not_started_detail, publish
from cutover_prep.report import render_report
from cutover_prep.store import Store, evidence_key, now_iso
from cutover_prep.summary import summary_markdown
from cutover_prep.timeline import warmup_timeline
from cutover_prep.verdict import Thresholds, decide

SCHEMA_VERSION = 1


def _seconds_between(first: str | None, last: str | None) -> float | None:
    if not first or not last:
        return None
    return max(0.0, (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds())


def benchmark_section(run_item: dict[str, Any], analysis: dict[str, Any] | None,
                      point_items: dict[str, dict[str, Any]], cloudwatch: dict[str, Any] | None) -> dict[str, Any]:
    """Pure: the probes, the sweep points (with their CloudWatch means) and the analysis."""
    options = (run_item.get("benchmark_options") or {})
    status = run_item.get("benchmark_status") or ("DISABLED" if options.get("enabled") is False else "NOT_RUN")
    section: dict[str, Any] = {"status": status}
    if run_item.get("benchmark_error"):
        section["error"] = {"error": run_item["benchmark_error"], "cause": run_item.get("benchmark_cause")}
    probes = {}
    for phase in ("cold", "warm"):
        item = point_items.get(f"probe-{phase}")
        if item:
            probes[phase] = {k: item.get(k) for k in ("status", "blocks_read", "iops", "throughput_kbps", "latency_us",
                                                       "latency_hist_us", "started_at", "finished_at", "cut_short",
                                                       "note", "cause") if item.get(k) is not None}
    section["probes"] = probes
    cw_windows = (cloudwatch or {}).get("windows") or {}
    by_id = {p.get("point_id"): p for p in (analysis or {}).get("points") or []}
    points = []
    for pid, item in sorted(point_items.items()):
        if pid.startswith("probe-"):
            continue
        row = {k: item.get(k) for k in ("point_id", "status", "kind", "sessions", "io_size_kb", "effective_io_kb",
                                         "iops", "throughput_kbps", "latency_us", "latency_hist_us", "source",
                                         "knobs_applied", "started_at", "finished_at", "seconds", "notes", "error",
                                         "cause") if item.get(k) not in (None, [], {})}
        if pid in by_id:
            row["bound"] = by_id[pid].get("bound")
        metrics = (cw_windows.get(pid) or {}).get("metrics") or {}
        row["cloudwatch"] = {name: {"mean": m.get("mean"), "max": m.get("max"), "status": m.get("status")}
                             for name, m in metrics.items()}
        points.append(row)
    section["points"] = points
    if analysis:
        for key in ("capabilities", "target", "crossover_kb", "limits", "measured", "burst", "cold_warm",
                    "conclusions", "notes", "metrics", "failed_points"):
            if key in analysis:
                section[key] = analysis[key]
        if section.get("target"):
            section["target"] = {"segment": section["target"].get("segment"),
                                 "bytes": sum(e[2] for e in section["target"]["extents"])
                                 * section["target"]["block_size"]}
    return section


def build_findings(run_item: dict[str, Any], plan: dict[str, Any], units: list[dict[str, Any]],
                   unit_items: dict[str, dict[str, Any]], benchmark: dict[str, Any] | None = None) -> dict[str, Any]:
    """Pure: combine the plan, the unit items and the run item into the findings document."""
    status_of = {u["unit_id"]: unit_items.get(u["unit_id"], {}).get("status", "PENDING") for u in units}
    counts = {s: 0 for s in ("DONE", "FAILED", "RUNNING", "PENDING")}
    for status in status_of.values():
        counts[status] = counts.get(status, 0) + 1
    planned_bytes = sum(u["bytes"] for u in units)
    planned_blocks = sum(u["blocks"] for u in units)
    covered_bytes = sum(u["bytes"] for u in units if status_of[u["unit_id"]] == "DONE")
    read_bytes = sum(i.get("bytes_read", 0) for i in unit_items.values())
    read_blocks = sum(i.get("blocks_read", 0) for i in unit_items.values())
    busy_seconds = sum(i.get("seconds", 0.0) for i in unit_items.values())
    starts = sorted(i["started_at"] for i in unit_items.values() if i.get("started_at"))
    ends = sorted(i["finished_at"] for i in unit_items.values() if i.get("finished_at"))
    wall = _seconds_between(starts[0] if starts else None, ends[-1] if ends else None)

    segment_done: dict[str, bool] = {}
    for unit in units:
        for rng in unit["ranges"]:
            ok = status_of[unit["unit_id"]] == "DONE"
            segment_done[rng["segment"]] = segment_done.get(rng["segment"], True) and ok
    segments = [{**{k: s[k] for k in ("key", "database", "schema", "name", "kind", "bytes", "blocks")},
                 "status": "READ" if segment_done.get(s["key"], False) else "NOT_READ",
                 "units": s["units"]} for s in plan["segments"]]
    failed = [{"unit_id": uid, "error": unit_items[uid].get("error"), "cause": unit_items[uid].get("cause")}
              for uid, st in status_of.items() if st == "FAILED"]
    complete = counts["DONE"] == len(units)
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_item["run_id"],
        "status": "SUCCEEDED" if complete else "INCOMPLETE",
        "target": run_item["target"],
        "instance": run_item.get("instance"),
        "engine": plan["engine"],
        "read_methods": sorted({i.get("method") for i in unit_items.values() if i.get("method")}),
        "read_methods_by_database": plan["summary"].get("read_methods", {}),
        "timings": {"started_at": run_item["started_at"], "warmup_started_at": starts[0] if starts else None,
                    "warmup_finished_at": ends[-1] if ends else None, "finished_at": now_iso(),
                    "warmup_wall_seconds": wall, "unit_busy_seconds": round(busy_seconds, 3)},
        "units": {"total": len(units), "done": counts["DONE"], "failed": counts["FAILED"],
                  "in_progress": counts["RUNNING"], "not_started": counts["PENDING"]},
        "bytes": {"planned": planned_bytes, "read": read_bytes, "covered": covered_bytes},
        "blocks": {"planned": planned_blocks, "read": read_blocks},
        "coverage_pct": round(100.0 * covered_bytes / planned_bytes, 3) if planned_bytes else 100.0,
        "read_amplification": round(read_blocks / planned_blocks, 4) if planned_blocks else None,
        "read_rate": {
            "mib_per_s_wall": round(read_bytes / wall / 2**20, 3) if wall else None,
            "mib_per_s_per_worker": round(read_bytes / busy_seconds / 2**20, 3) if busy_seconds else None,
        },
        "plan": plan["summary"],
        "failed_units": failed,
        "warmup_timeline": warmup_timeline(list(unit_items.values())),
        "benchmark": benchmark or {"status": "NOT_RUN"},
        "segments": segments,
    }


def finalize(run_id: str, *, store: Store, events: Any = None) -> dict[str, Any]:
    run_item = store.get_run(run_id)
    if run_item is None:
        raise LookupError(f"run {run_id} has no record")
    plan = store.get_json(evidence_key(run_id, "plan.json"))
    units = store.get_json(evidence_key(run_id, "units.json"))
    unit_items = {i["sk"].removeprefix("UNIT#"): i for i in store.units(run_id)}
    analysis_key, cw_key = evidence_key(run_id, "analysis.json"), evidence_key(run_id, "metrics/cloudwatch.json")
    benchmark = benchmark_section(
        run_item, store.get_json(analysis_key) if store.exists(analysis_key) else None,
        {p["point_id"]: p for p in store.points(run_id)}, store.get_json(cw_key) if store.exists(cw_key) else None)
    findings = build_findings(run_item, plan, units, unit_items, benchmark)
    findings["verdict"] = judge(run_item, findings, store=store)
    key = store.put_json(evidence_key(run_id, "findings.json"), findings)
    uris = {name: f"s3://{store.bucket}/{evidence_key(run_id, name)}"
            for name in ("findings.json", "summary.md", "report.html")}
    store.s3.put_object(Bucket=store.bucket, Key=evidence_key(run_id, "summary.md"), ContentType="text/markdown",
                        Body=summary_markdown(findings, findings_uri=uris["findings.json"],
                                              report_uri=uris["report.html"]).encode())
    store.s3.put_object(Bucket=store.bucket, Key=evidence_key(run_id, "report.html"),
                        ContentType="text/html; charset=utf-8", Body=render_report(findings).encode())
    store.update_run(run_id, status=findings["status"], step="finished", finished_at=findings["timings"]["finished_at"],
                     units_done=findings["units"]["done"], units_failed=findings["units"]["failed"],
                     coverage_pct=findings["coverage_pct"], findings_key=key,
                     verdict=findings["verdict"]["verdict"],
                     verdict_reasons=[r["message"] for r in findings["verdict"]["reasons"] if not r["ok"]])
    reasons = [r["message"] for r in findings["verdict"]["reasons"] if not r["ok"]]
    if events is not None:
        publish(events, completion_detail({**run_item, "coverage_pct": findings["coverage_pct"]},
                                          status=findings["status"], verdict=findings["verdict"]["verdict"],
                                          reasons=reasons, bucket=store.bucket, findings_key=key))
    return {"run_id": run_id, "status": findings["status"], "coverage_pct": findings["coverage_pct"],
            "units": findings["units"], "findings_key": key, "findings_uri": uris["findings.json"],
            "summary_uri": uris["summary.md"], "report_uri": uris["report.html"],
            "verdict": findings["verdict"]["verdict"],
            "reasons": [r["message"] for r in findings["verdict"]["reasons"] if not r["ok"]],
            "benchmark": {"status": benchmark["status"], "points": len(benchmark["points"]),
                          "conclusions": len(benchmark.get("conclusions") or [])}}


def judge(run_item: dict[str, Any], findings: dict[str, Any], *, store: Store) -> dict[str, Any]:
    """READY / NOT_READY from the run's thresholds (and its baseline run's findings, if named)."""
    thresholds = Thresholds(**(run_item.get("verdict_options") or {}))
    baseline = None
    if thresholds.baseline_run_id:
        key = evidence_key(thresholds.baseline_run_id, "findings.json")
        baseline = store.get_json(key) if store.exists(key) else None
    options = run_item.get("benchmark_options") or {}
    return decide(findings, thresholds, baseline, benchmark_requested=bool(options.get("enabled", True)),
                  probes_requested=int(options.get("probe_blocks", 1)) > 0)


def cause_message(error: dict[str, Any]) -> str:
    """A Lambda error's Cause is JSON with errorMessage (and a stack trace): keep the message."""
    cause = str(error.get("Cause") or "")
    try:
        return str(json.loads(cause).get("errorMessage", cause))
    except (ValueError, AttributeError):
        return cause


KNOWN_ERRORS = {"InvalidInput", "RestoreFailed", "RestoreTimeout", "DatabaseUnreachable",
                "PermanentReadError", "TransientDatabaseError"}


def record_failure(run_id: str | None, error: dict[str, Any], *, store: Store, events: Any = None,
                   rejected_input: Any = None, execution_name: str | None = None) -> dict[str, str]:
    """Mark the run FAILED with its cause; return the named error for the Fail state.

    A run that never started (its input was rejected: no run item) is told as a
    ``Cutover Prep Run Not Started`` event naming the target, when the input names one."""
    name = str(error.get("Error") or "CutoverPrepFailed")
    cause = cause_message(error)
    if name not in KNOWN_ERRORS:
        name = "StepTimedOut" if name == "States.Timeout" else "CutoverPrepFailed"
    if run_id and store.get_run(run_id) is not None:
        store.update_run(run_id, status="FAILED", step="failed", error=name, cause=cause[:4000],
                         finished_at=now_iso())
        store.put_json(evidence_key(run_id, "failure.json"), {"run_id": run_id, "error": name, "cause": cause})
        if events is not None:
            publish(events, completion_detail(store.get_run(run_id) or {"run_id": run_id}, status="FAILED",
                                              verdict="NOT_READY", reasons=[f"the run failed: {name}: {cause[:500]}"],
                                              bucket=store.bucket, findings_key=None, error=name))
    elif events is not None and name == "InvalidInput":
        target = (rejected_input.get("target") if isinstance(rejected_input, dict) else None) or {}
        target = target if isinstance(target, dict) else {}
        ident, engine = target.get("db_instance_identifier"), target.get("engine")
        publish(events, not_started_detail(ident if isinstance(ident, str) else None,
                                           engine if isinstance(engine, str) else None, cause[:500],
                                           code="INPUT_REJECTED", run_id=execution_name), detail_type=NOT_STARTED)
    return {"Error": name, "Cause": cause[:4000] or name}


def record_unit_failure(event: dict[str, Any], *, store: Store) -> dict[str, Any]:
    """Called by the workflow's Catch of a unit: count it as FAILED with its error."""
    run_id, unit_id = event["run"]["run_id"], event["unit"]["unit_id"]
    error = event.get("error") or {}
    name = str(error.get("Error") or "UnitFailed")
    cause = cause_message(error)
    recorded = store.fail_unit(run_id, unit_id, error=name, cause=cause)
    return {"unit_id": unit_id, "status": "FAILED", "error": name, "recorded": recorded}
