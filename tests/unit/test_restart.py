"""A run id means one target: what a restart may change, and what it may not."""

from __future__ import annotations

import copy

import pytest

from cutover_prep.dal.records.run import RunItem
from cutover_prep.dal.restart import check_restart
from cutover_prep.dal.store import RUN_SK, _dyn, recorded_input, run_pk
from cutover_prep.models.run_input import RunIdReused, parse_run_input
from cutover_prep.steps.validate_input import begin_run

ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-ro-AbCdEf"
FIRST = {"run_id": "orders-1", "target": {"db_instance_identifier": "orders", "secret_arn": ARN},
         "benchmark": {"write_test": True}}


def test_a_restart_may_change_concurrency_waits_and_turn_the_write_test_off(store):
    begin_run(FIRST, execution_name=None, store=store, allowed_hosts=())
    again = copy.deepcopy(FIRST)
    again["warmup"] = {"max_concurrency": 32, "wait_seconds": 5, "adaptive": False, "adaptive_start": 8}
    again["benchmark"] = {"write_test": False, "metrics_wait_minutes": 1}
    config = begin_run(again, execution_name=None, store=store, allowed_hosts=())
    run = store.get_run("orders-1").stored()
    assert run["restarts"] == 1 and run["input"]["warmup"]["max_concurrency"] == 32  # the record is this attempt's
    assert run["input"]["benchmark"]["write_test"] is False and config.benchmark.write_test is False


@pytest.mark.parametrize(("path", "value", "named"), [
    (("target", "db_instance_identifier"), "billing", "target.db_instance_identifier: 'orders' -> 'billing'"),
    (("target", "database"), "OTHER", "target.database: None -> 'OTHER'"),
    (("warmup", "include_schemas"), ["SALES"], "warmup.include_schemas"),
    (("benchmark", "seconds_per_point"), 60, "benchmark.seconds_per_point"),
    (("verdict", "min_coverage_pct"), 90, "verdict.min_coverage_pct"),
])
def test_a_restart_that_changes_what_is_read_or_judged_fails_by_name(store, path, value, named):
    begin_run(FIRST, execution_name=None, store=store, allowed_hosts=())
    again = copy.deepcopy(FIRST)
    again.setdefault(path[0], {})[path[1]] = value
    with pytest.raises(RunIdReused, match="use a new run_id|Use a new run_id") as err:
        begin_run(again, execution_name=None, store=store, allowed_hosts=())
    assert named in str(err.value)
    assert store.get_run("orders-1").restarts == 0  # the first attempt's record is untouched


def test_a_restore_added_on_a_restart_is_a_difference():
    first = parse_run_input(FIRST)
    item = RunItem.read({"run_id": "orders-1", "target": first["target"], "restore": None, "input": {
        "warmup": first["warmup"], "benchmark": first["benchmark"], "verdict": first["verdict"]}})
    again = parse_run_input({**FIRST, "restore": {"snapshot_identifier": "snap-1"}})
    with pytest.raises(RunIdReused, match="restore"):
        check_restart(item, again)


def _recorded_before_52(store, raw):
    """The run item as the version before decision 52 wrote it: the input's sections under other names."""
    config = parse_run_input(raw)
    item = {"pk": run_pk(config["run_id"]), "sk": RUN_SK, "run_id": config["run_id"], "status": "SUCCEEDED",
            "step": "finished", "verdict": "READY", "target": config["target"], "restore": config["restore"],
            "options": config["warmup"], "benchmark_options": config["benchmark"],
            "verdict_options": config["verdict"], "started_at": config["started_at"], "restarts": 0}
    store._ddb.put_item(TableName=store.table, Item={k: _dyn(v) for k, v in item.items()})
    return config


def test_a_run_recorded_before_decision_52_is_read_in_the_input_s_names(store):
    config = _recorded_before_52(store, {**FIRST, "verdict": {"min_coverage_pct": 90}})
    recorded = recorded_input(store.get_run("orders-1"))
    assert recorded.verdict.min_coverage_pct == 90 and recorded.benchmark.write_test is True
    assert recorded.warmup.model_dump(mode="json") == config["warmup"]
    assert recorded.target is not None and recorded.target.model_dump(
        mode="json", exclude_unset=True) == config["target"]


def test_a_restart_of_a_run_recorded_before_decision_52_is_bound_to_its_options_and_rewritten(store):
    _recorded_before_52(store, FIRST)
    again = copy.deepcopy(FIRST)
    again["verdict"] = {"min_coverage_pct": 90}
    with pytest.raises(RunIdReused, match="verdict.min_coverage_pct: 100 -> 90"):  # its old verdict_options read
        begin_run(again, execution_name=None, store=store, allowed_hosts=())
    again["verdict"] = {}
    again["warmup"] = {"max_concurrency": 4}  # may change
    begin_run(again, execution_name=None, store=store, allowed_hosts=())
    run = store.get_run("orders-1").stored()
    assert run["restarts"] == 1 and run["status"] == "RUNNING"
    assert run["input"]["warmup"]["max_concurrency"] == 4 and run["input"]["benchmark"]["write_test"] is True
    assert not {"options", "benchmark_options", "verdict_options"} & run.keys()  # the old names are gone


def test_the_message_shows_the_first_attempt_as_stored_and_the_new_one_as_given(store):
    """The first attempt's numbers as the run item gives them back (100.0 is 100), the new ones as the input
    parsed them (50.0): the message the workflow's Cause has always held."""
    begin_run(FIRST, execution_name=None, store=store, allowed_hosts=())
    with pytest.raises(RunIdReused) as err:
        begin_run({**FIRST, "verdict": {"min_coverage_pct": 50}}, execution_name=None, store=store, allowed_hosts=())
    assert "verdict.min_coverage_pct: 100 -> 50.0;" in str(err.value) or \
        "verdict.min_coverage_pct: 100 -> 50.0)" in str(err.value)
    begin_run({**FIRST, "verdict": {"min_coverage_pct": 100}}, execution_name=None, store=store,
              allowed_hosts=())  # 100 and 100.0 are the same threshold: a restart
    assert store.get_run("orders-1").restarts == 1
