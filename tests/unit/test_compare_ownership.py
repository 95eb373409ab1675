"""Issue 20, finding 1: a comparison deletes only the instances it can prove its own.

Each case runs the real steps against moto (RDS, DynamoDB, Step Functions): ``workflow.start``
(CompareStart), ``restart.begin_run`` (the child's ValidateInput), ``rds.start_restore`` (the child's
StartRestore, from a moto snapshot), ``workflow.finish`` (Cleanup) and ``reaper.reap``. The judge of
what was deleted is moto's RDS: what DescribeDBInstances still finds.

A "deployment" is what a stack gives its functions: a table and the deployment id in the environment
variable CUTOVER_PREP_DEPLOYMENT_ID (the stack sets it to its StackId). Two deployments share one
account's RDS, as two stacks in one account and region do.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest

from cutover_prep.comparison.cleanup import describe
from cutover_prep.comparison.ownership import NoDeploymentId
from cutover_prep.comparison.reaper import run_reaper
from cutover_prep.comparison.workflow import finish, start
from cutover_prep.dal.store import Store
from cutover_prep.models.run_input import InvalidInput, parse_run_input
from cutover_prep.rds.instances import RestoreFailed, start_restore
from cutover_prep.steps.validate_input import begin_run
from cutover_prep.workflows import COMPARISON_TAG, table_definition

DEPLOYMENT_ENV = "CUTOVER_PREP_DEPLOYMENT_ID"  # what the stack sets (workflows.DEPLOYMENT_ID_ENV)
ACCOUNT = "123456789012"
SECRET = f"arn:aws:secretsmanager:us-east-1:{ACCOUNT}:secret:master-AbCdEf"
A = f"arn:aws:cloudformation:us-east-1:{ACCOUNT}:stack/team-a/11111111-1111-1111-1111-111111111111"
B = f"arn:aws:cloudformation:us-east-1:{ACCOUNT}:stack/team-b/22222222-2222-2222-2222-222222222222"


@pytest.fixture
def rds(store):  # store: conftest's moto session; the source instance and its snapshot
    client = boto3.client("rds", region_name="us-east-1")
    client.create_db_instance(DBInstanceIdentifier="prod-db", Engine="postgres", DBInstanceClass="db.m5.large",
                              AllocatedStorage=20, MasterUsername="admin", MasterUserPassword="not-used-here")
    client.create_db_snapshot(DBInstanceIdentifier="prod-db", DBSnapshotIdentifier="prod-snap")
    return client


@pytest.fixture
def other_store(store) -> Store:
    """A second deployment's table and bucket in the same account."""
    store._ddb.create_table(**table_definition("team-b-table"))
    store._s3.create_bucket(Bucket="team-b-evidence")
    return Store(dynamodb=store._ddb, s3=store._s3, table="team-b-table", bucket="team-b-evidence")


def comparison_input(comparison_id: str, names: list[str]) -> dict[str, Any]:
    return {"comparison_id": comparison_id, "snapshot_identifier": "prod-snap", "target": {"secret_arn": SECRET},
            "configurations": [{"name": n, "db_instance_class": "db.t3.medium", "storage_type": "gp2",
                                "allocated_gb": 100} for n in names],
            "targets": {"min_read_iops": 1}}


def execution_arn(deployment: str, comparison_id: str) -> str:
    machine = deployment.split("/")[1]
    return f"arn:aws:states:us-east-1:{ACCOUNT}:execution:{machine}-compare:{comparison_id}"


def run_comparison(monkeypatch, rds, store: Store, deployment: str, comparison_id: str,
                   names: list[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """CompareStart, then each child's ValidateInput and StartRestore, as the deployment's functions.
    Returns the plan and, per instance, the restore's refusal (if it was refused)."""
    monkeypatch.setenv(DEPLOYMENT_ENV, deployment)
    planned = start(comparison_input(comparison_id, names), execution_name=comparison_id,
                    execution_arn=execution_arn(deployment, comparison_id), store=store)
    refused = {}
    for run in planned["runs"]:
        config = begin_run(run["run_input"], execution_name=run["run_id"], store=store, allowed_hosts=None)
        try:
            start_restore(config, rds)
        except RestoreFailed as exc:
            refused[run["db_instance_identifier"]] = str(exc)
    return planned, refused


def cleanup(monkeypatch, rds, store: Store, deployment: str, planned: dict[str, Any]) -> dict[str, Any]:
    monkeypatch.setenv(DEPLOYMENT_ENV, deployment)
    return finish(planned["comparison_id"], {"runs": planned["runs"]}, rds=rds, store=store)


def status(rds, identifier: str) -> str | None:
    instance = describe(rds, identifier)
    return None if instance is None else instance.status


def tags(rds, identifier: str) -> dict[str, str]:
    return describe(rds, identifier).tags


def test_a_customer_instance_restored_from_a_snapshot_of_a_comparison_instance_is_never_deleted(
        monkeypatch, rds, store):
    planned, _ = run_comparison(monkeypatch, rds, store, A, "sizing-1", ["a", "b"])
    # The customer snapshots a comparison instance and restores their own instance from it. RDS copies
    # the instance's tags to its snapshots (CopyTagsToSnapshot, which the restore sets) and, when the
    # restore names no tags, the snapshot's tags to the new instance (RDS User Guide, "Tagging Amazon RDS
    # resources": copying tags to DB instance snapshots). moto 5.2.5 does both, checked here.
    rds.create_db_snapshot(DBInstanceIdentifier="cprep-sizing-1-a", DBSnapshotIdentifier="copy-of-a")
    rds.restore_db_instance_from_db_snapshot(DBInstanceIdentifier="customer-db", DBSnapshotIdentifier="copy-of-a")
    assert tags(rds, "customer-db")[COMPARISON_TAG] == "sizing-1"

    out = cleanup(monkeypatch, rds, store, A, planned)
    assert status(rds, "customer-db") == "available"  # the tag is not proof: never deleted
    assert status(rds, "cprep-sizing-1-a") is None and status(rds, "cprep-sizing-1-b") is None
    assert sorted(out["cleanup"]["deleted"]) == ["cprep-sizing-1-a", "cprep-sizing-1-b"]
    assert out["cleanup"]["not_ours"] == ["customer-db"]  # reported
    why = {d["db_instance_identifier"]: d for d in out["cleanup"]["details"]}
    assert "no restore of it" in why["customer-db"]["why"]
    for identifier in ("cprep-sizing-1-a", "cprep-sizing-1-b"):  # deleted as proven: no final snapshot
        assert why[identifier]["final_snapshot"] is None
        assert set(why[identifier]["proof"]) == {"record", "tags", "created", "comparison_started"}


def test_two_deployments_with_the_same_comparison_id_never_delete_each_others_instances(
        monkeypatch, rds, store, other_store):
    mine, _ = run_comparison(monkeypatch, rds, store, A, "sizing-1", ["a", "b"])
    theirs, _ = run_comparison(monkeypatch, rds, other_store, B, "sizing-1", ["c", "d"])
    out = cleanup(monkeypatch, rds, store, A, mine)
    assert status(rds, "cprep-sizing-1-c") == "available" and status(rds, "cprep-sizing-1-d") == "available"
    assert status(rds, "cprep-sizing-1-a") is None and status(rds, "cprep-sizing-1-b") is None
    assert sorted(out["cleanup"]["not_ours"]) == ["cprep-sizing-1-c", "cprep-sizing-1-d"]
    cleanup(monkeypatch, rds, other_store, B, theirs)  # each deployment deletes its own
    assert status(rds, "cprep-sizing-1-c") is None and status(rds, "cprep-sizing-1-d") is None


def test_a_second_deployment_neither_adopts_nor_deletes_an_instance_of_the_same_name(
        monkeypatch, rds, store, other_store):
    mine, _ = run_comparison(monkeypatch, rds, store, A, "sizing-1", ["a", "b"])
    theirs, refused = run_comparison(monkeypatch, rds, other_store, B, "sizing-1", ["a", "x"])
    # B's child finds A's instance under the name it wanted: not its own restore, refused by name
    assert list(refused) == ["cprep-sizing-1-a"] and "DBInstanceAlreadyExists" in refused["cprep-sizing-1-a"]
    out = cleanup(monkeypatch, rds, other_store, B, theirs)
    assert status(rds, "cprep-sizing-1-a") == "available"  # A's, still in use by A
    assert out["cleanup"]["deleted"] == ["cprep-sizing-1-x"]
    assert sorted(out["cleanup"]["not_ours"]) == ["cprep-sizing-1-a", "cprep-sizing-1-b"]  # A's, found by the tag
    cleanup(monkeypatch, rds, store, A, mine)
    assert status(rds, "cprep-sizing-1-a") is None and status(rds, "cprep-sizing-1-b") is None


@pytest.mark.parametrize("key", ["cutover-prep:comparison", "cutover-prep:ttl-hours", "cutover-prep:deployment",
                                 "cutover-prep:enabled", "Cutover-Prep:Comparison"])
def test_a_run_input_may_not_set_the_reserved_tags(key):
    raw = {"target": {"db_instance_identifier": "prod-cutover", "secret_arn": SECRET},
           "restore": {"snapshot_identifier": "prod-snap", "tags": {key: "sizing-1"}}}
    with pytest.raises(InvalidInput, match=r"restore\.tags: .*reserved") as info:
        parse_run_input(raw)
    assert "\n" not in str(info.value)


def test_an_instance_carrying_the_comparison_tag_from_a_plain_run_is_not_deleted(monkeypatch, rds, store):
    # A plain run of an earlier version accepted restore.tags with the comparison's tag and restored the
    # real cutover instance with it (and that version's run tag); this version refuses such an input.
    rds.restore_db_instance_from_db_snapshot(
        DBInstanceIdentifier="prod-cutover", DBSnapshotIdentifier="prod-snap",
        Tags=[{"Key": "cutover-prep:run-id", "Value": "cutover-1"}, {"Key": COMPARISON_TAG, "Value": "sizing-1"}])
    planned, _ = run_comparison(monkeypatch, rds, store, A, "sizing-1", ["a", "b"])
    out = cleanup(monkeypatch, rds, store, A, planned)
    assert status(rds, "prod-cutover") == "available"
    assert out["cleanup"]["not_ours"] == ["prod-cutover"]
    assert status(rds, "cprep-sizing-1-a") is None and status(rds, "cprep-sizing-1-b") is None


def test_an_instance_made_before_the_comparison_started_is_not_deleted_even_with_its_name_and_tags(
        monkeypatch, rds, store):
    # Named and tagged as the comparison's own would be (by hand, or restored from a snapshot of an
    # instance a deleted and re-created table once recorded), but it exists before the comparison starts.
    early = rds.restore_db_instance_from_db_snapshot(
        DBInstanceIdentifier="cprep-sizing-3-a", DBSnapshotIdentifier="prod-snap",
        Tags=[{"Key": "cutover-prep:run-id", "Value": "sizing-3-a"}, {"Key": "cutover-prep:deployment", "Value": A},
              {"Key": COMPARISON_TAG, "Value": "sizing-3"}])["DBInstance"]
    assert early["InstanceCreateTime"] <= datetime.now(UTC)
    planned, _ = run_comparison(monkeypatch, rds, store, A, "sizing-3", ["a", "b"])
    out = cleanup(monkeypatch, rds, store, A, planned)
    assert status(rds, "cprep-sizing-3-a") == "available"
    assert out["cleanup"]["not_ours"] == ["cprep-sizing-3-a"]
    assert status(rds, "cprep-sizing-3-b") is None


def test_the_reaper_never_deletes_another_deployments_instance_its_own_record_names(
        monkeypatch, rds, store, other_store):
    """B's comparison sizing-1 is running; A ran a comparison sizing-1 with the same configuration names
    (its restores found B's instances) and was stopped. A's reaper, past the TTL, must leave B's."""
    run_comparison(monkeypatch, rds, other_store, B, "sizing-1", ["a", "b"])
    run_comparison(monkeypatch, rds, store, A, "sizing-1", ["a", "b"])
    sfn = boto3.client("stepfunctions", region_name="us-east-1")  # A's execution is not running (it never was)
    monkeypatch.setenv(DEPLOYMENT_ENV, A)
    outcome = run_reaper(rds=rds, sfn=sfn, store=store, now=datetime.now(UTC) + timedelta(hours=13))
    assert outcome["deleted"] == []
    assert status(rds, "cprep-sizing-1-a") == "available" and status(rds, "cprep-sizing-1-b") == "available"


def test_the_restores_tag_what_they_restore_with_the_deployment_and_only_a_real_child_with_the_comparison(
        monkeypatch, rds, store):
    planned, _ = run_comparison(monkeypatch, rds, store, A, "sizing-4", ["a", "b"])
    assert tags(rds, "cprep-sizing-4-a") == {"cutover-prep:run-id": "sizing-4-a", "cutover-prep:deployment": A,
                                              COMPARISON_TAG: "sizing-4", "cutover-prep:ttl-hours": "12"}
    plain = begin_run({"target": {"db_instance_identifier": "prod-cutover", "secret_arn": SECRET},
                       "restore": {"snapshot_identifier": "prod-snap", "tags": {"team": "orders"}}, "run_id": "cut-1"},
                      execution_name="cut-1", store=store, allowed_hosts=None)
    start_restore(plain, rds)
    assert tags(rds, "prod-cutover") == {"cutover-prep:run-id": "cut-1", "cutover-prep:deployment": A, "team": "orders"}


def forged(run_input: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**run_input, **changes}


def test_a_run_that_names_a_comparison_is_refused_unless_that_comparisons_record_names_it(monkeypatch, rds, store):
    """The comparison link is what lets a run put the comparison's tag on what it restores: a run input
    written by hand cannot use it to have a comparison delete (or adopt) an instance."""
    monkeypatch.setenv(DEPLOYMENT_ENV, A)
    planned = start(comparison_input("sizing-5", ["a", "b"]), execution_name="sizing-5",
                    execution_arn=execution_arn(A, "sizing-5"), store=store)
    child = planned["runs"][0]["run_input"]

    def refused(raw: dict[str, Any]) -> str:
        with pytest.raises(InvalidInput) as info:
            begin_run(raw, execution_name=raw.get("run_id"), store=store, allowed_hosts=None)
        assert "\n" not in str(info.value)
        return str(info.value)

    no_restore = {k: v for k, v in child.items() if k != "restore"}
    assert refused(no_restore).startswith("comparison: set only by a comparison")
    no_parent = {k: v for k, v in child.items() if k != "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID"}
    assert "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID" in refused(no_parent)
    other_parent = forged(child, AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID=execution_arn(B, "sizing-5"))
    assert "no running comparison sizing-5 of this deployment started this run" in refused(other_parent)
    other_target = forged(child, target={**child["target"], "db_instance_identifier": "prod-cutover"})
    assert "not prod-cutover as run sizing-5-a" in refused(other_target)
    unplanned = forged(child, run_id="sizing-5-zz", target={**child["target"], "db_instance_identifier":
                                                             "cprep-sizing-5-zz"})
    assert "no running comparison" in refused(unplanned)
    unknown = forged(child, comparison={"comparison_id": "sizing-9", "ttl_hours": 12})
    assert "restores cprep-sizing-9-<name>" in refused(unknown)
    assert store.get_run("sizing-5-a") is None  # nothing recorded, nothing restored
    assert describe(rds, "cprep-sizing-5-a") is None

    monkeypatch.delenv(DEPLOYMENT_ENV)  # a function without its deployment's id restores nothing it could not delete
    with pytest.raises(NoDeploymentId, match="CUTOVER_PREP_DEPLOYMENT_ID is not set"):
        begin_run(child, execution_name="sizing-5-a", store=store, allowed_hosts=None)
    monkeypatch.setenv(DEPLOYMENT_ENV, A)
    begin_run(child, execution_name="sizing-5-a", store=store, allowed_hosts=None)  # the real child: recorded
    finish("sizing-5", {"runs": planned["runs"]}, rds=rds, store=store)  # the comparison ends
    again = forged(planned["runs"][1]["run_input"])
    assert "no running comparison" in refused(again)  # a child started after the end is refused too
