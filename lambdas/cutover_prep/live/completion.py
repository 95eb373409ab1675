"""The completion event: one EventBridge event on the default bus when a run ends.

``source``: ``cutover-prep``; ``detail-type``: ``Cutover Prep Run Finished``. The detail
carries the run id, the target (identifier only, never the secret), the run status, the
verdict and its failing reasons, and where the evidence is (``findings``, ``report`` and
``summary`` as s3:// URIs; null when the run failed before its findings were written) and ``dashboard``, the
console link to the stack's CloudWatch dashboard (``live.names``; null outside a deployment), and ``timing``
(``timing_of``: the warm-up's time, when the hot set was warm, the estimate against it; null for a run that left no
findings). Publishing is best effort: a failure to publish is logged and never changes the run's outcome.

``Cutover Prep Run Not Started`` (same source, same fields) tells that no run started
because its input was bad: an opted-in restore whose tags or profile make a bad input
(``TRIGGER_REJECTED: <which field and why>``, no run id), or an execution whose input
failed validation (``INPUT_REJECTED: ...``, the execution's name as run id); ``status``
``NOT_STARTED``, verdict ``NOT_READY``, no evidence.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from cutover_prep.dal.records import evidence
from cutover_prep.dal.records.findings import Findings
from cutover_prep.dal.records.run import RunItem
from cutover_prep.live.names import dashboard_link

SOURCE = "cutover-prep"
DETAIL_TYPE = "Cutover Prep Run Finished"
NOT_STARTED = "Cutover Prep Run Not Started"
logger = logging.getLogger(__name__)


class Timing(TypedDict):
    """The night's figures a pipeline acts on (``timing_of``)."""

    warmup_seconds: float | None
    hot_set_warm_after_s: float | None
    estimated_seconds: float | None
    eta_error_pct_at_50: float | None


class EventTarget(TypedDict):
    db_instance_identifier: str | None
    engine: str | None


class CompletionDetail(TypedDict):
    """The completion event's detail, as EventBridge carries it."""

    run_id: str | None
    target: EventTarget
    status: str
    verdict: str
    reasons: list[str]
    error: str | None
    coverage_pct: float | None
    findings: str | None
    report: str | None
    summary: str | None
    started_at: str | None
    dashboard: str | None
    timing: Timing | None


class _TargetNames(BaseModel):
    """What the event names of the run's target (never its secret)."""

    model_config = ConfigDict(extra="ignore")

    db_instance_identifier: str | None = None
    engine: str | None = None


class PutEventsEntry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    error_code: str | None = Field(None, alias="ErrorCode")
    error_message: str | None = Field(None, alias="ErrorMessage")


class PutEventsAnswer(BaseModel):
    """EventBridge's PutEvents answer: how many entries it refused, and each entry's error."""

    model_config = ConfigDict(extra="ignore")

    failed: int = Field(0, alias="FailedEntryCount")
    entries: list[PutEventsEntry] = Field([], alias="Entries")


def timing_of(findings: Findings) -> Timing:
    """The night's figures a pipeline acts on, from the findings: ``warmup_seconds`` (first unit start to last
    unit end), ``hot_set_warm_after_s`` (null without a hot set, or before it was warm), ``estimated_seconds``
    (the estimate made at planning) and ``eta_error_pct_at_50`` (the ETA's error at half the bytes)."""
    estimate = findings.estimate.estimate if findings.estimate is not None else None  # estimate.run.estimate_section
    eta = findings.warmup.eta if findings.warmup is not None else None
    return {"warmup_seconds": findings.timings.warmup_wall_seconds,
            "hot_set_warm_after_s": findings.hot_set.warm_after_s if findings.hot_set is not None else None,
            "estimated_seconds": estimate.estimated_seconds if estimate is not None else None,
            "eta_error_pct_at_50": next((a.error_pct for a in (eta.at if eta else []) if a.pct == 50), None)}


def completion_detail(run_item: RunItem | Mapping[str, Any], *, status: str, verdict: str, reasons: list[str],
                      bucket: str, findings_key: str | None, error: str | None = None,
                      timing: Timing | None = None) -> CompletionDetail:
    """``run_item``: the run's item, or the few of its fields a run that never started has (a mapping: taken as
    it is, not validated: its ``run_id`` may be None)."""
    run = run_item if isinstance(run_item, RunItem) else RunItem.model_construct(**run_item)
    target = _TargetNames.model_validate(run.target or {}, from_attributes=True)
    folder = findings_key.removesuffix(evidence.FINDINGS) if findings_key else None
    return {
        "run_id": run.run_id,
        "target": {"db_instance_identifier": target.db_instance_identifier, "engine": target.engine},
        "status": status,
        "verdict": verdict,
        "reasons": reasons,
        "error": error,
        "coverage_pct": run.coverage_pct,
        "findings": f"s3://{bucket}/{findings_key}" if findings_key else None,
        "report": f"s3://{bucket}/{folder}{evidence.REPORT}" if findings_key else None,
        "summary": f"s3://{bucket}/{folder}{evidence.SUMMARY}" if findings_key else None,
        "started_at": run.started_at,
        # the live view (CloudWatch dashboard, the run chosen in its variable); null outside a deployment
        "dashboard": dashboard_link() if run.run_id else None,
        "timing": timing,  # timing_of(findings); null for a run that left none
    }


def not_started_detail(db_instance_identifier: str | None, engine: str | None, why: str, *,
                       code: str = "TRIGGER_REJECTED", run_id: str | None = None) -> CompletionDetail:
    """The completion event's fields for a run that never started (bad input)."""
    return completion_detail({"run_id": run_id, "target": {"db_instance_identifier": db_instance_identifier,
                                                           "engine": engine}},
                             status="NOT_STARTED", verdict="NOT_READY", reasons=[f"{code}: {why}"], bucket="",
                             findings_key=None, error="InvalidInput")


def publish(events: Any, detail: CompletionDetail, *, detail_type: str = DETAIL_TYPE) -> bool:
    try:
        result = events.put_events(Entries=[{"Source": SOURCE, "DetailType": detail_type,
                                             "Detail": json.dumps(detail, default=str), "EventBusName": "default"}])
    except Exception:  # noqa: BLE001 - best effort, never fails the run
        logger.exception("could not publish the completion event")
        return False
    answer = PutEventsAnswer.model_validate(result)
    if answer.failed:
        logger.error("completion event refused: %s", answer.entries)
        return False
    return True
