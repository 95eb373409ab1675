"""READY / NOT_READY from the findings, with every reason (pure).

Each rule yields a reason ``{"code", "ok", "message"}``; the verdict is READY only when
every rule is ok. Rules never give READY on missing evidence: a unit that failed, was
not started or was cut off, a probe or benchmark that was asked for and is absent, a
baseline that cannot be read, all give NOT_READY with the reason saying what is missing.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

READY, NOT_READY = "READY", "NOT_READY"
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$"  # a run id, also an execution name


class Thresholds(BaseModel):
    """The run input's ``verdict`` section."""

    model_config = ConfigDict(extra="forbid")

    min_coverage_pct: float = Field(default=100.0, ge=0, le=100, description="Planned bytes read, at least.")
    require_benchmark: bool = Field(default=True, description="NOT_READY when the probes/sweep were asked for "
                                    "and are missing or failed.")
    max_warm_to_cold_latency: float = Field(
        default=1.25, gt=0, description="The warm probe's median read latency may be at most this × the cold "
        "one's (a little slack for noise when both are fast).")
    fast_read_ms: float = Field(
        default=1.0, ge=0, description="A warm median read at or below this is fast whatever the cold one was.")
    max_warm_p99_ms: float | None = Field(default=None, gt=0, description="Warm probe p99 read latency limit (ms).")
    expected_read_iops: float | None = Field(default=None, gt=0, description="Best random-read IOPS, at least.")
    expected_read_mibps: float | None = Field(default=None, gt=0, description="Best read throughput (MiB/s), at least.")
    tolerance_pct: float = Field(default=10.0, ge=0, le=100, description="Slack for expected values and baselines.")
    baseline_run_id: str | None = Field(default=None, pattern=RUN_ID_PATTERN,
                                        description="Compare with this earlier, finished run's findings.")


def _reason(code: str, ok: bool, message: str) -> dict[str, Any]:
    return {"code": code, "ok": ok, "message": message}


def _warmup_reasons(f: dict[str, Any], t: Thresholds) -> list[dict[str, Any]]:
    units = f.get("units") or {}
    total, done = units.get("total", 0), units.get("done", 0)
    failed, running, pending = units.get("failed", 0), units.get("in_progress", 0), units.get("not_started", 0)
    out = [_reason("UNITS_FAILED", failed == 0,
                   f"{failed} of {total} work units failed" if failed else f"no work unit failed ({total} units)")]
    planned = (f.get("bytes") or {}).get("planned")
    if total == 0 or planned == 0:
        out.append(_reason("NOTHING_PLANNED", False,
                           "the plan holds nothing to read (0 work units): the database is empty or "
                           "warmup.databases / include_schemas / exclude_schemas matched nothing"))
    # counted both ways: findings without the in-progress/not-started counts still cannot pass
    unfinished = max(running + pending, total - done - failed)
    out.append(_reason("UNITS_NOT_FINISHED", unfinished == 0,
                       f"{unfinished} work units were cut off or never started ({running} in progress, "
                       f"{pending} not started)" if unfinished else f"all {done} work units finished"))
    coverage = f.get("coverage_pct")
    if coverage is None:
        out.append(_reason("COVERAGE", False, "the findings have no coverage: evidence is missing"))
    else:
        out.append(_reason("COVERAGE", coverage >= t.min_coverage_pct,
                           f"warm-up coverage {coverage:g} % (threshold {t.min_coverage_pct:g} %)"))
    return out


def _probe_reasons(bench: dict[str, Any], t: Thresholds) -> list[dict[str, Any]]:
    probes = bench.get("probes") or {}
    cold, warm = probes.get("cold") or {}, probes.get("warm") or {}
    if cold.get("status") != "DONE" or warm.get("status") != "DONE":
        missing = [p for p, d in (("cold", cold), ("warm", warm)) if d.get("status") != "DONE"]
        return [_reason("PROBES_MISSING", False, f"the {' and '.join(missing)} probe is missing "
                        f"({'; '.join(str(d.get('cause') or d.get('status') or 'not run') for d in (cold, warm) if d.get('status') != 'DONE')})")]  # noqa: E501
    c50, w50 = (cold.get("latency_us") or {}).get("p50"), (warm.get("latency_us") or {}).get("p50")
    if not c50 or w50 is None:
        return [_reason("PROBES_MISSING", False, "the probes have no latency figures")]
    ratio = w50 / c50
    fast = w50 / 1000 <= t.fast_read_ms
    return [_reason("WARM_VS_COLD", ratio <= t.max_warm_to_cold_latency or fast,
                    f"warm median read {w50 / 1000:.2f} ms vs cold {c50 / 1000:.2f} ms "
                    f"({ratio:.2f}×, limit {t.max_warm_to_cold_latency:g}×"
                    + (f"; at most {t.fast_read_ms:g} ms counts as fast)" if fast else ")"))]


def _p99_reasons(bench: dict[str, Any], t: Thresholds) -> list[dict[str, Any]]:
    """A p99 limit the user set is judged whatever else is required: no warm probe, no READY."""
    if t.max_warm_p99_ms is None:
        return []
    warm = (bench.get("probes") or {}).get("warm") or {}
    p99 = (warm.get("latency_us") or {}).get("p99") if warm.get("status") == "DONE" else None
    return [_reason("WARM_P99", p99 is not None and p99 / 1000 <= t.max_warm_p99_ms,
                    f"warm p99 read {p99 / 1000:.2f} ms (limit {t.max_warm_p99_ms:g} ms)" if p99 is not None
                    else f"no warm probe p99 to hold to the limit of {t.max_warm_p99_ms:g} ms "
                    "(verdict.max_warm_p99_ms)")]


def best_rates(bench: dict[str, Any]) -> tuple[float | None, float | None]:
    """Best random-read IOPS and best read MiB/s over the measured points."""
    points = [p for p in bench.get("points") or [] if p.get("status") == "DONE"]
    iops = [p["iops"] for p in points if p.get("kind") == "random" and p.get("iops") is not None]
    mibps = [p["throughput_kbps"] / 1024 for p in points
             if p.get("kind") in ("sequential", "random") and p.get("throughput_kbps") is not None]
    return (max(iops) if iops else None), (max(mibps) if mibps else None)


def _expected_reasons(bench: dict[str, Any], t: Thresholds) -> list[dict[str, Any]]:
    out = []
    iops, mibps = best_rates(bench)
    slack = 1 - t.tolerance_pct / 100
    if t.expected_read_iops is not None:
        out.append(_reason("EXPECTED_IOPS", iops is not None and iops >= t.expected_read_iops * slack,
                           f"best random-read rate {iops:,.0f} IOPS vs expected {t.expected_read_iops:,.0f}"
                           if iops is not None else "no random-read point was measured: IOPS evidence is missing"))
    if t.expected_read_mibps is not None:
        out.append(_reason("EXPECTED_THROUGHPUT", mibps is not None and mibps >= t.expected_read_mibps * slack,
                           f"best read throughput {mibps:,.1f} MiB/s vs expected {t.expected_read_mibps:,.1f}"
                           if mibps is not None else "no read point was measured: throughput evidence is missing"))
    return out


def _baseline_reasons(bench: dict[str, Any], baseline: dict[str, Any] | None, t: Thresholds) -> list[dict[str, Any]]:
    if not t.baseline_run_id:
        return []
    if not baseline:
        return [_reason("BASELINE", False, f"baseline run {t.baseline_run_id} has no findings to compare with")]
    iops, mibps = best_rates(bench)
    b_iops, b_mibps = best_rates(baseline.get("benchmark") or {})
    slack = 1 - t.tolerance_pct / 100
    out = []
    for code, now, then, unit in (("BASELINE_IOPS", iops, b_iops, "IOPS"), ("BASELINE_THROUGHPUT", mibps, b_mibps,
                                                                           "MiB/s")):
        if then is None:
            continue
        out.append(_reason(code, now is not None and now >= then * slack,
                           f"{now:,.1f} {unit} vs {then:,.1f} in baseline run {t.baseline_run_id}" if now is not None
                           else f"no {unit} measured to compare with baseline run {t.baseline_run_id}"))
    return out or [_reason("BASELINE", False, f"baseline run {t.baseline_run_id} has no benchmark points")]


def decide(findings: dict[str, Any], thresholds: Thresholds | None = None,
           baseline: dict[str, Any] | None = None, *, benchmark_requested: bool = True,
           probes_requested: bool = True) -> dict[str, Any]:
    """The verdict and its reasons (failing reasons first)."""
    t = thresholds or Thresholds()
    reasons = _warmup_reasons(findings, t)
    bench = findings.get("benchmark") or {}
    if benchmark_requested and t.require_benchmark:
        status = bench.get("status")
        if status not in ("DONE", "PARTIAL"):
            error = (bench.get("error") or {})
            reasons.append(_reason("BENCHMARK", False, f"benchmark {status or 'NOT_RUN'}"
                                   + (f": {error.get('error')}: {error.get('cause')}" if error else "")))
        else:
            failed = bench.get("failed_points") or []
            reasons.append(_reason("BENCHMARK", not failed, f"{len(failed)} benchmark points failed" if failed
                                   else "benchmark complete"))
        if probes_requested:
            reasons += _probe_reasons(bench, t)
        else:
            reasons.append(_reason("PROBES_OFF", True, "warm vs cold not judged: the probes were turned off "
                                   "(benchmark.probe_blocks: 0)"))
    reasons += _p99_reasons(bench, t)
    reasons += _expected_reasons(bench, t)
    reasons += _baseline_reasons(bench, baseline, t)
    verdict = READY if all(r["ok"] for r in reasons) else NOT_READY
    reasons.sort(key=lambda r: r["ok"])
    return {"verdict": verdict, "reasons": reasons, "thresholds": t.model_dump()}
