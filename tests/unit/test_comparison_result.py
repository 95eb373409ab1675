"""comparison.json from the children's findings: the figures, the targets (sustained where the
volume bursts), the recommendation (cheapest meeting every target; tie: more read IOPS; none with
the reason), failed children, the price source and the comparison's own cost."""

from __future__ import annotations

import copy

import pytest

from cutover_prep.comparison.model import ComparisonInput, ComparisonResult, ConfigurationResult, Targets
from cutover_prep.comparison.result import comparison_document, judge, measures, recommend
from cutover_prep.dal.records.findings import Findings
from cutover_prep.pricing.book import PriceBook

BASE = {
    "comparison_id": "c1", "snapshot_identifier": "snap-1",
    "target": {"secret_arn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:m-AbC", "engine": "postgres"},
    "configurations": [
        {"name": "gp2", "db_instance_class": "db.t3.medium", "storage_type": "gp2", "allocated_gb": 100},
        {"name": "io1", "db_instance_class": "db.t3.medium", "storage_type": "io1", "allocated_gb": 100, "iops": 3000},
    ],
    "targets": {"min_read_iops": 1000},
}


def findings(random_iops: list[float], *, p99_us: float = 4000, seq_kbps: float = 60_000, scale: float | None = None,
             busy: float = 100.0) -> Findings:
    points = [{"kind": "random", "sessions": 2 ** i, "iops": v, "throughput_kbps": v * 8} for i, v in
              enumerate(random_iops)]
    points.append({"kind": "sequential", "sessions": 1, "iops": 10, "throughput_kbps": seq_kbps})
    doc = {"engine": "postgres", "read_rate": {"mib_per_s_wall": 20.0},
           "timings": {"started_at": "2026-11-23T10:00:00+00:00", "finished_at": "2026-11-23T10:30:00+00:00",
                       "unit_busy_seconds": busy},
           "units": {"total": 10},
           "benchmark": {"points": points, "probes": {"warm": {"latency_us": {"p99": p99_us}}}}}
    if scale:
        doc["storage_emulation"] = {"emulated": True, "profile": {"time_scale": scale}}
    return Findings.read(doc)  # as the comparison reads each run's findings.json


def comparison(**changes) -> ComparisonInput:
    raw = copy.deepcopy(BASE)
    raw.update(changes)
    return ComparisonInput.model_validate(raw, strict=True)


def test_measures_picks_the_best_random_point_the_best_throughput_and_the_warm_p99():
    m = measures(findings([400, 1500, 2900], p99_us=3500, seq_kbps=102_400))
    assert m._asdict() == {"read_iops": 2900, "read_mib_per_s": 100.0, "warm_p99_ms": 3.5, "warmup_mib_per_s": 20.0}
    assert measures(Findings()).read_iops is None


def test_gp2_is_judged_on_its_sustained_baseline_and_io1_is_recommended():
    doc = comparison_document(comparison(), {"gp2": findings([2950]), "io1": findings([2900])}, {},
                              pricing=PriceBook(client=None))
    ComparisonResult.model_validate(doc)
    gp2, io1 = doc["configurations"]
    assert gp2["read_iops"] == 2950 and gp2["sustained_read_iops"] == 300  # measured on the burst; 3 IOPS/GiB
    assert gp2["meets_targets"] is False and "300 sustained (measured 2,950 on the burst) < 1,000" in gp2["why"]
    assert io1["meets_targets"] is True
    assert io1["price_per_hour_usd"] > gp2["price_per_hour_usd"] > 0
    assert doc["recommendation"]["name"] == "io1" and "missing a target: gp2" in doc["recommendation"]["why"]
    assert doc["prices"]["source"].startswith("shipped price file (dated ") and doc["prices"]["dated"]
    cost = doc["comparison_cost"]
    assert cost["instance_hours"] == pytest.approx(1.0) and cost["lambda_usd"] > 0 and cost["sfn_usd"] > 0
    assert cost["usd"] == pytest.approx(cost["instance_usd"] + cost["lambda_usd"] + cost["sfn_usd"], abs=1e-6)


def test_the_cheapest_meeting_every_target_wins_and_a_tie_goes_to_more_iops():
    rows = [ConfigurationResult(name=n, status="MEASURED", read_iops=i, price_per_hour_usd=p, meets_targets=m)
            for n, i, p, m in (("a", 3000, 0.5, True), ("b", 2000, 0.3, True), ("c", 2500, 0.3, True),
                               ("d", 9000, 0.1, False))]
    rec = recommend(rows)
    assert rec.name == "c" and "also meeting them: a $0.5000/h, b $0.3000/h" in rec.why


def test_no_recommendation_says_why():
    doc = comparison_document(comparison(targets={"min_read_iops": 5000}),
                              {"gp2": findings([2950])}, {"io1": "its run c1-io1 failed: States.Timeout"},
                              pricing=PriceBook(client=None))
    gp2, io1 = doc["configurations"]
    assert io1["status"] == "FAILED" and "States.Timeout" in io1["why"] and io1["read_iops"] is None
    assert io1["price_per_hour_usd"] is not None  # priced all the same: it is what it would have cost
    assert doc["recommendation"] == {"name": None, "why": "no configuration meets every target; not measured: io1"}


def test_a_target_that_was_not_measured_or_an_unknown_price_cannot_be_told():
    row = ConfigurationResult(name="a", status="MEASURED", read_iops=5000, warm_p99_ms=None,
                              price_per_hour_usd=None)
    meets, why = judge(row, Targets(min_read_iops=1000, max_warm_p99_ms=5, max_price_per_hour_usd=1))
    assert meets is None and why == "cannot tell: warm p99 not measured; price per hour unknown"
    row.read_iops = 10
    assert judge(row, Targets(min_read_iops=1000, max_warm_p99_ms=5))[0] is False  # a miss outweighs


def test_a_local_run_is_given_in_the_emulated_volumes_terms():
    doc = comparison_document(comparison(), {"gp2": findings([300], p99_us=80_000, scale=8),
                                             "io1": findings([350], p99_us=40_000, scale=8)}, {},
                              local=True, cleanup={"deleted": ["v1", "v2"], "left": []})
    gp2, io1 = doc["configurations"]
    assert gp2["read_iops"] == 2400 and gp2["wall_clock"]["read_iops"] == 300 and gp2["time_scale"] == 8
    assert io1["warm_p99_ms"] == 5.0
    assert doc["local"] is True and doc["cleanup"]["left"] == [] and "nothing was charged" in \
        doc["comparison_cost"]["basis"]
    assert "the local run does not call the Price List API" in doc["prices"]["source"]


def test_an_unknown_instance_class_keeps_its_figures_and_says_the_limits_are_unknown():
    c = comparison(configurations=[BASE["configurations"][1],
                                   {"name": "odd", "db_instance_class": "db.zz9.large", "storage_type": "gp3",
                                    "allocated_gb": 100}])
    doc = comparison_document(c, {"odd": findings([1200]), "io1": findings([2000])}, {},
                              pricing=PriceBook(client=None))
    odd = doc["configurations"][1]
    assert odd["limits"]["known"] is False and "unknown DB instance class" in odd["limits"]["why"]
    assert odd["price_per_hour_usd"] is None and odd["meets_targets"] is True
    assert doc["recommendation"]["name"] == "io1"  # priced beats unpriced
    assert doc["comparison_cost"]["usd"] is None
