"""`cutover-prep start | status | report` as a pipeline runs them (through main() in this process, or, where the
test says so, a separate process talking over HTTP) against a moto server that executes the real ASL with the real
handlers, against a real PostgreSQL database. Exit code per verdict, one-line errors, nothing started on bad input.
(Runs followed while they run: test_remote_cli_running.py; what both use: conftest.py, remote_cli.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.remote.remote_cli import (
    PASSWORD_MARK,
    Result,
    assert_one_line,
    cli,
    executions,
    held_in_discover,
    target_args,
)

pytestmark = pytest.mark.postgres


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
