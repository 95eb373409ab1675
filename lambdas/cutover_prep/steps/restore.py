"""The steps around the instance: StartRestore, DescribeInstance (``rds.instances``) and OnRestore
(``restore.trigger``), each answering its result model (``models.results``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cutover_prep.dal.store import Store
from cutover_prep.models.results import InstanceDescribed, RestoreRequested, Swept, TriggerOutcome
from cutover_prep.models.steps import RunState, TriggerEvent
from cutover_prep.rds.instances import describe_instance, start_restore
from cutover_prep.restore.trigger import Starter, matches_pattern, on_rds_event, sweep


def request_restore(run: RunState, *, rds: Any) -> RestoreRequested:
    """StartRestore: restore the target from its snapshot (or resume this run's earlier restore)."""
    return RestoreRequested.model_validate(start_restore(run, rds))


def describe(run: RunState, *, rds: Any, store: Store) -> InstanceDescribed:
    """DescribeInstance: the instance's state and facts; RestoreFailed / RestoreTimeout when it failed."""
    return InstanceDescribed.model_validate(describe_instance(run, rds, store=store))


def on_restore(event: TriggerEvent, *, clients: Callable[[str], Any], table: str, state_machine_arn: str,
               lookback_hours: float, time_left_s: Callable[[], float], log: Any) -> TriggerOutcome | Swept:
    """OnRestore: an RDS restore event starts a run for its instance; the scheduled event sweeps the instances
    restored within ``lookback_hours``. ``clients``: a boto3 client by service name (``deps.client``); ``log``: the
    Powertools logger (an error when one was refused)."""
    starter = Starter(dynamodb=clients("dynamodb"), table=table, stepfunctions=clients("stepfunctions"),
                      state_machine_arn=state_machine_arn, rds=clients("rds"), events=clients("events"))
    if matches_pattern(event):
        result = on_rds_event(event, starter)
        log.info("restore event", extra={"result": result})
        return TriggerOutcome.model_validate(result)
    results = sweep(starter, lookback_hours=lookback_hours, time_left_s=time_left_s)
    trouble = [r for r in results if r["action"] in ("error", "rejected")]
    (log.error if trouble else log.info)("scheduled sweep", extra={"results": results})
    return Swept(swept=[TriggerOutcome.model_validate(r) for r in results])
