"""The Catch steps of the run: RecordFailure (the run FAILED, the Fail state's error) and RecordUnitFailure (a
unit counted as FAILED, its live metric), over ``findings.failures``."""

from __future__ import annotations

from typing import Any

from cutover_prep.dal.store import Store
from cutover_prep.findings.failures import record_failure, record_unit_failure
from cutover_prep.models.results import RunFailure, UnitFailureRecorded
from cutover_prep.models.steps import RunFailedEvent, UnitFailedEvent
from cutover_prep.steps import live_emit as live


def run_failed(event: RunFailedEvent, *, store: Store, events: Any) -> RunFailure:
    return RunFailure.model_validate(record_failure(event.run_id, event.error.model_dump(exclude_none=True),
                                                    store=store, events=events, rejected_input=event.input,
                                                    execution_name=event.execution_name))


def unit_failed(event: UnitFailedEvent, *, store: Store) -> UnitFailureRecorded:
    result = UnitFailureRecorded.model_validate(record_unit_failure(event, store=store))
    live.unit_failed(event.run.run_id)
    return result
