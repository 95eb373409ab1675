"""One of each item a run and a deployment store, written through the code's own calls (the signatures the
records kept): the scenario ``test_records_run`` replays on today's code and compares with the items the code of
before the records (issue 34) wrote, ``records_before_34.json``.

Since then ``put_point``, ``put_scratch`` and ``put_warmup_control`` take their records (``PointItem.new`` ...), not
attribute mappings: the items they write are compared the same. Regenerate that file only from a checkout of before
the records (with those three calls written as they were then), never from this code (it is the judge):
``PYTHONPATH=<old checkout>/lambdas:. python -m tests.unit.records_scenario > tests/unit/records_before_34.json``
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

import boto3
from moto import mock_aws

FIXED = "2001-02-03T04:05:06+00:00"  # the scenario's own times; any other time is the clock's, masked
_CLOCK = re.compile(r"^(?!2001-)\d{4}-\d\d-\d\d(T|$)")
DEPLOYMENT = "arn:aws:cloudformation:us-east-1:123456789012:stack/records/1"
SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:master-AbCdEf"


def masked(value: Any) -> Any:
    """``value`` with every time the clock gave replaced by ``<now>`` (DynamoDB's typed JSON or plain)."""
    if isinstance(value, dict):
        return {k: masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    if isinstance(value, str) and _CLOCK.match(value):
        return "<now>"
    return value


def write_items(ddb: Any, s3: Any, table: str, bucket: str) -> None:
    """The calls, against ``ddb``/``s3`` (moto) and the table and bucket they hold."""
    from cutover_prep.comparison.workflow import start, update_comparison
    from cutover_prep.dal import profiles
    from cutover_prep.dal.records.run import PointItem, ScratchItem, StorageSample, VolumeSample, WarmupControl
    from cutover_prep.dal.store import Store
    from cutover_prep.pricing.book import PriceBook
    from cutover_prep.restore.trigger import Starter
    from cutover_prep.steps.validate_input import begin_run

    store = Store(dynamodb=ddb, s3=s3, table=table, bucket=bucket)
    config = {"run_id": "r1", "target": {"db_instance_identifier": "db1", "engine": "postgres", "secret_arn": SECRET},
              "restore": None, "warmup": {"max_concurrency": 4}, "benchmark": {"enabled": False},
              "verdict": {"min_coverage_pct": 99.5}, "started_at": FIXED}
    store.start_run(config)
    store.start_run({**config, "run_id": "r2", "restore": {"snapshot_identifier": "s1"}, "started_by": "arn:exec"})
    store.update_run("r1", step="planned", engine="postgres", units_total=2, selection="reads 2 tables",
                     hot_set_units=["u1"], bytes_planned=1048576, plan={"units": 2, "bytes": 1048576},
                     plan_key="runs/r1/plan.json", instance={"db_instance_class": "db.r6g.large",
                                                             "allocated_storage_gb": 100},
                     estimate={"estimated_seconds": 12.5})
    store.commit_progress("r1", "u1", seq=0, cursor={"segment": 1}, blocks=16, bytes_=131072, seconds=0.25,
                          method="seq", done=True, planned_bytes=131072)
    store.update_run("r1", status="SUCCEEDED", step="finished", finished_at=FIXED, coverage_pct=100.0,
                     findings_key="runs/r1/findings.json", verdict="READY", verdict_reasons=[],
                     preflight={"enabled": False}, benchmark_status="DISABLED", end_census_error="X",
                     end_census_cause="y")
    store.update_run("r2", status="FAILED", step="failed", error="E", cause="c", coverage_pct=97.25)
    store.put_point("r1", PointItem.new(point_id="probe-cold", status="DONE", phase="cold", iops=1234.5,
                                        blocks_read=100, latency_us={"p50": 800, "p99": 2500.5}, started_at=FIXED,
                                        finished_at=FIXED, retries=0, nothing=None))
    store.put_point("r1", PointItem.new(point_id="seq-8", status="FAILED", error="E", cause="c", retries=2))
    store.put_scratch("r1", ScratchItem.new(name="cprep_scratch", status="CREATING", engine="postgres", database="app",
                                            point_id="write-direct", max_bytes=1024, created_at=FIXED))
    store.put_storage_sample("r1", StorageSample.new(at="2001-02-03T04:06:00.000001+00:00", step="WarmUnit",
                                                     status="optimizing", percent=42))
    store.put_storage_sample("r1", StorageSample.new(at="2001-02-03T04:07:00.000001+00:00", step="Finalize",
                                                     status=None, percent=None, gap="Throttling"))
    store.put_storage_sample("r1", StorageSample.new(
        at="2001-02-03T04:08:00.000001+00:00", step="WarmUnit", status="optimizing", percent=50,
        volumes=[VolumeSample(volume="rdsdbdata2", status="optimizing", percent=10)]))
    store.claim_storage_sample("r1", FIXED, 60)
    store.put_warmup_control("r1", WarmupControl.model_validate(
        {"attempt": 0, "holders": ["u1"], "t0": 1000.5, "window_started": 1000.5,
         "control": {"level": 2, "best_level": None, "best_mib_per_s": None, "strikes": 0,
                     "settled": False, "samples": [[1.5, 2, 30.25]]},
         "window_bytes": 0, "window_chunks": 0, "adaptive": True, "maximum": 8,
         "rate": {"mib_per_s_per_reader": 20.0, "source": "assumed"},
         "hot_left": ["u1"], "after_hot_set": None}), version=None)
    profiles.save(ddb, table, "default", {"warmup": {"max_concurrency": 2}})
    starter = Starter(dynamodb=ddb, table=table, stepfunctions=None, state_machine_arn="arn:sm", rds=None)
    starter.claim("db-abc", "RDS-EVENT-0043")
    starter._confirm("db-abc", "arn:exec:1")
    starter.claim("db-def", "schedule")
    starter.reject({"DBInstanceIdentifier": "x"}, "db-ghi", "bad tag", "schedule")
    PriceBook(client=None, store=store, clock=lambda: 1_800_000_000)._cache("rds|db.r6g.large|x", 0.26)
    os.environ["CUTOVER_PREP_DEPLOYMENT_ID"] = DEPLOYMENT
    planned = start({"comparison_id": "cmp", "snapshot_identifier": "snap", "target": {"secret_arn": SECRET},
                     "configurations": [{"name": n, "db_instance_class": "db.t3.medium", "storage_type": "gp2",
                                         "allocated_gb": 100} for n in ("a", "b")], "targets": {"min_read_iops": 1}},
                    execution_name="cmp", execution_arn="arn:aws:states:us-east-1:123456789012:execution:x:cmp",
                    store=store)
    for run in planned["runs"]:
        begin_run(run["run_input"], execution_name=run["run_id"], store=store,
                  allowed_hosts=None)
    update_comparison(store, "cmp", step="collected", recommendation="a")


def stored_items() -> list[dict[str, Any]]:
    """The scenario's items as DynamoDB's typed JSON, in key order (a fresh moto account)."""
    for name, value in (("AWS_DEFAULT_REGION", "us-east-1"), ("AWS_ACCESS_KEY_ID", "testing"),
                        ("AWS_SECRET_ACCESS_KEY", "testing"), ("AWS_SESSION_TOKEN", "testing")):
        os.environ[name] = value
    os.environ.pop("AWS_PROFILE", None)
    from cutover_prep.workflows import table_definition

    with mock_aws():
        ddb, s3 = boto3.client("dynamodb", region_name="us-east-1"), boto3.client("s3", region_name="us-east-1")
        ddb.create_table(**table_definition("records"))
        s3.create_bucket(Bucket="records-evidence")
        write_items(ddb, s3, "records", "records-evidence")
        items = ddb.scan(TableName="records")["Items"]
    return sorted(items, key=lambda i: (i["pk"]["S"], i["sk"]["S"]))


if __name__ == "__main__":
    json.dump(stored_items(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
