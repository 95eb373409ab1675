"""Verdict rules: READY only with complete evidence; each reason is reachable."""

from __future__ import annotations

import copy

import pytest

from cutover_prep.models.thresholds import Thresholds
from cutover_prep.verdict import NOT_READY, READY
from tests.unit.verdict_of_documents import decide


def point(pid, kind, iops, kbps):
    return {"point_id": pid, "status": "DONE", "kind": kind, "iops": iops, "throughput_kbps": kbps}


GOOD = {
    "units": {"total": 10, "done": 10, "failed": 0, "in_progress": 0, "not_started": 0},
    "coverage_pct": 100.0,
    "benchmark": {
        "status": "DONE",
        "probes": {"cold": {"status": "DONE", "latency_us": {"p50": 7800.0, "p99": 30000.0}},
                   "warm": {"status": "DONE", "latency_us": {"p50": 2300.0, "p99": 9000.0}}},
        "points": [point("seq", "sequential", 2000, 256_000), point("random-01s", "random", 433, 3464),
                   point("random-08s", "random", 2900, 23200)],
        "failed_points": [],
    },
}


def codes(result, ok=False):
    return {r["code"] for r in result["reasons"] if r["ok"] is ok}


def test_complete_evidence_is_ready_with_every_reason_ok():
    result = decide(GOOD)
    assert result["verdict"] == READY and codes(result) == set()
    assert {"UNITS_FAILED", "UNITS_NOT_FINISHED", "COVERAGE", "BENCHMARK", "WARM_VS_COLD"} <= codes(result, True)


def mutate(path, value):
    f = copy.deepcopy(GOOD)
    target = f
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return f


@pytest.mark.parametrize(("findings", "code"), [
    (mutate(("units", "failed"), 1), "UNITS_FAILED"),
    (mutate(("units", "not_started"), 2), "UNITS_NOT_FINISHED"),
    (mutate(("units", "in_progress"), 1), "UNITS_NOT_FINISHED"),
    (mutate(("coverage_pct",), 99.9), "COVERAGE"),
    (mutate(("coverage_pct",), None), "COVERAGE"),
    (mutate(("benchmark", "status"), "FAILED"), "BENCHMARK"),
    (mutate(("benchmark", "failed_points"), [{"point_id": "seq"}]), "BENCHMARK"),
    (mutate(("benchmark", "probes", "warm"), {"status": "SKIPPED", "cause": "no cold probe"}), "PROBES_MISSING"),
    (mutate(("benchmark", "probes", "warm", "latency_us"), {"p50": 10000.0}), "WARM_VS_COLD"),
    ({k: v for k, v in GOOD.items() if k != "benchmark"}, "BENCHMARK"),
    (mutate(("units",), {"total": 0, "done": 0, "failed": 0, "in_progress": 0, "not_started": 0}), "NOTHING_PLANNED"),
    (mutate(("bytes",), {"planned": 0, "read": 0}), "NOTHING_PLANNED"),
    (mutate(("units",), {"total": 10, "done": 7, "failed": 0}), "UNITS_NOT_FINISHED"),  # counts absent
])
def test_each_missing_or_bad_piece_of_evidence_is_not_ready(findings, code):
    result = decide(findings)
    assert result["verdict"] == NOT_READY and code in codes(result)
    assert result["reasons"][0]["ok"] is False  # failing reasons first


def test_benchmark_not_asked_for_is_not_required():
    f = {k: v for k, v in GOOD.items() if k != "benchmark"}
    assert decide(f, benchmark_requested=False)["verdict"] == READY


def test_expected_rates_with_tolerance():
    assert decide(GOOD, Thresholds(expected_read_iops=3000, tolerance_pct=10))["verdict"] == READY  # 2900 >= 2700
    result = decide(GOOD, Thresholds(expected_read_iops=3500, tolerance_pct=10))
    assert result["verdict"] == NOT_READY and "EXPECTED_IOPS" in codes(result)
    result = decide(GOOD, Thresholds(expected_read_mibps=300, tolerance_pct=0))
    assert "EXPECTED_THROUGHPUT" in codes(result)  # best is 250 MiB/s
    no_points = mutate(("benchmark", "points"), [])
    assert "EXPECTED_IOPS" in codes(decide(no_points, Thresholds(expected_read_iops=1)))


def test_warm_p99_limit():
    assert "WARM_P99" in codes(decide(GOOD, Thresholds(max_warm_p99_ms=5)))
    assert "WARM_P99" in codes(decide(GOOD, Thresholds(max_warm_p99_ms=10)), True)


def test_a_p99_limit_is_judged_even_when_the_benchmark_is_not_required():
    lenient = {"require_benchmark": False, "max_warm_p99_ms": 5}
    assert "WARM_P99" in codes(decide(GOOD, Thresholds(**lenient)))  # 9 ms > 5 ms
    no_probes = mutate(("benchmark", "probes"), {})
    result = decide(no_probes, Thresholds(**lenient))
    assert result["verdict"] == NOT_READY and "no warm probe p99" in result["reasons"][0]["message"]
    assert decide(no_probes, Thresholds(require_benchmark=False))["verdict"] == READY  # no limit set


def test_probes_turned_off_are_not_missing_evidence():
    no_probes = mutate(("benchmark", "probes"), {"cold": {"status": "SKIPPED"}, "warm": {"status": "SKIPPED"}})
    assert "PROBES_MISSING" in codes(decide(no_probes))
    result = decide(no_probes, probes_requested=False)
    assert result["verdict"] == READY and "PROBES_OFF" in codes(result, True)
    assert "BENCHMARK" in codes(result, True)  # the sweep is still judged


def test_a_run_without_warm_up_is_never_ready_and_says_why_once():
    """warmup.enabled false: no unit was to be read. The verdict names that once (WARMUP_OFF) instead of
    failing every unit and the coverage, and does not judge warm vs cold (both probes read cold blocks)."""
    cold_twice = copy.deepcopy(GOOD)
    cold_twice["units"] = {"total": 10, "done": 0, "failed": 0, "in_progress": 0, "not_started": 10}
    cold_twice["coverage_pct"] = 0.0
    cold_twice["benchmark"]["probes"]["warm"]["latency_us"] = {"p50": 7900.0, "p99": 31000.0}
    result = decide(cold_twice, warmup_requested=False)
    assert result["verdict"] == NOT_READY and codes(result) == {"WARMUP_OFF"}
    assert "10 planned work units" in result["reasons"][0]["message"]
    not_judged = [r for r in result["reasons"] if r.get("judged") is False]
    assert [r["code"] for r in not_judged] == ["PROBES_COLD"]
    assert "BENCHMARK" in codes(result, True)  # the sweep is still judged
    assert {"COVERAGE", "UNITS_NOT_FINISHED"} <= codes(decide(cold_twice))  # with the warm-up asked for


def test_baseline_comparison_and_missing_baseline():
    slower = mutate(("benchmark", "points"), [point("random-08s", "random", 1000, 8000)])
    result = decide(slower, Thresholds(baseline_run_id="before"), baseline=GOOD)
    assert result["verdict"] == NOT_READY and {"BASELINE_IOPS", "BASELINE_THROUGHPUT"} <= codes(result)
    assert decide(GOOD, Thresholds(baseline_run_id="before"), baseline=GOOD)["verdict"] == READY
    assert "BASELINE" in codes(decide(GOOD, Thresholds(baseline_run_id="gone"), baseline=None))


def medians(cold_ms, warm_ms):
    return mutate(("benchmark", "probes"), {"cold": {"status": "DONE", "latency_us": {"p50": cold_ms * 1000}},
                                            "warm": {"status": "DONE", "latency_us": {"p50": warm_ms * 1000},
                                                     "overlap_blocks": 0}})


def warm_vs_cold(result):
    [reason] = [r for r in result["reasons"] if r["code"] == "WARM_VS_COLD"]
    return reason


def test_warm_many_times_slower_than_cold_is_never_a_passed_check():
    """The old rule passed any warm median under fast_read_ms: a demo listed 8.27x slower as passed. Both
    fast, it is said and not judged (a loaded machine's noise made that fail runs); warm slow, it fails."""
    result = decide(medians(0.1, 0.8))
    reason = warm_vs_cold(result)
    assert reason["judged"] is False and "slower than cold" in reason["message"] and "8.00×" in reason["message"]
    assert "WARM_VS_COLD" not in codes(result, True) or reason["judged"] is False
    failed = decide(medians(0.1, 2.0))  # warm above fast_read_ms and 20x the cold median
    assert failed["verdict"] == NOT_READY and not warm_vs_cold(failed)["ok"]
    assert "slower than cold" in warm_vs_cold(failed)["message"]
    assert "WARM_VS_COLD" in codes(decide(medians(10.0, 14.0)))  # also when both are slow


def test_no_first_touch_penalty_is_said_and_not_listed_as_a_passed_check():
    for cold, warm in ((0.16, 0.25), (0.4, 0.45), (0.9, 0.1)):  # the first: a loaded demo machine, noise
        result = decide(medians(cold, warm))
        reason = warm_vs_cold(result)
        assert result["verdict"] == READY and reason["ok"] is True and reason["judged"] is False
        assert reason["message"].startswith("no first-touch penalty measured")


def test_a_measured_penalty_passes_only_when_the_warm_reads_lost_it():
    removed = warm_vs_cold(decide(medians(8.0, 0.5)))  # warm fast
    assert removed["ok"] and removed.get("judged", True) and "(cold/warm 16.00×)" in removed["message"]
    assert warm_vs_cold(decide(GOOD))["ok"]  # 7.8 -> 2.3 ms: above fast_read_ms, but 3.4× faster
    remains = warm_vs_cold(decide(medians(8.0, 6.0)))  # the old rule passed it: within 1.25×
    assert not remains["ok"] and "penalty remains" in remains["message"]
    assert warm_vs_cold(decide(medians(8.0, 6.0), Thresholds(min_warm_speedup=1.2)))["ok"]
    assert not warm_vs_cold(decide(medians(8.0, 0.9), Thresholds(fast_read_ms=0.5, min_warm_speedup=10)))["ok"]


def test_the_noise_allowances_are_thresholds():
    assert warm_vs_cold(decide(medians(0.1, 0.8), Thresholds(latency_noise_ms=1.0)))["judged"] is False
    assert warm_vs_cold(decide(medians(0.1, 0.8), Thresholds(max_warm_to_cold_latency=10)))["judged"] is False
    assert warm_vs_cold(decide(medians(0.16, 0.25), Thresholds(latency_noise_ms=0)))["judged"] is False
    assert not warm_vs_cold(decide(medians(0.16, 1.25), Thresholds(latency_noise_ms=0)))["ok"]


def test_a_warm_probe_that_re_read_cold_blocks_says_so():
    f = medians(8.0, 0.5)
    f["benchmark"]["probes"]["warm"]["overlap_blocks"] = 10
    assert "re-read 10 of the cold probe's blocks" in warm_vs_cold(decide(f))["message"]


def test_a_partial_benchmark_is_not_complete_even_without_recorded_failures():
    """The old rule counted PARTIAL with no recorded failure as complete: READY with every point killed."""
    partial = mutate(("benchmark", "status"), "PARTIAL")
    result = decide(partial)
    assert result["verdict"] == NOT_READY and "BENCHMARK" in codes(result)
    waived = decide(partial, Thresholds(require_benchmark=False))
    assert "BENCHMARK" not in codes(waived) | codes(waived, True)


def test_points_not_measured_are_named():
    findings = mutate(("benchmark", "failed_points"), [{"point_id": "write-direct", "error": "NotMeasured"}])
    [reason] = [r for r in decide(findings)["reasons"] if r["code"] == "BENCHMARK"]
    assert not reason["ok"] and "write-direct: NotMeasured" in reason["message"]


def test_scratch_objects_left_behind_fail_by_name():
    left = copy.deepcopy(GOOD)
    left["scratch"] = {"created": ["cutover_prep_scratch_ab12"], "removed": [], "left": ["cutover_prep_scratch_ab12"]}
    result = decide(left)
    assert result["verdict"] == NOT_READY
    assert "cutover_prep_scratch_ab12" in next(r["message"] for r in result["reasons"] if r["code"] == "SCRATCH_LEFT")
    removed = copy.deepcopy(GOOD)
    removed["scratch"] = {"created": ["s"], "removed": ["s"], "left": []}
    assert decide(removed)["verdict"] == READY and "SCRATCH_LEFT" in codes(decide(removed), True)


@pytest.mark.parametrize("value", ["no", 0, "false"])
def test_waiving_the_benchmark_takes_a_real_boolean(value):
    with pytest.raises(ValueError, match="require_benchmark"):
        Thresholds(require_benchmark=value)


def test_the_report_lists_a_check_not_judged_apart_from_the_checks_passed():
    from cutover_prep.report.html import render_report
    from cutover_prep.report.markdown import summary_markdown
    from cutover_prep.report.view import build_view

    f = medians(0.16, 0.25)
    f["verdict"] = decide(f)
    verdict = build_view(f)["verdict"]
    assert "WARM_VS_COLD" in {r["code"] for r in verdict["not_judged"]}
    assert "WARM_VS_COLD" not in {r["code"] for r in verdict["passing"]}
    md = summary_markdown(f)
    not_judged = md.split("## Not judged", 1)[1]
    assert "no first-touch penalty measured" in not_judged
    assert "no first-touch penalty measured" not in md.split("## Checks passed", 1)[1].split("## Not judged")[0]
    page = render_report(f)
    assert page.index("Not judged") < page.index("no first-touch penalty measured")
    assert "warm probe: a fresh random sample, 0 of its" in page


def test_a_rate_a_cache_served_is_not_storage_evidence():
    """A sequential point that re-read its target from the page cache (the engine marks it cached) must
    not pass EXPECTED_THROUGHPUT: the report leaves it out of the headline, the verdict out of the evidence."""
    points = [dict(p) for p in GOOD["benchmark"]["points"]]
    cached = {**next(p for p in points if p["kind"] == "sequential"), "point_id": "seq-cached",
              "throughput_kbps": 9_000_000.0, "passes": 106, "cached": True}
    f = mutate(("benchmark", "points"), [*points, cached])
    result = decide(f, Thresholds(expected_read_mibps=300, tolerance_pct=0))
    assert result["verdict"] == NOT_READY and "EXPECTED_THROUGHPUT" in codes(result)  # best storage figure: 250
    uncached = mutate(("benchmark", "points"), [*points, {**cached, "cached": False}])  # e.g. Oracle direct path
    assert decide(uncached, Thresholds(expected_read_mibps=300, tolerance_pct=0))["verdict"] == READY


def test_a_warm_slowest_read_far_above_the_cold_one_is_said_not_passed_silently():
    """Issue 23 §5: a warm probe whose max latency (392 ms) was 2.1× the cold max passed without a word."""
    findings = mutate(("benchmark", "probes", "cold", "latency_us"), {"p50": 7800.0, "p99": 30000.0, "max": 186_000.0})
    findings["benchmark"]["probes"]["warm"]["latency_us"] = {"p50": 2300.0, "p99": 9000.0, "max": 392_000.0}
    result = decide(findings)
    tail = [r for r in result["reasons"] if r["code"] == "WARM_TAIL"]
    assert result["verdict"] == READY and len(tail) == 1
    assert tail[0]["ok"] is True and tail[0]["judged"] is False
    assert "392.0 ms, 2.1× the cold probe's slowest (186.0 ms)" in tail[0]["message"]
    assert "max_warm_p99_ms" in tail[0]["message"]


@pytest.mark.parametrize(("cold_max", "warm_max"), [(186_000.0, 300_000.0), (50.0, 200.0), (None, 392_000.0)])
def test_a_warm_tail_within_twice_the_cold_or_within_noise_is_not_said(cold_max, warm_max):
    findings = copy.deepcopy(GOOD)
    findings["benchmark"]["probes"]["cold"]["latency_us"]["max"] = cold_max
    findings["benchmark"]["probes"]["warm"]["latency_us"]["max"] = warm_max
    assert "WARM_TAIL" not in {r["code"] for r in decide(findings)["reasons"]}


# Issue 32, finding 2: the end census (after the warm-up) is the run's only view of what was created or grew
# while it ran; without it the run cannot be READY (findings.census as findings/census.py and finalize make it).
CENSUS_START = {"taken": True, "objects": 3, "bytes": 3 * 2**20, "unread_bytes": 0, "waived_bytes": 0,
                "unknown_size": [], "unread": []}


def test_a_run_whose_end_census_failed_is_not_ready_naming_the_error():
    failure = {"error": "DatabaseUnreachable", "cause": "connection refused"}
    findings = {**GOOD, "census": {**CENSUS_START, "end_census": False, "end_census_failure": failure}}
    result = decide(findings)
    assert result["verdict"] == NOT_READY and codes(result) == {"END_CENSUS"}
    (reason,) = [r for r in result["reasons"] if r["code"] == "END_CENSUS"]
    assert reason["message"].startswith("the end census did not run: DatabaseUnreachable: connection refused")


def test_a_run_whose_end_census_is_missing_for_any_reason_is_not_ready():
    """No record of a failure either (the step cut off by Lambda's time limit, or never reached): still missing."""
    findings = {**GOOD, "census": {**CENSUS_START, "end_census": False}}
    result = decide(findings)
    assert result["verdict"] == NOT_READY and codes(result) == {"END_CENSUS"}
    assert "no record" in next(r["message"] for r in result["reasons"] if r["code"] == "END_CENSUS")


def test_an_end_census_taken_passes_and_no_census_or_no_warm_up_adds_nothing():
    taken = decide({**GOOD, "census": {**CENSUS_START, "end_census": True}})
    assert taken["verdict"] == READY and "END_CENSUS" in codes(taken, True)
    assert "END_CENSUS" not in codes(decide(GOOD), True) | codes(decide(GOOD))  # the engine takes no census
    off = decide({**GOOD, "census": {**CENSUS_START, "end_census": False}}, warmup_requested=False)
    assert codes(off) == {"WARMUP_OFF"}  # no warm-up: no end census was to run, WARMUP_OFF says it all
