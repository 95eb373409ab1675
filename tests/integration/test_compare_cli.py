"""`cutover-prep compare` and `validate` on a comparison input, as a pipeline runs them: a separate
process talking over HTTP to a moto server that executes the comparison (child runs against the real
PostgreSQL database, as in test_compare_workflow.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from cutover_prep.comparison.cleanup import describe
from cutover_prep.local.harness import LocalAws
from tests.integration.test_compare_workflow import comparison_input

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def aws(sample_db):
    from moto.rds.models import DBInstance

    with LocalAws(server=True) as local, mock.patch.object(DBInstance, "address", new_callable=mock.PropertyMock,
                                                           return_value=sample_db.host):
        local.allow_db_host(sample_db.host)
        local.create_instance("prod-db", db_name=sample_db.database, storage_type="gp2", allocated_storage=100)
        local.client("rds").create_db_snapshot(DBInstanceIdentifier="prod-db", DBSnapshotIdentifier="prod-snap")
        local.create_stack("CutoverPrep")
        yield local


def cli(aws: LocalAws, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(aws.client_env())
    env.pop("CUTOVER_PREP_STACK", None)
    return subprocess.run([sys.executable, "-m", "cutover_prep.cli.main", *args], env=env, capture_output=True,
                          text=True, timeout=600)


def write(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / "comparison.json"
    path.write_text(json.dumps(data))
    return str(path)


def executions(aws: LocalAws) -> int:
    return len(aws.client("stepfunctions").list_executions(
        stateMachineArn=aws.state_machine_arns["compare"])["executions"])


def test_compare_wait_exits_0_with_a_recommendation_and_nothing_left(aws, sample_db, tmp_path):
    payload = comparison_input(aws, sample_db, "cli1")
    # one small schema warmed by each child: what this test reads (exit code, recommendation, cleanup) does not
    # depend on how much is warmed; test_compare_workflow.py runs the children on the whole sample
    payload["warmup"]["include_schemas"] = ["docs"]
    done = cli(aws, "compare", "--input", write(tmp_path, payload), "--wait", "--poll", "0.5", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["status"] == "SUCCEEDED" and out["exit_code"] == 0 and out["recommendation"]["name"]
    assert sorted(out["cleanup"]["deleted"]) == ["cprep-cli1-gp2", "cprep-cli1-io1"] and out["cleanup"]["left"] == []
    assert "started comparison cli1" in done.stderr and "Traceback" not in done.stderr
    assert describe(aws.client("rds"), "cprep-cli1-gp2") is None


def test_a_bad_comparison_input_is_one_line_exit_2_and_starts_nothing(aws, sample_db, tmp_path):
    before = executions(aws)
    payload = comparison_input(aws, sample_db, "cli2")
    payload["configurations"] = payload["configurations"][:1]
    done = cli(aws, "compare", "--input", write(tmp_path, payload))
    err = done.stderr.strip()
    assert done.returncode == 2 and "\n" not in err and "Traceback" not in err
    assert err.startswith("cutover-prep: input: configurations:") and "at least 2" in err
    assert executions(aws) == before


def test_validate_tells_a_comparison_input_and_checks_it_offline(aws, sample_db, tmp_path):
    payload = comparison_input(aws, sample_db, "cli3")
    done = cli(aws, "validate", "--input", write(tmp_path, payload))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("valid comparison cli3: restore prod-snap onto 2 configurations: gp2 (db.t3.medium")
    payload["configurations"][1].pop("iops")  # io1 without its IOPS
    payload["targets"] = {}
    done = cli(aws, "validate", "--input", write(tmp_path, payload))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 2 and all(line.startswith("cutover-prep: ") for line in lines)
    assert "configurations.1" in lines[0] and "io1 needs iops" in lines[0]
    assert lines[1].startswith("cutover-prep: targets: ") and "at least one" in lines[1]
