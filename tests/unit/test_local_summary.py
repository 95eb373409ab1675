"""The summary ``cutover-prep local`` prints agrees with the run it summarises (tracker issue 24).

A run that failed in Finalize has no execution output; the summary printed "units 0/0 done ...
7.3 MiB read of 7.3 MiB planned; coverage 0 %" while its run item (the DynamoDB record the warm-up
kept) said 28 of 28 units done. The judge here is that run item, as ``_execute`` returns it.
"""

from __future__ import annotations

import json
from dataclasses import replace

from cutover_prep.cli.local_command import summary_lines
from cutover_prep.dal.records.run import RunItem
from cutover_prep.local.outcome import LocalRun

# What ``local.runner._execute`` returns, from a run that failed in Finalize (seen 2026-11-24)
RUN = {"run_id": "local-20261124T190045", "engine": "mariadb", "status": "FAILED", "step": "failed",
       "units_total": 28, "units_done": 28, "units_failed": 0, "bytes_planned": 7700480, "bytes_read": 7700480}
FAILED_IN_FINALIZE = LocalRun(run_id="local-20261124T190045", status="FAILED", error="CutoverPrepFailed",
                              cause="I/O operation on closed file.", output=None, seconds=23.5, out="",
                              run=RunItem.read(RUN))


def units_line(result: LocalRun, tmp_path) -> str:
    lines = summary_lines(replace(result, out=str(tmp_path)))
    return next(line for line in lines if line.strip().startswith(("units", "no units")))


def test_a_run_that_failed_after_its_warm_up_reports_the_units_its_record_counted(tmp_path) -> None:
    line = units_line(FAILED_IN_FINALIZE, tmp_path)
    run = RUN
    assert f"units {run['units_done']}/{run['units_total']} done, {run['units_failed']} failed" in line
    assert "7.3 MiB read of 7.3 MiB planned" in line
    # Finalize computes coverage; it did not finish: no number is claimed, and it says why
    assert "coverage 0 %" not in line and "coverage not computed" in line


def test_a_run_that_failed_before_it_planned_claims_no_units_and_no_coverage(tmp_path) -> None:
    result = replace(FAILED_IN_FINALIZE, run=RunItem.read({"run_id": "r", "status": "FAILED", "step": "failed"}))
    line = units_line(result, tmp_path)
    assert "0/0" not in line and "coverage 0 %" not in line and "coverage not computed" in line


def test_a_finished_run_reports_its_findings(tmp_path) -> None:
    result = replace(FAILED_IN_FINALIZE, status="SUCCEEDED", error=None, cause=None,
                     output=json.dumps({"units": {"done": 27, "total": 28, "failed": 1}, "coverage_pct": 96.4}))
    line = units_line(result, tmp_path)
    assert "units 27/28 done, 1 failed" in line and "coverage 96.4 %" in line
