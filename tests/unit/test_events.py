"""The completion event's shape (pure) and best-effort publishing."""

from __future__ import annotations

import json

from cutover_prep.dal.records.findings import Findings
from cutover_prep.live.completion import DETAIL_TYPE, SOURCE, completion_detail, publish

RUN = {"run_id": "r1", "target": {"db_instance_identifier": "db1", "engine": "oracle",
                                  "secret_arn": "arn:aws:secretsmanager:us-east-1:1:secret:x"},
       "started_at": "2026-11-22T10:00:00+00:00", "coverage_pct": 100.0}


def test_finished_run_names_the_verdict_and_all_three_documents() -> None:
    detail = completion_detail(RUN, status="SUCCEEDED", verdict="READY", reasons=[], bucket="b",
                               findings_key="runs/r1/findings.json")
    assert detail == {
        "run_id": "r1", "target": {"db_instance_identifier": "db1", "engine": "oracle"},
        "status": "SUCCEEDED", "verdict": "READY", "reasons": [], "error": None, "coverage_pct": 100.0,
        "findings": "s3://b/runs/r1/findings.json", "report": "s3://b/runs/r1/report.html",
        "summary": "s3://b/runs/r1/summary.md", "started_at": "2026-11-22T10:00:00+00:00",
        "dashboard": None,  # no CUTOVER_PREP_DASHBOARD here: tests/unit/test_live_metrics.py has the link
        "timing": None,  # Finalize passes timing_of(findings)
    }
    assert "secret" not in json.dumps(detail)


def test_failed_run_has_no_documents_and_a_named_error() -> None:
    detail = completion_detail(RUN, status="FAILED", verdict="NOT_READY", reasons=["the run failed: X"],
                               bucket="b", findings_key=None, error="DatabaseUnreachable")
    assert detail["findings"] is detail["report"] is detail["summary"] is None
    assert detail["error"] == "DatabaseUnreachable" and detail["verdict"] == "NOT_READY"


class Events:
    def __init__(self, result=None, error=None):
        self.result, self.error, self.sent = result or {"FailedEntryCount": 0}, error, []

    def put_events(self, Entries):  # noqa: N803 - boto3's name
        self.sent += Entries
        if self.error:
            raise self.error
        return self.result


def test_publish_sends_one_entry_on_the_default_bus() -> None:
    events = Events()
    assert publish(events, {"run_id": "r1"}) is True
    (entry,) = events.sent
    assert entry["Source"] == SOURCE and entry["DetailType"] == DETAIL_TYPE and entry["EventBusName"] == "default"
    assert json.loads(entry["Detail"]) == {"run_id": "r1"}


def test_publish_failures_never_raise() -> None:
    assert publish(Events(error=RuntimeError("throttled")), {"run_id": "r1"}) is False
    assert publish(Events(result={"FailedEntryCount": 1, "Entries": [{"ErrorCode": "X"}]}), {"run_id": "r1"}) is False


def test_the_timing_a_pipeline_acts_on_comes_from_the_findings() -> None:
    """Issue 23 §2: the completion event carries the hot-set time and the estimate vs actual."""
    from cutover_prep.live.completion import timing_of

    at = [{"pct": 25, "t_s": 10, "predicted_s": 30, "actual_s": 56.7, "error_pct": -52.5},
          {"pct": 50, "t_s": 25, "predicted_s": 50, "actual_s": 56.7, "error_pct": -11.2}]
    findings = Findings.read({"timings": {"warmup_wall_seconds": 56.7}, "hot_set": {"warm_after_s": 6.8},
                              "estimate": {"estimate": {"estimated_seconds": 35.5}},
                              "warmup": {"eta": {"judged": True, "at": at}}})
    assert timing_of(findings) == {"warmup_seconds": 56.7, "hot_set_warm_after_s": 6.8, "estimated_seconds": 35.5,
                                   "eta_error_pct_at_50": -11.2}
    assert timing_of(Findings()) == {"warmup_seconds": None, "hot_set_warm_after_s": None, "estimated_seconds": None,
                             "eta_error_pct_at_50": None}
    detail = completion_detail(RUN, status="SUCCEEDED", verdict="READY", reasons=[], bucket="b",
                               findings_key="runs/r1/findings.json", timing=timing_of(findings))
    assert detail["timing"]["hot_set_warm_after_s"] == 6.8
