"""What the gate checks (``GateSpec``) and what it found (``Condition``, ``GateResult``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

State = Literal["open", "closed", "unknown"]
EXIT_OPEN, EXIT_CLOSED, EXIT_UNKNOWN = 0, 1, 3


class Condition(BaseModel):
    """One condition of the gate: its state, one line saying why, and the evidence it was judged on."""

    model_config = ConfigDict(extra="forbid")

    name: str  # verdict | storage | instance | dms | replication
    state: State
    summary: str
    evidence: dict[str, Any] = Field(default_factory=dict)


class GateResult(BaseModel):
    """The gate at one moment: open only when every condition is open; closed when any is closed (a closed
    condition is known, so it outranks one that could not be checked); else unknown."""

    model_config = ConfigDict(extra="forbid")

    state: State
    checked_at: str
    conditions: list[Condition]

    @classmethod
    def of(cls, conditions: list[Condition], checked_at: str | None = None) -> GateResult:
        states = {c.state for c in conditions}
        state: State = "closed" if "closed" in states else "unknown" if "unknown" in states or not conditions \
            else "open"
        return cls(state=state, checked_at=checked_at or datetime.now(UTC).isoformat(timespec="seconds"),
                   conditions=conditions)

    @property
    def exit_code(self) -> int:
        return {"open": EXIT_OPEN, "closed": EXIT_CLOSED, "unknown": EXIT_UNKNOWN}[self.state]

    def signature(self) -> tuple[tuple[str, str], ...]:
        """What a change of the gate is: a condition's state changed (not its figures)."""
        return tuple((c.name, c.state) for c in self.conditions)

    def lines(self) -> list[str]:
        head = {"open": "gate OPEN: switch now", "closed": "gate CLOSED: do not switch yet",
                "unknown": "gate UNKNOWN: a condition could not be checked"}[self.state]
        marks = {"open": "✓", "closed": "✗", "unknown": "?"}
        return [f"{head} ({self.checked_at})"] + [f"  {marks[c.state]} {c.name}: {c.summary}" for c in self.conditions]


class DmsSpec(BaseModel):
    """An AWS DMS task that carries the last writes: running, full load complete, CDC latency (source and
    target, CloudWatch AWS/DMS) under ``max_latency_seconds`` for the whole ``window_seconds``, and table
    validation with no failed or suspended records."""

    model_config = ConfigDict(extra="forbid")

    task_arn: str = Field(pattern=r"^arn:aws[a-z-]*:dms:[a-z0-9-]+:\d{12}:task:[A-Za-z0-9-]+$")
    max_latency_seconds: float = Field(default=10, gt=0, le=86_400)
    window_seconds: int = Field(default=300, ge=60, le=86_400)
    require_validation: bool = True


class GateSpec(BaseModel):
    """The gate's input: what to check. At least one condition."""

    model_config = ConfigDict(extra="forbid")

    db_instance_identifier: str | None = Field(default=None, min_length=1, max_length=63)
    require_verdict: Literal["ready", "hot_set_warm", "off"] = "ready"
    dms: DmsSpec | None = None
    max_lag_seconds: float = Field(default=10, ge=0, le=86_400)
    # 0: open only when every transaction the source committed is applied (a lag above 0 may hide whole committed
    # transactions: engines/postgres/replication.py)
    max_lag_bytes: int = Field(default=0, ge=0)



class PreviousCheck(BaseModel):
    """The previous check's result as the workflow carries it (``gate.step.evaluate_step``): its state is what a
    change is told against."""

    model_config = ConfigDict(extra="allow")

    state: State | None = None


class GateInput(BaseModel):
    """The gate workflow's input (statemachines/gate.asl.json), as a pipeline starts it; ``result`` is the
    previous check's, carried by the workflow between checks."""

    model_config = ConfigDict(extra="forbid")

    run_id: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")
    gate: GateSpec
    timeout_seconds: int = Field(default=3600, ge=10, le=7 * 86_400)
    poll_seconds: int = Field(default=60, ge=10, le=3600)
    result: PreviousCheck | None = None


class InvalidGateInput(Exception):
    """The gate workflow's input is not valid: one line naming the field (the workflow fails with this name)."""


def aws_problem(exc: Exception) -> str:
    """``Code: Message`` of an AWS error (botocore's ClientError), else the exception's type and text: what an
    ``unknown`` condition says of the call that failed."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict) and "Error" in response:
        err = response["Error"]
        return f"{err.get('Code', 'error')}: {err.get('Message', exc)}"
    return f"{type(exc).__name__}: {exc}"
