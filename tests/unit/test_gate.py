"""Issue 36 §2: the gate's conditions against AWS as moto plays it, and botocore's Stubber on the real
clients where moto lacks the fields or the API (RDS's StorageOperationStatus, DMS DescribeTableStatistics):
the Stubber checks every request and response against the service's own model, so the field names below
are AWS's (RDS API reference, DBInstance: https://docs.aws.amazon.com/AmazonRDS/latest/APIReference/API_DBInstance.html;
DMS TableStatistics: https://docs.aws.amazon.com/dms/latest/APIReference/API_TableStatistics.html)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from click.testing import CliRunner
from moto import mock_aws

from cutover_prep.cli.main import app
from cutover_prep.dal.records.findings import Findings
from cutover_prep.dal.records.run import RunItem
from cutover_prep.gate.dms import dms_condition
from cutover_prep.gate.evaluate import Sources, evaluate, publish, wait_for
from cutover_prep.gate.model import Condition, DmsSpec, GateResult, GateSpec
from cutover_prep.gate.rds import rds_conditions
from cutover_prep.gate.verdict import verdict_condition

REGION = "us-east-1"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch):
    for k, v in {"AWS_DEFAULT_REGION": REGION, "AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t"}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        yield


def _instance(**extra: Any) -> dict[str, Any]:
    return {"DBInstanceIdentifier": "db1", "DBInstanceStatus": "available", "Engine": "oracle-ee",
            "PendingModifiedValues": {}, **extra}


def stubbed_rds(instance: dict[str, Any]):
    rds = boto3.client("rds", region_name=REGION, aws_access_key_id="t", aws_secret_access_key="t")
    stub = Stubber(rds)
    stub.add_response("describe_db_instances", {"DBInstances": [instance]}, {"DBInstanceIdentifier": "db1"})
    stub.activate()
    return rds


# -- the verdict -----------------------------------------------------------------------------------

def test_the_verdict_opens_only_on_ready_and_names_each_failing_reason() -> None:
    ready = Findings.read(
        {"verdict": {"verdict": "READY", "reasons": [{"code": "COVERAGE", "ok": True, "message": "all read"}]}})
    assert verdict_condition(ready, run_id="r1").state == "open"
    not_ready = Findings.read({"verdict": {"verdict": "NOT_READY", "reasons": [
        {"code": "COVERAGE", "ok": False, "message": "12 MiB not read"},
        {"code": "END_CENSUS", "ok": False, "message": "the end census did not run"}]}})
    closed = verdict_condition(not_ready, run_id="r1")
    assert closed.state == "closed"
    assert "12 MiB not read" in closed.summary and "the end census did not run" in closed.summary
    assert verdict_condition(None, run_id="r1").state == "unknown"
    running = verdict_condition(RunItem.read({"status": "RUNNING", "run_id": "r1"}), run_id="r1")  # unfinished
    assert running.state == "closed" and "no verdict yet" in running.summary


def test_a_warm_hot_set_opens_the_verdict_only_when_the_input_accepts_it() -> None:
    doc = {"verdict": {"verdict": "NOT_READY", "reasons": []},
           "hot_set": {"warm_at": "2026-11-27T10:00:00+00:00", "units": 3, "units_done": 3}}
    assert verdict_condition(Findings.read(doc), run_id="r", accept="ready").state == "closed"
    warm = verdict_condition(Findings.read(doc), run_id="r", accept="hot_set_warm")
    assert warm.state == "open" and warm.evidence == {"hot_set_warm_at": "2026-11-27T10:00:00+00:00", "units": 3}
    cold = {**doc, "hot_set": {"warm_at": None, "units": 3, "units_done": 1}}
    assert verdict_condition(Findings.read(cold), run_id="r", accept="hot_set_warm").state == "closed"


# -- RDS -------------------------------------------------------------------------------------------

def test_storage_initializing_on_an_additional_volume_keeps_the_gate_closed() -> None:
    instance = _instance(AdditionalStorageVolumes=[
        {"VolumeName": "rdsdbdata2", "StorageVolumeStatus": "ACTIVE", "AllocatedStorage": 100,
         "StorageOperationStatus": "Initializing", "StorageOperationPercentProgress": 40}])
    storage, status = rds_conditions(stubbed_rds(instance), "db1")
    assert storage.state == "closed" and "rdsdbdata2 Initializing 40 %" in storage.summary, storage
    assert status.state == "open"
    primary = _instance(StorageOperationStatus="Initializing", StorageOperationPercentProgress=85)
    assert rds_conditions(stubbed_rds(primary), "db1")[0].summary.endswith("primary Initializing 85 %")
    assert rds_conditions(stubbed_rds(_instance()), "db1")[0].state == "open"


def test_a_pending_modification_or_reboot_keeps_the_gate_closed() -> None:
    pending = _instance(PendingModifiedValues={"DBInstanceClass": "db.r6i.large"},
                        DBParameterGroups=[{"DBParameterGroupName": "pg1", "ParameterApplyStatus": "pending-reboot"}])
    _, status = rds_conditions(stubbed_rds(pending), "db1")
    assert status.state == "closed"
    assert "pending modification of DBInstanceClass" in status.summary and "pg1" in status.summary
    busy = _instance(DBInstanceStatus="storage-initialization")
    assert "status 'storage-initialization'" in rds_conditions(stubbed_rds(busy), "db1")[1].summary


def test_an_instance_rds_does_not_know_is_unknown_not_open(aws) -> None:
    conditions = rds_conditions(boto3.client("rds", region_name=REGION), "nope")
    assert [c.state for c in conditions] == ["unknown", "unknown"]
    assert "DBInstanceNotFound" in conditions[0].summary


def test_moto_s_available_instance_opens_both_rds_conditions(aws) -> None:
    rds = boto3.client("rds", region_name=REGION)
    rds.create_db_instance(DBInstanceIdentifier="db1", DBInstanceClass="db.t3.micro", Engine="postgres",
                           MasterUsername="u", MasterUserPassword="p" * 12, AllocatedStorage=20)
    assert [c.state for c in rds_conditions(rds, "db1")] == ["open", "open"]


# -- DMS -------------------------------------------------------------------------------------------

class _Dms:
    """moto's DMS, with DescribeTableStatistics (which moto lacks) from a Stubber on a real client."""

    def __init__(self, moto_client: Any, tables: list[dict[str, Any]], arn: str) -> None:
        self._moto = moto_client
        self._real = boto3.client("dms", region_name=REGION)
        stub = Stubber(self._real)
        stub.add_response("describe_table_statistics", {"TableStatistics": tables}, {"ReplicationTaskArn": arn})
        stub.activate()

    def describe_table_statistics(self, **kw: Any) -> Any:
        return self._real.describe_table_statistics(**kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._moto, name)


def _dms_task(migration_type: str = "full-load-and-cdc") -> tuple[Any, str, str]:
    dms = boto3.client("dms", region_name=REGION)
    inst = dms.create_replication_instance(ReplicationInstanceIdentifier="ri1",
                                           ReplicationInstanceClass="dms.t3.medium")["ReplicationInstance"]
    ends = [dms.create_endpoint(EndpointIdentifier=n, EndpointType=t, EngineName="postgres")["Endpoint"]["EndpointArn"]
            for n, t in (("src", "source"), ("dst", "target"))]
    task = dms.create_replication_task(ReplicationTaskIdentifier="task1", SourceEndpointArn=ends[0],
                                       TargetEndpointArn=ends[1], ReplicationInstanceArn=inst["ReplicationInstanceArn"],
                                       MigrationType=migration_type, TableMappings="{}")["ReplicationTask"]
    dms.start_replication_task(ReplicationTaskArn=task["ReplicationTaskArn"],
                               StartReplicationTaskType="start-replication")
    return dms, task["ReplicationTaskArn"], "ri1"


def _latency(cloudwatch: Any, task_arn: str, values: dict[str, list[float]], now: datetime) -> None:
    for metric, series in values.items():
        for i, v in enumerate(series):
            cloudwatch.put_metric_data(Namespace="AWS/DMS", MetricData=[{
                "MetricName": metric, "Value": v, "Unit": "Seconds",
                "Timestamp": now - timedelta(minutes=len(series) - i),
                "Dimensions": [{"Name": "ReplicationInstanceIdentifier", "Value": "ri1"},
                               {"Name": "ReplicationTaskIdentifier", "Value": task_arn.rsplit(":", 1)[-1]}]}])


CLEAN = [{"SchemaName": "app", "TableName": "orders", "ValidationState": "Validated",
          "ValidationFailedRecords": 0, "ValidationSuspendedRecords": 0}]


def test_a_caught_up_dms_task_opens_and_a_late_minute_in_the_window_closes(aws) -> None:
    now = datetime.now(UTC)
    moto_dms, arn, _ = _dms_task()
    cw = boto3.client("cloudwatch", region_name=REGION)
    _latency(cw, arn, {"CDCLatencySource": [1, 2, 1, 1, 2], "CDCLatencyTarget": [2, 3, 2, 2, 3]}, now)
    spec = DmsSpec(task_arn=arn, max_latency_seconds=10, window_seconds=300)
    opened = dms_condition(_Dms(moto_dms, CLEAN, arn), cw, spec, now=now)
    assert opened.state == "open", opened.summary
    _latency(cw, arn, {"CDCLatencyTarget": [45]}, now + timedelta(seconds=30))
    late = dms_condition(_Dms(moto_dms, CLEAN, arn), cw, spec, now=now + timedelta(seconds=40))
    assert late.state == "closed" and "CDCLatencyTarget up to 45 s" in late.summary, late.summary


def test_dms_with_no_latency_datapoints_is_unknown_and_failed_validation_closes(aws) -> None:
    now = datetime.now(UTC)
    moto_dms, arn, _ = _dms_task()
    cw = boto3.client("cloudwatch", region_name=REGION)
    spec = DmsSpec(task_arn=arn, window_seconds=300)
    assert dms_condition(_Dms(moto_dms, CLEAN, arn), cw, spec, now=now).state == "unknown"
    _latency(cw, arn, {"CDCLatencySource": [1] * 5, "CDCLatencyTarget": [1] * 5}, now)
    failed = [{"SchemaName": "app", "TableName": "orders", "ValidationState": "Mismatched records",
               "ValidationFailedRecords": 7, "ValidationSuspendedRecords": 0}]
    closed = dms_condition(_Dms(moto_dms, failed, arn), cw, spec, now=now)
    assert closed.state == "closed" and "app.orders: Mismatched records (7 failed, 0 suspended)" in closed.summary


def test_a_full_load_only_or_stopped_task_keeps_the_gate_closed(aws) -> None:
    now = datetime.now(UTC)
    moto_dms, arn, _ = _dms_task("full-load")
    cw = boto3.client("cloudwatch", region_name=REGION)
    _latency(cw, arn, {"CDCLatencySource": [1] * 5, "CDCLatencyTarget": [1] * 5}, now)
    closed = dms_condition(_Dms(moto_dms, CLEAN, arn), cw, DmsSpec(task_arn=arn), now=now)
    assert closed.state == "closed" and "full-load-only" in closed.summary
    moto_dms.stop_replication_task(ReplicationTaskArn=arn)
    stopped = dms_condition(_Dms(moto_dms, CLEAN, arn), cw, DmsSpec(task_arn=arn), now=now)
    assert "task status 'stopped'" in stopped.summary


# -- the gate as a whole -----------------------------------------------------------------------------

def test_closed_outranks_unknown_and_a_source_that_raises_is_unknown() -> None:
    def boom() -> Condition:
        raise ConnectionRefusedError("connection refused\nsecond line")

    result = evaluate(GateSpec(require_verdict="off"), Sources(replication=boom))
    assert result.state == "unknown" and result.exit_code == 3
    assert "ConnectionRefusedError: connection refused" in result.conditions[0].summary
    not_ready = RunItem.read({"run_id": "r", "verdict": "NOT_READY"})
    closed = evaluate(GateSpec(), Sources(run_id="r", record=lambda: not_ready, replication=boom))
    assert closed.state == "closed" and closed.exit_code == 1
    assert evaluate(GateSpec(), Sources()).state == "unknown"  # nothing checked is never open


def test_wait_prints_one_line_per_change_and_stops_at_the_deadline() -> None:
    states = iter(["closed", "closed", "unknown", "unknown", "closed", "open"])
    now = [0.0]
    seen: list[str] = []

    def check() -> GateResult:
        return GateResult.of([Condition(name="replication", state=next(states), summary="s")])

    result, timed_out = wait_for(check, timeout_s=100, poll_s=10, on_change=lambda r: seen.append(r.state),
                                 clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert (result.state, timed_out, seen) == ("open", False, ["closed", "unknown", "closed", "open"])
    never = wait_for(lambda: GateResult.of([Condition(name="x", state="closed", summary="s")]), timeout_s=25,
                     poll_s=10, on_change=lambda r: None, clock=lambda: now[0],
                     sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert never[1] is True and never[0].state == "closed"


def test_gate_events_reach_an_eventbridge_rule(aws) -> None:
    events, sqs = boto3.client("events", region_name=REGION), boto3.client("sqs", region_name=REGION)
    queue = sqs.create_queue(QueueName="gate")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.create_event_bus(Name="pipeline")
    events.put_rule(Name="gate", EventBusName="pipeline",
                    EventPattern=json.dumps({"source": ["cutover-prep.gate"], "detail-type": ["GateOpened"]}))
    events.put_targets(Rule="gate", EventBusName="pipeline", Targets=[{"Id": "q", "Arn": arn}])
    publish(events, GateResult.of([Condition(name="replication", state="closed", summary="behind")]),
            run_id="r1", bus="pipeline")
    publish(events, GateResult.of([Condition(name="replication", state="open", summary="caught up")]),
            run_id="r1", bus="pipeline")
    got = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    assert len(got) == 1  # the rule matches GateOpened only
    body = json.loads(got[0]["Body"])
    assert body["detail-type"] == "GateOpened" and body["detail"]["conditions"][0]["summary"] == "caught up"


# -- the command line --------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "said"), [
    ([], "nothing to check"),
    (["--findings", "f.json", "--run-id", "r"], "not both"),
    (["--source-dsn", "postgresql://u@h/db"], "--source-dsn goes with --replica-dsn"),
    (["--accept-hot-set", "--target", "db1"], "give --findings"),
    (["--dms-task", "task1"], "not a DMS task ARN"),
    (["--replica-dsn", "oracle://u:p@h:1521/svc"], "native replication is checked on PostgreSQL and MySQL"),
])
def test_bad_gate_input_is_one_line_and_exit_2(args: list[str], said: str) -> None:
    result = CliRunner().invoke(app, ["gate", *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and said in lines[0] and "Traceback" not in result.output


def test_gate_on_a_local_run_s_findings(tmp_path: Path) -> None:
    run = tmp_path / "local-1"
    run.mkdir()
    (run / "findings.json").write_text(json.dumps({"run_id": "local-1", "verdict": {"verdict": "NOT_READY",
                                       "reasons": [{"code": "COVERAGE", "ok": False, "message": "3 MiB not read"}]}}))
    closed = CliRunner().invoke(app, ["gate", "--findings", str(run / "findings.json")])
    assert closed.exit_code == 1 and "✗ verdict: run local-1 is NOT_READY: 3 MiB not read" in closed.output
    ready = {"run_id": "local-1", "verdict": {"verdict": "READY", "reasons": []}}
    (run / "findings.json").write_text(json.dumps(ready))
    opened = CliRunner().invoke(app, ["gate", "--findings", str(run / "findings.json"), "--json"])
    assert opened.exit_code == 0 and json.loads(opened.output)["state"] == "open"


# -- the examples ------------------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "gate"


def _gate_commands(text: str) -> list[list[str]]:
    import shlex

    joined = text.replace("\\\n", " ")
    return [shlex.split(line.split("cutover-prep gate", 1)[1].split("#")[0])
            for line in joined.splitlines() if "cutover-prep gate" in line and not line.lstrip().startswith("#")]


@pytest.mark.parametrize("name", ["github-actions.yml", "buildspec.yml", "terraform.tf"])
def test_every_pipeline_example_calls_the_gate_with_options_it_takes(name: str) -> None:
    from cutover_prep.cli.gate import gate

    commands = _gate_commands((EXAMPLES / name).read_text())
    assert commands, name
    for args in commands:
        ctx = gate.make_context("gate", list(args))  # click's own parser: an unknown option raises
        assert ctx.params["wait"] is True and ctx.params["timeout"] >= 60


def test_the_state_machine_example_is_a_valid_gate_input() -> None:
    from cutover_prep.gate.step import parse_input

    parsed = parse_input(json.loads((EXAMPLES / "state-machine-input.json").read_text()))
    assert parsed.gate.dms is not None and parsed.timeout_seconds == 7200


def test_waiting_on_a_deployed_run_looks_the_stack_up_once(aws) -> None:
    """--wait checks every --poll seconds: the stack's outputs are read at the first check, not at each one."""
    from cutover_prep.cli.gate import _run_item_reader
    from cutover_prep.workflows import TRIGGERED_WORKFLOW, WORKFLOWS, table_definition

    session = boto3.Session(region_name=REGION)
    dynamodb = session.client("dynamodb")
    dynamodb.create_table(**table_definition("gate-table"))
    calls: list[str] = []
    cloudformation = session.client("cloudformation")
    cloudformation.meta.events.register("before-call.cloudformation.DescribeStacks",
                                         lambda **_: calls.append("DescribeStacks"))
    outputs = [{"OutputKey": WORKFLOWS[TRIGGERED_WORKFLOW].output_name,
                "OutputValue": "arn:aws:states:us-east-1:123456789012:stateMachine:cutover-prep-warmup"},
               {"OutputKey": "TableName", "OutputValue": "gate-table"}]
    template = {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}},
                "Outputs": {o["OutputKey"]: {"Value": o["OutputValue"]} for o in outputs}}
    cloudformation.create_stack(StackName="CutoverPrep", TemplateBody=json.dumps(template))

    class Clients:
        def client(self, name: str) -> Any:
            return {"cloudformation": cloudformation, "dynamodb": dynamodb}.get(name) or session.client(name)

    read = _run_item_reader(Clients(), "CutoverPrep", "r1")
    assert [read(), read(), read()] == [None, None, None]  # no such run yet: not found, three checks
    assert calls == ["DescribeStacks"]
