"""The pieces of `cutover-prep start | status | report` that need no AWS: the input from flags,
the run id ↔ execution ARN, the exit code of each outcome, and the wait loop on a fake clock."""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError, NoCredentialsError

from cutover_prep.cli import remote
from cutover_prep.cli.remote import CliProblem

SECRET = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-ro-AbCdEf"
SM = "arn:aws:states:eu-west-1:123456789012:stateMachine:cutover-prep-warmup"


def build(**kw: Any) -> dict[str, Any]:
    args = {"base": None, "target": "orders-cutover", "secret_arn": SECRET, "engine": None, "database": None,
            "run_id": None, "benchmark": None, "sets": ()}
    return remote.build_input(**{**args, **kw})


def test_flags_make_a_valid_input_with_a_fresh_run_id():
    data = build(engine="oracle", database="ORCLPDB1", benchmark=False, sets=["warmup.max_concurrency=16"])
    assert data["target"] == {"db_instance_identifier": "orders-cutover", "secret_arn": SECRET, "engine": "oracle",
                              "database": "ORCLPDB1"}
    assert data["benchmark"] == {"enabled": False} and data["warmup"] == {"max_concurrency": 16}
    assert data["run_id"].startswith("ci-") and build()["run_id"] != data["run_id"]


def test_flags_override_the_file_and_the_file_is_not_changed():
    base = {"target": {"db_instance_identifier": "from-file", "secret_arn": SECRET}, "warmup": {"chunk_mb": 8},
            "run_id": "file-run"}
    data = build(base=base, run_id="flag-run")
    assert data["target"]["db_instance_identifier"] == "orders-cutover" and data["warmup"] == {"chunk_mb": 8}
    assert data["run_id"] == "flag-run" and base["target"]["db_instance_identifier"] == "from-file"
    assert build(base=base, target=None)["run_id"] == "file-run"


@pytest.mark.parametrize(("assignment", "expected"), [
    ("verdict.expected_read_iops=12000", {"verdict": {"expected_read_iops": 12000}}),
    ('warmup.priority=["app.orders*"]', {"warmup": {"priority": ["app.orders*"]}}),
    ("target.host=db.internal", {"target": {"host": "db.internal"}}),
    ("warmup.create_extension=true", {"warmup": {"create_extension": True}}),
    ("target.database=", {"target": {"database": ""}}),
])
def test_set_parses_json_else_keeps_a_string(assignment, expected):
    data: dict[str, Any] = {}
    remote.apply_set(data, assignment)
    assert data == expected


@pytest.mark.parametrize(("kw", "needle"), [
    ({"secret_arn": "orders-ro"}, "input: target.secret_arn:"),
    ({"target": "1-bad--id"}, "input: target.db_instance_identifier:"),
    ({"sets": ["warmup.max_concurrency=0"]}, "input: warmup.max_concurrency:"),
    ({"sets": ["warmup.nope=1"]}, "warmup.nope: unknown field"),
    ({"sets": ["=1"]}, "write PATH=VALUE"),
    ({"sets": ["target.host.name=x"]}, "input: target.host:"),
    ({"sets": ["warmup.max_concurrency=8", "warmup.max_concurrency.x=1"]}, "max_concurrency is not an object"),
    ({"run_id": "has space"}, "input: run_id:"),
])
def test_bad_input_is_one_line_naming_the_field(kw, needle):
    with pytest.raises(CliProblem) as err:
        build(**kw)
    assert needle in str(err.value) and err.value.code == 2 and "\n" not in str(err.value)


def test_input_file_errors(tmp_path):
    (tmp_path / "list.json").write_text("[1]")
    with pytest.raises(CliProblem, match="must be a JSON object"):
        remote.read_input_file(str(tmp_path / "list.json"))
    import io

    assert remote.read_input_file("-", stdin=io.StringIO('{"a": 1}')) == {"a": 1}
    (tmp_path / "utf16.json").write_bytes('{"a": 1}'.encode("utf-16"))
    with pytest.raises(CliProblem, match="not UTF-8 text"):
        remote.read_input_file(str(tmp_path / "utf16.json"))


def test_a_null_run_id_in_the_file_gets_a_fresh_one():
    data = build(base={"run_id": None})
    assert data["run_id"].startswith("ci-")


def test_run_id_and_execution_arn():
    assert remote.execution_arn_of(SM, "ci-1") == (
        "ci-1", "arn:aws:states:eu-west-1:123456789012:execution:cutover-prep-warmup:ci-1")
    arn = "arn:aws:states:eu-west-1:123456789012:execution:cutover-prep-warmup:gha-77"
    assert remote.execution_arn_of(SM, arn) == ("gha-77", arn)
    for bad in ("arn:aws:states:eu-west-1:123456789012:stateMachine:x", "two words"):
        with pytest.raises(CliProblem):
            remote.execution_arn_of(SM, bad)


class FakeCfn:
    def __init__(self, outputs: list[dict[str, str]] | None) -> None:
        self.outputs = outputs

    def describe_stacks(self, StackName: str) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        if self.outputs is None:
            raise ClientError({"Error": {"Code": "ValidationError",
                                         "Message": f"Stack with id {StackName} does not exist"}}, "DescribeStacks")
        return {"Stacks": [{"Outputs": self.outputs}]}


def test_deployment_from_the_stack_outputs_or_the_arn():
    outputs = [{"OutputKey": "StateMachineArn", "OutputValue": SM}, {"OutputKey": "TableName", "OutputValue": "t"},
               {"OutputKey": "EvidenceBucketName", "OutputValue": "b"}]
    assert remote.find_deployment(FakeCfn(outputs), stack="CutoverPrep", state_machine_arn=None) == \
        remote.Deployment(SM, "b", "t")
    assert remote.find_deployment(None, stack="x", state_machine_arn=SM) == remote.Deployment(SM)
    with pytest.raises(CliProblem, match="stack 'Gone' not found"):
        remote.find_deployment(FakeCfn(None), stack="Gone", state_machine_arn=None)
    with pytest.raises(CliProblem, match="has no StateMachineArn output"):
        remote.find_deployment(FakeCfn([]), stack="Other", state_machine_arn=None)


def test_aws_errors_become_one_line():
    def no_creds() -> None:
        raise NoCredentialsError()

    def denied() -> None:
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not allowed"}}, "StartExecution")

    with pytest.raises(CliProblem, match="start: no AWS credentials") as config:
        remote.aws_call("start", no_creds)
    assert config.value.code == 2  # the pipeline's configuration: a usage error
    with pytest.raises(CliProblem, match="start: AccessDeniedException: not allowed") as aws:
        remote.aws_call("start", denied)
    assert aws.value.code == 5  # AWS said no: not exit 2, which says the input is wrong


def test_an_unreachable_aws_is_its_own_exit_code_not_an_input_error():
    from botocore.exceptions import EndpointConnectionError, ProfileNotFound

    def offline() -> None:
        raise EndpointConnectionError(endpoint_url="https://states.eu-west-1.amazonaws.com")

    def no_profile() -> None:
        raise ProfileNotFound(profile="ci")

    with pytest.raises(CliProblem, match="Could not connect") as err:
        remote.aws_call("start", offline)
    assert err.value.code == remote.EXIT_AWS == 5
    with pytest.raises(CliProblem, match="ci") as err:
        remote.aws_call("AWS configuration", no_profile)
    assert err.value.code == 2


def desc(status: str, **kw: Any) -> dict[str, Any]:
    return {"executionArn": SM.replace("stateMachine", "execution") + ":r", "status": status, **kw}


@pytest.mark.parametrize(("description", "code", "verdict"), [
    (desc("SUCCEEDED", output=json.dumps({"verdict": "READY", "reasons": []})), 0, "READY"),
    (desc("SUCCEEDED", output=json.dumps({"verdict": "NOT_READY", "reasons": ["1 of 9 work units failed"]})), 1,
     "NOT_READY"),
    (desc("SUCCEEDED", output="{}"), 1, None),  # no verdict is never READY
    (desc("FAILED", error="InvalidInput", cause="target.secret_arn: must be ..."), 2, "NOT_READY"),
    (desc("FAILED", error="DatabaseUnreachable", cause="cannot connect"), 3, "NOT_READY"),
    (desc("TIMED_OUT"), 3, "NOT_READY"),
    (desc("ABORTED"), 3, "NOT_READY"),
    (desc("RUNNING"), 4, None),
])
def test_exit_code_of_each_outcome(description, code, verdict):
    result = remote.outcome(description, "r")
    assert result.code == code and result.verdict == verdict
    assert result.as_json()["exit_code"] == code
    if code in (1, 2, 3):
        assert result.reasons


def test_outcome_lines_name_the_reasons_and_the_evidence():
    out = {"verdict": "NOT_READY", "reasons": ["warm-up coverage 97 % (threshold 100 %)"],
           "report_uri": "s3://b/runs/r/report.html"}
    lines = remote.outcome(desc("SUCCEEDED", output=json.dumps(out)), "r").lines()
    assert lines == ["run r: NOT_READY", "  - warm-up coverage 97 % (threshold 100 %)",
                     "  report_uri: s3://b/runs/r/report.html"]
    failed = remote.outcome(desc("FAILED", error="RestoreFailed", cause="snapshot gone"), "r").lines()
    assert failed == ["run r: FAILED: RestoreFailed: snapshot gone"]


class FakeSfn:
    """An execution RUNNING for ``polls`` describes, then SUCCEEDED."""

    def __init__(self, polls: int) -> None:
        self.polls, self.calls = polls, 0

    def describe_execution(self, executionArn: str) -> dict[str, Any]:  # noqa: N803
        self.calls += 1
        if self.calls > self.polls:
            return desc("SUCCEEDED", output=json.dumps({"verdict": "READY"}))
        return desc("RUNNING")

    def get_execution_history(self, **_: Any) -> dict[str, Any]:
        return {"events": [{"type": "TaskStateEntered", "stateEnteredEventDetails": {"name": "Discover"}}]}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_wait_reports_changes_only_and_ends_with_the_execution():
    clock, lines = Clock(), []
    runs = iter([None, {"bytes_planned": 2**30, "bytes_read": 0, "units_total": 8, "step": "warmup"},
                 {"bytes_planned": 2**30, "bytes_read": 0, "units_total": 8, "step": "warmup"},
                 {"bytes_planned": 2**30, "bytes_read": 2**29, "units_total": 8, "units_done": 4, "step": "warmup"}])
    result = remote.wait(FakeSfn(4), "arn", "r", timeout_s=3600, poll_s=15, read_run=lambda _: next(runs),
                         report=lines.append, clock=clock, sleep=clock.sleep)
    assert result["status"] == "SUCCEEDED" and clock.now == 60
    assert lines == ["[00:00] Discover", "[00:15] warmup: 0/8 units, 0.0/1,024.0 MiB (0 %), 0 failed",
                     "[00:45] warmup: 4/8 units, 512.0/1,024.0 MiB (50 %), 0 failed"]


def test_wait_gives_the_warm_up_eta_at_the_measured_rate_and_rds_storage_progress():
    """Issue 23 §2: `status --watch` / `start --wait` give an ETA from the rate measured (by hand: 256 MiB read
    between t=15 and t=30, 512 MiB left: 30 s) and RDS's own storage progress (the run's last sample)."""
    clock, lines = Clock(), []
    half = {"bytes_planned": 2**30, "bytes_read": 2**29, "units_total": 8, "units_done": 4, "step": "warmup",
            "storage": {"status": "initializing", "percent": 40}}
    runs = iter([None, {"bytes_planned": 2**30, "bytes_read": 2**28, "units_total": 8, "units_done": 2,
                        "step": "warmup"}, half])
    remote.wait(FakeSfn(3), "arn", "r", timeout_s=3600, poll_s=15, read_run=lambda _: next(runs),
                report=lines.append, clock=clock, sleep=clock.sleep)
    assert lines[1] == "[00:15] warmup: 2/8 units, 256.0/1,024.0 MiB (25 %), 0 failed"  # one sample: no rate yet
    assert lines[2] == ("[00:30] warmup: 4/8 units, 512.0/1,024.0 MiB (50 %), 0 failed; warm-up ETA ~30 s at the "
                        "measured rate; RDS storage initializing 40 %")


def test_wait_returns_the_running_execution_at_the_timeout():
    clock = Clock()
    result = remote.wait(FakeSfn(10**6), "arn", "r", timeout_s=100, poll_s=15, read_run=None, report=lambda _: None,
                         clock=clock, sleep=clock.sleep)
    assert result["status"] == "RUNNING" and clock.now == 100
    assert remote.outcome(result, "r").code == 4


class FlakySfn(FakeSfn):
    """describe_execution fails at the given call numbers (1-based)."""

    def __init__(self, polls: int, failing: set[int], error: Exception) -> None:
        super().__init__(polls)
        self.failing, self.error, self.attempts = failing, error, 0

    def describe_execution(self, executionArn: str) -> dict[str, Any]:  # noqa: N803
        self.attempts += 1
        if self.attempts in self.failing:
            raise self.error
        return super().describe_execution(executionArn)


def test_wait_rides_out_aws_errors_while_the_run_goes_on():
    from botocore.exceptions import EndpointConnectionError

    clock, lines = Clock(), []
    sfn = FlakySfn(3, {2, 3}, EndpointConnectionError(endpoint_url="https://states.eu-west-1.amazonaws.com"))
    result = remote.wait(sfn, "arn", "r", timeout_s=3600, poll_s=15, read_run=None, report=lines.append,
                         clock=clock, sleep=clock.sleep)
    assert result["status"] == "SUCCEEDED" and remote.outcome(result, "r").code == 0
    assert lines[0] == "[00:00] Discover" and "AWS did not answer (Could not connect" in lines[1]
    assert lines[2] == "[00:45] Discover"


def test_wait_gives_up_with_exit_4_not_2_when_aws_stays_away():
    from botocore.exceptions import ClientError

    clock = Clock()
    expired = ClientError({"Error": {"Code": "ExpiredTokenException", "Message": "The security token expired"}},
                          "DescribeExecution")
    sfn = FlakySfn(10**6, set(range(2, 100)), expired)
    with pytest.raises(CliProblem) as err:
        remote.wait(sfn, "arn", "r", timeout_s=3600, poll_s=15, read_run=None, report=lambda _: None,
                    clock=clock, sleep=clock.sleep)
    assert err.value.code == 4 and "ExpiredTokenException" in str(err.value)
    assert "cutover-prep status r" in str(err.value) and sfn.attempts == 1 + remote.LOST_CONTACT_AFTER


def test_the_dashboard_link_comes_from_the_stack_and_names_the_run():
    url = "https://console.aws.amazon.com/cloudwatch/home?region=eu-west-1#dashboards/dashboard/CutoverPrep-live-eu-west-1"
    outputs = [{"OutputKey": "CutoverRunStateMachineArn", "OutputValue": SM},
               {"OutputKey": "DashboardUrl", "OutputValue": url}]
    deployment = remote.find_deployment(FakeCfn(outputs), stack="CutoverPrep", state_machine_arn=None)
    assert deployment.dashboard_url == url
    assert remote.live_view_line(deployment, "ci-1") == f"live view: {url} (CloudWatch dashboard: choose run ci-1)"
    # a stack from before the dashboard, a deployment given by its ARN, an output that is not our link: no line
    assert remote.live_view_line(remote.find_deployment(FakeCfn(outputs[:1]), stack="CutoverPrep",
                                                        state_machine_arn=None), "ci-1") is None
    assert remote.live_view_line(remote.Deployment(SM), "ci-1") is None
    odd = [outputs[0], {"OutputKey": "DashboardUrl", "OutputValue": "https://evil.example/\x1b[2J"}]
    assert remote.find_deployment(FakeCfn(odd), stack="CutoverPrep", state_machine_arn=None).dashboard_url is None
