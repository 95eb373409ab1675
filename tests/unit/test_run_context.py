"""The run context is typed (issue 24 §1): its sections are the run input's models, and the JSON that goes
between Step Functions states keeps its shape, so an execution running across a deploy goes on.

``MADE_BEFORE`` is a context exactly as Discover wrote it at the version before the typed context
(printed by that version's ``warmup.discovery.run_context``, commit fd22b22), not by the code under test.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from cutover_prep.dal.store import Store
from cutover_prep.findings.failures import record_unit_failure
from cutover_prep.models.benchmark import Benchmark, Preflight
from cutover_prep.models.restore import Restore
from cutover_prep.models.run_input import parse_run_input
from cutover_prep.models.steps import (
    RunContext,
    RunState,
    UnitFailedEvent,
    WarmSlotEvent,
    WarmUnitEvent,
    context_json,
)
from cutover_prep.models.target import Target
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.models.warmup import Warmup
from cutover_prep.observability import result_json
from cutover_prep.warmup.discovery import run_context
from cutover_prep.warmup.unit import Budget, step_result, warm_unit
from tests.unit.contexts import run_state

MADE_BEFORE: dict[str, Any] = json.loads("""{"run_id": "orders-1", "target": {"db_instance_identifier": "orders",
"secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-ro-AbCdEf", "engine": "postgres",
"database": null, "host": null, "port": 5432}, "instance": {"address": "orders.abc.eu-west-1.rds.amazonaws.com",
"port": 5432, "engine": "postgres", "dbi_resource_id": "db-ABC", "monitoring_interval": 0}, "warmup": {"chunk_mb": 32,
"assumed_cold_mib_per_s": 8.0, "create_extension": false, "max_concurrency": 16, "adaptive": false,
"adaptive_start": 2, "adaptive_margin_pct": 10.0, "adaptive_window_seconds": 120.0, "adaptive_window_chunks": 8,
"after_hot_set": {"max_concurrency": 4}}, "benchmark": {"enabled": true, "probe_blocks": 200,
"probe_max_seconds": 60.0, "seconds_per_point": 20.0, "mbrc_values": [1, 2, 4, 8, 16, 32, 64, 128],
"io_combine_kb_values": [8, 16, 32, 64, 128, 256], "sessions": [1, 2, 4, 8], "write_test": false,
"write_max_mib": 256, "write_max_free_storage_pct": 5.0, "metrics_wait_minutes": 10, "metrics_poll_seconds": 60,
"compare_limits": true}, "verdict": {"min_coverage_pct": 100.0, "require_benchmark": true,
"max_warm_to_cold_latency": 1.5, "fast_read_ms": 1.0, "min_warm_speedup": 2.0, "latency_noise_ms": 0.2,
"max_warm_p99_ms": null, "expected_read_iops": null, "expected_read_mibps": null, "tolerance_pct": 10.0,
"baseline_run_id": null, "max_unread_bytes": 0, "require_storage_initialized": false}}""")
# a context of the version before decision 52: no verdict, and a warmup section without the admission options
OLDER = {**{k: v for k, v in MADE_BEFORE.items() if k != "verdict"},
         "warmup": {"chunk_mb": 32, "assumed_cold_mib_per_s": 8.0, "create_extension": False, "max_concurrency": 16}}


@pytest.mark.parametrize("made", [MADE_BEFORE, OLDER], ids=["before", "before-decision-52"])
def test_a_context_made_by_an_earlier_version_parses_into_the_models(made: dict[str, Any]) -> None:
    context = RunContext.model_validate(made)
    assert isinstance(context.target, Target) and context.target.port == 5432
    assert isinstance(context.warmup, Warmup) and context.warmup.chunk_mb == 32
    assert context.warmup.max_concurrency == 16
    assert isinstance(context.benchmark, Benchmark) and context.benchmark.probe_blocks == 200
    assert context.instance["dbi_resource_id"] == "db-ABC"
    if "verdict" in made:
        assert isinstance(context.verdict, Thresholds) and context.verdict.max_warm_to_cold_latency == 1.5
    else:
        assert context.verdict is None  # Analyze reads the run item then (test_analyze_context.py)
    assert context.to_json() == made  # handed on as it came: no default added, nothing lost


def test_the_context_discover_makes_now_is_the_one_it_made_before() -> None:
    """Same JSON as the version before: no new field in every state's payload (256 KiB limit)."""
    raw = {"run_id": "orders-1", "target": {"db_instance_identifier": "orders", "port": 5432, "engine": "postgres",
                                            "secret_arn": MADE_BEFORE["target"]["secret_arn"]},
           "warmup": {"max_concurrency": 16, "chunk_mb": 32, "after_hot_set": {"max_concurrency": 4},
                      "databases": ["app"]},
           "benchmark": {"probe_blocks": 200}, "verdict": {"max_warm_to_cold_latency": 1.5}}
    made = run_context(run_state({**parse_run_input(raw), "instance": MADE_BEFORE["instance"]})).to_json()
    assert made == MADE_BEFORE
    assert RunContext.model_validate(made).to_json() == MADE_BEFORE


def test_a_section_the_context_does_not_carry_reads_as_the_model_default() -> None:
    context = RunContext.model_validate(OLDER)
    assert context.warmup.adaptive is False and context.warmup.after_hot_set is None
    assert "adaptive" not in context.to_json()["warmup"]


def test_a_warm_unit_result_is_its_progress_and_a_definition_of_before_still_gets_the_context(store: Store) -> None:
    """WarmUnit's result goes to ``$.warm`` (the Map item keeps its run context and unit: issue 34 §3, before it
    sent the whole context back in every result); an execution started by a definition of before (no ResultPath,
    its ItemSelector sets no ``warm``) still gets the context as it came and the unit, which ReleaseSlot and the
    next WarmUnit parse again."""
    store.start_run(parse_run_input({"run_id": "orders-1", "target": MADE_BEFORE["target"]}))
    unit = {"unit_id": "u000001", "priority": 0, "bytes": 0, "blocks": 0, "ranges": []}

    class NoEngine:
        def close(self) -> None:
            pass

    today = WarmUnitEvent.model_validate({"run": OLDER, "unit": unit, "warm": None, "slot": {"granted": True}})
    progress = warm_unit(today, store=store, engine=NoEngine, budget=Budget(lambda: 900.0))
    assert result_json(step_result(today, progress)) == {"status": "DONE",
                                                         "rate": {"mib_per_s": 8.0, "source": "assumed"}}
    before = WarmUnitEvent.model_validate({"run": OLDER, "unit": unit, "slot": {"granted": True}})
    out = result_json(step_result(before, warm_unit(before, store=store, engine=NoEngine,
                                                    budget=Budget(lambda: 900.0))))
    assert out["run"] == OLDER and out["unit"] == unit and out["status"] == "ALREADY_DONE"
    again = json.loads(json.dumps(out))
    assert WarmSlotEvent.model_validate({"run": again["run"], "unit_id": "u000001", "action": "release"})


def test_a_failed_unit_is_recorded_from_the_typed_event(store: Store) -> None:
    store.start_run(parse_run_input({"run_id": "orders-1", "target": MADE_BEFORE["target"]}))
    event = UnitFailedEvent.model_validate({"run": MADE_BEFORE, "unit": {"unit_id": "u7"}, "slot": {"granted": True},
                                            "error": {"Error": "ShortRead", "Cause": "read 3 of 4 blocks"}})
    out = record_unit_failure(event, store=store)
    assert out == {"unit_id": "u7", "status": "FAILED", "error": "ShortRead", "recorded": True}
    assert store.get_unit("orders-1", "u7").error == "ShortRead"


# ---- the state before the context (StartRestore, DescribeInstance, Discover, Preflight; decision 58) --------

# A state exactly as the version before the typed run state handed it to Discover and Preflight: ValidateInput's
# run (printed by that version's ``parse_run_input``, commit 0dea9a7), StartRestore's and DescribeInstance's
# results; ``CONTEXT_BEFORE`` is what that version's ``run_context`` made of it, not the code under test.
STATE_BEFORE: dict[str, Any] = json.loads("""{"target": {"db_instance_identifier": "orders-rehearsal",
"secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-ro-AbCdEf", "engine": "postgres",
"database": null, "host": null, "port": null}, "restore": {"snapshot_identifier": "orders-prod-snap",
"db_instance_class": null, "storage_type": null, "iops": null, "storage_throughput": null, "allocated_gb": null,
"db_subnet_group_name": null, "vpc_security_group_ids": [], "db_parameter_group_name": null,
"option_group_name": null, "multi_az": false, "tags": {"team": "orders"}, "poll_seconds": 60,
"max_wait_minutes": 45}, "warmup": {"enabled": true, "max_concurrency": 16, "databases": ["app"],
"include_schemas": [], "exclude_schemas": [], "include_system": false, "priority": ["app.public.orders"],
"hot_set": {"engine": "postgres", "server": "orders-prod", "taken_at": "2026-11-20T10:00:00Z",
"sources": ["statistics: pg_statio_user_tables"], "relations": 1, "names": ["app/public.orders"]},
"after_hot_set": null, "unit_mb": null, "assumed_cold_mib_per_s": 8.0, "production_size_gb": null, "chunk_mb": 32,
"create_extension": false, "wait_seconds": 30, "adaptive": false, "adaptive_start": 2, "adaptive_margin_pct": 10.0,
"adaptive_window_seconds": 120.0, "adaptive_window_chunks": 8, "mode": "segments"}, "benchmark": {"enabled": true,
"probe_blocks": 200, "probe_max_seconds": 60.0, "seconds_per_point": 20.0, "mbrc_values": [1, 2, 4, 8, 16, 32, 64,
128], "io_combine_kb_values": [8, 16, 32, 64, 128, 256], "sessions": [1, 2, 4, 8], "write_test": false,
"write_max_mib": 256, "write_max_free_storage_pct": 5.0, "metrics_wait_minutes": 10, "metrics_poll_seconds": 60,
"compare_limits": true}, "verdict": {"min_coverage_pct": 100.0, "require_benchmark": true,
"max_warm_to_cold_latency": 1.5, "fast_read_ms": 1.0, "min_warm_speedup": 2.0, "latency_noise_ms": 0.2,
"max_warm_p99_ms": null, "expected_read_iops": null, "expected_read_mibps": null, "tolerance_pct": 10.0,
"baseline_run_id": null, "max_unread_bytes": 0, "require_storage_initialized": false}, "preflight": {"enabled": true,
"on_failure": "warn"}, "run_id": "orders-2", "comparison": null, "started_by": null,
"started_at": "2026-11-25T09:00:00.123456+00:00", "restore_request": {"restore_started": true, "resumed": false,
"requested_at": "2026-11-25T09:00:01.5+00:00", "restored_from": {"snapshot_identifier": "orders-prod-snap",
"db_instance_identifier": "orders-prod"}}, "instance": {"status": "available", "ready": true, "engine": "postgres",
"engine_family": "postgres", "address": "orders-rehearsal.abc.eu-west-1.rds.amazonaws.com", "port": 5432,
"restored_from": {"snapshot_identifier": "orders-prod-snap", "db_instance_identifier": "orders-prod"}}}""")
CONTEXT_BEFORE: dict[str, Any] = json.loads("""{"run_id": "orders-2", "target": {"db_instance_identifier":
"orders-rehearsal", "secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-ro-AbCdEf",
"engine": "postgres", "database": null, "host": null, "port": null}, "instance": {"status": "available",
"ready": true, "engine": "postgres", "engine_family": "postgres",
"address": "orders-rehearsal.abc.eu-west-1.rds.amazonaws.com", "port": 5432, "restored_from":
{"snapshot_identifier": "orders-prod-snap", "db_instance_identifier": "orders-prod"}}, "warmup": {"chunk_mb": 32,
"assumed_cold_mib_per_s": 8.0, "create_extension": false, "max_concurrency": 16, "adaptive": false,
"adaptive_start": 2, "adaptive_margin_pct": 10.0, "adaptive_window_seconds": 120.0, "adaptive_window_chunks": 8,
"after_hot_set": null}, "benchmark": {"enabled": true, "probe_blocks": 200, "probe_max_seconds": 60.0,
"seconds_per_point": 20.0, "mbrc_values": [1, 2, 4, 8, 16, 32, 64, 128], "io_combine_kb_values": [8, 16, 32, 64,
128, 256], "sessions": [1, 2, 4, 8], "write_test": false, "write_max_mib": 256, "write_max_free_storage_pct": 5.0,
"metrics_wait_minutes": 10, "metrics_poll_seconds": 60, "compare_limits": true}, "verdict": {"min_coverage_pct":
100.0, "require_benchmark": true, "max_warm_to_cold_latency": 1.5, "fast_read_ms": 1.0, "min_warm_speedup": 2.0,
"latency_noise_ms": 0.2, "max_warm_p99_ms": null, "expected_read_iops": null, "expected_read_mibps": null,
"tolerance_pct": 10.0, "baseline_run_id": null, "max_unread_bytes": 0, "require_storage_initialized": false}}""")
# a state of a version before the preflight, verdict, comparison and admission options, and the context that
# version's run_context made of it (printed by commit 0dea9a7's run_context)
OLDER_STATE: dict[str, Any] = {
    "run_id": "orders-3", "started_at": "2026-06-01T09:00:00+00:00", "target": STATE_BEFORE["target"],
    "restore": None, "warmup": {"max_concurrency": 4, "databases": ["app"], "include_schemas": [],
                                "exclude_schemas": [], "include_system": False, "priority": [], "unit_mb": None,
                                "assumed_cold_mib_per_s": 8.0, "chunk_mb": 64, "create_extension": False,
                                "wait_seconds": 30},
    "benchmark": {"enabled": False},
    "instance": {"status": "available", "ready": True, "address": STATE_BEFORE["instance"]["address"], "port": 5432}}
OLDER_CONTEXT: dict[str, Any] = {
    "run_id": "orders-3", "target": STATE_BEFORE["target"], "instance": OLDER_STATE["instance"],
    "warmup": {"chunk_mb": 64, "assumed_cold_mib_per_s": 8.0, "create_extension": False, "max_concurrency": 4},
    "benchmark": {**CONTEXT_BEFORE["benchmark"], "enabled": False, "probe_blocks": 500},
    "verdict": {**CONTEXT_BEFORE["verdict"], "max_warm_to_cold_latency": 1.25}}


def test_a_state_made_by_the_version_before_parses_into_the_models() -> None:
    state = RunState.model_validate(STATE_BEFORE)
    assert isinstance(state.target, Target) and isinstance(state.restore, Restore)
    assert state.restore.tags == {"team": "orders"} and state.restore.max_wait_minutes == 45
    assert isinstance(state.warmup, Warmup) and state.warmup.hot_set is not None
    assert state.warmup.hot_set.names == ["app/public.orders"]
    assert isinstance(state.preflight, Preflight) and state.preflight.on_failure == "warn"
    assert state.verdict.max_warm_to_cold_latency == 1.5 and state.benchmark.probe_blocks == 200
    assert state.started_at == datetime(2026, 11, 25, 9, 0, 0, 123456, tzinfo=UTC)
    assert state.restore_request is not None and state.restore_request.restored_from == \
        STATE_BEFORE["restore_request"]["restored_from"]
    assert state.instance == STATE_BEFORE["instance"]
    assert state.model_extra == {"started_by": None}  # kept as it came; no step reads it


@pytest.mark.parametrize(("state", "context"), [(STATE_BEFORE, CONTEXT_BEFORE), (OLDER_STATE, OLDER_CONTEXT)],
                         ids=["before", "older"])
def test_discover_makes_the_context_the_version_before_made_of_the_same_state(state, context) -> None:
    """The context is the payload of every state after Discover: byte for byte the same JSON."""
    made = context_json(run_context(RunState.model_validate(state)))
    assert json.dumps(made) == json.dumps(context)


def test_a_state_made_before_the_preflight_and_verdict_sections_reads_their_defaults() -> None:
    state = RunState.model_validate(OLDER_STATE)
    assert state.preflight == Preflight() and state.preflight.enabled and state.preflight.on_failure == "fail"
    assert state.verdict == Thresholds() and state.restore is None and state.comparison is None
    assert state.warmup.mode == "segments" and state.warmup.hot_set is None


def test_an_instance_that_is_not_available_waits_as_long_as_the_documented_restore_default() -> None:
    """No restore section: the wait is restore.max_wait_minutes' default, 180 minutes (docs/run-input.md)."""
    from unittest.mock import MagicMock

    from cutover_prep.rds.instances import RestoreTimeout, describe_instance

    rds = MagicMock()
    rds.describe_db_instances.return_value = {"DBInstances": [{"DBInstanceStatus": "modifying"}]}
    state = RunState.model_validate(OLDER_STATE)
    assert describe_instance(state, rds, now=state.started_at + timedelta(minutes=179))["ready"] is False
    with pytest.raises(RestoreTimeout, match="restore.max_wait_minutes=180"):
        describe_instance(state, rds, now=state.started_at + timedelta(minutes=181))
    restoring = RunState.model_validate(STATE_BEFORE)  # its own restore section says 45
    with pytest.raises(RestoreTimeout, match="restore.max_wait_minutes=45"):
        describe_instance(restoring, rds, now=restoring.started_at + timedelta(minutes=46))
