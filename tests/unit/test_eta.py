"""The warm-up's ETA (findings/eta.py): expected values worked out by hand from the samples, not by the code."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from cutover_prep.findings.eta import eta_seconds
from tests.unit.stored_sections import eta_findings

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
    items = {f"u{k}": unit([(t, MB, 1.0) for t in range(1, 51)]) for k in range(2)}
    out = eta_findings(items, planned_bytes=100 * MB, read_bytes=100 * MB)
    assert out["eta"]["judged"] is True and out["eta"]["actual_s"] == 50.0
    assert [a["pct"] for a in out["eta"]["at"]] == [25, 50, 75]
    at50 = out["eta"]["at"][1]
    assert at50["t_s"] == 25.0 and at50["predicted_s"] == pytest.approx(50.0) and at50["error_pct"] == 0.0
    assert out["eta_samples"][-1] == {"t_s": 50.0, "bytes_done": 100 * MB, "eta_s": 0.0}


def test_a_warm_up_that_speeds_up_is_predicted_late_then_caught_up():
    # 1 MB/s for 40 s, then 3 MB/s for 20 s: 100 MB at t=60
    items = {"u": unit([(t, MB, 1.0) for t in range(1, 41)] + [(40 + t, 3 * MB, 1.0) for t in range(1, 21)])}
    out = eta_findings(items, planned_bytes=100 * MB, read_bytes=100 * MB)
    at = {a["pct"]: a for a in out["eta"]["at"]}
    # 25 MB at t=25 (1 MB/s so far): predicted 25 + 75 = 100 s, actual 60 s: +66.7 %
    assert at[25]["predicted_s"] == pytest.approx(100.0) and at[25]["error_pct"] == pytest.approx(66.7)
    # 52 MB at t=44 (the first sample at >= 50 MB): window [22, 44] read 52 - 22 = 30 MB in 22 s
    assert at[50]["t_s"] == 44.0
    assert at[50]["predicted_s"] == pytest.approx(44 + 48 / (30 / 22), abs=1e-3)


def test_not_judged_when_the_warm_up_did_not_read_its_plan_or_the_chunks_are_incomplete():
    items = {"u": unit([(t, MB, 1.0) for t in range(1, 51)])}
    short = eta_findings(items, planned_bytes=100 * MB, read_bytes=50 * MB)
    assert short["eta"]["judged"] is False and "did not finish" in short["eta"]["why"]
    assert len(short["eta_samples"]) == 50  # the samples are kept all the same
    partial = eta_findings(items, planned_bytes=50 * MB, read_bytes=80 * MB)
    assert partial["eta"]["judged"] is False and "first chunks only" in partial["eta"]["why"]
    assert eta_findings({}, 100, 0)["eta"] == {"judged": False, "at": [], "why": "nothing was read"}


def test_the_samples_are_thinned_to_at_most_120_keeping_the_last():
    items = {"u": unit([(t / 10, MB, 0.1) for t in range(1, 1001)])}
    rows = eta_findings(items, planned_bytes=1000 * MB, read_bytes=1000 * MB)["eta_samples"]
    assert len(rows) == 120 and rows[-1]["bytes_done"] == 1000 * MB and rows[0]["bytes_done"] == MB


def test_the_report_and_summary_say_the_eta_against_the_actual_finish():
    from cutover_prep.report import summary_markdown
    from cutover_prep.report.view import eta_line

    items = {"u": unit([(t, MB, 1.0) for t in range(1, 41)] + [(40 + t, 3 * MB, 1.0) for t in range(1, 21)])}
    findings = {"warmup": eta_findings(items, planned_bytes=100 * MB, read_bytes=100 * MB)}  # bytes: no estimate
    line = eta_line(findings)
    # worked out in test_a_warm_up_that_speeds_up_is_predicted_late_then_caught_up: 100 s at 25 %, actual 60 s
    assert line.startswith("ETA at the measured rate vs the warm-up's actual 1 min 00 s: at 25 % predicted "
                           "1 min 40 s (+67 %)"), line
    assert f"- {line}" in summary_markdown({**findings, "run_id": "r"}).splitlines()
    short = {"warmup": eta_findings(items, planned_bytes=200 * MB, read_bytes=100 * MB)}
    assert eta_line(short).startswith("ETA not judged: the warm-up read ")
    assert eta_line({}) is None


def test_a_tail_of_tiny_ranges_is_foreseen_by_the_estimate_s_weights():
    """make demo: a bytes-only ETA was 41 % early at half the bytes, the catalogues' tiny ranges came last.
    Here a 100 MB unit of 1 range reads in 10 s, then a 1 MB unit of 100 ranges takes 10 s more. No unit has
    finished at half the bytes, so the estimate's time model prices them as it is (the prior: by hand, 100 MB at
    9.5367 MiB/s = 10 s + 1 range x 0.099 s + the unit's 0.5 s = 10.599 s; 1 MB = 0.1 s + 100 x 0.099 s + 0.5 s =
    10.5 s): the work is 21.099 s; at 60 MB (t=6, work 6.3594; the window is [1, 6], 5 s at least, where 5.2995 was
    done: 1.0599/s) the ETA is 14.7396 / 1.0599 = 13.9066 s: predicted 19.907 s, actual 20 s.
    By bytes alone: 41 MB left at 10 MB/s is 4.1 s: predicted 10.1 s, -49.5 %."""
    items = {"big": unit([(t, 10 * MB, 1.0) for t in range(1, 11)]),
             "tiny": unit([(10 + t, MB // 10, 1.0) for t in range(1, 11)])}
    units = [{"unit_id": "big", "bytes": 100 * MB, "ranges": [{}]},
             {"unit_id": "tiny", "bytes": MB, "ranges": [{}] * 100}]
    estimate = {"assumed_mib_per_s": 100 * MB / 2**20 / 10, "range_seconds": 0.099, "concurrency": 1}
    weighed = eta_findings(items, 101 * MB, 101 * MB, units=units, estimate=estimate)["eta"]
    at50 = next(a for a in weighed["at"] if a["pct"] == 50)
    assert weighed["basis"].startswith("bytes, ranges and units") and weighed["actual_s"] == 20.0
    assert at50["t_s"] == 6.0 and at50["predicted_s"] == pytest.approx(19.907, abs=1e-3) and at50["error_pct"] == -0.5
    plain = eta_findings(items, 101 * MB, 101 * MB, units=units)["eta"]  # no estimate: bytes
    at50 = next(a for a in plain["at"] if a["pct"] == 50)
    assert plain["basis"] == "bytes" and at50["predicted_s"] == pytest.approx(10.1) and at50["error_pct"] == -49.5


def test_the_actual_finish_is_the_warm_up_time_every_other_figure_uses():
    """Issue 23 §5, one definition a figure: summary.md said "warm-up time: 42.2 s" and, two lines up, "the
    warm-up's actual 42.3 s" (the ETA timed from the first chunk, not from the first unit's start). The actual
    finish is ``timeline.warmup_wall``: the first unit's start to the last unit's finish, here 0.5 s before the
    first chunk began and 0.2 s after the last chunk ended (a unit opens its connection, then commits)."""
    items = {f"u{k}": {**unit([(t, MB, 1.0) for t in range(1, 51)]),
                       "started_at": (T0 - timedelta(seconds=0.5)).isoformat(),
                       "finished_at": (T0 + timedelta(seconds=50.2)).isoformat()} for k in range(2)}
    out = eta_findings(items, planned_bytes=100 * MB, read_bytes=100 * MB)
    assert out["eta"]["actual_s"] == pytest.approx(50.7)  # 50.2 - (-0.5), by hand
    at50 = out["eta"]["at"][1]
    assert at50["t_s"] == pytest.approx(25.5)  # 50 MB done 25 s after T0, 25.5 s after the first unit started
    assert at50["predicted_s"] == pytest.approx(25.5 + 25.0)  # 2 MB/s over the trailing half, 50 MB left
    assert out["eta_samples"][-1]["t_s"] == pytest.approx(50.5)


def test_a_replay_record_replays_to_the_same_findings():
    """Finalize keeps ``warmup/eta_replay.json`` (``replay_record``): the judgement replayed from it is the one the
    findings got, so a recorded run can judge an estimator again (the fixtures in tests/unit/eta_runs/)."""
    from tests.unit.stored_sections import replay_record, replayed

    items = {"big": {**unit([(t, 10 * MB, 1.0) for t in range(1, 11)]), "status": "DONE", "ignored": 1},
             "tiny": unit([(10 + t, MB // 10, 1.0) for t in range(1, 11)])}
    units = [{"unit_id": "big", "bytes": 100 * MB, "ranges": [{"segment": "a"}]},
             {"unit_id": "tiny", "bytes": MB, "ranges": [{"segment": "b"}] * 100}]
    estimate = {"assumed_mib_per_s": 9.5, "range_seconds": 0.099, "concurrency": 1, "units": 2}
    record = replay_record(items, units, 101 * MB, 101 * MB, estimate)
    assert record["units"][1] == {"unit_id": "tiny", "bytes": MB, "ranges": 100}
    assert "ignored" not in record["unit_items"]["big"]
    assert replayed(record) == eta_findings(items, 101 * MB, 101 * MB, units=units,
                                                               estimate=estimate)


def test_the_fit_learns_each_term_from_the_finished_units_and_keeps_the_prior_without_them():
    from cutover_prep.findings.eta import CostFit

    fit = CostFit()
    assert fit.theta() == [1.0, 1.0, 1.0]  # nothing finished: the estimate's model as it is
    # 60 units of varied bytes and ranges, each taking exactly 2x its bytes term + 3x its ranges term + 4x the unit's
    for k in range(60):
        terms = (1.0 + k % 7, 0.5 * (k % 5), 0.5)
        fit.add(terms, 2 * terms[0] + 3 * terms[1] + 4 * terms[2])
    theta = fit.theta()
    # the ridge pulls towards 1 with the weight of 2 units of 60: bytes and ranges within 5 % of the truth; the term
    # every unit shares takes up most of that pull (within 20 %), and the units' own seconds are fitted within 7 %
    assert theta[:2] == pytest.approx([2.0, 3.0], rel=0.05) and theta[2] == pytest.approx(4.0, rel=0.2)
    for k in range(7):
        terms = (1.0 + k, 0.5 * (k % 5), 0.5)
        truth = 2 * terms[0] + 3 * terms[1] + 4 * terms[2]
        assert sum(t * x for t, x in zip(theta, terms, strict=True)) == pytest.approx(truth, rel=0.07)


def test_no_term_of_the_fit_goes_below_zero():
    from cutover_prep.findings.eta import CostFit

    fit = CostFit()
    for k in range(30):  # the more ranges, the *faster*: a negative cost per range fits best, and is not allowed
        terms = (1.0, 0.1 * k, 0.5)
        fit.add(terms, 5.0 - 0.05 * k)
    assert min(fit.theta()) >= 0.0 and fit.theta()[1] == 0.0
