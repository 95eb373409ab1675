"""Handlers return result models (issue 34): ``observability.json_result`` dumps each into the JSON Step Functions
keeps, the same JSON the handlers returned as dicts before (benchmarks/state_payloads.py compares whole runs)."""

from __future__ import annotations

import ast
import importlib
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import BaseModel

from cutover_prep.models.results import InstanceDescribed, RestoreRequested, Swept, TriggerOutcome
from cutover_prep.models.status import WarmStep
from cutover_prep.models.steps import CarriedWarmProgress, RunContext, RunState, SlotAnswer, WarmProgress
from cutover_prep.observability import json_result, result_json

SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:cutover-prep/db-AbCdEf"
HANDLERS = sorted(p.stem for p in (Path(__file__).parents[2] / "lambdas" / "handlers").glob("*.py")
                  if p.stem != "__init__")


@pytest.mark.parametrize("name", HANDLERS)
def test_each_handler_returns_a_result_model(name: str) -> None:
    module = importlib.import_module(f"handlers.{name}")
    source = ast.parse(Path(module.__file__).read_text())
    handler = next(n for n in source.body if isinstance(n, ast.FunctionDef) and n.name == "handler")
    assert "json_result" in {ast.unparse(d) for d in handler.decorator_list}
    annotation = ast.unparse(handler.returns)
    models = [getattr(module, part.strip()) for part in annotation.split("|")]
    assert all(isinstance(m, type) and issubclass(m, BaseModel) for m in models), annotation
    # cookbook style: the decorators and one logic function (a handler may read its settings first)
    assert isinstance(handler.body[-1], ast.Return) and isinstance(handler.body[-1].value, ast.Call)
    assert all(isinstance(s, ast.Assign) for s in handler.body[:-1])


def test_json_result_dumps_the_fields_set_by_their_json_names() -> None:
    @json_result
    def handler(event: dict, context: object) -> BaseModel:
        return RestoreRequested(restore_started=True, resumed=True, restored_from={"snapshot": "s"})

    assert handler({}, None) == {"restore_started": True, "resumed": True, "restored_from": {"snapshot": "s"}}


def test_a_warm_progress_has_no_null_field_and_a_carried_one_the_context_and_the_unit() -> None:
    progress = WarmProgress(status=WarmStep.CONTINUE, cursor={"range": 1, "extent": 0, "offset": 0}, rate=None,
                            outage=None)
    assert result_json(progress) == {"status": "CONTINUE", "cursor": {"range": 1, "extent": 0, "offset": 0}}
    run = RunContext.model_validate({"run_id": "r1", "target": {"db_instance_identifier": "db",
                                                                "secret_arn": SECRET}})
    unit = {"unit_id": "u1", "ranges": []}
    carried = CarriedWarmProgress(run=run, unit=unit, **dict(progress))
    assert result_json(carried) == {**result_json(progress), "run": run.to_json(), "unit": unit}


def test_validate_inputs_run_state_writes_started_at_as_it_was_recorded() -> None:
    started = datetime(2026, 11, 28, 5, 39, 1, 437588, tzinfo=UTC)
    state = {"run_id": "r1", "target": {"db_instance_identifier": "db", "secret_arn": SECRET},
             "started_at": started.isoformat()}
    assert result_json(RunState.model_validate(state))["started_at"] == "2026-11-28T05:39:01.437588+00:00"


def test_the_slot_rate_is_typed_and_written_as_given() -> None:
    answer = SlotAnswer(granted=True, level=2, holders=1, wait_seconds=1, rate={"mib_per_s": 2.918})
    assert result_json(answer) == {"granted": True, "level": 2, "holders": 1, "wait_seconds": 1,
                                   "rate": {"mib_per_s": 2.918}}


def test_a_described_instance_and_a_trigger_outcome_keep_the_keys_they_were_given() -> None:
    facts = {"status": "available", "ready": True, "engine": "postgres", "engine_family": "postgres",
             "engine_version": "15", "address": "h", "port": 5432, "db_name": "d", "db_instance_class": "db.m5.large",
             "storage_type": "gp3", "allocated_storage_gb": 100, "iops": None, "storage_throughput": None,
             "dbi_resource_id": "db-X", "db_instance_arn": "arn", "monitoring_interval": 0,
             "blue_green": {"checked": True, "green": False}}
    assert result_json(InstanceDescribed.model_validate(facts)) == facts
    outcome = {"instance": "i", "action": "ignored", "why": "not tagged"}
    assert result_json(TriggerOutcome.model_validate(outcome)) == outcome
    assert result_json(Swept(swept=[TriggerOutcome.model_validate(outcome)])) == {"swept": [outcome]}
