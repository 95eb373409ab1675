"""Execution input validation: defaults, and one-line errors naming the bad field."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from cutover_prep.models.run_input import InvalidInput, parse_run_input

ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbC123"


def minimal() -> dict[str, Any]:
    return {"target": {"db_instance_identifier": "prod-db-1", "secret_arn": ARN}}


def with_(path: str, value: Any) -> dict[str, Any]:
    raw = minimal()
    node = raw
    *parents, leaf = path.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[leaf] = value
    return raw


def error_of(raw: Any) -> str:
    with pytest.raises(InvalidInput) as info:
        parse_run_input(raw, execution_name="exec-1")
    msg = str(info.value)
    assert "\n" not in msg
    return msg


def test_minimal_input_gets_defaults_and_run_id_from_execution_name() -> None:
    config = parse_run_input(minimal(), execution_name="exec-42")
    assert config["run_id"] == "exec-42"
    assert config["target"] == {"db_instance_identifier": "prod-db-1", "secret_arn": ARN, "engine": None,
                                "database": None, "host": None, "port": None}
    assert config["restore"] is None
    w = config["warmup"]
    assert w["max_concurrency"] == 8
    assert w["chunk_mb"] == 64
    assert w["assumed_cold_mib_per_s"] == 8.0
    assert w["unit_mb"] is None
    assert w["priority"] == [] and w["include_system"] is False
    assert config["started_at"].endswith("+00:00")


def test_explicit_run_id_wins_and_input_not_mutated() -> None:
    raw = with_("run_id", "my-run.1")
    before = copy.deepcopy(raw)
    assert parse_run_input(raw, execution_name="exec-42")["run_id"] == "my-run.1"
    assert raw == before


def test_run_id_generated_when_execution_name_invalid() -> None:
    config = parse_run_input(minimal(), execution_name=None)
    assert config["run_id"].startswith("prod-db-1-")


def test_restore_and_warmup_accepted() -> None:
    raw = minimal()
    raw["restore"] = {"snapshot_identifier": "snap-1", "db_instance_class": "db.r6i.large",
                      "storage_type": "gp3", "iops": 12000,
                      "vpc_security_group_ids": ["sg-0123456789abcdef0"]}
    raw["warmup"] = {"max_concurrency": 20, "priority": ["app.orders"]}
    config = parse_run_input(raw, execution_name="e")
    assert config["restore"]["iops"] == 12000
    assert config["restore"]["poll_seconds"] == 60
    assert config["warmup"]["max_concurrency"] == 20


@pytest.mark.parametrize(("raw", "expected"), [
    (with_("target.secret_arn", "hunter2"), "target.secret_arn: must be a Secrets Manager secret ARN"),
    ({"warmup": {}}, "target: is required"),
    (with_("warmup.max_concurency", 4), "warmup.max_concurency: unknown field"),
    (with_("restore", {"snapshot_identifier": "s", "storage_type": "gp2", "iops": 3000}),
     "restore.iops: needs storage_type io1, io2 or gp3"),
    (with_("restore", {"snapshot_identifier": "s", "db_instance_class": "r6i.large"}),
     "restore.db_instance_class: must look like db.r6i.large"),
    (with_("restore", {"snapshot_identifier": "s", "vpc_security_group_ids": ["sg-xyz"]}),
     "restore.vpc_security_group_ids: 'sg-xyz' is not a security group id"),
    (with_("warmup.max_concurrency", 0), "warmup.max_concurrency: "),
    (with_("target.db_instance_identifier", "bad--name"), "target.db_instance_identifier: must be"),
    (with_("run_id", "-leading"), "run_id: must be"),
    (with_("restore", {"snapshot_identifier": "s", "storage_type": "io1"}), "storage_type io1 needs iops"),
])
def test_bad_field_named_in_one_line(raw: dict[str, Any], expected: str) -> None:
    assert expected in error_of(raw)


def test_max_concurrency_zero_message_mentions_bound() -> None:
    msg = error_of(with_("warmup.max_concurrency", 0))
    assert msg.startswith("warmup.max_concurrency: ")
    assert "1" in msg


def test_several_errors_in_one_line() -> None:
    raw = with_("target.secret_arn", "x")
    raw["warmup"] = {"max_concurency": 4}
    msg = error_of(raw)
    assert "target.secret_arn:" in msg and "warmup.max_concurency: unknown field" in msg
    assert "; " in msg


@pytest.mark.parametrize("raw", [None, [], "target", 3])
def test_non_dict_input(raw: Any) -> None:
    assert error_of(raw).startswith("input: must be a JSON object")


def test_error_class_name_matched_by_workflow() -> None:
    assert InvalidInput.__name__ == "InvalidInput"
    assert InvalidInput.error_type == "InvalidInput"
    assert issubclass(InvalidInput, Exception)


def test_secret_value_never_echoed() -> None:
    # a user pasting the secret JSON instead of its ARN must not see it logged back
    msg = error_of(with_("target.secret_arn", '{"password": "s3cr3t-pw"}'))
    assert "s3cr3t-pw" not in msg


def test_a_baseline_must_be_a_finished_run_of_this_deployment() -> None:
    from cutover_prep.models.run_input import check_baseline

    runs = {"before": {"status": "SUCCEEDED", "step": "finished"}, "busy": {"status": "RUNNING", "step": "warmup"}}
    config = parse_run_input({**minimal(), "run_id": "now", "verdict": {"baseline_run_id": "before"}})
    check_baseline(config, runs.get)  # fine
    for baseline, needle in (("gone", "no run 'gone'"), ("busy", "has no findings"), ("now", "own id")):
        config["verdict"]["baseline_run_id"] = baseline
        with pytest.raises(InvalidInput, match=needle):
            check_baseline(config, runs.get)
    with pytest.raises(InvalidInput, match="verdict.baseline_run_id"):
        parse_run_input({**minimal(), "verdict": {"baseline_run_id": "../other"}})
