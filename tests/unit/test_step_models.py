"""Every Lambda handler parses its event into a model; the models hold the ASL's field names."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from cutover_prep.models import steps
from tests.unit.contexts import context_json

HANDLERS = sorted((Path(__file__).resolve().parents[2] / "lambdas" / "handlers").glob("[a-z]*.py"))
ASL = sorted((Path(__file__).resolve().parents[2] / "statemachines").glob("*.asl.json"))


@pytest.mark.parametrize("path", HANDLERS, ids=lambda p: p.stem)
def test_each_handler_parses_its_event_into_a_model(path):
    tree = ast.parse(path.read_text())
    [handler] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "handler"]
    parsers = [d for d in handler.decorator_list
               if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "event_parser"]
    assert parsers, f"{path.name}: the handler does not parse its event (event_parser)"
    model = parsers[0].keywords[0].value.id
    assert isinstance(getattr(steps, model), type)
    assert handler.decorator_list[-1] is parsers[0]  # innermost: the other decorators see the raw event


def test_a_probe_of_an_unknown_phase_or_an_unknown_field_is_refused():
    run = context_json()
    assert steps.ProbeEvent.model_validate({"run": run, "phase": "cold"}).phase == "cold"
    with pytest.raises(ValidationError, match="phase"):
        steps.ProbeEvent.model_validate({"run": run, "phase": "hot"})
    with pytest.raises(ValidationError, match="phse"):
        steps.ProbeEvent.model_validate({"run": run, "phase": "cold", "phse": "warm"})
    with pytest.raises(ValidationError, match="run_id"):
        steps.RunStep.model_validate({"run": {"target": {}}})


def test_the_context_is_handed_on_as_sent_nothing_added():
    run = {**context_json(warmup={"chunk_mb": 8}), "extra": 1}
    event = steps.WarmUnitEvent.model_validate({"run": run, "unit": {"unit_id": "u1"}, "status": "CONTINUE",
                                                "cursor": {"range": 1}})
    assert event.run.warmup.chunk_mb == 8 and event.run.warmup.max_concurrency == 8  # the model's default
    assert event.run.to_json() == run
    assert event.model_extra == {"status": "CONTINUE", "cursor": {"range": 1}}


def test_a_context_whose_target_is_not_one_is_refused():
    with pytest.raises(ValidationError, match="secret_arn"):
        steps.RunStep.model_validate({"run": {"run_id": "r1", "target": {"db_instance_identifier": "db"}}})
    with pytest.raises(ValidationError, match="chunk_mb"):
        steps.RunStep.model_validate({"run": context_json(warmup={"chunk_mb": "64"})})


@pytest.mark.parametrize("asl", ASL, ids=lambda p: p.name)
def test_every_parameter_block_names_fields_its_model_has(asl):
    """A renamed field in the ASL or a model would otherwise fail only at run time."""
    models = {"Probe": steps.ProbeEvent, "PlanSweep": steps.RunStep, "Analyze": steps.RunStep,
              "CleanupScratch": steps.RunStep, "CollectMetrics": steps.CollectMetricsEvent,
              "BenchmarkFailed": steps.BenchmarkFailedEvent, "Finalize": steps.FinalizeEvent,
              "RunFailed": steps.RunFailedEvent, "ValidateInput": steps.ValidateInputEvent,
              "CompareStart": steps.CompareStartEvent, "CompareCollect": steps.CompareCollectEvent,
              "CompareCleanup": steps.CompareCleanupEvent,
              "EvaluateGate": steps.GateStepEvent}
    # Task states with a parameter block
    expected = {"cutover-run.asl.json": 8, "compare.asl.json": 3, "gate.asl.json": 1}
    checked = 0

    def walk(states):
        nonlocal checked
        for state in states.values():
            for sub in ("ItemProcessor", "Iterator"):
                if sub in state:
                    walk(state[sub]["States"])
            resource = state.get("Resource", "")
            name = resource.removeprefix("${").removesuffix("FunctionArn}")
            if state["Type"] == "Task" and name in models and state.get("Parameters"):
                fields = {k.removesuffix(".$") for k in state["Parameters"]}
                assert fields <= set(models[name].model_fields), (state, fields)
                checked += 1
    walk(json.loads(asl.read_text())["States"])
    assert checked >= expected[asl.name]
