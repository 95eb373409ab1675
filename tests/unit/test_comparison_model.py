"""The comparison input model: the run input's storage rules, unique names, valid child runs."""

import copy

import pytest
from pydantic import ValidationError

from cutover_prep.comparison.model import ComparisonInput, ConfigurationResult, child_run_input
from cutover_prep.models.run_input import parse_run_input
from cutover_prep.workflows import COMPARISON_TAG, TTL_TAG

EXAMPLE = {
    "comparison_id": "orders-sizing-1",
    "snapshot_identifier": "orders-prod-2026-11-20",
    "target": {"secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-master-AbCdEf",
               "engine": "postgres", "database": "orders"},
    "restore": {"db_subnet_group_name": "db-private", "vpc_security_group_ids": ["sg-0123456789abcdef0"],
                "tags": {"team": "orders"}},
    "configurations": [
        {"name": "r6i-gp3", "db_instance_class": "db.r6i.xlarge", "storage_type": "gp3", "allocated_gb": 500},
        {"name": "r6i-io1", "db_instance_class": "db.r6i.xlarge", "storage_type": "io1", "allocated_gb": 500,
         "iops": 10000},
    ],
    "benchmark": {"seconds_per_point": 60},
    "targets": {"min_read_iops": 8000, "max_price_per_hour_usd": 3.5},
}


def with_(**changes):
    raw = copy.deepcopy(EXAMPLE)
    raw.update(changes)
    return raw


def errors(raw) -> str:
    with pytest.raises(ValidationError) as info:
        ComparisonInput.model_validate(raw, strict=True)
    return str(info.value)


def test_the_example_is_valid_with_defaults():
    c = ComparisonInput.model_validate(EXAMPLE, strict=True)
    assert (c.max_parallel, c.ttl_hours, c.warmup.enabled) == (2, 12, True)


@pytest.mark.parametrize(("change", "says"), [
    ({"storage_type": "io1", "iops": None}, "io1 needs iops"),
    ({"storage_type": "gp2", "iops": 3000}, "needs storage_type io1, io2 or gp3"),
    ({"storage_type": "io1", "iops": 3000, "storage_throughput": 500}, "needs storage_type gp3"),
    ({"allocated_gb": 10}, "greater than or equal to 20"),
    ({"name": "R6I"}, "lower-case"),
    ({"name": "a--b"}, "no double hyphen"),
    ({"db_instance_class": "r6i.large"}, "db.r6i.large"),
    ({"storage_type": "standard"}, "storage_type"),
])
def test_a_configuration_follows_the_run_inputs_storage_rules(change, says):
    conf = {k: v for k, v in {**EXAMPLE["configurations"][0], **change}.items() if v is not None}
    assert says in errors(with_(configurations=[conf, EXAMPLE["configurations"][1]]))


def test_names_are_unique_and_the_list_has_two_to_eight():
    one = EXAMPLE["configurations"][0]
    assert "unique: r6i-gp3" in errors(with_(configurations=[one, one]))
    assert "at least 2" in errors(with_(configurations=[one]))
    many = [{**one, "name": f"c{i}"} for i in range(9)]
    assert "at most 8" in errors(with_(configurations=many))


def test_targets_need_one_measure_and_unknown_fields_are_refused():
    assert "at least one of" in errors(with_(targets={"max_price_per_hour_usd": 2}))
    assert "Extra inputs" in errors(with_(max_paralel=2))
    assert "less than or equal to 4" in errors(with_(max_parallel=5))
    assert "less than or equal to 72" in errors(with_(ttl_hours=100))


def test_the_comparison_id_must_make_valid_instance_names():
    assert "not a valid DB instance identifier" in errors(with_(comparison_id="orders_1"))
    assert "not a valid DB instance identifier" in errors(with_(comparison_id="o" * 50))


def test_reserved_tags_and_bad_shared_settings_are_refused():
    assert "reserved" in errors(with_(restore={"tags": {COMPARISON_TAG: "x"}}))
    assert "reserved" in errors(with_(restore={"tags": {TTL_TAG.upper(): "x"}}))
    assert "security group id" in errors(with_(restore={"vpc_security_group_ids": ["default"]}))
    assert "secret ARN" in errors(with_(target={"secret_arn": "hunter2"}))


def test_the_child_run_input_is_a_valid_run_input_for_each_configuration():
    c = ComparisonInput.model_validate(EXAMPLE, strict=True)
    for conf in c.configurations:
        raw = child_run_input(c, conf)
        run = parse_run_input(raw)
        assert run["run_id"] == f"orders-sizing-1-{conf.name}"
        assert run["target"]["db_instance_identifier"] == f"cprep-orders-sizing-1-{conf.name}"
        assert run["target"]["secret_arn"] == EXAMPLE["target"]["secret_arn"]
        restore = run["restore"]
        assert restore["snapshot_identifier"] == "orders-prod-2026-11-20"
        assert (restore["db_instance_class"], restore["storage_type"], restore["allocated_gb"], restore["iops"]) == (
            conf.db_instance_class, conf.storage_type, conf.allocated_gb, conf.iops)
        # the comparison's tags are put on by the child's restore once its record names the child (the
        # input's restore.tags may not carry cutover-prep:* keys): the child names its comparison instead
        assert restore["tags"] == {"team": "orders"}
        assert run["comparison"] == {"comparison_id": "orders-sizing-1", "ttl_hours": 12}
        assert restore["vpc_security_group_ids"] == ["sg-0123456789abcdef0"]
        assert run["benchmark"]["seconds_per_point"] == 60


def test_warmup_can_be_switched_off_and_each_child_run_then_reads_nothing_before_measuring():
    """The issue asks for the warm-up to be optional per comparison; it was refused while the run
    workflow could not skip it."""
    comparison = ComparisonInput.model_validate(with_(warmup={"enabled": False}), strict=True)
    for conf in comparison.configurations:
        run = parse_run_input(child_run_input(comparison, conf), execution_name="x")
        assert run["warmup"]["enabled"] is False
    assert ComparisonInput.model_validate(EXAMPLE, strict=True).warmup.enabled is True


def test_each_child_run_names_the_comparison_execution_that_started_it():
    from cutover_prep.comparison.workflow import child_runs

    parent = "arn:aws:states:eu-west-1:123456789012:execution:cutover-prep-compare:orders-sizing-1"
    comparison = ComparisonInput.model_validate(EXAMPLE, strict=True)
    for run in child_runs(comparison, parent):
        assert run.run_input["AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID"] == parent
        assert parse_run_input(run.run_input)["started_by"] == parent
    assert "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID" not in child_runs(comparison)[0].run_input


def test_a_started_by_that_is_not_an_execution_arn_is_refused_in_one_line():
    from cutover_prep.models.run_input import InvalidInput

    raw = child_run_input(ComparisonInput.model_validate(EXAMPLE, strict=True),
                          ComparisonInput.model_validate(EXAMPLE, strict=True).configurations[0])
    with pytest.raises(InvalidInput) as info:
        parse_run_input({**raw, "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID": "https://evil.example/x"})
    assert str(info.value).startswith("AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: must be a Step Functions "
                                      "execution ARN")


def test_a_result_row_refuses_an_unknown_status():
    with pytest.raises(ValidationError):
        ConfigurationResult(name="a", status="DONE")
