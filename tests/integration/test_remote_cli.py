"""`cutover-prep start | status | report` as a pipeline runs them: a separate process talking
over HTTP to a moto server that executes the real ASL with the real handlers, against a
real PostgreSQL database. Exit code per verdict, one-line errors, nothing started on bad input."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cutover_prep.local.harness import LocalAws

pytestmark = pytest.mark.postgres
PASSWORD_MARK = "pw-must-not-leak-7f3a"


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.out)


@pytest.fixture(scope="module")
def aws() -> Any:
    with LocalAws(server=True) as local:
        local.create_instance("restored-db")
        local.create_stack("CutoverPrep")
        yield local


@pytest.fixture(scope="module")
def secret_arn(aws: LocalAws, sample_db: Any) -> str:
    # With trust authentication the marker is never checked: it only proves no output carries it.
    return aws.create_secret("restored-db-ro", {"username": sample_db.user, "engine": "postgres",
                                                "password": sample_db.password or PASSWORD_MARK,
                                                "dbInstanceIdentifier": "restored-db"})


def cli_env(aws: LocalAws) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(aws.client_env())
    env.pop("CUTOVER_PREP_STACK", None)
    return env


def cli(aws: LocalAws, *args: str, timeout: float = 300) -> Result:
    done = subprocess.run([sys.executable, "-m", "cutover_prep.cli.main", *args], env=cli_env(aws),
                          capture_output=True, text=True, timeout=timeout)
    return Result(done.returncode, done.stdout, done.stderr)


@contextlib.contextmanager
def held_in_discover(aws: LocalAws) -> Iterator[threading.Event]:
    """The next run waits in Discover (its handler runs in this process) until the event is set or the block
    ends: it is still running then, however fast or slow the machine is."""
    gate = threading.Event()
    aws.faults["handlers.discover"] = [lambda _event: gate.wait(300)]
    try:
        yield gate
    finally:
        gate.set()
        aws.faults.pop("handlers.discover", None)


def cli_releasing(aws: LocalAws, gate: threading.Event, when: Callable[[str], bool], *args: str) -> Result:
    """``cli``, setting ``gate`` at the first line on stderr for which ``when`` holds (the run held in Discover
    goes on once this process has seen it running)."""
    err: list[str] = []
    with subprocess.Popen([sys.executable, "-m", "cutover_prep.cli.main", *args], env=cli_env(aws),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as process:
        for line in process.stderr:
            err.append(line)
            if when(line):
                gate.set()
        out, code = process.stdout.read(), process.wait(timeout=300)
    return Result(code, out, "".join(err))


def target_args(db: Any, secret_arn: str, run_id: str, *extra: str) -> list[str]:
    return ["--target", "restored-db", "--secret-arn", secret_arn, "--engine", "postgres", "--database", db.database,
            "--run-id", run_id, "--set", f"target.host={db.host}", "--set", f"target.port={db.port}",
            "--set", "warmup.unit_mb=2", "--set", f"warmup.databases={json.dumps([db.database])}",
            "--no-benchmark", *extra]


def executions(aws: LocalAws) -> int:
    return len(aws.client("stepfunctions").list_executions(stateMachineArn=aws.state_machine_arn)["executions"])


def assert_one_line(result: Result, code: int, needle: str) -> None:
    err = result.err.strip()
    assert result.code == code, (result.out, result.err)
    assert needle in err, err
    assert "\n" not in err and "Traceback" not in err


def test_ready_run_exits_0_then_status_and_report(aws, sample_db, secret_arn, tmp_path):
    started = cli(aws, "start", *target_args(sample_db, secret_arn, "ci-ready"), "--wait", "--poll", "0.2", "--json")
    assert started.code == 0, started.err
    out = started.json
    assert out["verdict"] == "READY" and out["status"] == "SUCCEEDED" and out["reasons"] == []
    assert out["execution_arn"].endswith(":execution:cutover-prep-warmup:ci-ready")
    assert out["report_uri"] == f"s3://{aws.bucket}/runs/ci-ready/report.html"
    progress = [line for line in started.err.splitlines() if line.startswith("[")]
    assert progress and any(" units, " in line and " MiB (" in line for line in progress), started.err

    status = cli(aws, "status", "ci-ready")
    assert status.code == 0 and status.out.startswith("run ci-ready: READY"), status.out

    report = cli(aws, "report", "ci-ready", "--out", str(tmp_path))
    assert report.code == 0, report.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["findings.json", "report.html", "summary.md"]
    assert report.out.strip() == (tmp_path / "summary.md").read_text().strip()
    assert "READY" in report.out.splitlines()[0]
    assert json.loads((tmp_path / "findings.json").read_text())["coverage_pct"] == 100.0
    assert "<svg" in (tmp_path / "report.html").read_text() or "not measured" in (tmp_path / "report.html").read_text()
    for text in (started.out, started.err, status.out, report.out, *(p.read_text() for p in tmp_path.iterdir())):
        assert PASSWORD_MARK not in text


def test_not_ready_run_exits_1_with_its_reasons(aws, sample_db, secret_arn):
    result = cli(aws, "start", *target_args(sample_db, secret_arn, "ci-not-ready"),
                 "--set", "verdict.expected_read_iops=100000000", "--wait", "--poll", "0.2")
    assert result.code == 1, (result.out, result.err)
    lines = result.out.splitlines()
    assert lines[0] == "run ci-not-ready: NOT_READY"
    assert any(line.startswith("  - ") for line in lines), result.out
    assert cli(aws, "status", "ci-not-ready", "--json").json["exit_code"] == 1


def test_unreachable_database_exits_3_with_the_named_error(aws, sample_db, secret_arn):
    args = target_args(sample_db, secret_arn, "ci-unreachable")
    args[args.index(f"target.host={sample_db.host}")] = "target.host=127.0.0.1"
    args[args.index(f"target.port={sample_db.port}")] = "target.port=1"
    result = cli(aws, "start", *args, "--wait", "--poll", "0.2")
    assert result.code == 3, (result.out, result.err)
    assert result.out.startswith("run ci-unreachable: FAILED: DatabaseUnreachable"), result.out
    assert cli(aws, "status", "ci-unreachable").code == 3
    report = cli(aws, "report", "ci-unreachable")
    assert_one_line(report, 3, "left no report (FAILED: DatabaseUnreachable)")


def test_timeout_exits_4_and_the_run_goes_on(aws, sample_db, secret_arn):
    with held_in_discover(aws):
        result = cli(aws, "start", *target_args(sample_db, secret_arn, "ci-slow"), "--wait", "--timeout", "1",
                     "--poll", "0.2")
    assert result.code == 4, (result.out, result.err)
    assert "still running; later: cutover-prep status ci-slow" in result.err
    arn = aws.state_machine_arn.replace(":stateMachine:", ":execution:") + ":ci-slow"
    assert aws.wait(arn, timeout_s=300)["status"] == "SUCCEEDED"  # it went on
    assert cli(aws, "status", arn, "--state-machine-arn", aws.state_machine_arn).code == 0


def test_start_without_wait_prints_the_run_id(aws, sample_db, secret_arn):
    result = cli(aws, "start", *target_args(sample_db, secret_arn, "ci-nowait"))
    assert result.code == 0 and result.out.strip() == "ci-nowait"
    # the stack's DashboardUrl output: where to watch the run (issue 23 §3)
    dashboard = f"https://console.aws.amazon.com/cloudwatch/home?region={aws.region}#dashboards/dashboard/CutoverPrep-live-{aws.region}"
    assert f"live view: {dashboard} (CloudWatch dashboard: choose run ci-nowait)" in result.err.splitlines()
    arn = aws.state_machine_arn.replace(":stateMachine:", ":execution:") + ":ci-nowait"
    assert aws.wait(arn, timeout_s=300)["status"] == "SUCCEEDED"
    again = cli(aws, "start", *target_args(sample_db, secret_arn, "ci-nowait"))
    assert_one_line(again, 2, "run id 'ci-nowait' was used already and has ended")


def test_status_watch_follows_a_running_run_to_its_verdict(aws, sample_db, secret_arn):
    """Issue 23 §2: `cutover-prep status RUN --watch`, a process against moto's server: progress lines on
    stderr (one per change, no frames), the verdict on stdout, the exit code as `start --wait`'s."""
    with held_in_discover(aws) as gate:  # still running when the watcher looks, however fast the machine
        started = cli(aws, "start", *target_args(sample_db, secret_arn, "ci-watch"))
        assert started.code == 0 and started.out.strip() == "ci-watch", started.err
        watched = cli_releasing(aws, gate, lambda line: line.startswith("["), "status", "ci-watch", "--watch",
                                "--poll", "0.2")
    assert watched.code == 0, (watched.out, watched.err)
    assert watched.out.startswith("run ci-watch: READY"), watched.out
    progress = [line for line in watched.err.splitlines() if line.startswith("[")]
    assert progress and "\r" not in watched.err, watched.err
    assert len(progress) == len({line.split("] ", 1)[1] for line in progress})  # one line per change
    assert cli(aws, "status", "ci-watch", "--watch").code == 0  # a finished run: its verdict at once


def test_a_retried_step_follows_its_running_run(aws, sample_db, secret_arn):
    with held_in_discover(aws) as gate:
        first = cli(aws, "start", *target_args(sample_db, secret_arn, "ci-retry"), "--wait", "--timeout", "1",
                    "--poll", "0.2")
        assert first.code == 4, (first.out, first.err)
        again = cli_releasing(aws, gate, lambda line: "following the running run ci-retry" in line, "start",
                              *target_args(sample_db, secret_arn, "ci-retry", "--set", "warmup.max_concurrency=2"),
                              "--wait", "--poll", "0.2")
    assert again.code == 0, (again.out, again.err)
    assert "following the running run ci-retry" in again.err and again.out.startswith("run ci-retry: READY")


@pytest.mark.parametrize(("args", "needle"), [
    (["--target", "restored-db", "--secret-arn", "not-an-arn"], "input: target.secret_arn:"),
    (["--secret-arn", "arn:aws:secretsmanager:us-east-1:123456789012:secret:x"],
     "input: --target (target.db_instance_identifier): is required"),
    ([], "input: --target and --secret-arn are required"),
    (["--target", "restored-db", "--secret-arn", "arn:aws:secretsmanager:us-east-1:123456789012:secret:x",
      "--set", "warmup.max_concurency=4"], "warmup.max_concurency: unknown field"),
    (["--target", "restored-db", "--secret-arn", "arn:aws:secretsmanager:us-east-1:123456789012:secret:x",
      "--set", "warmup"], "--set 'warmup': write PATH=VALUE"),
    (["--input", "/nonexistent/run.json"], "--input /nonexistent/run.json: cannot read it"),
    (["--target", "restored-db", "--secret-arn", "arn:aws:secretsmanager:us-east-1:123456789012:secret:x",
      "--stack", "NoSuchStack"], "stack 'NoSuchStack' not found"),
    (["--target", "restored-db", "--secret-arn", "arn:aws:secretsmanager:us-east-1:123456789012:secret:x",
      "--state-machine-arn", "warmup"], "not a state machine ARN"),
    (["--target", "restored-db", "--timeout", "0"], "Invalid value for '--timeout'"),
])
def test_bad_input_exits_2_in_one_line_and_starts_nothing(aws, args, needle):
    before = executions(aws)
    assert_one_line(cli(aws, "start", *args), 2, needle)
    assert executions(aws) == before


def test_an_input_file_with_flags_over_it(aws, sample_db, secret_arn, tmp_path):
    run_file = tmp_path / "run.json"
    run_file.write_text(json.dumps({"target": {"db_instance_identifier": "other-db", "secret_arn": secret_arn},
                                    "warmup": {"max_concurrency": 2}}))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert_one_line(cli(aws, "start", "--input", str(bad)), 2, "not JSON (line 1 column 2")
    result = cli(aws, "start", "--input", str(run_file), *target_args(sample_db, secret_arn, "ci-file"), "--wait",
                 "--poll", "0.2", "--json")
    assert result.code == 0, result.err
    sent = json.loads(aws.describe(result.json["execution_arn"])["input"])
    assert sent["target"]["db_instance_identifier"] == "restored-db" and sent["warmup"]["max_concurrency"] == 2


def test_unknown_run_is_one_line(aws):
    assert_one_line(cli(aws, "status", "ci-never-started"), 2, "run 'ci-never-started' not found")
    assert_one_line(cli(aws, "report", "ci-never-started"), 2, "run 'ci-never-started' not found")
    assert_one_line(cli(aws, "status", "bad id!"), 2, "not a run id")


def test_no_region_is_one_line(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_CONFIG_FILE=str(tmp_path / "none"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"))
    done = subprocess.run([sys.executable, "-m", "cutover_prep.cli.main", "status", "ci-x"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no AWS region" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_bad_profile_or_input_encoding_is_one_line_and_exit_2(aws, tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_PROFILE="no-such-profile", AWS_CONFIG_FILE=str(tmp_path / "none"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"))
    for args in (["status", "ci-x"], ["start", "--target", "db", "--secret-arn", "arn:aws:secretsmanager:"
                                      "us-east-1:123456789012:secret:x-AbCdEf"]):
        done = subprocess.run([sys.executable, "-m", "cutover_prep.cli.main", *args], env=env, capture_output=True,
                              text=True, timeout=60)
        assert_one_line(Result(done.returncode, done.stdout, done.stderr), 2, "no-such-profile")
    (tmp_path / "latin1.json").write_bytes('{"target": {"db_instance_identifier": "caf\xe9"}}'.encode("latin-1"))
    assert_one_line(cli(aws, "start", "--input", str(tmp_path / "latin1.json")), 2, "not UTF-8 text")


def test_profiles_are_validated_stored_and_read_by_the_trigger(aws, tmp_path: Path):
    from cutover_prep.restore.trigger import Starter

    good = {"warmup": {"max_concurrency": 16}, "benchmark": {"seconds_per_point": 60}}
    (tmp_path / "good.json").write_text(json.dumps(good))
    stored = cli(aws, "profile", "put", "rehearsal", "--input", str(tmp_path / "good.json"))
    assert stored.code == 0 and "profile 'rehearsal' stored" in stored.err, stored.err
    shown = cli(aws, "profile", "show", "rehearsal")
    assert shown.code == 0 and json.loads(shown.out) == good
    starter = Starter(dynamodb=aws.client("dynamodb"), table=aws.table, stepfunctions=None, state_machine_arn="",
                      rds=None)
    assert starter.profile("rehearsal") == good  # what the restore trigger starts runs with
    (tmp_path / "bad.json").write_text(json.dumps({"target": {"db_instance_identifier": "x"}}))
    assert_one_line(cli(aws, "profile", "put", "bad", "--input", str(tmp_path / "bad.json")), 2,
                    "target.db_instance_identifier comes from the restored instance")
    assert_one_line(cli(aws, "profile", "show", "bad"), 2, "no profile 'bad'")
