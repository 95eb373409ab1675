"""Judge the gate once (``evaluate``), wait on it (``wait_for``), and tell EventBridge (``publish``).

Every source is injected: a function that returns the run's record (findings or run item), the boto3
clients, and a function that judges native replication. A source that raises is an ``unknown`` condition
that names the error; it never opens the gate."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypedDict

from cutover_prep.dal.records.findings import Findings
from cutover_prep.dal.records.run import RunItem
from cutover_prep.gate.dms import dms_condition
from cutover_prep.gate.model import Condition, GateResult, GateSpec
from cutover_prep.gate.rds import rds_conditions
from cutover_prep.gate.verdict import verdict_condition

EVENT_SOURCE = "cutover-prep.gate"
EVENT_TYPES = {"open": "GateOpened", "closed": "GateClosed", "unknown": "GateUnknown"}


@dataclass
class Sources:
    """Where each condition is read; None leaves that condition out."""

    run_id: str | None = None
    record: Callable[[], RunItem | Findings | None] | None = None  # the run's item, or its findings
    rds: Any = None
    dms: Any = None
    cloudwatch: Any = None
    replication: Callable[[], Condition] | None = None


def _guarded(name: str, call: Callable[[], Condition | list[Condition]]) -> list[Condition]:
    try:
        got = call()
    except Exception as exc:  # noqa: BLE001 - any failure to read a source is an unknown condition, said
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return [Condition(name=name, state="unknown", summary=f"could not be checked: {type(exc).__name__}: {first}")]
    return got if isinstance(got, list) else [got]


def evaluate(spec: GateSpec, sources: Sources, *, now: datetime | None = None) -> GateResult:
    conditions: list[Condition] = []
    if spec.require_verdict != "off" and sources.record is not None:
        conditions += _guarded("verdict", lambda: verdict_condition(sources.record(), run_id=sources.run_id,
                                                                    accept=spec.require_verdict))
    if spec.db_instance_identifier and sources.rds is not None:
        conditions += _guarded("instance", lambda: rds_conditions(sources.rds, spec.db_instance_identifier))
    if spec.dms is not None:
        conditions += _guarded("dms", lambda: dms_condition(sources.dms, sources.cloudwatch, spec.dms, now=now))
    if sources.replication is not None:
        conditions += _guarded("replication", sources.replication)
    return GateResult.of(conditions, (now or datetime.now(UTC)).isoformat(timespec="seconds"))


def wait_for(check: Callable[[], GateResult], *, timeout_s: float, poll_s: float,
             on_change: Callable[[GateResult], None], clock: Callable[[], float] = time.monotonic,
             sleep: Callable[[float], None] = time.sleep) -> tuple[GateResult, bool]:
    """Check until the gate opens or ``timeout_s`` passes; ``on_change`` gets the first result and each one
    whose conditions' states changed. Returns the last result and whether the timeout ended the wait."""
    deadline = clock() + timeout_s
    last: tuple[tuple[str, str], ...] | None = None
    while True:
        result = check()
        if result.signature() != last:
            on_change(result)
            last = result.signature()
        if result.state == "open":
            return result, False
        left = deadline - clock()
        if left <= 0:
            return result, True
        sleep(min(poll_s, left))


class EventEntry(TypedDict):
    """One PutEvents entry, in EventBridge's own names."""

    Source: str
    DetailType: str
    Detail: str
    EventBusName: str


def event_entry(result: GateResult, *, run_id: str | None, bus: str) -> EventEntry:
    """The EventBridge entry of a gate result: ``GateOpened``/``GateClosed``/``GateUnknown``, with every
    condition's state and summary (no evidence figures that could hold a name the pipeline did not ask for)."""
    detail = {"run_id": run_id, "state": result.state, "checked_at": result.checked_at,
              "conditions": [{"name": c.name, "state": c.state, "summary": c.summary} for c in result.conditions]}
    return {"Source": EVENT_SOURCE, "DetailType": EVENT_TYPES[result.state], "Detail": json.dumps(detail),
            "EventBusName": bus}


def publish(events: Any, result: GateResult, *, run_id: str | None, bus: str) -> None:
    answer = events.put_events(Entries=[event_entry(result, run_id=run_id, bus=bus)])
    if answer.get("FailedEntryCount"):
        entry = answer["Entries"][0]
        raise RuntimeError(f"EventBridge refused the gate event: {entry.get('ErrorCode')}: {entry.get('ErrorMessage')}")
