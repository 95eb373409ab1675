"""What the tests of `cutover-prep start | status | report` (test_remote_cli*.py) share besides their fixtures
(conftest.py: the moto server, the secret): the CLI in this process through its ``main()`` (``cli``: the same
moto backend, without a Python start of 1-2 s per call), or in a process of its own talking to that server
over HTTP (``cli_releasing``, and the tests that say so: the process boundary itself)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from cutover_prep.local.harness import LocalAws
from tests.cli_in_process import run_main

PASSWORD_MARK = "pw-must-not-leak-7f3a"


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def json(self) -> dict[str, Any]:
        return json.loads(self.out)


def cli_env(aws: LocalAws) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(aws.client_env())
    env.pop("CUTOVER_PREP_STACK", None)
    return env


def cli(aws: LocalAws, *args: str) -> Result:
    """``cutover-prep ARGS`` through ``main()`` in this process: its stdout, stderr and exit code. Its boto3 clients
    reach the harness's moto backend (the one the server serves); the environment is the harness's, as
    ``cli_env``'s, without the stack named by the caller's environment."""
    environ = dict(os.environ)
    environ.pop("CUTOVER_PREP_STACK", None)
    return Result(*run_main(list(args), environ))


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
            "--set", "warmup.unit_mb=8", "--set", f"warmup.databases={json.dumps([db.database])}",
            # the catalogues waived, as tests/integration/test_workflow.py's run_input does (they are read by
            # default; test_postgres_census.py and test_emulated_census.py prove that): ~300 catalogue forks made
            # each run here 25-35 s, and no test of start | status | report depends on them
            "--set", 'warmup.exclude_schemas=["pg_catalog", "information_schema"]',
            "--no-benchmark", *extra]


def executions(aws: LocalAws) -> int:
    return len(aws.client("stepfunctions").list_executions(stateMachineArn=aws.state_machine_arn)["executions"])


def assert_one_line(result: Result, code: int, needle: str) -> None:
    err = result.err.strip()
    assert result.code == code, (result.out, result.err)
    assert needle in err, err
    assert "\n" not in err and "Traceback" not in err
