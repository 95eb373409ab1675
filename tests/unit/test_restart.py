"""A run id means one target: what a restart may change, and what it may not."""

from __future__ import annotations

import copy

import pytest

from cutover_prep.models.run_input import parse_run_input
from cutover_prep.restart import RunIdReused, begin_run, check_restart

ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-ro-AbCdEf"
FIRST = {"run_id": "orders-1", "target": {"db_instance_identifier": "orders", "secret_arn": ARN},
         "benchmark": {"write_test": True}}


def test_a_restart_may_change_concurrency_waits_and_turn_the_write_test_off(store):
    begin_run(FIRST, execution_name=None, store=store, allowed_hosts=())
    again = copy.deepcopy(FIRST)
    again["warmup"] = {"max_concurrency": 32, "wait_seconds": 5, "adaptive": False, "adaptive_start": 8}
    again["benchmark"] = {"write_test": False, "metrics_wait_minutes": 1}
    config = begin_run(again, execution_name=None, store=store, allowed_hosts=())
    run = store.get_run("orders-1")
    assert run["restarts"] == 1 and run["options"]["max_concurrency"] == 32  # the record is this attempt's
    assert run["benchmark_options"]["write_test"] is False and config["benchmark"]["write_test"] is False


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
    assert store.get_run("orders-1")["restarts"] == 0  # the first attempt's record is untouched


def test_a_restore_added_on_a_restart_is_a_difference():
    first = parse_run_input(FIRST)
    item = {"target": first["target"], "restore": None, "options": first["warmup"],
            "benchmark_options": first["benchmark"], "verdict_options": first["verdict"]}
    again = parse_run_input({**FIRST, "restore": {"snapshot_identifier": "snap-1"}})
    with pytest.raises(RunIdReused, match="restore"):
        check_restart(item, again)
