"""The ETA judged on recorded ``make demo`` runs (issue 23 §2: at 50 % of the bytes, the predicted finish within
±15 % of the actual one).

Each file in ``eta_runs/`` is one run's ``warmup/eta_replay.json`` (the units' bytes and ranges, each unit item's
times and chunks, the estimate's time model), with the run's own ``timings.warmup_wall_seconds``, the ETA its
findings carried and what the estimator before the fit said on it (``before_the_fit``), as recorded. The judge is
the finish the run recorded, never the estimator: the replay's actual finish must be that recorded warm-up time.
``recorded`` says which code ran and how busy the machine was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutover_prep.findings.eta import eta_findings, replay_args

RUNS = sorted((Path(__file__).parent / "eta_runs").glob("*.json"))
GOAL_PCT = 15.0


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


@pytest.mark.parametrize("path", RUNS, ids=[p.stem for p in RUNS])
def test_the_eta_at_half_the_bytes_is_within_15_percent_of_the_recorded_finish(path):
    run = _load(path)
    eta = eta_findings(**replay_args(run))["eta"]
    assert eta["judged"] is True
    assert eta["actual_s"] == pytest.approx(run["warmup_wall_seconds"], abs=1e-3)  # the run's own finish
    at50 = next(a for a in eta["at"] if a["pct"] == 50)
    error = 100 * (at50["predicted_s"] - run["warmup_wall_seconds"]) / run["warmup_wall_seconds"]
    assert abs(error) <= GOAL_PCT, (path.stem, at50)


def test_the_recorded_runs_include_one_the_estimator_before_the_fit_missed():
    """``before_the_fit``: the estimator of commit 41d268f (the estimate's weights as they are, no fit) replayed on
    the same record, as recorded beside it. At least one run where it was more than 15 % off at half the bytes,
    so the test above fails on that code."""
    missed = [p.stem for p in RUNS if any(a["pct"] == 50 and abs(a["error_pct"]) > GOAL_PCT
                                          for a in _load(p)["before_the_fit"])]
    assert missed
