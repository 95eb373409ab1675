"""Run contexts for tests of the steps after Discover (``models.steps.RunContext``) and run states for the
steps before it (``models.steps.RunState``): a valid target, the sections the test names."""

from __future__ import annotations

import json
from typing import Any

from cutover_prep.models.steps import RunContext, RunState, WarmUnitEvent

SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:app-ro-AbCdEf"


def context_json(run_id: str = "r1", db_instance_identifier: str = "db", **sections: Any) -> dict[str, Any]:
    """A context as the states carry it (JSON): ``sections`` are ``warmup``, ``benchmark``, ``instance`` ..."""
    return {"run_id": run_id, "target": {"db_instance_identifier": db_instance_identifier,
                                         "secret_arn": SECRET_ARN}, **sections}


def context(run_id: str = "r1", db_instance_identifier: str = "db", **sections: Any) -> RunContext:
    return RunContext.model_validate(context_json(run_id, db_instance_identifier, **sections))


def warm_unit_event(event: dict[str, Any]) -> WarmUnitEvent:
    """A WarmUnit event given as JSON whose ``run`` may leave out the target (a test that reads no database)."""
    run = event["run"]
    return WarmUnitEvent.model_validate({**event, "run": {**context_json(run["run_id"]), **run}})


def warm_json(event: dict[str, Any], **kwargs: Any) -> Any:
    """``warmup.unit.warm_unit`` on an event given as JSON, parsed as the handler's ``event_parser`` does; its
    result as JSON (``WarmProgress``: what the workflow puts at ``$.warm``)."""
    from cutover_prep.observability import result_json
    from cutover_prep.warmup.unit import warm_unit

    return result_json(warm_unit(warm_unit_event(event), **kwargs))


def state_json(run_id: str = "r1", db_instance_identifier: str = "db", **sections: Any) -> dict[str, Any]:
    """A workflow state before the run context (StartRestore, DescribeInstance, Discover, Preflight) as the
    states carry it: a valid target, a start time, the sections the test names."""
    return {"started_at": "2026-11-25T00:00:00+00:00", **context_json(run_id, db_instance_identifier), **sections}


def run_state(state: dict[str, Any]) -> RunState:
    """A state given as JSON (ValidateInput's run and what the steps added), parsed as the handler's
    ``event_parser`` does."""
    return RunState.model_validate(json.loads(json.dumps(state)))


def spec_of(run: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
    """``connection.connection_spec`` of a run given as JSON (``target`` and the instance's facts); the target is
    taken as given (not validated: the tests of the connection's rules give targets the run input refuses)."""
    from cutover_prep.access.connection import connection_spec
    from cutover_prep.models.target import Target

    return connection_spec(Target.model_construct(**run["target"]), run.get("instance"), *args, **kwargs)
