"""Issue 20, finding 5: inputs `cutover-prep validate` used to call valid. Each one, run through the
command, is now exit code 2 and one line naming the field (never a traceback).

The command runs through ``main()`` in this process (``run_validate``: its exit code, stdout and stderr, in an
environment without AWS_* and CUTOVER_PREP_*, as the process had), not a Python start of 1-2 s per case; the tests
that say so run it as a process of its own (``run_validate_process``: the exit code and streams a shell sees).

The storage cases are judged by the limits RDS documents for each storage type ("Amazon RDS DB
instance storage", https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html):
io1 100-65,536 GiB with 0.5-50 IOPS per GiB; io2 100-65,536 GiB with 0.5-1,000 IOPS per GiB;
gp3 IOPS (12,000-64,000) and throughput (500-4,000 MiB/s) provisioned only from 400 GiB (200 GiB
on Oracle), throughput at most 0.25 MiB/s per IOPS, at most 500 IOPS per GiB; magnetic at most 3 TiB.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli_in_process import run_main

ROOT = Path(__file__).resolve().parents[2]
ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbC123"
STATE_MACHINE = "arn:aws:states:us-east-1:123456789012:stateMachine:CutoverPrep"
SG = "sg-0123456789abcdef0"


def minimal(**sections: Any) -> dict[str, Any]:
    return {"target": {"db_instance_identifier": "prod-db-1", "secret_arn": ARN}, **sections}


def target(**fields: Any) -> dict[str, Any]:
    raw = minimal()
    raw["target"].update(fields)
    return raw


def restore(**fields: Any) -> dict[str, Any]:
    return minimal(restore={"snapshot_identifier": "snap-1", **fields})


def text_of(data: Any) -> str:
    return data if isinstance(data, str) else json.dumps(data)


def _environment(tmp_path: Path, env: dict[str, str] | None) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "CUTOVER_PREP_"))}
    environ.update({"PYTHONPATH": str(ROOT / "lambdas"), "AWS_CONFIG_FILE": str(tmp_path / "none"),
                    **(env or {})})
    return environ


def _input(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "input.json"
    path.write_text(text_of(data), encoding="utf-8")
    return path


def run_validate_process(tmp_path: Path, data: Any, *args: str,
                         env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`cutover-prep validate` as a process of its own."""
    path = _input(tmp_path, data)
    return subprocess.run([sys.executable, "-m", "cutover_prep.cli.main", "validate", "--input", str(path), *args],
                          capture_output=True, text=True, env=_environment(tmp_path, env), timeout=120, check=False)


def run_validate(tmp_path: Path, data: Any, *args: str,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`cutover-prep validate` through ``main()`` in this process, in the environment ``run_validate_process``
    gives its process: the exit code, stdout and stderr (an exception ``main()`` let out fails the test)."""
    argv = ["validate", "--input", str(_input(tmp_path, data)), *args]
    return subprocess.CompletedProcess(argv, *run_main(argv, _environment(tmp_path, env)))


def refused_naming(proc: subprocess.CompletedProcess, field: str) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 2, (proc.returncode, proc.stdout[:500], proc.stderr[-500:])
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr[:2000]
    assert lines[0].startswith("cutover-prep: "), lines[0]
    assert field in lines[0], (field, lines[0])
    return lines[0]


def with_text(tail: str) -> str:
    """The minimal input, as JSON text, with more members written as text (what json.dumps cannot write)."""
    return json.dumps(minimal())[:-1] + ", " + tail + "}"


REFUSED = {
    # non-finite numbers: RFC 8259 section 6 has no Infinity or NaN; 1e999 is beyond a double
    "Infinity": (with_text('"verdict": {"max_warm_to_cold_latency": Infinity}'), "verdict.max_warm_to_cold_latency"),
    "1e999": (with_text('"verdict": {"max_warm_to_cold_latency": 1e999}'), "verdict.max_warm_to_cold_latency"),
    "1e999 in warmup": (with_text('"warmup": {"production_size_gb": 1e999}'), "warmup.production_size_gb"),
    # duplicate keys: RFC 8259 section 4, "The names within an object SHOULD be unique"
    "duplicate key": (with_text('"warmup": {"max_concurrency": 4, "max_concurrency": 9}'), "warmup.max_concurrency"),
    "duplicate section": (with_text(f'"target": {{"db_instance_identifier": "other-db", "secret_arn": "{ARN}"}}'),
                          "target"),
    # Unicode format characters (category Cf): bidi controls and zero-width characters
    "right-to-left override in database": (target(database="orders\u202etxt.exe"), "target.database"),
    "zero-width space in database": (target(database="ord\u200bers"), "target.database"),
    "zero-width joiner in priority": (minimal(warmup={"priority": ["app.\u200dorders"]}), "warmup.priority.0"),
    "bidi isolate in a tag key": (restore(tags={"team\u2066": "db"}), "restore.tags"),
    # storage RDS refuses at restore time
    "io1 on 20 GiB": (restore(storage_type="io1", allocated_gb=20, iops=256_000), "restore.allocated_gb"),
    "io1 256,000 IOPS on 200 GiB": (restore(storage_type="io1", allocated_gb=200, iops=256_000), "restore.iops"),
    "io1 below 0.5 IOPS per GiB": (restore(storage_type="io1", allocated_gb=4000, iops=1000), "restore.iops"),
    "io2 256,000 IOPS on 100 GiB": (restore(storage_type="io2", allocated_gb=100, iops=256_000), "restore.iops"),
    "gp3 4,000 MiB/s on 20 GiB": (restore(storage_type="gp3", allocated_gb=20, storage_throughput=4000),
                                  "restore.storage_throughput"),
    "gp3 IOPS on 100 GiB": (restore(storage_type="gp3", allocated_gb=100, iops=12_000), "restore.iops"),
    "gp3 throughput above 0.25 per IOPS": (restore(storage_type="gp3", allocated_gb=500, iops=12_000,
                                                   storage_throughput=4000), "restore.storage_throughput"),
    "gp3 IOPS below 12,000 when striped": (restore(storage_type="gp3", allocated_gb=500, iops=3000), "restore.iops"),
    "gp3 IOPS on 300 GiB of PostgreSQL": ({**restore(storage_type="gp3", allocated_gb=300, iops=12_000),
                                          "target": {**minimal()["target"], "engine": "postgres"}}, "restore.iops"),
    "magnetic above 3 TiB": (restore(storage_type="standard", allocated_gb=4000), "restore.allocated_gb"),
    # duplicate security groups
    "duplicate security group": (restore(vpc_security_group_ids=[SG, "sg-0aaaaaaaaaaaaaaaa", SG]),
                                 "restore.vpc_security_group_ids"),
    # hosts that are not a host name or an address
    "host list": (target(host="proxy,attacker"), "target.host"),
    "host with a user": (target(host="user:pw@attacker"), "target.host"),
    "IPv6 zone id": (target(host="fe80::1%eth0"), "target.host"),
    "host with a port": (target(host="db.example.com:5432"), "target.host"),
    "host with a space": (target(host="db example.com"), "target.host"),
    # a 5,000-digit integer (a traceback, exit 1, before): json.loads refuses to convert more than 4,300
    # digits (CPython's int_max_str_digits, https://docs.python.org/3/library/stdtypes.html#int-max-str-digits)
    "5,000-digit integer": (with_text(f'"warmup": {{"max_concurrency": {"9" * 5000}}}'), "warmup.max_concurrency"),
}


def comparison(**changes: Any) -> dict[str, Any]:
    """A comparison input (docs/compare.md); validate tells it from a run input by its keys."""
    raw = {"comparison_id": "orders-sizing-1", "snapshot_identifier": "orders-prod-2026-11-20",
           "target": {"secret_arn": ARN, "engine": "postgres"},
           "configurations": [
               {"name": "r6i-gp3", "db_instance_class": "db.r6i.xlarge", "storage_type": "gp3", "allocated_gb": 500},
               {"name": "r6i-io1", "db_instance_class": "db.r6i.xlarge", "storage_type": "io1", "allocated_gb": 500,
                "iops": 10000}],
           "targets": {"min_read_iops": 8000}}
    for key, value in changes.items():
        raw[key] = {**raw[key], **value} if isinstance(raw.get(key), dict) else value
    return raw


# the comparison's input: the same classes of fault
REFUSED.update({
    "comparison: io1 IOPS per GiB": (comparison(configurations=[
        comparison()["configurations"][0], {**comparison()["configurations"][1], "allocated_gb": 100}]),
        "configurations.1.iops"),
    "comparison: gp3 IOPS on 300 GiB of PostgreSQL": (comparison(configurations=[
        {**comparison()["configurations"][0], "allocated_gb": 300, "iops": 12_000}, comparison()["configurations"][1]]),
        "restore.iops"),
    "comparison: right-to-left override": (comparison(target={"database": "ord\u202eers"}), "target.database"),
    "comparison: duplicate security group": (comparison(restore={"vpc_security_group_ids": [SG, SG]}),
                                             "restore.vpc_security_group_ids"),
    "comparison: unknown field": (comparison(max_paralel=2), "max_paralel"),
    "comparison: Infinity": (json.dumps(comparison())[:-1] + ', "ttl_hours": Infinity}', "ttl_hours"),
})


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_validate_refuses_with_one_line_naming_the_field(case: str, tmp_path: Path) -> None:
    data, field = REFUSED[case]
    line = refused_naming(run_validate(tmp_path, data), field)
    assert line.startswith(f"cutover-prep: {field}") or f": {field}:" in line, line


def test_the_host_with_a_password_is_not_repeated(tmp_path: Path) -> None:
    line = refused_naming(run_validate(tmp_path, target(host="user:hunter2@attacker")), "target.host")
    assert "hunter2" not in line


def test_as_a_process_a_refused_input_is_exit_2_one_line_and_an_accepted_one_exit_0(tmp_path: Path) -> None:
    """The process boundary itself: what a shell sees (exit code, streams), for one case of each kind."""
    line = refused_naming(run_validate_process(tmp_path, target(host="user:hunter2@attacker")), "target.host")
    assert "hunter2" not in line
    proc = run_validate_process(tmp_path, ACCEPTED["IPv6"])
    assert proc.returncode == 0 and proc.stdout.startswith("valid:"), proc.stderr[-1000:]


def test_non_finite_numbers_are_named_as_such(tmp_path: Path) -> None:
    # NaN was refused before too, but as "should be greater than 0", which is not why
    raw = with_text('"verdict": {"expected_read_iops": NaN}')
    line = refused_naming(run_validate(tmp_path, raw), "verdict.expected_read_iops")
    assert "finite" in line or "not a JSON number" in line, line


def started_by(arn: str) -> dict[str, Any]:
    return minimal(AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID=arn)


def test_a_started_by_execution_of_another_account_is_refused(tmp_path: Path) -> None:
    other = "arn:aws:states:us-east-1:999999999999:execution:Compare:c-1"
    proc = run_validate(tmp_path, started_by(other), "--state-machine-arn", STATE_MACHINE)
    assert "account" in refused_naming(proc, "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID")


def test_a_started_by_execution_of_another_region_is_refused(tmp_path: Path) -> None:
    other = "arn:aws:states:eu-west-1:123456789012:execution:Compare:c-1"
    proc = run_validate(tmp_path, started_by(other), env={"AWS_REGION": "us-east-1"})
    assert "region" in refused_naming(proc, "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID")
    proc = run_validate(tmp_path, started_by(other), "--state-machine-arn", STATE_MACHINE)
    refused_naming(proc, "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID")
    china = "arn:aws-cn:states:us-east-1:123456789012:execution:Compare:c-1"
    proc = run_validate(tmp_path, started_by(china), "--state-machine-arn", STATE_MACHINE)
    assert "partition" in refused_naming(proc, "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID")


def test_a_started_by_execution_of_the_deployment_is_valid(tmp_path: Path) -> None:
    same = "arn:aws:states:us-east-1:123456789012:execution:CutoverPrepCompare:c-1"
    proc = run_validate(tmp_path, started_by(same), "--state-machine-arn", STATE_MACHINE)
    assert proc.returncode == 0 and proc.stdout.startswith("valid:"), proc.stderr
    proc = run_validate(tmp_path, started_by(same))  # nothing names the deployment: said, not guessed
    assert proc.returncode == 0 and "not checked offline" in proc.stdout, proc.stdout
    assert "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID" in proc.stdout


ACCEPTED = {
    # the same documented limits, at their edges: these RDS accepts, so validate must too
    "io1 at 50 IOPS per GiB": restore(storage_type="io1", allocated_gb=100, iops=5000),
    "io1 at 0.5 IOPS per GiB": restore(storage_type="io1", allocated_gb=2000, iops=1000),
    "io1 256,000 IOPS on 5,120 GiB": restore(storage_type="io1", allocated_gb=5120, iops=256_000),
    "io2 256,000 IOPS on 256 GiB": restore(storage_type="io2", allocated_gb=256, iops=256_000),
    "gp3 4,000 MiB/s at 16,000 IOPS on 400 GiB": restore(storage_type="gp3", allocated_gb=400, iops=16_000,
                                                         storage_throughput=4000),
    "gp3 on 20 GiB without provisioning": restore(storage_type="gp3", allocated_gb=20),
    "gp3 IOPS on 200 GiB of Oracle": {**restore(storage_type="gp3", allocated_gb=200, iops=12_000),
                                      "target": {**minimal()["target"], "engine": "oracle"}},
    "hosts": target(host="db-1.proxy-abc.us-east-1.rds.amazonaws.com"),
    "IPv4": target(host="10.0.0.5"),
    "IPv6": target(host="fd00::5"),
    "socket directory (local run)": target(host="/var/run/postgresql"),
    "security groups": restore(vpc_security_group_ids=[SG, "sg-0aaaaaaaaaaaaaaaa"]),
    "names in any script": target(database="заказы"),
    "large but finite": minimal(warmup={"production_size_gb": 1e5}),
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_validate_still_accepts(case: str, tmp_path: Path) -> None:
    proc = run_validate(tmp_path, ACCEPTED[case])
    assert proc.returncode == 0 and proc.stdout.startswith("valid:"), (case, proc.stderr[-1000:])


# ---- the other commands that read a JSON file or value -------------------------------------------

def test_every_command_reading_json_refuses_the_same(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    from cutover_prep.cli.main import main

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "x")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    path = tmp_path / "in.json"
    path.write_text(with_text('"warmup": {"max_concurrency": 4, "max_concurrency": 9}'))
    comparison = tmp_path / "compare.json"
    comparison.write_text('{"comparison_id": "c-1", "comparison_id": "c-2"}')
    for argv, field in (
        (["start", "--input", str(path)], "warmup.max_concurrency"),
        (["profile", "put", "default", "--input", str(path)], "warmup.max_concurrency"),
        (["estimate", "--input", str(path)], "warmup.max_concurrency"),
        (["start", "--target", "prod-db-1", "--secret-arn", ARN, "--set", "warmup.max_concurrency=" + "9" * 5000],
         "--set warmup.max_concurrency"),
        (["start", "--target", "prod-db-1", "--secret-arn", ARN, "--set", "verdict.fast_read_ms=Infinity"],
         "--set verdict.fast_read_ms"),
        (["compare", "--input", str(comparison)], "comparison_id"),
        (["local", "--compare", str(comparison)], "comparison_id"),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert field in err, (argv, err)


def test_number_flags_refuse_nan_and_infinity(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    # click.FloatRange lets NaN through (every comparison with NaN is false) and inf where it has no
    # maximum: start --wait --poll nan started the run, then time.sleep(nan) raised a traceback
    from cutover_prep.cli.main import main

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "x")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    points = tmp_path / "points.csv"
    points.write_text("io_size_kb,iops,throughput_kbps\n8,1000,8000\n")
    start = ["start", "--target", "prod-db-1", "--secret-arn", ARN, "--state-machine-arn", STATE_MACHINE, "--wait"]
    for argv, flag in (
        ([*start, "--poll", "nan"], "--poll"),
        ([*start, "--timeout", "nan"], "--timeout"),
        ([*start, "--timeout", "inf"], "--timeout"),
        (["compare", "--input", str(tmp_path / "none.json"), "--poll", "NaN"], "--poll"),
        (["analyze", "--points", str(points), "--throughput", "nan"], "--throughput"),
        (["analyze", "--points", str(points), "--throughput", "inf"], "--throughput"),
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert flag in err and "finite" in err, (argv, err)
