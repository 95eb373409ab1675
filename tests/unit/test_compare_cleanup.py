"""Cleanup and the reaper against moto RDS: an instance is deleted only when ``ownership.judge`` proves it
the comparison's own (its record, this deployment's and the comparison's tags, created after the start);
anything else found by the tag is reported, never deleted (IAM refuses a delete without this deployment's
tag too: tests/infrastructure/test_compare_stack.py). The cases built from the real steps (a customer's
copy, two deployments, a plain run's instance) are in test_compare_ownership.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from moto import mock_aws

from cutover_prep.comparison.cleanup import NotOurs, clean_up, delete_instance, describe
from cutover_prep.comparison.ownership import judge
from cutover_prep.comparison.reaper import reap, run_reaper
from cutover_prep.comparison.workflow import comparison_key, get_comparison
from cutover_prep.dal.records.deployment import ComparisonItem, ComparisonRestore
from cutover_prep.dal.store import Store, _dyn
from cutover_prep.settings import DEPLOYMENT_ID_ENV
from cutover_prep.workflows import COMPARISON_TAG, DEPLOYMENT_TAG, TTL_TAG, table_definition

ME = "arn:aws:cloudformation:us-east-1:123456789012:stack/mine/1"
RUN_TAG = "cutover-prep:run-id"


@pytest.fixture
def rds():
    with mock_aws():
        yield boto3.client("rds", region_name="us-east-1")


def tagged(comparison: str, ttl: str | None = None, run: str | None = None, deployment: str | None = ME) -> dict:
    tags = {COMPARISON_TAG: comparison, RUN_TAG: run or f"{comparison}-a"}
    if deployment:
        tags[DEPLOYMENT_TAG] = deployment
    if ttl is not None:
        tags[TTL_TAG] = ttl
    return tags


def record(comparison: str, *identifiers: str, started: datetime | None = None,
           arn: str | None = None) -> ComparisonItem:
    """A comparison's record as CompareStart and its children's ValidateInput write it."""
    return ComparisonItem.read({
        "comparison_id": comparison, "execution_arn": arn or f"arn:{comparison}",
        "started_at": (started or datetime.now(UTC) - timedelta(minutes=5)).isoformat(),
        "instances": list(identifiers),
        "restores": {i: {"run_id": i.removeprefix("cprep-"), "claimed_at": "earlier"} for i in identifiers}})


def create(rds, identifier: str, tags: dict[str, str] | None = None) -> dict:
    return rds.create_db_instance(
        DBInstanceIdentifier=identifier, Engine="postgres", DBInstanceClass="db.m5.large", AllocatedStorage=20,
        MasterUsername="admin", MasterUserPassword="not-used-here",
        Tags=[{"Key": k, "Value": v} for k, v in (tags or {}).items()])["DBInstance"]


def status(rds, identifier: str) -> str | None:
    instance = describe(rds, identifier)
    return None if instance is None else instance.status


def test_an_unproven_instance_is_refused_by_the_code(rds):
    create(rds, "production-db")
    instance = describe(rds, "production-db")
    verdict = judge(instance, comparison_id="cmp1", record=record("cmp1", "production-db"), deployment=ME)
    with pytest.raises(NotOurs, match="not restored by this deployment"):
        delete_instance(rds, instance, verdict)
    assert status(rds, "production-db") == "available"


def test_without_a_deployment_id_nothing_is_proven(rds):
    create(rds, "cprep-cmp1-a", tagged("cmp1", run="cmp1-a"))
    verdict = judge(describe(rds, "cprep-cmp1-a"), comparison_id="cmp1", record=record("cmp1", "cprep-cmp1-a"),
                    deployment=None)
    assert not verdict.proven and DEPLOYMENT_ID_ENV in verdict.why


def test_cleanup_deletes_its_proven_instances_and_reports_everything_else(rds):
    create(rds, "cprep-cmp1-small", tagged("cmp1", run="cmp1-small"))
    create(rds, "cprep-cmp1-extra", tagged("cmp1", run="cmp1-extra"))  # tagged with its id, but no record of it
    create(rds, "cprep-cmp2-small", tagged("cmp2", run="cmp2-small"))  # another comparison's: not a candidate
    create(rds, "cprep-cmp1-big")  # planned name, but untagged: someone else's instance
    create(rds, "cprep-cmp1-mid", tagged("cmp1", run="cmp1-mid", deployment="another-stack"))
    create(rds, "cprep-cmp1-odd", tagged("cmp1", run="someone-else"))  # recorded, but another run's tag
    mine = record("cmp1", "cprep-cmp1-small", "cprep-cmp1-big", "cprep-cmp1-mid", "cprep-cmp1-odd")
    outcome = clean_up(rds, "cmp1", ["cprep-cmp1-small", "cprep-cmp1-big", "cprep-cmp1-never-created"],
                       record=mine, deployment=ME)
    assert [d.db_instance_identifier for d in outcome.deleted] == ["cprep-cmp1-small"]
    assert outcome.deleted[0].final_snapshot is None and outcome.deleted[0].proof.tags == {
        DEPLOYMENT_TAG: ME, COMPARISON_TAG: "cmp1", RUN_TAG: "cmp1-small"}
    assert outcome.left == []
    why = {d.db_instance_identifier: d.why for d in outcome.not_ours}
    assert set(why) == {"cprep-cmp1-extra", "cprep-cmp1-big", "cprep-cmp1-mid", "cprep-cmp1-odd"}
    assert "record has no restore of it" in why["cprep-cmp1-extra"]
    assert "not restored by this deployment" in why["cprep-cmp1-big"]
    assert "another-stack" in why["cprep-cmp1-mid"]
    assert "run cmp1-odd restored it" in why["cprep-cmp1-odd"]
    assert status(rds, "cprep-cmp1-small") is None
    for kept in ("cprep-cmp1-extra", "cprep-cmp2-small", "cprep-cmp1-big", "cprep-cmp1-mid", "cprep-cmp1-odd"):
        assert status(rds, kept) == "available", kept


def test_an_instance_older_than_the_comparison_is_not_its_own(rds):
    create(rds, "cprep-cmp1-a", tagged("cmp1", run="cmp1-a"))
    later = record("cmp1", "cprep-cmp1-a", started=datetime.now(UTC) + timedelta(minutes=1))
    outcome = clean_up(rds, "cmp1", ["cprep-cmp1-a"], record=later, deployment=ME)
    assert outcome.deleted == [] and "not after comparison cmp1 started" in outcome.not_ours[0].why
    assert status(rds, "cprep-cmp1-a") == "available"


def test_the_reaper_deletes_only_proven_instances_past_their_ttl_whose_comparison_ended(rds):
    create(rds, "untagged-old")
    create(rds, "cprep-done-a", tagged("done", ttl="2", run="done-a"))
    create(rds, "cprep-young-a", tagged("young", ttl="48", run="young-a"))
    create(rds, "cprep-busy-a", tagged("busy", ttl="1", run="busy-a"))
    create(rds, "cprep-norec-a", tagged("norec", run="norec-a"))  # no TTL tag: the default (12 h); no record
    create(rds, "customer-copy", tagged("done", ttl="2", run="done-a"))  # the tags copied through a snapshot
    create(rds, "cprep-theirs-a", tagged("done", ttl="2", run="done-a", deployment="another-stack"))
    records = {cid: record(cid, f"cprep-{cid}-a") for cid in ("done", "young", "busy")}
    records["done"].restores["cprep-theirs-a"] = ComparisonRestore(run_id="done-a")  # same name in both deployments

    class Sfn:
        def describe_execution(self, executionArn):
            return {"status": "RUNNING" if executionArn == "arn:busy" else "ABORTED"}

    recorded = {}

    class Deleting:  # an instance RDS is deleting already is not deleted (nor recorded) again
        def __getattr__(self, name):
            return getattr(rds, name)

        def get_paginator(self, name):
            pages = list(rds.get_paginator(name).paginate())
            pages[0]["DBInstances"].append({"DBInstanceIdentifier": "cprep-gone-a", "DBInstanceStatus": "deleting",
                                            "TagList": [{"Key": COMPARISON_TAG, "Value": "gone"}],
                                            "InstanceCreateTime": datetime.now(UTC) - timedelta(days=3)})
            return type("P", (), {"paginate": lambda self: pages})()

    outcome = reap(rds=Deleting(), sfn=Sfn(), comparison_of=records.get,
                   record=lambda cid, deleted, left: recorded.setdefault(cid, (deleted, left)),
                   now=datetime.now(UTC) + timedelta(hours=13), deployment=ME)
    assert [d.db_instance_identifier for d in outcome.deleted] == ["cprep-done-a"]
    assert outcome.deleted[0].final_snapshot is None and outcome.deleted[0].proof
    assert {d.db_instance_identifier: d.why for d in outcome.left} == {
        "cprep-busy-a": "13.0 h old (TTL 1 h) but its comparison is still running"}
    not_ours = {d.db_instance_identifier: d.why for d in outcome.not_ours}
    assert set(not_ours) == {"cprep-norec-a", "customer-copy", "cprep-theirs-a"}
    assert "record has no restore of it" in not_ours["customer-copy"]
    assert "not restored by this deployment" in not_ours["cprep-theirs-a"]
    for kept in ("customer-copy", "cprep-norec-a", "cprep-theirs-a", "untagged-old", "cprep-young-a", "cprep-busy-a"):
        assert status(rds, kept) == "available", kept
    assert status(rds, "cprep-done-a") is None
    assert set(recorded) == {"done", "busy"}  # what is not a comparison's own is not written into its record


def test_the_reaper_handler_logic_records_what_it_deleted_in_the_table(rds):
    ddb, s3 = boto3.client("dynamodb", region_name="us-east-1"), boto3.client("s3", region_name="us-east-1")
    ddb.create_table(**table_definition("t"))
    store = Store(dynamodb=ddb, s3=s3, table="t", bucket="b")
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    create(rds, "cprep-gone-a", tagged("gone", ttl="1", run="gone-a"))
    ddb.put_item(TableName="t", Item={**comparison_key("gone"),
                                      **{k: _dyn(v) for k, v in record("gone", "cprep-gone-a", arn=(
                                          "arn:aws:states:us-east-1:123456789012:execution:"
                                          "cutover-prep-compare:gone")).stored().items()}})
    with pytest.MonkeyPatch.context() as env:
        env.setenv(DEPLOYMENT_ID_ENV, ME)
        result = run_reaper(rds=rds, sfn=sfn, store=store, now=datetime.now(UTC) + timedelta(hours=2))
    assert result["deleted"] == ["cprep-gone-a"] and result["left"] == [], result
    item = get_comparison(store, "gone")
    assert [r.db_instance_identifier for r in item.reaped] == ["cprep-gone-a"]
    json.dumps(item.stored())  # plain JSON (no Decimal)


def test_an_instance_rds_will_not_delete_yet_is_asked_again_then_left_to_the_reaper(rds, monkeypatch):
    from botocore.exceptions import ClientError

    from cutover_prep.comparison.workflow import CLEANUP_ATTEMPTS, finish

    ddb, s3 = boto3.client("dynamodb", region_name="us-east-1"), boto3.client("s3", region_name="us-east-1")
    ddb.create_table(**table_definition("t"))
    s3.create_bucket(Bucket="evidence")
    store = Store(dynamodb=ddb, s3=s3, table="t", bucket="evidence")
    monkeypatch.setenv(DEPLOYMENT_ID_ENV, ME)
    ddb.put_item(TableName="t", Item={**comparison_key("c9"), **{
        k: _dyn(v) for k, v in record("c9", "cprep-c9-a", "cprep-c9-b").stored().items()}})
    create(rds, "cprep-c9-a", tagged("c9", run="c9-a"))
    create(rds, "cprep-c9-b", tagged("c9", run="c9-b"))

    class StillCreating:  # RDS refuses to delete an instance that is still being created
        def __getattr__(self, name):
            return getattr(rds, name)

        def delete_db_instance(self, **kw):
            if kw["DBInstanceIdentifier"] == "cprep-c9-b":
                raise ClientError({"Error": {"Code": "InvalidDBInstanceState",
                                             "Message": "Instance cprep-c9-b is not in available state."}},
                                  "DeleteDBInstance")
            return rds.delete_db_instance(**kw)

    state = {"runs": [{"db_instance_identifier": "cprep-c9-a"}, {"db_instance_identifier": "cprep-c9-b"}]}
    first = finish("c9", state, rds=StillCreating(), store=store)
    assert first["attempt"] == 1 and first["retry"] is True
    assert first["cleanup"]["deleted"] == ["cprep-c9-a"] and first["cleanup"]["left"] == ["cprep-c9-b"]
    last = finish("c9", {**state, "cleanup": {"attempt": CLEANUP_ATTEMPTS - 1}}, rds=StillCreating(), store=store)
    assert last["retry"] is False  # the reaper's now
    assert last["cleanup"]["deleted"] == ["cprep-c9-a"]  # deleted by the first attempt: still counted
    done = finish("c9", {**state, "cleanup": {"attempt": 1}}, rds=rds, store=store)
    assert sorted(done["cleanup"]["deleted"]) == ["cprep-c9-a", "cprep-c9-b"] and done["cleanup"]["left"] == []
    assert store.get_json("runs/c9/comparison.json")["cleanup"]["left"] == []
