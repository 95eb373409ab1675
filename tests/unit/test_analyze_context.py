"""Analyze judges its conclusions by the verdict's thresholds the run context carries (issue 24 §1)."""

from __future__ import annotations

from typing import Any

import pytest

from cutover_prep.benchmark import evidence
from cutover_prep.dal.records.run import PointItem
from cutover_prep.dal.store import Store
from cutover_prep.models.run_input import parse_run_input
from cutover_prep.models.steps import RunContext
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.warmup.discovery import NEWER_THRESHOLDS, run_context
from tests.unit.contexts import run_state

ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-ro-AbCdEf"
INPUT = {"run_id": "r1", "target": {"db_instance_identifier": "orders", "secret_arn": ARN, "engine": "postgres"},
         "benchmark": {"compare_limits": False}, "verdict": {"max_warm_to_cold_latency": 1.5}}


@pytest.fixture
def judged(store: Store, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The thresholds ``analyze`` is given; the run's probes are done."""
    seen: dict[str, Any] = {}

    def analyze(rows: Any, **kw: Any) -> dict[str, Any]:
        seen.update(kw)
        return {"points": [], "conclusions": [], "crossover_kb": None, "limits": None}

    monkeypatch.setattr(evidence, "analyze", analyze)
    store.start_run(parse_run_input(INPUT))  # the record says 1.5
    for phase in ("cold", "warm"):
        store.put_point("r1", PointItem.new(point_id=f"probe-{phase}", status="DONE"))
    return seen


def test_analyze_takes_the_thresholds_from_the_context_not_the_run_record(store, judged, monkeypatch):
    context = RunContext.model_validate(run_context(run_state({**parse_run_input(INPUT), "verdict": {
        **parse_run_input(INPUT)["verdict"], "max_warm_to_cold_latency": 3.0}})).to_json())

    def no_record(run_id: str) -> None:
        raise AssertionError("Analyze read the run record")

    monkeypatch.setattr(store, "get_run", no_record)
    evidence.analyze_run(context, store=store)
    assert judged["thresholds"].max_warm_to_cold_latency == 3.0


def test_a_context_made_before_it_carried_them_reads_the_run_record(store, judged):
    made_before = {k: v for k, v in run_context(run_state(parse_run_input(INPUT))).to_json().items() if k != "verdict"}
    evidence.analyze_run(RunContext.model_validate(made_before), store=store)
    assert judged["thresholds"].max_warm_to_cold_latency == 1.5


def test_the_context_carries_every_threshold_of_the_input():
    context = RunContext.model_validate(run_context(run_state(parse_run_input(INPUT))).to_json())
    assert context.verdict is not None and context.verdict.max_warm_to_cold_latency == 1.5
    given = parse_run_input(INPUT)["verdict"]
    # the JSON handed on is the same, but a threshold newer than the context's shape (warmup.discovery
    # NEWER_THRESHOLDS, issue 33) at its default, left out so every state's payload stays as it was ...
    assert context.to_json()["verdict"] == {k: v for k, v in given.items() if k not in NEWER_THRESHOLDS}
    assert context.verdict == Thresholds.model_validate(given)  # ... and read back as that default
