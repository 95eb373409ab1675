"""The gate workflow's one step: judge the gate once, say whether the deadline passed, and put a
``GateOpened``/``GateClosed``/``GateUnknown`` event on EventBridge when the state changed since the previous
check. The workflow waits between checks with Wait states (no Lambda sleeps). Native replication needs a
connection to the target, which this Lambda (outside the VPC, no secret) does not have: the workflow checks
the run's verdict, RDS and an AWS DMS task; ``cutover-prep gate --replica-dsn`` checks native replication."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from cutover_prep.gate.evaluate import Sources, evaluate, publish
from cutover_prep.gate.model import GateInput, InvalidGateInput
from cutover_prep.models.steps import GateStepEvent


def parse_input(state: dict[str, Any]) -> GateInput:
    try:
        return GateInput.model_validate(state)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "input"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise InvalidGateInput(f"{where}: {first['msg']}{more}") from None


def evaluate_step(step: GateStepEvent, *, store: Any, rds: Any, dms: Any, cloudwatch: Any, events: Any,
                  now: datetime | None = None) -> dict[str, Any]:
    """The workflow's state with ``result`` replaced by this check's (the defaults filled in)."""
    now = now or datetime.now(UTC)
    event = parse_input(step.state)
    previous = event.result.state if event.result is not None else None
    sources = Sources(run_id=event.run_id, record=(lambda: store.get_run(event.run_id)) if event.run_id else None,
                      rds=rds, dms=dms, cloudwatch=cloudwatch)
    result = evaluate(event.gate, sources, now=now)
    if result.state != previous:
        publish(events, result, run_id=event.run_id, bus="default")  # the bus the stack's IAM allows
    started = step.started_at if step.started_at.tzinfo else step.started_at.replace(tzinfo=UTC)
    deadline = started + timedelta(seconds=event.timeout_seconds)
    return {**event.model_dump(mode="json", exclude={"result"}), "result": {
            "state": result.state, "exit_code": result.exit_code, "checked_at": result.checked_at,
            "deadline": deadline.isoformat(timespec="seconds"), "deadline_passed": now >= deadline,
            "reasons": [f"{c.name}: {c.summary}" for c in result.conditions if c.state != "open"],
            "conditions": [c.model_dump(exclude={"evidence"}) for c in result.conditions]}}
