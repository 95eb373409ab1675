"""`cutover-prep local` prints only its result on stdout (issue 20, finding 6).

The handlers run in the CLI's own process. In Lambda, what they write to stdout is the function's
log stream (Powertools' Logger and its EMF metrics print there); in a local run stdout is the CLI's
result, which a user pipes into a file or a tool. Powertools Metrics prints its metric set with
``print`` when one metric reaches 100 values, whether or not ``POWERTOOLS_METRICS_DISABLED`` is set
(``AmazonCloudWatchEMFProvider.add_metric`` in aws-lambda-powertools 3.x; its ``flush_metrics``
skips a disabled set without clearing it), so the 100th warmed unit of a local run printed EMF JSON
into the result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests.conftest import conninfo

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "lambdas"), str(REPO)])}
CLI = "import sys; from cutover_prep.cli.main import main; sys.exit(main(sys.argv[1:]))"
MIB = 2**20


@pytest.fixture
def database_of_many_units(pg_admin):
    """A database whose one table is over 80 MiB: with the database's catalog (some 30 units) more than 100
    units of 1 MiB, which the test asserts on the run's own count."""
    if pg_admin.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    name = f"cutover_prep_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        with psycopg.connect(conninfo(pg_admin, name), autocommit=True) as conn:
            conn.execute("CREATE TABLE many AS SELECT g FROM generate_series(1, 2450000) g")
            size = conn.execute("SELECT pg_relation_size('many')").fetchone()[0]
        assert size > 80 * MIB  # PostgreSQL's own count of the table's bytes
        yield pg_admin, name
    finally:
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.mark.postgres
def test_more_than_100_warmed_units_leave_stdout_to_the_result(database_of_many_units, tmp_path):
    admin, name = database_of_many_units
    dsn = f"postgresql://{admin.user}:{admin.password}@{admin.host}:{admin.port}/{name}"
    child = subprocess.run(
        [sys.executable, "-c", CLI, "local", "--dsn", dsn, "--database", name, "--unit-mb", "1",
         "--no-benchmark", "--no-progress", "--out", str(tmp_path), "--run-id", "many-units"],
        env=ENV, capture_output=True, text=True, timeout=900)
    assert child.returncode == 0, child.stderr[-2000:]
    findings = json.loads((tmp_path / "findings.json").read_text())
    assert findings["units"]["done"] > 100  # past Powertools' 100 values of UnitsDone
    lines = child.stdout.splitlines()
    # the summary: its first line names the run, every other line is indented; nothing else
    assert lines[0].startswith("run many-units: SUCCEEDED"), lines[:3]
    assert all(line.startswith("  ") for line in lines[1:]), [ln[:120] for ln in lines if not ln.startswith("  ")]
    assert "CloudWatchMetrics" not in child.stdout and "CloudWatchMetrics" not in child.stderr


def test_a_handler_log_line_in_a_local_run_goes_to_stderr():
    """Powertools' Logger writes to the stdout it saw when it was built (in Lambda: the log stream)."""
    script = ("from cutover_prep.local.harness import LocalAws\n"
              "from cutover_prep.observability import logger\n"
              "with LocalAws():\n"
              "    logger.warning('a warning from a handler')\n")
    child = subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stdout == ""
    assert "a warning from a handler" in child.stderr
