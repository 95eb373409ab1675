"""Cleanup and the reaper against moto RDS: only instances tagged with the comparison's id are deleted;
an untagged instance never is, by the code (IAM refuses it too: tests/infrastructure/test_compare_stack.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from moto import mock_aws

from cutover_prep.comparison.cleanup import NotOurs, clean_up, delete_instance, describe
from cutover_prep.comparison.reaper import reap, run_reaper
from cutover_prep.comparison.workflow import comparison_key, get_comparison
from cutover_prep.dal.store import Store
from cutover_prep.workflows import COMPARISON_TAG, TTL_TAG, table_definition


@pytest.fixture
def rds():
    with mock_aws():
        yield boto3.client("rds", region_name="us-east-1")


def tagged(comparison: str, ttl: str | None = None) -> dict[str, str]:
    tags = {COMPARISON_TAG: comparison}
    if ttl is not None:
        tags[TTL_TAG] = ttl
    return tags


def create(rds, identifier: str, tags: dict[str, str] | None = None) -> dict:
    return rds.create_db_instance(
        DBInstanceIdentifier=identifier, Engine="postgres", DBInstanceClass="db.m5.large", AllocatedStorage=20,
        MasterUsername="admin", MasterUserPassword="not-used-here",
        Tags=[{"Key": k, "Value": v} for k, v in (tags or {}).items()])["DBInstance"]


def status(rds, identifier: str) -> str | None:
    instance = describe(rds, identifier)
    return None if instance is None else instance["DBInstanceStatus"]


def test_an_untagged_instance_is_refused_by_the_code(rds):
    create(rds, "production-db")
    with pytest.raises(NotOurs, match="does not carry the tag cutover-prep:comparison=cmp1"):
        delete_instance(rds, describe(rds, "production-db"), "cmp1")
    assert status(rds, "production-db") == "available"


def test_cleanup_deletes_its_own_tagged_instances_and_leaves_everything_else(rds):
    create(rds, "cprep-cmp1-small", tagged("cmp1"))
    create(rds, "cprep-cmp1-extra", tagged("cmp1"))  # not planned, but tagged with this comparison: deleted too
    create(rds, "cprep-cmp2-small", tagged("cmp2"))  # another comparison's
    create(rds, "cprep-cmp1-big")  # planned name, but untagged: someone else's instance
    outcome = clean_up(rds, "cmp1", ["cprep-cmp1-small", "cprep-cmp1-big", "cprep-cmp1-never-created"])
    assert sorted(d["db_instance_identifier"] for d in outcome["deleted"]) == ["cprep-cmp1-extra", "cprep-cmp1-small"]
    assert [d["db_instance_identifier"] for d in outcome["left"]] == ["cprep-cmp1-big"]
    assert "does not carry the tag" in outcome["left"][0]["why"]
    assert status(rds, "cprep-cmp1-small") is None and status(rds, "cprep-cmp1-extra") is None
    assert status(rds, "cprep-cmp2-small") == "available" and status(rds, "cprep-cmp1-big") == "available"


def test_the_reaper_deletes_only_tagged_instances_past_their_ttl_whose_comparison_ended(rds):
    create(rds, "untagged-old")
    create(rds, "cprep-done-a", tagged("done", ttl="2"))
    create(rds, "cprep-young-a", tagged("young", ttl="48"))
    create(rds, "cprep-busy-a", tagged("busy", ttl="1"))
    create(rds, "cprep-norec-a", tagged("norec"))  # no TTL tag: the default (12 h); no record of its comparison
    create(rds, "customer-copy", tagged("done", ttl="2"))  # the tag copied through a snapshot: not listed
    records = {cid: {"execution_arn": f"arn:{cid}", "instances": [f"cprep-{cid}-a"]}
               for cid in ("done", "young", "busy")}

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
                   now=datetime.now(UTC) + timedelta(hours=13))
    assert [d["db_instance_identifier"] for d in outcome["deleted"]] == ["cprep-done-a"]
    left = {d["db_instance_identifier"]: d["why"] for d in outcome["left"]}
    assert set(left) == {"cprep-busy-a", "cprep-norec-a", "customer-copy"}
    assert "still running" in left["cprep-busy-a"]
    assert "names it as an instance it restored" in left["customer-copy"]
    assert status(rds, "customer-copy") == "available" and status(rds, "cprep-norec-a") == "available"
    assert status(rds, "untagged-old") == "available"  # never considered: it has no comparison tag
    assert status(rds, "cprep-young-a") == "available"  # 13 h old, TTL 48 h
    assert status(rds, "cprep-done-a") is None
    assert set(recorded) == {"done", "norec", "busy"}


def test_the_reaper_handler_logic_records_what_it_deleted_in_the_table(rds):
    ddb, s3 = boto3.client("dynamodb", region_name="us-east-1"), boto3.client("s3", region_name="us-east-1")
    ddb.create_table(**table_definition("t"))
    store = Store(dynamodb=ddb, s3=s3, table="t", bucket="b")
    sfn = boto3.client("stepfunctions", region_name="us-east-1")
    create(rds, "cprep-gone-a", tagged("gone", ttl="1"))
    ddb.put_item(TableName="t", Item={**comparison_key("gone"), "instances": {"L": [{"S": "cprep-gone-a"}]}})
    result = run_reaper(rds=rds, sfn=sfn, store=store, now=datetime.now(UTC) + timedelta(hours=2))
    assert result["deleted"] == ["cprep-gone-a"] and result["left"] == []
    item = get_comparison(store, "gone")
    assert [r["db_instance_identifier"] for r in item["reaped"]] == ["cprep-gone-a"]
    json.dumps(item)  # plain JSON (no Decimal)


def test_an_instance_rds_will_not_delete_yet_is_asked_again_then_left_to_the_reaper(rds):
    from botocore.exceptions import ClientError

    from cutover_prep.comparison.workflow import CLEANUP_ATTEMPTS, finish

    ddb, s3 = boto3.client("dynamodb", region_name="us-east-1"), boto3.client("s3", region_name="us-east-1")
    ddb.create_table(**table_definition("t"))
    s3.create_bucket(Bucket="evidence")
    store = Store(dynamodb=ddb, s3=s3, table="t", bucket="evidence")
    create(rds, "cprep-c9-a", tagged("c9"))
    create(rds, "cprep-c9-b", tagged("c9"))

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
