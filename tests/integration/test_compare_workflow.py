"""The comparison workflow (statemachines/compare.asl.json) executed by moto's Step Functions
interpreter, each configuration a real child execution of the run workflow (startExecution.sync:2)
that restores a moto snapshot and warms and benchmarks the real PostgreSQL database behind it.

moto's restored instances report an endpoint that does not exist; the tests make every moto DB
instance's endpoint the test database's address, so each child run connects where RDS would send it
(no target.host override), as in AWS."""

from __future__ import annotations

import copy
import json
import threading
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

import pytest

from cutover_prep.comparison.cleanup import describe
from cutover_prep.comparison.reaper import run_reaper
from cutover_prep.comparison.workflow import get_comparison
from cutover_prep.dal.store import Store
from cutover_prep.local.harness import LocalAws
from cutover_prep.workflows import COMPARISON_TAG, DEPLOYMENT_TAG

pytestmark = pytest.mark.postgres

QUICK_BENCHMARK = {"seconds_per_point": 1, "sessions": [1, 2], "probe_blocks": 40, "metrics_wait_minutes": 0,
                   "compare_limits": False}
# for the tests about what a comparison deletes, keeps or records when a step fails, not about its measures: one
# random point a child (a configuration is MEASURED with one), not two, each a second of the child's run
ONE_POINT = {**QUICK_BENCHMARK, "sessions": [1]}
# db.t3.medium: a class the shipped price file prices (moto has no Price List API: the file is used)
CONFIGURATIONS = [
    {"name": "gp2", "db_instance_class": "db.t3.medium", "storage_type": "gp2", "allocated_gb": 100},
    {"name": "io1", "db_instance_class": "db.t3.medium", "storage_type": "io1", "allocated_gb": 100, "iops": 3000},
]


@pytest.fixture
def aws(sample_db):
    from moto.rds.models import DBInstance

    with LocalAws() as local, mock.patch.object(DBInstance, "address", new_callable=mock.PropertyMock,
                                                return_value=sample_db.host):
        local.allow_db_host(sample_db.host)
        local.create_instance("prod-db", db_name=sample_db.database, storage_type="gp2", allocated_storage=100)
        local.client("rds").create_db_snapshot(DBInstanceIdentifier="prod-db", DBSnapshotIdentifier="prod-snap")
        yield local


def comparison_input(aws: LocalAws, spec, comparison_id: str, **overrides: Any) -> dict[str, Any]:
    # the master secret of the snapshot's source instance: each child restores prod-snap, so it may use it
    secret = aws.create_secret(f"master-{comparison_id}", {"username": spec.user, "password": spec.password,
                                                           "engine": "postgres", "port": spec.port,
                                                           "dbInstanceIdentifier": "prod-db"})
    return {"comparison_id": comparison_id, "snapshot_identifier": "prod-snap",
            "target": {"secret_arn": secret, "engine": "postgres", "database": spec.database},
            "configurations": copy.deepcopy(CONFIGURATIONS),  # a caller may change its copy (test_compare_cli)
            # the catalogues waived as in test_workflow.py's run_input (they are read by default, issue 21:
            # tests/integration/test_postgres_census.py): 2 MiB units of ~300 catalogue forks would make each
            # child run read about three times as many units, and the comparison's properties are the same.
            # 8 MiB units: 8 units a child instead of 20 (2 MiB), each a Map iteration through moto's
            # interpreter: a child's WarmUp 17.5 s instead of 29 s at load 8 (issue 24 §4); coverage 100 % all the same
            "warmup": {"unit_mb": 8, "databases": [spec.database], "max_concurrency": 4,
                       "exclude_schemas": ["pg_catalog", "information_schema"]},
            "benchmark": copy.deepcopy(QUICK_BENCHMARK), "targets": {"min_read_iops": 1}, "max_parallel": 2,
            **overrides}


def start(aws: LocalAws, payload: dict[str, Any]) -> str:
    return aws.client("stepfunctions").start_execution(
        stateMachineArn=aws.state_machine_arns["compare"], name=payload["comparison_id"],
        input=json.dumps(payload))["executionArn"]


def finish(aws: LocalAws, payload: dict[str, Any]) -> dict[str, Any]:
    desc = aws.wait(start(aws, payload), timeout_s=600)
    desc["output_json"] = json.loads(desc["output"]) if desc.get("output") else None
    return desc


def store_of(aws: LocalAws) -> Store:
    return Store(dynamodb=aws.client("dynamodb"), s3=aws.client("s3"), table=aws.table, bucket=aws.bucket)


def child(aws: LocalAws, name: str) -> dict[str, Any]:
    arn = aws.state_machine_arn.replace(":stateMachine:", ":execution:") + ":" + name
    return aws.describe(arn)


def test_two_configurations_are_measured_compared_and_both_instances_deleted(aws, sample_db):
    desc = finish(aws, comparison_input(aws, sample_db, "cmp1"))
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    out = desc["output_json"]
    assert out["status"] == "SUCCEEDED" and out["comparison_id"] == "cmp1"

    # each configuration was a child execution of the run workflow that reached its verdict
    store = store_of(aws)
    for configuration in CONFIGURATIONS:
        run_id = f"cmp1-{configuration['name']}"
        assert child(aws, run_id)["status"] == "SUCCEEDED"
        findings = store.get_json(f"runs/{run_id}/findings.json")
        assert findings["verdict"]["verdict"] in ("READY", "NOT_READY")
        assert findings["coverage_pct"] == 100.0
        assert findings["started_by"] == desc["executionArn"]  # the child names its parent (console link)
        restore = store.get_run(run_id).restore
        assert restore.storage_type == configuration["storage_type"]
        assert restore.allocated_gb == configuration["allocated_gb"]
        instance = f"cprep-{run_id}"  # the child's ValidateInput recorded its restore before StartRestore ran
        assert get_comparison(store, "cmp1").restore_of(instance).run_id == run_id

    document = store.get_json("runs/cmp1/comparison.json")
    assert [c["name"] for c in document["configurations"]] == ["gp2", "io1"]
    for result in document["configurations"]:
        assert result["status"] == "MEASURED", result
        assert result["read_iops"] > 0 and result["read_mib_per_s"] > 0 and result["run_id"].startswith("cmp1-")
        assert result["price_per_hour_usd"] > 0 and "shipped price file (dated" in result["price_source"]
        assert result["meets_targets"] is True
    gp2, io1 = document["configurations"]
    assert io1["price_per_hour_usd"] > gp2["price_per_hour_usd"]  # 3,000 provisioned IOPS are paid for
    # both meet the targets: the cheaper one
    assert document["recommendation"]["name"] == "gp2" and document["recommendation"]["why"]
    assert "shipped price file" in document["prices"]["source"] and document["prices"]["dated"]
    assert document["comparison_cost"]["instance_hours"] > 0
    assert sorted(document["cleanup"]["deleted"]) == ["cprep-cmp1-gp2", "cprep-cmp1-io1"]
    assert document["cleanup"]["left"] == [] and document["cleanup"]["not_ours"] == []
    for detail in document["cleanup"]["details"]:  # deleted as proven its own: no final snapshot, the proof
        assert detail["final_snapshot"] is None
        assert detail["proof"]["tags"][COMPARISON_TAG] == "cmp1" and detail["proof"]["tags"][DEPLOYMENT_TAG]
        assert detail["proof"]["created"] > detail["proof"]["comparison_started"]
    assert out["cleanup"] == document["cleanup"]
    page = aws.client("s3").get_object(Bucket=store.bucket, Key="runs/cmp1/comparison.html")["Body"].read().decode()
    assert out["page_uri"].endswith("runs/cmp1/comparison.html") and "gp2" in page and "io1" in page  # the page too
    rds = aws.client("rds")
    assert describe(rds, "cprep-cmp1-gp2") is None and describe(rds, "cprep-cmp1-io1") is None
    assert describe(rds, "prod-db").status == "available"  # the source is not the comparison's
    record = get_comparison(store, "cmp1")
    assert record.status == "SUCCEEDED" and record.cleanup.left == []
    history = json.dumps(aws.history(desc["executionArn"]), default=str)
    assert sample_db.password == "" or sample_db.password not in history


def test_a_customer_instance_restored_from_a_snapshot_of_a_comparison_instance_survives_its_cleanup(
        aws, sample_db):
    """Issue 20, finding 1: the Cleanup deleted every instance that carried the comparison's tag. RDS
    copies an instance's tags to its snapshots (the restore sets CopyTagsToSnapshot) and a snapshot's
    tags to an instance restored from it without tags of its own (RDS User Guide, "Tagging Amazon RDS
    resources"; moto does both), so a customer's copy of a comparison instance carries every tag."""
    restored, gate = threading.Event(), threading.Event()

    def hold(_event):  # the first child (gp2) waits after its restore, before Discover
        restored.set()
        gate.wait(120)

    aws.faults["handlers.discover"] = [hold]
    parent = start(aws, comparison_input(aws, sample_db, "cmp6", max_parallel=1, benchmark=ONE_POINT))
    rds = aws.client("rds")
    try:
        assert restored.wait(120), "the child never reached Discover"
        rds.create_db_snapshot(DBInstanceIdentifier="cprep-cmp6-gp2", DBSnapshotIdentifier="copy-of-gp2")
        rds.restore_db_instance_from_db_snapshot(DBInstanceIdentifier="customer-db",
                                                 DBSnapshotIdentifier="copy-of-gp2")
        copied = describe(rds, "customer-db").tags
        assert copied[COMPARISON_TAG] == "cmp6" and copied[DEPLOYMENT_TAG]  # every tag, this deployment's too
    finally:
        gate.set()
    desc = aws.wait(parent, timeout_s=600)
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    out = json.loads(desc["output"])
    assert describe(rds, "customer-db").status == "available"
    assert out["cleanup"]["not_ours"] == ["customer-db"]
    assert sorted(out["cleanup"]["deleted"]) == ["cprep-cmp6-gp2", "cprep-cmp6-io1"]
    assert describe(rds, "cprep-cmp6-gp2") is None and describe(rds, "cprep-cmp6-io1") is None
    assert "not proven its own" in out["not_ours"]


def test_a_configuration_that_fails_is_recorded_and_the_rest_goes_on(aws, sample_db):
    from cutover_prep.rds.instances import RestoreFailed

    def refused(_event):
        raise RestoreFailed("restore of cprep-cmp2-gp2 was refused: StorageQuotaExceeded (injected)")

    aws.faults["handlers.start_restore"] = [refused]  # the first child (max_parallel 1: gp2)
    desc = finish(aws, comparison_input(aws, sample_db, "cmp2", max_parallel=1, benchmark=ONE_POINT))
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    document = store_of(aws).get_json("runs/cmp2/comparison.json")
    by_name = {c["name"]: c for c in document["configurations"]}
    assert by_name["gp2"]["status"] == "FAILED" and "StorageQuotaExceeded" in by_name["gp2"]["why"]
    assert by_name["io1"]["status"] == "MEASURED"
    assert document["recommendation"]["name"] == "io1"
    assert document["cleanup"]["deleted"] == ["cprep-cmp2-io1"] and document["cleanup"]["left"] == []


def test_a_step_that_fails_still_ends_in_cleanup_and_the_comparison_fails_by_name(aws, sample_db):
    def broken(_event):
        raise RuntimeError("the findings could not be read (injected)")

    aws.faults["handlers.compare_collect"] = [broken]
    desc = finish(aws, comparison_input(aws, sample_db, "cmp5", benchmark=ONE_POINT))
    assert desc["status"] == "FAILED" and desc["error"] == "ComparisonFailed"
    assert "(injected)" in desc["cause"] and "cleanup deleted 2 instance(s)" in desc["cause"]
    rds = aws.client("rds")
    assert describe(rds, "cprep-cmp5-gp2") is None and describe(rds, "cprep-cmp5-io1") is None
    document = store_of(aws).get_json("runs/cmp5/comparison.json")  # written by the cleanup alone
    assert sorted(document["cleanup"]["deleted"]) == ["cprep-cmp5-gp2", "cprep-cmp5-io1"]
    assert document["cleanup"]["left"] == [] and "(injected)" in document["error"]["cause"]
    assert get_comparison(store_of(aws), "cmp5").status == "FAILED"


def test_a_bad_input_fails_by_name_before_anything_is_restored(aws, sample_db):
    payload = comparison_input(aws, sample_db, "cmp3")
    payload["configurations"] = [{**CONFIGURATIONS[0], "storage_type": "io1"}, CONFIGURATIONS[1]]  # io1 without iops
    payload["max_paralel"] = 2
    desc = finish(aws, payload)
    assert desc["status"] == "FAILED" and desc["error"] == "InvalidInput"
    assert "max_paralel" in desc["cause"] and "iops" in desc["cause"]
    assert aws.invocations.get("handlers.start_restore") is None
    assert [i["DBInstanceIdentifier"] for i in aws.client("rds").describe_db_instances()["DBInstances"]] == ["prod-db"]


def test_the_reaper_deletes_what_a_stopped_comparison_left(aws, sample_db):
    """Done-when: the parent is killed mid-way (StopExecution runs no state, so no cleanup); the
    reaper deletes the orphaned instance once its TTL has passed, and never an untagged one."""
    restored, gate = threading.Event(), threading.Event()

    def hold(_event):  # the first child (gp2) waits after its restore, before Discover
        restored.set()
        gate.wait(120)
        # let go once every judge below has run: the child's Discover fails and its run ends there (the test only
        # waits for its thread); before, it warmed and benchmarked the database for nobody
        raise RuntimeError("the comparison was stopped and its instance reaped (injected)")

    aws.faults["handlers.discover"] = [hold]
    payload = comparison_input(aws, sample_db, "cmp4", max_parallel=1, ttl_hours=1)
    parent = start(aws, payload)
    rds = aws.client("rds")
    try:
        assert restored.wait(120), "the child never reached Discover"
    except AssertionError:
        gate.set()
        raise
    assert describe(rds, "cprep-cmp4-gp2") is not None  # restored before Discover
    later = datetime.now(UTC) + timedelta(hours=2)
    store, sfn = store_of(aws), aws.client("stepfunctions")
    try:
        # while the comparison runs, its instance is left even past the TTL
        early = run_reaper(rds=rds, sfn=sfn, store=store, now=later)
        assert early["deleted"] == [] and early["left"] == ["cprep-cmp4-gp2"]
        assert "still running" in early["details"]["left"][0]["why"]
        aws.stop(parent)
        # AWS says ABORTED; moto ends an execution stopped inside a Map as FAILED (its Map state trips over
        # the abort's event details). Either way no state ran after the stop.
        assert aws.wait(parent, timeout_s=60)["status"] in ("ABORTED", "FAILED")
        # nothing ran after the stop: no Cleanup, the instance is orphaned
        assert aws.invocations.get("handlers.compare_cleanup") is None
        assert describe(rds, "cprep-cmp4-gp2") is not None
        young = run_reaper(rds=rds, sfn=sfn, store=store)  # within its TTL (1 h): kept
        assert young["deleted"] == []
        reaped = run_reaper(rds=rds, sfn=sfn, store=store, now=later)
        assert reaped["deleted"] == ["cprep-cmp4-gp2"] and reaped["left"] == []
        assert describe(rds, "cprep-cmp4-gp2") is None
        assert describe(rds, "prod-db").status == "available"  # untagged: never considered
        assert [r.db_instance_identifier for r in get_comparison(store, "cmp4").reaped] == ["cprep-cmp4-gp2"]
    finally:
        gate.set()
        try:
            aws.wait(child(aws, "cmp4-gp2")["executionArn"], timeout_s=300)
        except Exception:  # noqa: BLE001  (only waiting for the child's thread to end before moto goes)
            pass
