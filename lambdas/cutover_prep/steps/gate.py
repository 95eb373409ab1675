"""The gate workflow's step (``gate.step.evaluate_step``), answering its result model: the workflow's state with
``result`` this check's."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from cutover_prep.gate.model import GateSpec, State
from cutover_prep.gate.step import evaluate_step
from cutover_prep.models.steps import GateStepEvent


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConditionLine(_Result):
    """A condition as the check's result carries it (its evidence stays in the event put on EventBridge)."""

    name: str
    state: State
    summary: str


class GateCheck(_Result):
    """One check of the gate: its state, its deadline, the conditions not open and each condition's state."""

    state: State
    exit_code: int
    checked_at: str
    deadline: str
    deadline_passed: bool
    reasons: list[str]
    conditions: list[ConditionLine]


class GateChecked(_Result):
    """EvaluateGate's result: the gate workflow's input (its defaults filled in) with this check's ``result``."""

    run_id: str | None
    gate: GateSpec
    timeout_seconds: int
    poll_seconds: int
    result: GateCheck


def evaluate_gate(step: GateStepEvent, *, store: Any, rds: Any, dms: Any, cloudwatch: Any,
                  events: Any) -> GateChecked:
    return GateChecked.model_validate(evaluate_step(step, store=store, rds=rds, dms=dms, cloudwatch=cloudwatch,
                                                    events=events))
