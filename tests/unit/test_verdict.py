"""Verdict rules: READY only with complete evidence; each reason is reachable."""

from __future__ import annotations

import copy

import pytest

from cutover_prep.verdict import NOT_READY, READY, Thresholds, decide


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


def test_baseline_comparison_and_missing_baseline():
    slower = mutate(("benchmark", "points"), [point("random-08s", "random", 1000, 8000)])
    result = decide(slower, Thresholds(baseline_run_id="before"), baseline=GOOD)
    assert result["verdict"] == NOT_READY and {"BASELINE_IOPS", "BASELINE_THROUGHPUT"} <= codes(result)
    assert decide(GOOD, Thresholds(baseline_run_id="before"), baseline=GOOD)["verdict"] == READY
    assert "BASELINE" in codes(decide(GOOD, Thresholds(baseline_run_id="gone"), baseline=None))


def test_fast_warm_reads_pass_even_when_slower_than_cold():
    f = mutate(("benchmark", "probes"), {"cold": {"status": "DONE", "latency_us": {"p50": 110.0}},
                                          "warm": {"status": "DONE", "latency_us": {"p50": 350.0}}})
    assert decide(f)["verdict"] == READY  # 0.35 ms is fast: noise, not a first-touch penalty
    assert "WARM_VS_COLD" in codes(decide(f, Thresholds(fast_read_ms=0.2)))
