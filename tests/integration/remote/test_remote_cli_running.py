"""`cutover-prep start | status` on runs that are still running: started without waiting, watched, timed out
and followed again, and an input file under flags (the rest: test_remote_cli.py; what both use:
conftest.py, remote_cli.py)."""

from __future__ import annotations

import json

import pytest

from tests.integration.remote.remote_cli import (
    assert_one_line,
    cli,
    cli_releasing,
    held_in_discover,
    target_args,
)

pytestmark = pytest.mark.postgres


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
