"""EndCensus takes what it needs of the plan from its event (Discover's ``end_census``), not from plan.json again,
and the chunk size of its catch-up pass from the run context's typed ``warmup`` (issue 34 §3)."""

from __future__ import annotations

from typing import Any

import pytest

from cutover_prep.dal.store import Store, evidence_key
from cutover_prep.models.run_input import parse_run_input
from cutover_prep.models.steps import EndCensusEvent, RunContext
from cutover_prep.steps import end_census
from cutover_prep.steps.discover import discover_and_plan
from cutover_prep.steps.end_census import take_end_census
from tests.unit.contexts import run_state
from tests.unit.test_census_streaming import Volume, _secret

PLAN = "plan.json"


def _discovered(store: Store, run_id: str, warmup: dict[str, Any]) -> dict[str, Any]:
    config = parse_run_input({"target": {"db_instance_identifier": "db1", "engine": "postgres",
                                         "secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db"},
                              "run_id": run_id, "benchmark": {"enabled": False}, "warmup": warmup})
    state = {**config, "started_at": "2026-11-27T00:00:00+00:00", "instance": {"address": "db.example.com"}}
    store.start_run(state)
    return discover_and_plan(
        run_state(state), store=store, read_secret=_secret, open_engine=lambda s, w: Volume()).to_json()


def test_the_end_census_reads_no_plan_json(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _discovered(store, "r-trip", {"unit_mb": 1, "max_concurrency": 2, "exclude_schemas": ["nothing"]})
    assert out["end_census"]["scope"]["exclude_schemas"] == ["nothing"]  # the plan's resolved selection
    read = store.get_json
    asked: list[str] = []
    monkeypatch.setattr(store, "get_json", lambda key: asked.append(key) or read(key))
    event = EndCensusEvent.model_validate({"run": out["context"], "plan": out["end_census"]})
    summary = take_end_census(
        event, store=store, read_secret=_secret, open_engine=lambda s, w: Volume(end=True)).to_json()
    assert summary["taken"] is True and summary["caught_up"] >= 1
    assert evidence_key("r-trip", PLAN) not in asked  # before: fetched again from S3 for its census and options


def test_the_catch_up_chunk_is_the_contexts_chunk_mb(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _discovered(store, "r-chunk", {"unit_mb": 1, "max_concurrency": 2, "chunk_mb": 3})
    run = RunContext.model_validate(out["context"])
    assert run.warmup.chunk_mb == 3
    chunks: list[int] = []

    def read(engine: Any, segment: Any, first: int, chunk: int, deadline: float) -> tuple[int, None]:
        chunks.append(chunk)
        return 0, None

    monkeypatch.setattr(end_census, "_read", read)
    take_end_census(EndCensusEvent(run=run, plan=out["end_census"]), store=store, read_secret=_secret,
                    open_engine=lambda s, w: Volume(end=True))
    assert chunks and set(chunks) == {3 * 2**20 // 8192}


def test_an_event_of_a_definition_of_before_reads_the_plan_it_wrote(store: Store) -> None:
    out = _discovered(store, "r-old", {"unit_mb": 1, "max_concurrency": 2})
    event = EndCensusEvent.model_validate({"run": out["context"]})  # an execution started before: no plan
    summary = take_end_census(
        event, store=store, read_secret=_secret, open_engine=lambda s, w: Volume(end=True)).to_json()
    assert summary["taken"] is True
