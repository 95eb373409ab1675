"""The emulated volume's profile: caps from the analyser's table, one time scale, validation."""

from __future__ import annotations

import random
import statistics

import pytest

from cutover_prep.local.volume.profile import DEFAULT_PROFILE, InvalidProfile, VolumeProfile


def test_gp2_caps_come_from_the_size_and_the_burst_bucket():
    p = VolumeProfile(storage_type="gp2", allocated_gb=100, instance_class="db.m5.xlarge", time_scale=1)
    assert p.emulated_iops == 3000  # burst
    assert p.emulated_sustained_iops == 300  # 3 IOPS/GiB x 100 GiB
    assert p.burst_credits == 5_400_000
    assert p.emulated_ceiling_mib_s == 128  # the gp2 throughput of a volume of 170 GiB or less


def test_gp3_baseline_or_provisioned():
    assert VolumeProfile(storage_type="gp3", allocated_gb=100, time_scale=1).emulated_ceiling_mib_s == 125
    big = VolumeProfile(storage_type="gp3", allocated_gb=1000, iops=12000, storage_throughput=500,
                        instance_class="db.r5.4xlarge", time_scale=1)
    assert big.emulated_iops == 12000
    assert big.emulated_ceiling_mib_s == 500
    assert big.burst_credits is None


def test_io1_and_io2_are_provisioned_and_the_iops_times_256_kib_bound_applies():
    io1 = VolumeProfile(storage_type="io1", allocated_gb=200, iops=1000, instance_class="db.r5.4xlarge", time_scale=1)
    assert io1.emulated_iops == 1000
    assert io1.emulated_ceiling_mib_s == 250  # 1000 x 256 KiB
    io2 = VolumeProfile(storage_type="io2", allocated_gb=200, iops=1000, instance_class="db.r5.4xlarge", time_scale=1)
    assert io2.emulated_ceiling_mib_s == pytest.approx(250)  # min(0.256 MiB/s x 1000, 1000 x 256 KiB)


def test_the_instance_ebs_ceiling_binds_when_lower():
    p = VolumeProfile(storage_type="io1", allocated_gb=1000, iops=40000, instance_class="db.t3.medium", time_scale=1)
    assert p.emulated_iops == 11800  # db.t3.medium's maximum IOPS
    assert p.emulated_ceiling_mib_s == pytest.approx(2085 * 128 / 1024)  # 2,085 Mbps
    assert p.describe()["bound_by"] == "instance"


def test_time_scale_divides_every_rate_and_multiplies_every_latency():
    one = VolumeProfile(time_scale=1)
    eight = VolumeProfile(time_scale=8)
    assert eight.ceiling_mib_per_s == one.ceiling_mib_per_s / 8
    assert eight.ceiling_iops == one.ceiling_iops / 8
    assert eight.io_latency_s == pytest.approx(one.io_latency_s * 8)
    assert eight.draw_first_touch_s(random.Random(3)) == pytest.approx(one.draw_first_touch_s(random.Random(3)) * 8)
    assert eight.emulated_ceiling_mib_s == one.emulated_ceiling_mib_s  # the volume's own figure


def test_default_profile_reproduces_seed_002_cold_vs_warm():
    p = DEFAULT_PROFILE
    rng = random.Random(0)
    draws = [p.draw_first_touch_s(rng) / p.time_scale * 1000 for _ in range(20000)]
    assert statistics.median(draws) == pytest.approx(p.first_touch_p50_ms, rel=0.05)
    warm_ms = p.io_latency_ms
    cold_ms = statistics.fmean(draws) + warm_ms
    assert 1000 / warm_ms == pytest.approx(433, rel=0.03)
    assert 1000 / cold_ms == pytest.approx(128, rel=0.05)
    assert 3.2 < cold_ms / warm_ms < 3.8
    # a 300 MB sample warms well within a minute at the scaled ceiling
    assert 300 / p.ceiling_mib_per_s < 30


def test_unlimited_profile_has_no_caps_and_no_latency():
    p = VolumeProfile.unlimited()
    assert p.ceiling_mib_per_s is None and p.ceiling_iops is None and p.burst_credits is None
    assert p.io_latency_s == 0 and p.draw_first_touch_s(random.Random()) == 0


def test_round_trip_through_json_dict():
    p = VolumeProfile(storage_type="gp2", allocated_gb=50, time_scale=4)
    assert VolumeProfile.from_dict(p.to_dict()) == p
    with pytest.raises(InvalidProfile, match="unknown profile option"):
        VolumeProfile.from_dict({"storage": "gp2"})


@pytest.mark.parametrize(("kwargs", "flag", "fix"), [
    ({"storage_type": "standard"}, "--storage-type", "gp2, gp3, io1, io2"),
    ({"storage_type": "st1"}, "--storage-type", "use one of"),
    ({"allocated_gb": 0}, "--allocated-gb", "positive"),
    ({"allocated_gb": 10}, "--allocated-gb", "20 to 65536"),
    ({"storage_type": "io1", "allocated_gb": 100}, "--iops", "--iops 3000"),
    ({"storage_type": "gp2", "iops": 3000}, "--iops", "drop --iops"),
    ({"iops": -5}, "--iops", "positive"),
    ({"storage_type": "gp2", "storage_throughput": 250}, "--storage-throughput", "drop it"),
    ({"instance_class": "db.m5.huge"}, "--instance-class", "unknown DB instance class"),
    ({"instance_class": ""}, "--instance-class", "e.g."),
    ({"time_scale": 0}, "time_scale", "positive"),
    ({"max_fetches": 0}, "max_fetches", "at least 1"),
    ({"chunk_kib": 500}, "chunk_kib", "power of two"),
])
def test_invalid_options_are_one_line_errors_naming_the_flag(kwargs, flag, fix):
    with pytest.raises(InvalidProfile) as err:
        VolumeProfile(**kwargs)
    message = str(err.value)
    assert flag in message and fix in message and "\n" not in message
    assert isinstance(err.value, ValueError)
