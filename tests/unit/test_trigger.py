"""The restore trigger: the rule's pattern, opt-in by tag, profiles, the scheduled fallback,
and exactly one run per restore whichever path fires first (moto RDS, DynamoDB, Step Functions)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from botocore.exceptions import ClientError
from moto.events.models import EventPattern

from cutover_prep.live import completion
from cutover_prep.models.steps import TriggerEvent
from cutover_prep.rds.answers import DbInstance
from cutover_prep.restore.trigger import (
    EVENT_PATTERN,
    TAG_ENABLED,
    TAG_PROFILE,
    TAG_SECRET,
    Starter,
    execution_name,
    matches_pattern,
    on_rds_event,
    sweep,
)
from tests.unit.conftest import TABLE

SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf"


def rds_event(event_id="RDS-EVENT-0043", ident="restored-1", source="aws.rds", detail_type="RDS DB Instance Event"):
    return {"version": "0", "id": "e1", "detail-type": detail_type, "source": source, "account": "123456789012",
            "time": "2026-11-22T10:00:00Z", "region": "us-east-1",
            "resources": [f"arn:aws:rds:us-east-1:123456789012:db:{ident}"],
            "detail": {"EventCategories": ["restoration"], "SourceType": "DB_INSTANCE",
                       "SourceArn": f"arn:aws:rds:us-east-1:123456789012:db:{ident}", "Date": "2026-11-22T10:00:00Z",
                       "Message": "Restored from snapshot", "SourceIdentifier": ident, "EventID": event_id}}


def parsed(*args, **kwargs) -> TriggerEvent:
    """An RDS event as OnRestore's handler gets it (``event_parser``)."""
    return TriggerEvent.model_validate(rds_event(*args, **kwargs))


@pytest.mark.parametrize(("event", "matches"), [
    (rds_event("RDS-EVENT-0043"), True),
    (rds_event("RDS-EVENT-0019"), True),
    (rds_event("RDS-EVENT-0005"), False),  # instance created
    (rds_event(source="aws.ec2"), False),
    (rds_event(detail_type="RDS DB Snapshot Event"), False),
])
def test_rule_pattern(event, matches):
    # EVENT_PATTERN is the deployed rule's pattern (asserted on the template); moto's EventBridge
    # matcher applies it, and the handler's own check agrees with it
    assert EventPattern.load(json.dumps(EVENT_PATTERN)).matches_event(event) is matches
    assert matches_pattern(TriggerEvent.model_validate(event)) is matches


@pytest.fixture(autouse=True)
def no_default_amis(monkeypatch):
    """moto's RDS makes an EC2 backend per test, which loads moto's thousands of default AMIs (most of this
    file's time); nothing here reads an AMI. moto reads this setting when a backend is made."""
    monkeypatch.setenv("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")


@pytest.fixture(autouse=True)
def unique_resource_ids(monkeypatch):
    """moto gives every DB instance the same DbiResourceId; AWS gives each new instance its own."""
    import itertools

    from moto.rds.models import DBInstance

    counter, init = itertools.count(1), DBInstance.__init__

    def init_with_own_id(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.dbi_resource_id = f"db-TEST{next(counter):022d}"
    monkeypatch.setattr(DBInstance, "__init__", init_with_own_id)


_SESSIONS: list[boto3.session.Session] = []


def _session() -> boto3.session.Session:
    """One boto3 session for the file's RDS, Step Functions and IAM clients: moto gives every test a new
    default session, which loads each service model (RDS's is large) from disk again. Its clients are
    made inside each test's mock_aws, like boto3.client's."""
    if not _SESSIONS:
        _SESSIONS.append(boto3.session.Session())
    return _SESSIONS[0]


@pytest.fixture
def env(store):
    session = _session()
    rds = session.client("rds", region_name="us-east-1")
    sfn = session.client("stepfunctions", region_name="us-east-1")
    iam = session.client("iam", region_name="us-east-1")
    role = iam.create_role(RoleName="sfn", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    arn = sfn.create_state_machine(name="m", roleArn=role, definition=json.dumps(
        {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}))["stateMachineArn"]
    starter = Starter(dynamodb=store._ddb, table=TABLE, stepfunctions=sfn, state_machine_arn=arn, rds=rds,
                      events=Recorder())
    return rds, sfn, arn, starter


class Recorder:
    """EventBridge's put_events, kept."""

    def __init__(self):
        self.entries = []

    def put_events(self, Entries):  # noqa: N803 - boto3's name
        self.entries.extend(Entries)
        return {"FailedEntryCount": 0, "Entries": [{"EventId": str(len(self.entries))}]}


class FlakyStepFunctions:
    """Step Functions that throttles the first ``failures`` starts."""

    def __init__(self, real, failures):
        self.real, self.failures = real, failures

    def start_execution(self, **kwargs):
        if self.failures:
            self.failures -= 1
            raise ClientError({"Error": {"Code": "ThrottlingException", "Message": "Rate exceeded"}}, "StartExecution")
        return self.real.start_execution(**kwargs)


def make_instance(rds, ident, tags):
    rds.create_db_instance(DBInstanceIdentifier=ident, DBInstanceClass="db.m5.large", Engine="postgres",
                           AllocatedStorage=100, MasterUsername="u", MasterUserPassword="password1",
                           Tags=[{"Key": k, "Value": v} for k, v in tags.items()])


def executions(sfn, arn):
    return sfn.list_executions(stateMachineArn=arn)["executions"]


def test_event_for_an_opted_in_instance_starts_one_run(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "restored-1", {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    result = on_rds_event(parsed(ident="restored-1"), starter)
    assert result["action"] == "started"
    (execution,) = executions(sfn, arn)
    payload = json.loads(sfn.describe_execution(executionArn=execution["executionArn"])["input"])
    assert payload["target"] == {"db_instance_identifier": "restored-1", "secret_arn": SECRET}


def test_not_opted_in_and_gone_instances_are_ignored(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "other", {"team": "x"})
    assert on_rds_event(parsed(ident="other"), starter)["action"] == "ignored"
    assert on_rds_event(parsed(ident="never-existed"), starter)["action"] == "ignored"
    assert on_rds_event(parsed("RDS-EVENT-0005", ident="other"), starter)["action"] == "ignored"
    assert executions(sfn, arn) == []


def test_event_then_schedule_then_event_again_is_one_run(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "restored-2", {TAG_ENABLED: "TRUE", TAG_SECRET: SECRET})
    assert on_rds_event(parsed(ident="restored-2"), starter)["action"] == "started"
    swept = sweep(starter, lookback_hours=1)
    assert [r["action"] for r in swept if r["instance"] == "restored-2"] == ["duplicate"]
    assert on_rds_event(parsed("RDS-EVENT-0019", ident="restored-2"), starter)["action"] == "duplicate"
    assert len(executions(sfn, arn)) == 1


def test_schedule_finds_what_the_events_missed_and_skips_old_restores(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "missed", {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    make_instance(rds, "untagged", {})
    results = {r["instance"]: r["action"] for r in sweep(starter, lookback_hours=1)}
    assert results == {"missed": "started"}
    later = datetime.now(UTC) + timedelta(hours=3)
    assert sweep(starter, lookback_hours=1, now=later) == []  # restored long ago: not ours to start
    assert len(executions(sfn, arn)) == 1


def test_profile_supplies_options_and_tags_override(env, store):
    rds, sfn, arn, starter = env
    profile = {"target": {"secret_arn": SECRET}, "warmup": {"max_concurrency": 16},
               "benchmark": {"seconds_per_point": 60}}
    store._ddb.put_item(TableName=TABLE, Item={"pk": {"S": "PROFILE#oracle-prod"}, "sk": {"S": "PROFILE"},
                                              "input": {"S": json.dumps(profile)}})
    make_instance(rds, "restored-3", {TAG_ENABLED: "true", TAG_PROFILE: "oracle-prod",
                                      "cutover-prep:max-concurrency": "32"})
    assert on_rds_event(parsed(ident="restored-3"), starter)["action"] == "started"
    payload = json.loads(sfn.describe_execution(executionArn=executions(sfn, arn)[0]["executionArn"])["input"])
    assert payload["warmup"]["max_concurrency"] == 32 and payload["benchmark"]["seconds_per_point"] == 60


@pytest.mark.parametrize(("tags", "needle"), [
    ({TAG_ENABLED: "true"}, TAG_SECRET),
    ({TAG_ENABLED: "true", TAG_SECRET: "not-an-arn"}, "target.secret_arn"),
    ({TAG_ENABLED: "true", TAG_SECRET: SECRET, "cutover-prep:max-concurrency": "lots"}, "not a number"),
    ({TAG_ENABLED: "true", TAG_SECRET: SECRET, "cutover-prep:benchmark": "flase"}, "true or false"),
])
def test_bad_tags_are_rejected_with_the_reason_and_start_nothing(env, tags, needle):
    rds, sfn, arn, starter = env
    make_instance(rds, "bad", tags)
    result = on_rds_event(parsed(ident="bad"), starter)
    assert result["action"] == "rejected" and needle in result["why"]
    assert executions(sfn, arn) == []


def test_execution_names_are_valid_and_stable():
    ident, key = "a" * 63, "db-ABC@2026-11-22T10:00:00+00:00"
    name = execution_name(ident, key)
    assert name == execution_name(ident, key) and len(name) <= 80
    assert name != execution_name(ident, "db-ABC@2026-11-23T10:00:00+00:00")
    assert all(c.isalnum() or c in "-_" for c in name)


def test_a_start_that_failed_after_the_claim_is_retried_not_lost(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "throttled", {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    starter.sfn = FlakyStepFunctions(sfn, failures=1)
    with pytest.raises(ClientError):  # the event path fails loudly: EventBridge and Lambda retry it
        on_rds_event(parsed(ident="throttled"), starter)
    assert executions(sfn, arn) == []
    (result,) = sweep(starter, lookback_hours=1)  # the claim exists but no run: the sweep starts it
    assert result["action"] == "started" and result["retried_claim"] is True
    assert on_rds_event(parsed(ident="throttled"), starter)["action"] == "duplicate"
    assert len(executions(sfn, arn)) == 1


def test_one_instance_failing_does_not_stop_the_sweep(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "first", {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    make_instance(rds, "second", {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    starter.sfn = FlakyStepFunctions(sfn, failures=1)
    actions = sorted(r["action"] for r in sweep(starter, lookback_hours=1))
    assert actions == ["error", "started"]
    assert sorted(r["action"] for r in sweep(starter, lookback_hours=1)) == ["duplicate", "started"]
    assert len(executions(sfn, arn)) == 2


def test_a_new_restore_under_a_name_used_before_gets_its_own_run(env):
    rds, sfn, arn, starter = env
    tags = {TAG_ENABLED: "true", TAG_SECRET: SECRET}
    make_instance(rds, "rehearsal", tags)
    assert on_rds_event(parsed(ident="rehearsal"), starter)["action"] == "started"
    rds.delete_db_instance(DBInstanceIdentifier="rehearsal", SkipFinalSnapshot=True)
    make_instance(rds, "rehearsal", tags)  # the second rehearsal: same name, a new instance
    assert on_rds_event(parsed(ident="rehearsal"), starter)["action"] == "started"
    assert on_rds_event(parsed("RDS-EVENT-0019", ident="rehearsal"), starter)["action"] == "duplicate"
    assert len(executions(sfn, arn)) == 2


def test_a_restore_seen_while_creating_and_again_when_available_is_one_run(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "fresh", {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    available = rds.describe_db_instances(DBInstanceIdentifier="fresh")["DBInstances"][0]
    creating = {k: v for k, v in available.items() if k != "InstanceCreateTime"} | {"DBInstanceStatus": "creating"}
    assert starter.consider(DbInstance.model_validate(creating), via="RDS-EVENT-0043")["action"] == "started"
    assert starter.consider(DbInstance.model_validate(available), via="schedule")["action"] == "duplicate"
    assert len(executions(sfn, arn)) == 1


def test_a_run_already_started_is_a_duplicate_whatever_its_tags_or_profile_say_now(env, store):
    rds, sfn, arn, starter = env
    make_instance(rds, "changed", {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    assert on_rds_event(parsed(ident="changed"), starter)["action"] == "started"
    instance = rds.describe_db_instances(DBInstanceIdentifier="changed")["DBInstances"][0]
    rds.remove_tags_from_resource(ResourceName=instance["DBInstanceArn"], TagKeys=[TAG_SECRET])
    assert [r["action"] for r in sweep(starter, lookback_hours=1)] == ["duplicate"]  # not "rejected"
    assert starter.events.entries == []  # no false "Run Not Started"


def test_the_sweep_skips_what_will_not_come_up_and_defers_when_out_of_time(env):
    rds, sfn, arn, starter = env
    for ident in ("one", "two", "three"):
        make_instance(rds, ident, {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    rds.stop_db_instance(DBInstanceIdentifier="two")
    budget = iter([60.0, 5.0])
    results = sweep(starter, lookback_hours=1, time_left_s=lambda: next(budget))
    assert [(r["instance"], r["action"]) for r in results] == [("one", "started"), ("three", "deferred")]
    assert [(r["instance"], r["action"]) for r in sweep(starter, lookback_hours=1)] == [
        ("one", "duplicate"), ("three", "started")]


def test_a_network_error_on_one_instance_does_not_stop_the_sweep(env):
    from botocore.exceptions import EndpointConnectionError

    rds, sfn, arn, starter = env
    make_instance(rds, "first", {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    make_instance(rds, "second", {TAG_ENABLED: "true", TAG_SECRET: SECRET})

    class Unreachable(FlakyStepFunctions):
        def start_execution(self, **kwargs):
            if self.failures:
                self.failures -= 1
                raise EndpointConnectionError(endpoint_url="https://states.us-east-1.amazonaws.com")
            return self.real.start_execution(**kwargs)

    starter.sfn = Unreachable(sfn, failures=1)
    assert sorted(r["action"] for r in sweep(starter, lookback_hours=1)) == ["error", "started"]


def test_an_instance_without_identity_yet_is_left_for_the_sweep(env):
    _, sfn, arn, starter = env
    instance = {"DBInstanceIdentifier": "creating", "DBInstanceStatus": "creating",
                "TagList": [{"Key": TAG_ENABLED, "Value": "true"}, {"Key": TAG_SECRET, "Value": SECRET}]}
    assert starter.consider(DbInstance.model_validate(instance), via="RDS-EVENT-0043")["action"] == "waiting"
    assert executions(sfn, arn) == []


def test_a_rejected_restore_is_told_once_and_starts_when_the_tags_are_fixed(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "untold", {TAG_ENABLED: "true"})
    assert on_rds_event(parsed(ident="untold"), starter)["action"] == "rejected"
    assert [r["action"] for r in sweep(starter, lookback_hours=1)] == ["rejected"]
    (entry,) = starter.events.entries  # once, not every 15 minutes
    assert entry["Source"] == completion.SOURCE and entry["DetailType"] == completion.NOT_STARTED
    detail = json.loads(entry["Detail"])
    assert detail["status"] == "NOT_STARTED" and detail["verdict"] == "NOT_READY"
    assert detail["target"]["db_instance_identifier"] == "untold" and TAG_SECRET in detail["reasons"][0]
    assert set(detail) == set(completion.completion_detail(
        {"run_id": "r"}, status="SUCCEEDED", verdict="READY", reasons=[], bucket="b", findings_key=None))
    arn_of_instance = rds.describe_db_instances(DBInstanceIdentifier="untold")["DBInstances"][0]["DBInstanceArn"]
    rds.add_tags_to_resource(ResourceName=arn_of_instance, Tags=[{"Key": TAG_SECRET, "Value": SECRET}])
    assert [r["action"] for r in sweep(starter, lookback_hours=1)] == ["started"]
    assert len(executions(sfn, arn)) == 1 and len(starter.events.entries) == 1


def test_a_renamed_restore_is_still_the_same_restore(env):
    rds, sfn, arn, starter = env
    make_instance(rds, "restored-tmp", {TAG_ENABLED: "true", TAG_SECRET: SECRET})
    assert on_rds_event(parsed(ident="restored-tmp"), starter)["action"] == "started"
    instance = rds.describe_db_instances(DBInstanceIdentifier="restored-tmp")["DBInstances"][0]
    renamed = {**instance, "DBInstanceIdentifier": "prod"}  # a rename keeps DbiResourceId and the creation time
    assert starter.consider(DbInstance.model_validate(renamed), via="schedule")["action"] == "duplicate"
    assert len(executions(sfn, arn)) == 1


DEPLOYMENT = "arn:aws:cloudformation:us-east-1:123456789012:stack/cutover-prep/1"


def record_run(store, run_id: str, identifier: str) -> None:
    """What the run's ValidateInput records before its StartRestore asks RDS for the instance."""
    from cutover_prep.models.run_input import parse_run_input

    store.start_run(parse_run_input({"run_id": run_id, "target": {"db_instance_identifier": identifier,
                                                                   "secret_arn": SECRET},
                                     "restore": {"snapshot_identifier": "prod-snap"}}))


def test_an_instance_a_run_restored_itself_is_not_started_twice(env, store, monkeypatch):
    rds, sfn, arn, starter = env
    monkeypatch.setenv("CUTOVER_PREP_DEPLOYMENT_ID", DEPLOYMENT)
    # opted in by hand after the run restored it; the workflow's own restore is still warmed by its own run
    record_run(store, "r1", "restored-by-run")
    make_instance(rds, "restored-by-run", {TAG_ENABLED: "true", TAG_SECRET: SECRET, "cutover-prep:run-id": "r1",
                                           "cutover-prep:deployment": DEPLOYMENT})
    result = on_rds_event(parsed(ident="restored-by-run"), starter)
    assert result["action"] == "ignored" and "restored by run r1" in result["why"]
    assert sweep(starter, lookback_hours=1)[0]["action"] == "ignored"
    assert executions(sfn, arn) == []


def test_a_copy_of_a_run_restored_instance_is_started_its_run_tag_is_no_proof(env, store, monkeypatch):
    """Issue 20 (the comparison's fault, elsewhere): the trigger took the run-id tag alone as proof that a
    run warms the instance. The run's restore sets CopyTagsToSnapshot, so an instance the customer restores
    from a snapshot of it carries the tag (and the deployment's): it was ignored, and nothing warmed it."""
    rds, sfn, arn, starter = env
    monkeypatch.setenv("CUTOVER_PREP_DEPLOYMENT_ID", DEPLOYMENT)
    record_run(store, "r1", "restored-by-run")  # the run's own target is another instance
    make_instance(rds, "customer-copy", {TAG_ENABLED: "true", TAG_SECRET: SECRET, "cutover-prep:run-id": "r1",
                                         "cutover-prep:deployment": DEPLOYMENT})
    make_instance(rds, "other-deployment", {TAG_ENABLED: "true", TAG_SECRET: SECRET, "cutover-prep:run-id": "r1",
                                            "cutover-prep:deployment": "another-stack"})
    assert on_rds_event(parsed(ident="customer-copy"), starter)["action"] == "started"
    assert on_rds_event(parsed(ident="other-deployment"), starter)["action"] == "started"
    assert len(executions(sfn, arn)) == 2


def test_a_named_profile_that_is_missing_or_broken_is_a_rejection_not_defaults(env, store):
    rds, sfn, arn, starter = env
    make_instance(rds, "named", {TAG_ENABLED: "true", TAG_SECRET: SECRET, TAG_PROFILE: "oracle-prod"})
    result = on_rds_event(parsed(ident="named"), starter)
    assert result["action"] == "rejected" and "profile 'oracle-prod'" in result["why"] and "not found" in result["why"]
    store._ddb.put_item(TableName=TABLE, Item={"pk": {"S": "PROFILE#oracle-prod"}, "sk": {"S": "PROFILE"},
                                              "input": {"S": "{oops"}})
    assert "not JSON" in on_rds_event(parsed(ident="named"), starter)["why"]
    store._ddb.put_item(TableName=TABLE, Item={"pk": {"S": "PROFILE#oracle-prod"}, "sk": {"S": "PROFILE"},
                                              "input": {"S": '{"target": "x"}'}})  # stored by hand, wrong shape
    assert "target must be an object" in on_rds_event(parsed(ident="named"), starter)["why"]
    make_instance(rds, "untagged-profile", {TAG_ENABLED: "true", TAG_SECRET: SECRET})  # no default: defaults
    assert on_rds_event(parsed(ident="untagged-profile"), starter)["action"] == "started"
    assert len(executions(sfn, arn)) == 1
