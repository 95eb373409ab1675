"""A run or a work unit that failed: recorded with its named error, told as an event."""

from __future__ import annotations

from typing import Any

from cutover_prep.dal.store import Store, evidence_key, now_iso
from cutover_prep.live.completion import NOT_STARTED, completion_detail, not_started_detail, publish
from cutover_prep.models.status import RunStatus, UnitStatus
from cutover_prep.models.steps import StepError, UnitFailedEvent, cause_message

NOT_STARTED_CODES = {"InvalidInput": "INPUT_REJECTED", "RunIdReused": "RUN_ID_REUSED"}
KNOWN_ERRORS = {"InvalidInput", "RunIdReused", "RestoreFailed", "RestoreTimeout", "DatabaseUnreachable",
                "SecretNotBound", "PermanentReadError", "TransientDatabaseError", "ShortRead", "PreflightFailed",
                "HotSetEngineMismatch", "LockWaitTimeout", "ConnectionLost", "OverRead"}


def record_failure(run_id: str | None, error: dict[str, Any], *, store: Store, events: Any = None,
                   rejected_input: Any = None, execution_name: str | None = None) -> dict[str, str]:
    """Mark the run FAILED with its cause; return the named error for the Fail state.

    A run that never started (its input was rejected: no run item) is told as a
    ``Cutover Prep Run Not Started`` event naming the target, when the input names one."""
    name = str(error.get("Error") or "CutoverPrepFailed")
    cause = cause_message(StepError.model_validate(error))
    if name not in KNOWN_ERRORS:
        name = "StepTimedOut" if name == "States.Timeout" else "CutoverPrepFailed"
    if run_id and store.get_run(run_id) is not None:
        store.update_run(run_id, status=RunStatus.FAILED, step="failed", error=name, cause=cause[:4000],
                         finished_at=now_iso())
        store.put_json(evidence_key(run_id, "failure.json"), {"run_id": run_id, "error": name, "cause": cause})
        if events is not None:
            publish(events, completion_detail(store.get_run(run_id) or {"run_id": run_id}, status=RunStatus.FAILED,
                                              verdict="NOT_READY", reasons=[f"the run failed: {name}: {cause[:500]}"],
                                              bucket=store.bucket, findings_key=None, error=name))
    elif events is not None and name in NOT_STARTED_CODES:
        target = (rejected_input.get("target") if isinstance(rejected_input, dict) else None) or {}
        target = target if isinstance(target, dict) else {}
        ident, engine = target.get("db_instance_identifier"), target.get("engine")
        publish(events, not_started_detail(ident if isinstance(ident, str) else None,
                                           engine if isinstance(engine, str) else None, cause[:500],
                                           code=NOT_STARTED_CODES[name], run_id=execution_name),
                detail_type=NOT_STARTED)
    return {"Error": name, "Cause": cause[:4000] or name}


def record_unit_failure(event: UnitFailedEvent, *, store: Store) -> dict[str, Any]:
    """Called by the workflow's Catch of a unit: count it as FAILED with its error."""
    run_id, unit_id = event.run.run_id, event.unit["unit_id"]
    name = str(event.error.Error or "UnitFailed")
    cause = cause_message(event.error)
    recorded = store.fail_unit(run_id, unit_id, error=name, cause=cause)
    return {"unit_id": unit_id, "status": UnitStatus.FAILED, "error": name, "recorded": recorded}
