"""The warm-up's ETA (findings/eta.py): expected values worked out by hand from the samples, not by the code."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from cutover_prep.findings.eta import eta_findings, eta_seconds

T0 = datetime(2026, 11, 25, 1, 0, 0)
MB = 1_000_000


def unit(chunks):
    """A unit item whose chunks each ended ``t`` s after T0, having read ``nbytes`` in ``seconds``."""
    return {"chunks": [[(T0 + timedelta(seconds=t)).isoformat(), nbytes, seconds] for t, nbytes, seconds in chunks]}


def test_the_rate_is_taken_over_the_trailing_half_of_the_elapsed_time():
    # t=20: the window is [10, 20]; 30 bytes in 10 s = 3 B/s; 60 bytes left -> 20 s
    assert eta_seconds([(0, 0), (10, 10), (20, 40)], 100) == pytest.approx(20.0)
    # t=4: the window is at least 5 s but starts no earlier than the first sample: [0, 4], 1 B/s -> 96 s
    assert eta_seconds([(0, 0), (4, 4)], 100) == pytest.approx(96.0)
    # interpolated inside a gap: t=40, window [20, 40]; bytes at 20 = 10 + (50-10)*(10/30) = 23.33
    assert eta_seconds([(0, 0), (10, 10), (40, 50)], 100) == pytest.approx(50 / ((50 - 10 - 40 / 3) / 20))


def test_no_rate_no_eta_and_done_is_zero():
    assert eta_seconds([], 100) is None
    assert eta_seconds([(0, 0)], 100) is None
    assert eta_seconds([(0, 0), (10, 0)], 100) is None
    assert eta_seconds([(0, 0), (10, 100)], 100) == 0.0


def test_a_steady_warm_up_is_predicted_exactly_at_each_quarter():
    # two units, each 1 MB a second for 50 s, side by side: 2 MB/s, 100 MB in 50 s
    items = [unit([(t, MB, 1.0) for t in range(1, 51)]) for _ in range(2)]
    out = eta_findings(items, planned_bytes=100 * MB, read_bytes=100 * MB)
    assert out["eta"]["judged"] is True and out["eta"]["actual_s"] == 50.0
    assert [a["pct"] for a in out["eta"]["at"]] == [25, 50, 75]
    at50 = out["eta"]["at"][1]
    assert at50["t_s"] == 25.0 and at50["predicted_s"] == pytest.approx(50.0) and at50["error_pct"] == 0.0
    assert out["eta_samples"][-1] == {"t_s": 50.0, "bytes_done": 100 * MB, "eta_s": 0.0}


def test_a_warm_up_that_speeds_up_is_predicted_late_then_caught_up():
    # 1 MB/s for 40 s, then 3 MB/s for 20 s: 100 MB at t=60
    items = [unit([(t, MB, 1.0) for t in range(1, 41)] + [(40 + t, 3 * MB, 1.0) for t in range(1, 21)])]
    out = eta_findings(items, planned_bytes=100 * MB, read_bytes=100 * MB)
    at = {a["pct"]: a for a in out["eta"]["at"]}
    # 25 MB at t=25 (1 MB/s so far): predicted 25 + 75 = 100 s, actual 60 s: +66.7 %
    assert at[25]["predicted_s"] == pytest.approx(100.0) and at[25]["error_pct"] == pytest.approx(66.7)
    # 52 MB at t=44 (the first sample at >= 50 MB): window [22, 44] read 52 - 22 = 30 MB in 22 s
    assert at[50]["t_s"] == 44.0
    assert at[50]["predicted_s"] == pytest.approx(44 + 48 / (30 / 22), abs=1e-3)


def test_not_judged_when_the_warm_up_did_not_read_its_plan_or_the_chunks_are_incomplete():
    items = [unit([(t, MB, 1.0) for t in range(1, 51)])]
    short = eta_findings(items, planned_bytes=100 * MB, read_bytes=50 * MB)
    assert short["eta"]["judged"] is False and "did not finish" in short["eta"]["why"]
    assert len(short["eta_samples"]) == 50  # the samples are kept all the same
    partial = eta_findings(items, planned_bytes=50 * MB, read_bytes=80 * MB)
    assert partial["eta"]["judged"] is False and "first chunks only" in partial["eta"]["why"]
    assert eta_findings([], 100, 0)["eta"] == {"judged": False, "at": [], "why": "nothing was read"}


def test_the_samples_are_thinned_to_at_most_120_keeping_the_last():
    items = [unit([(t / 10, MB, 0.1) for t in range(1, 1001)])]
    rows = eta_findings(items, planned_bytes=1000 * MB, read_bytes=1000 * MB)["eta_samples"]
    assert len(rows) == 120 and rows[-1]["bytes_done"] == 1000 * MB and rows[0]["bytes_done"] == MB


def test_the_report_and_summary_say_the_eta_against_the_actual_finish():
    from cutover_prep.report import summary_markdown
    from cutover_prep.report.view import eta_line

    items = [unit([(t, MB, 1.0) for t in range(1, 41)] + [(40 + t, 3 * MB, 1.0) for t in range(1, 21)])]
    findings = {"warmup": eta_findings(items, planned_bytes=100 * MB, read_bytes=100 * MB)}
    line = eta_line(findings)
    # worked out in test_a_warm_up_that_speeds_up_is_predicted_late_then_caught_up: 100 s at 25 %, actual 60 s
    assert line.startswith("ETA at the measured rate vs the warm-up's actual 1 min 00 s: at 25 % predicted "
                           "1 min 40 s (+67 %)"), line
    assert f"- {line}" in summary_markdown({**findings, "run_id": "r"}).splitlines()
    short = {"warmup": eta_findings(items, planned_bytes=200 * MB, read_bytes=100 * MB)}
    assert eta_line(short).startswith("ETA not judged: the warm-up read ")
    assert eta_line({}) is None
