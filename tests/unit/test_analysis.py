"""IO analysis and expected limits, on series shaped like the seeds' published measurements.

Seed 000 (db.m4.4xlarge, 100 GiB io1 with 1,000 PIOPS): IOPS-bound up to 32 KB, throughput-bound
from 64 KB at about the instance's 256,000 KB/s. Seed 000/004 (100 GiB gp2, baseline): IOPS-bound
up to 16 KB, from 32 KB throughput-bound at ~75,000 KB/s (2,359 IO/s at 32 KB). Seed 000 (db.m4.large,
30 GiB gp2, burst): 3,059 IOPS for small IOs, ~55,000 KB/s for large ones. Seed 002 (db.t2.medium):
128 read IOPS cold, 433 warm.
"""

from __future__ import annotations

import copy
from dataclasses import asdict

import pytest

from cutover_prep.analysis import (
    InvalidStorage,
    UnknownInstanceClass,
    analyze,
    expected_limits,
    instance_caps,
    storage_caps,
)
from cutover_prep.analysis.limits import Limits, limits_of


def series(pairs, *, kind="sequential", burst_balance=None):
    """Points from (io_size_kb, iops) pairs; throughput = size x IOPS."""
    return [{"point_id": f"p{size:g}-{i}", "kind": kind, "io_size_kb": size, "iops": iops,
             "throughput_kbps": size * iops, "burst_balance": burst_balance} for i, (size, iops) in enumerate(pairs)]


IO1_M4_4XL = [(8, 1012), (16, 1008), (32, 1020), (64, 3905), (128, 1960), (128, 1972)]
GP2_100_BASELINE = [(8, 301), (16, 300), (32, 2359), (64, 1174), (128, 587)]


def bounds(result):
    return [p["bound"] for p in result["points"]]


# ---- limits: storage ------------------------------------------------------------------------------

@pytest.mark.parametrize(("engine", "gb", "volumes", "iops", "mib_s"), [
    ("oracle", 199, 1, 3000, 125.0), ("oracle", 200, 4, 12000, 500.0),
    ("postgres", 200, 1, 3000, 125.0), ("postgres", 399, 1, 3000, 125.0), ("postgres", 400, 4, 12000, 500.0),
    ("mysql", 399, 1, 3000, 125.0), ("mariadb", 400, 4, 12000, 500.0), ("oracle-ee", 250, 4, 12000, 500.0),
])
def test_gp3_striping_threshold_depends_on_engine(engine, gb, volumes, iops, mib_s):
    s = storage_caps("gp3", gb, engine=engine)
    assert (s.volumes, s.baseline_iops, s.baseline_throughput_mib_s) == (volumes, iops, mib_s)
    assert s.burst_iops is None
    assert s.baseline_throughput_kbps == mib_s * 1024


def test_gp3_provisioned_values_above_the_threshold_are_used():
    s = storage_caps("gp3", 500, iops=20000, throughput_mbps=1000, engine="postgres")
    assert (s.baseline_iops, s.baseline_throughput_mib_s) == (20000, 1000.0)


@pytest.mark.parametrize(("gb", "baseline", "burst", "base_mib", "burst_mib"), [
    (20, 100, 3000, 25.0, 128), (30, 100, 3000, 25.0, 128), (100, 300, 3000, 75.0, 128),
    (200, 600, 3000, 150.0, 250), (399, 1197, 3000, 250, 250),
])
def test_gp2_three_iops_per_gib_min_100_and_burst(gb, baseline, burst, base_mib, burst_mib):
    s = storage_caps("gp2", gb, engine="postgres")
    assert s.volumes == 1
    assert (s.baseline_iops, s.burst_iops) == (baseline, burst)
    assert s.baseline_throughput_mib_s == base_mib
    assert s.burst_throughput_mib_s == burst_mib
    assert s.burst_credits == 5_400_000


def test_gp2_burst_duration_from_a_full_bucket():
    assert storage_caps("gp2", 100).burst_minutes_from_full == round(5_400_000 / 2700 / 60, 1)


def test_gp2_striped_and_large_volumes():
    striped = storage_caps("gp2", 400, engine="postgres")
    assert (striped.volumes, striped.baseline_iops, striped.burst_iops) == (4, 1200, 12000)
    assert striped.burst_throughput_mib_s == 512  # 4 volumes of 100 GiB, 128 MiB/s each
    huge = storage_caps("gp2", 30000, engine="postgres")
    assert huge.baseline_iops == 64000  # 4 x the 16,000 IOPS volume maximum
    assert huge.burst_iops is None  # the baseline is above the burst
    assert huge.baseline_throughput_mib_s == 1000
    assert storage_caps("gp2", 200, engine="oracle").volumes == 4


def test_io1_provisioned_iops_and_throughput():
    small = storage_caps("io1", 100, iops=1000, engine="oracle")
    assert (small.baseline_iops, small.baseline_throughput_mib_s) == (1000, 250.0)  # 1,000 x 256 KiB
    assert small.burst_iops is None
    capped = storage_caps("io1", 300, iops=10000, engine="postgres")
    assert capped.baseline_throughput_mib_s == 500  # RDS maximum below the striping threshold
    striped = storage_caps("io1", 1000, iops=20000, engine="postgres")
    assert (striped.volumes, striped.baseline_throughput_mib_s) == (4, 2000)
    io2 = storage_caps("io2", 1000, iops=10000, engine="postgres")
    assert io2.baseline_throughput_mib_s == 2560  # 0.256 MiB/s per IOPS


def test_magnetic_is_flagged_rough():
    s = storage_caps("magnetic", 100)
    assert s.type == "standard" and s.rough is True
    assert s.baseline_throughput_kbps is None


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"storage_type": "gp4", "allocated_gb": 100}, "unknown storage type 'gp4'"),
    ({"storage_type": "gp2", "allocated_gb": 0}, "allocated storage"),
    ({"storage_type": "io1", "allocated_gb": 100}, "IOPS is required"),
    ({"storage_type": "io1", "allocated_gb": 100, "iops": -5}, "IOPS must be a positive number"),
    ({"storage_type": "gp2", "allocated_gb": 100, "engine": "db2"}, "unknown engine 'db2'"),
])
def test_invalid_storage(kwargs, words):
    with pytest.raises(InvalidStorage, match=words):
        storage_caps(**kwargs)


# ---- limits: instance classes ---------------------------------------------------------------------

def test_instance_caps_previous_generation_used_by_the_seeds():
    m4 = instance_caps("db.m4.4xlarge")
    assert (m4.max_mbps, m4.max_throughput_kbps, m4.max_iops) == (2000, 256000.0, 16000)
    assert instance_caps("db.m4.large").max_throughput_kbps == 57600.0  # seed 000's 57,600 KB/s
    assert instance_caps("db.m4.xlarge").max_mb_s == 93.75
    assert instance_caps("db.m3.xlarge").max_mbps == 500
    t2 = instance_caps("db.t2.medium")
    assert t2.ebs_optimized is False and t2.max_throughput_kbps is None


def test_instance_caps_up_to_classes_have_baseline_and_maximum():
    m5 = instance_caps("m5.large")  # the db. prefix is optional
    assert m5.instance_class == "db.m5.large"
    assert (m5.baseline_mbps, m5.max_mbps, m5.baseline_iops, m5.max_iops) == (650, 4750, 3600, 18750)
    assert m5.burstable is True
    assert instance_caps("db.r5b.24xlarge").max_iops == 260000
    assert instance_caps("db.m6i.8xlarge").max_mbps == 10000  # EC2 page, not the RDS page's 12,500
    assert instance_caps("db.t3.medium").max_mbps == 2085


@pytest.mark.parametrize("family", ["m5", "m6i", "m6g", "m7g", "r5", "r5b", "r6i", "r6g", "r7g"])
def test_required_families_cover_large_to_16xlarge(family):
    for size in ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge"):
        caps = instance_caps(f"db.{family}.{size}")
        assert caps.max_mbps > 0 and caps.max_iops > 0


@pytest.mark.parametrize("family", ["t3", "t4g"])
def test_burstable_families_cover_micro_to_2xlarge(family):
    for size in ("micro", "small", "medium", "large", "xlarge", "2xlarge"):
        assert instance_caps(f"db.{family}.{size}").burstable is True


def test_unknown_instance_class_suggests_close_matches():
    with pytest.raises(UnknownInstanceClass, match=r"'db\.m4\.xlarg'.*did you mean db\.m4\.xlarge"):
        expected_limits("db.m4.xlarg", "gp2", 100)
    with pytest.raises(UnknownInstanceClass, match="known families: .*db.m5"):
        instance_caps("mssql-2019")
    assert issubclass(UnknownInstanceClass, ValueError)


# ---- limits: effective ----------------------------------------------------------------------------

def test_effective_io1_on_m4_4xlarge():
    eff = expected_limits("db.m4.4xlarge", "io1", 100, iops=1000, engine="oracle")["effective"]
    assert (eff["iops"], eff["iops_bound_by"]) == (1000, "storage")
    assert (eff["throughput_kbps"], eff["throughput_bound_by"]) == (256000.0, "both")
    assert eff["crossover_kb"] == 256.0
    assert eff["has_burst"] is False


def test_effective_small_instance_caps_gp2_burst_throughput():
    lim = expected_limits("db.m4.large", "gp2", 30)
    peak, sustained = lim["effective"]["peak"], lim["effective"]["sustained"]
    assert (peak["iops"], peak["iops_bound_by"]) == (3000, "storage")
    assert (peak["throughput_kbps"], peak["throughput_bound_by"]) == (57600.0, "instance")
    assert (sustained["iops"], sustained["throughput_kbps"]) == (100, 25600.0)
    assert "db.m4.large" in peak["throughput_label"]


def test_effective_not_ebs_optimized_binds_on_storage():
    lim = expected_limits("db.t2.medium", "gp2", 100, engine="oracle")
    assert lim["effective"]["throughput_bound_by"] == "storage"
    assert any("not EBS-optimized" in n for n in lim["notes"])


# ---- analysis: io1, seed 000 ---------------------------------------------------------------------

def test_io1_large_instance_with_limits():
    lim = expected_limits("db.m4.4xlarge", "io1", 100, iops=1000, engine="oracle")
    result = analyze(series(IO1_M4_4XL), limits=lim)
    assert bounds(result) == ["iops", "iops", "iops", "throughput", "throughput", "throughput"]
    assert {p["bound_basis"] for p in result["points"]} == {"limit"}
    assert result["crossover_kb"] == 64
    assert result["crossover_theoretical_kb"] == 256.0
    assert result["crossover"]["last_iops_bound_kb"] == 32
    p32, p64 = result["points"][2], result["points"][3]
    assert p32["pct_iops_limit"] == 102.0 and p32["iops_above_limit"] is False
    assert p64["iops_above_limit"] is True and p64["pct_throughput_limit"] == pytest.approx(97.6, abs=0.1)
    first = result["conclusions"][0]
    assert first.startswith("Reads of 64 KiB and larger are capped by")
    assert "250 MiB/s (db.m4.4xlarge)" in first and "not by the 1,000 provisioned IOPS" in first
    assert result["conclusions"][1] == ("Reads up to 32 KiB are IOPS-bound at about 1,012 IO/s, "
                                        "101 % of the 1,000 provisioned IOPS.")
    assert any("instead of the 256 KiB" in s for s in result["conclusions"])
    assert result["measured"]["max_throughput_at_kb"] == 128
    assert result["measured"]["max_iops"] == 3905


def test_io1_small_instance_is_capped_by_the_instance():
    lim = expected_limits("db.m4.large", "io1", 100, iops=1000, engine="oracle")
    result = analyze(series([(8, 1000), (16, 1000), (32, 1000), (64, 880), (128, 440)]), limits=lim)
    assert bounds(result) == ["iops", "iops", "iops", "throughput", "throughput"]
    # 64 KB: 88 % of the IOPS and 98 % of the instance's 57,600 KB/s: the nearer cap wins
    assert result["points"][3]["pct_throughput_limit"] == pytest.approx(97.8, abs=0.1)
    assert result["crossover_kb"] == 64
    assert "the instance's 56 MiB/s (db.m4.large)" in result["conclusions"][0]


def test_io1_without_limits_from_the_shape():
    result = analyze(series(IO1_M4_4XL))
    assert bounds(result) == ["iops", "iops", "iops", "throughput", "throughput", "throughput"]
    assert {p["bound_basis"] for p in result["points"]} == {"shape"}
    assert result["crossover_kb"] == 64
    assert result["crossover_theoretical_kb"] is None and result["limits"] is None
    assert result["points"][0]["pct_iops_limit"] is None
    assert "judged from the shape" in result["conclusions"][0]
    # limits are also absent when they are not compared (a local or emulated run that names its instance):
    # the sentence must not claim that nothing was given
    assert not any("was given" in c or "limits given" in c for c in result["conclusions"])


def test_shape_series_that_never_switches():
    only_iops = analyze(series([(8, 3000), (16, 2990), (32, 3005)]))
    assert bounds(only_iops) == ["iops"] * 3
    assert only_iops["crossover_kb"] is None
    only_tp = analyze(series([(32, 4000), (64, 2000), (128, 1000)]))
    assert bounds(only_tp) == ["throughput"] * 3
    assert only_tp["crossover_kb"] is None
    flat = analyze(series([(8, 1000), (16, 400)]))
    assert bounds(flat) == [None, None]


# ---- analysis: gp2 ---------------------------------------------------------------------------------

def test_gp2_baseline_after_burst():
    lim = expected_limits("db.m4.4xlarge", "gp2", 100, engine="oracle")
    result = analyze(series(GP2_100_BASELINE, burst_balance=0), limits=lim)
    assert bounds(result) == ["iops", "iops", "throughput", "throughput", "throughput"]
    assert {p["limit_level"] for p in result["points"]} == {"sustained"}
    assert result["crossover_kb"] == 32
    assert result["crossover_theoretical_kb"] == 256.0  # sustained: 75 MiB/s / 300 IOPS
    assert "gp2 throughput of 75 MiB/s" in result["conclusions"][0]
    assert "not by the gp2 baseline of 300 IOPS" in result["conclusions"][0]
    assert result["burst"]["empty"] is True
    assert any("burst balance is empty" in s for s in result["conclusions"])


def test_gp2_burst_on_a_small_instance():
    lim = expected_limits("db.m4.large", "gp2", 30, engine="oracle")
    points = series([(8, 3059), (16, 3010), (32, 1715), (128, 429)], burst_balance=80)
    result = analyze(points, limits=lim)
    assert bounds(result) == ["iops", "iops", "throughput", "throughput"]
    assert {p["limit_level"] for p in result["points"]} == {"peak"}
    assert result["crossover_kb"] == 32
    assert result["points"][0]["pct_iops_limit"] == pytest.approx(102.0, abs=0.1)
    assert "db.m4.large" in result["conclusions"][0]
    assert result["conclusions"][1].endswith("% of the gp2 burst limit of 3,000 IOPS.")


def test_gp2_single_block_burst_draining():
    lim = expected_limits("db.m5.xlarge", "gp2", 200)
    points = [{"point_id": "random-8k", "kind": "random", "sessions": 16, "io_size_kb": 8, "iops": 2950,
               "throughput_kbps": 23600, "latency_us": {"p50": 900, "p99": 9000}}]
    result = analyze(points, limits=lim, burst_balance=[100, 92.4, 84.8, 77.2, 69.6, 62])
    burst = result["burst"]
    assert (burst["first_pct"], burst["last_pct"], burst["minutes"]) == (100, 62, 5.0)
    assert burst["rate_pct_per_min"] == -7.6 and burst["minutes_to_empty"] == 8.2
    assert burst["baseline_iops"] == 600
    assert result["points"][0]["bound"] == "iops"
    assert result["points"][0]["latency_us"] == {"p50": 900.0, "p99": 9000.0}
    assert result["conclusions"][0] == (
        "Single-block reads reach 2,950 IOPS, 98 % of the gp2 burst limit of 3,000 IOPS; the burst balance fell "
        "from 100 % to 62 % in 5 minutes and will be empty in about 8 minutes, after which the baseline is "
        "600 IOPS.")
    assert any("db.m5.xlarge holds its maximum EBS bandwidth" in s for s in result["conclusions"])


def test_burst_from_the_points_own_balance_and_duration():
    points = series([(8, 3000), (16, 3000), (32, 3000)])
    for point, balance in zip(points, (90, 80, 70), strict=True):
        point.update(burst_balance=balance, seconds=120)
    burst = analyze(points)["burst"]
    assert burst["source"] == "points"
    assert burst["rate_pct_per_min"] == -5.0  # 10 % every 2 minutes
    assert burst["minutes_to_empty"] == 14.0
    assert analyze(series([(8, 3000)]))["burst"] is None


def test_balance_below_one_percent_is_judged_at_the_baseline():
    lim = expected_limits("db.m5.xlarge", "gp2", 200)
    point = series([(8, 590)], kind="random", burst_balance=0.5)
    result = analyze(point, limits=lim)
    assert result["points"][0]["limit_level"] == "sustained"
    assert result["points"][0]["bound"] == "iops"
    assert result["points"][0]["pct_iops_limit"] == pytest.approx(98.3, abs=0.1)


# ---- analysis: cold / warm, odd input -------------------------------------------------------------

def test_cold_warm_first_touch_penalty_seed_002():
    probes = {"cold": {"iops": 128, "throughput_kbps": 128 * 64, "latency_us": {"p50": 7800, "p99": 30000}},
              "warm": {"iops": 433, "throughput_kbps": 433 * 64, "latency_us": {"p50": 2300, "p99": 9000}}}
    result = analyze([], probes=probes)
    cw = result["cold_warm"]
    assert cw["ratio"] == 3.38 and cw["penalty_pct"] == 70.4 and cw["latency_p50_ratio"] == 3.39
    assert "Cold vs warm (128 vs 433 IOPS): first-touch penalty removed: warm median read 2.30 ms vs cold 7.80 ms " \
           "(cold/warm 3.39×)." in result["conclusions"]


def test_cold_warm_says_what_the_verdict_says_when_both_medians_are_fast():
    """The old sentence claimed a first-touch penalty from the IOPS ratio (5,228 vs 431 IOPS) although
    both medians were below a millisecond; the verdict calls that 'no first-touch penalty measured'."""
    probes = {"cold": {"iops": 5228, "latency_us": {"p50": 50}}, "warm": {"iops": 431, "latency_us": {"p50": 440}}}
    (sentence,) = [s for s in analyze([], probes=probes)["conclusions"] if s.startswith("Cold vs warm")]
    assert "no first-touch penalty is measured" in sentence and "slower than a warm read" not in sentence
    probes = {"cold": {"iops": 431, "latency_us": {"p50": 440}}, "warm": {"iops": 5228, "latency_us": {"p50": 50}}}
    (sentence,) = [s for s in analyze([], probes=probes)["conclusions"] if s.startswith("Cold vs warm")]
    assert "no first-touch penalty measured" in sentence


def test_cold_warm_without_penalty():
    result = analyze([], probes={"cold": {"iops": 420}, "warm": {"iops": 433}})
    assert result["cold_warm"]["ratio"] == 1.03
    assert any("no first-touch penalty" in s for s in result["conclusions"])
    assert analyze([], probes={"cold": {"iops": 0}, "warm": {"iops": 433}})["cold_warm"] is None


def test_points_below_every_cap_say_so():
    lim = expected_limits("db.r6g.4xlarge", "gp3", 1000)
    result = analyze(series([(8, 500), (128, 200)], kind="random"), limits=lim)
    assert bounds(result) == [None, None]
    assert any(s.startswith("No point came within 85% of a limit") for s in result["conclusions"])


def test_zero_and_missing_values_are_not_classified():
    points = [{"io_size_kb": 8, "iops": 0, "throughput_kbps": 0}, {"io_size_kb": 8, "iops": 100,
                                                                    "throughput_kbps": 800, "latency_p99_us": ""}]
    result = analyze(points)
    assert result["points"][0]["effective_io_kb"] is None and result["points"][0]["bound"] is None
    assert result["points"][0]["point_id"] == "point-1"
    assert "latency_us" not in result["points"][1]
    empty = analyze([])
    assert empty["measured"]["max_iops"] is None and empty["crossover_kb"] is None


def test_analysis_is_deterministic_and_does_not_touch_its_input():
    points = series(IO1_M4_4XL)
    before = copy.deepcopy(points)
    lim = expected_limits("db.m4.4xlarge", "io1", 100, iops=1000, engine="oracle")
    assert analyze(points, limits=lim) == analyze(points, limits=lim)
    assert points == before


@pytest.mark.parametrize("args", [("db.m5.large", "gp2", 100), ("db.t2.medium", "magnetic", 50),
                                  ("db.m4.large", "io1", 500, 3000), ("db.r6g.large", "gp3", 400, 12000, 500)])
def test_the_limits_document_reads_back_as_the_typed_limits(args):
    """``expected_limits`` writes ``limits_of``'s every field, and the analysis reads the same limits back."""
    limits, doc = limits_of(*args), expected_limits(*args)
    assert doc == limits.document() and Limits.from_document(doc) == limits
    assert doc["effective"]["has_burst"] is limits.has_burst and doc["effective"]["peak"] == asdict(limits.peak)
    first = ["instance_class", "ebs_optimized", "burstable", "baseline_mbps", "max_mbps"]
    assert list(doc["instance"])[:5] == first and doc["instance"]["baseline_iops"] == limits.instance.baseline_iops
    flags = ["rough", "notes"] if limits.storage.type == "standard" else ["notes", "rough"]
    assert list(doc["storage"])[6:8] == flags and doc["storage"]["sources"] == limits.storage.sources
