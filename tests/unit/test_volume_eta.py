"""Issue 36 §3: the per-volume ETA of RDS's storage initialization, on progress series whose finish is known
by construction (the judge): RDS reports StorageOperationPercentProgress as a whole number (RDS API reference,
DBInstance: "StorageOperationPercentProgress — Integer"), sampled here once a minute as the run samples it
(rds/progress.py SAMPLE_INTERVAL_SECONDS). Each series is worked out by hand in its docstring."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cutover_prep.rds.volume_eta import eta, judge, points_of, volume_etas

T0 = datetime(2026, 11, 27, 20, 0, tzinfo=UTC)


def series(pct_at_minute) -> list[dict]:
    out, m = [], 0
    while True:
        pct = min(100, int(pct_at_minute(m)))  # RDS's whole percent
        out.append({"at": (T0 + timedelta(minutes=m)).isoformat(), "pct": float(pct)})
        if pct >= 100:
            return out
        m += 1


def test_a_steady_volume_is_judged_within_two_percent_at_each_quarter() -> None:
    """0.55 %/min (1 TiB at about 100 MiB/s): 100 % at minute 182 (100 / 0.55 = 181.8)."""
    judged = judge(series(lambda m: 0.55 * m))
    assert judged["judged"] and [a["pct"] for a in judged["at"]] == [25, 50, 75]
    assert all(abs(a["error_pct"]) <= 2 for a in judged["at"]), judged
    assert judged["at"][0]["actual_s"] == 182 * 60


def test_a_rate_that_doubles_is_within_fifteen_percent_at_half_way() -> None:
    """0.5 %/min to 30 % (minute 60), then 1 %/min: 100 % at minute 130. At 50 % (minute 80) the window is the
    trailing 40 min (20 % → 50 %: 0.75 %/min), so it predicts 80 + 66.7 = 146.7 min: +12.8 % of 130."""
    judged = judge(series(lambda m: 0.5 * m if m <= 60 else 30 + (m - 60)))
    half = next(a for a in judged["at"] if a["pct"] == 50)
    assert 0 < half["error_pct"] <= 15, half


def test_a_pause_reads_as_paused_not_as_an_eta_and_the_estimate_recovers_after_it() -> None:
    """1 %/min to 40 %, a 20-minute pause, then 1 %/min: 100 % at minute 120. During the pause RDS's
    progress stands still: no ETA from it (the warm-up's read rate stands in, labelled, when there is one).
    At 75 % (minute 95) the trailing 47.5 min hold 35 points: 95 + 33.9 = 128.9 min, +7.4 % of 120."""
    def pct(m: int) -> float:
        return m if m <= 40 else 40 if m <= 60 else 40 + (m - 60)

    paused = points_of(series(pct)[:61])
    stood = eta(paused[-11:])  # the last ten minutes: all 40 %
    assert stood["eta_s"] is None and stood["source"].startswith("paused")
    floored = eta(paused[-11:], floor_pct_per_s=0.5 / 60)
    assert floored["eta_s"] == round(60 / (0.5 / 60), 1) and floored["source"].startswith("warm-up read rate")
    three_quarters = next(a for a in judge(series(pct))["at"] if a["pct"] == 75)
    assert abs(three_quarters["error_pct"]) <= 15, three_quarters


def test_the_instance_waits_for_its_slowest_volume_and_one_sample_has_no_rate_of_its_own() -> None:
    """The primary at 1 %/min is at 50 % after 50 min (50 min left); rdsdbdata2 at 0.25 %/min is at 12 %
    (its whole percent of 12.5) after 50 min: 88 / 0.25 = 352 min truly left. Its trailing 25 min hold 6 whole
    points (6 → 12 %): 0.24 %/min, 88 / 0.24 = 366.7 min, the instance's ETA (whole percents: +4 % here)."""
    primary = series(lambda m: m)[:51]
    extra = series(lambda m: 0.25 * m)[:51]
    found = volume_etas({"primary": primary, "rdsdbdata2": extra})
    assert found["volumes"]["primary"]["eta_s"] == 50 * 60
    assert found["volumes"]["rdsdbdata2"]["eta_s"] == 22000.0  # 366.7 min
    assert abs(found["volumes"]["rdsdbdata2"]["eta_s"] - 352 * 60) <= 0.05 * 352 * 60
    assert found["instance_eta_s"] == found["volumes"]["rdsdbdata2"]["eta_s"]
    one = volume_etas({"primary": primary[:1]}, allocated_gb={"primary": 100}, read_mib_per_s=50)
    # 50 MiB/s of 100 GiB: 0.0488 %/s, so 100 % from 0 % in 2048 s
    assert one["volumes"]["primary"]["eta_s"] == 2048.0 and "one RDS sample" in one["volumes"]["primary"]["source"]
    assert volume_etas({"primary": primary[:1]})["instance_eta_s"] is None  # no rate: no ETA, never a guess


def _samples(minutes: int, extra_rate: float | None = None) -> list[dict]:
    """Stored samples as restore.progress writes them: the primary at 1 %/min, an extra volume at ``extra_rate``."""
    out = []
    for m in range(minutes + 1):
        s = {"at": (T0 + timedelta(minutes=m)).isoformat(), "step": "WarmUnit", "status": "Initializing",
             "percent": min(100, m)}
        if extra_rate is not None:
            s["volumes"] = [{"volume": "rdsdbdata2", "status": "Initializing", "percent": int(extra_rate * m)}]
        out.append(s)
    return out


def test_status_watch_says_each_volume_s_eta_and_the_slowest_one_is_the_instance_s() -> None:
    from cutover_prep.cli.remote import progress_line
    from tests.unit.stored_sections import etas_of_samples

    etas = etas_of_samples(_samples(30, extra_rate=0.5))
    # primary 30 % at 1 %/min: 70 min; rdsdbdata2 15 % at 0.5 %/min (trailing 15 min: 7 → 15 %):
    # 85 / (8/15) min = 9,562.5 s, shown 2:39:22
    assert etas["volumes"]["primary"]["eta_s"] == 70 * 60
    assert etas["instance_eta_s"] == etas["volumes"]["rdsdbdata2"]["eta_s"] == round(85 / (8 / 15) * 60, 1)
    run = {"bytes_planned": 100, "bytes_read": 50, "units_done": 1, "units_total": 2, "step": "warmup",
           "storage": {"status": "Initializing", "percent": 30}, "storage_eta": etas}
    line = progress_line(run, None, 0)
    assert "RDS storage Initializing 30 % (ETA ~2:39:22; primary ~1:10:00; rdsdbdata2 ~2:39:22)" in line, line


def test_the_findings_judge_the_volume_eta_on_what_rds_reported() -> None:
    from tests.unit.stored_sections import storage_initialization

    samples = _samples(100)[:-1] + [{"at": (T0 + timedelta(minutes=100)).isoformat(), "step": "Finalize",
                                     "status": None, "percent": None}]  # done: RDS reports no operation
    section = storage_initialization(samples, [], 0)
    judged = section["eta_judged"]["primary"]
    assert judged["judged"] and all(abs(a["error_pct"]) <= 2 for a in judged["at"]), judged
