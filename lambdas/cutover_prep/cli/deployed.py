"""``start``, ``status`` and ``report``: the deployed workflow driven from the command line (``remote.py`` holds
the API calls): the boto3 session and the deployment its stack names, the outcome as lines or JSON and the exit
code by verdict."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from cutover_prep.cli import remote
from cutover_prep.cli.files import hotset_profile, read_input
from cutover_prep.cli.options import FiniteFloatRange, deployment_options
from cutover_prep.cli.output import EXIT_FAILED, EXIT_TIMEOUT, echo, fail, guard, input_guard
from cutover_prep.cli.validate import check_started_by_arn
from cutover_prep.engines.registry import engine_names


class Aws:
    """boto3 clients of one session, and the deployment they find."""

    def __init__(self, region: str | None) -> None:
        import boto3

        # a bad AWS_PROFILE is a configuration mistake (exit 2), not a verdict
        self.session = remote.aws_call("AWS configuration", lambda: boto3.Session(region_name=region))
        self._clients: dict[str, Any] = {}

    def client(self, name: str) -> Any:
        if name not in self._clients:
            self._clients[name] = remote.aws_call(f"{name} client", lambda: self.session.client(name))
        return self._clients[name]

    def deployment(self, stack: str, state_machine_arn: str | None) -> remote.Deployment:
        return remote.aws_call(f"stack {stack}", lambda: remote.find_deployment(
            None if state_machine_arn else self.client("cloudformation"), stack=stack,
            state_machine_arn=state_machine_arn))

    def run_reader(self, deployment: remote.Deployment) -> Any:
        if not deployment.table:
            return None
        from botocore.exceptions import BotoCoreError, ClientError

        from cutover_prep.dal.store import Store

        store = Store(dynamodb=self.client("dynamodb"), s3=None, table=deployment.table, bucket="")

        def read(run_id: str) -> dict[str, Any] | None:
            try:
                run = item.stored() if (item := store.get_run(run_id)) else None
            except (ClientError, BotoCoreError):  # no dynamodb:GetItem: progress from the state names
                return None
            try:  # RDS's own storage progress: the run's last sample (restore.progress)
                every = store.storage_samples(run_id)
            except (ClientError, BotoCoreError):
                every = []
            samples = [s.summary() for s in every if s.status]
            if not run or not samples:
                return run
            from cutover_prep.findings.storage_init import etas_of_samples

            # RDS's initialization ETA per volume from the same samples (issue 36 §3)
            return {**run, "storage": samples[-1], "storage_eta": etas_of_samples(every)}
        return read


def finish(result: remote.Outcome, as_json: bool) -> None:
    """The run's outcome as lines (or JSON) and its exit code; a run still going says how to look later."""
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=1))
    else:
        echo(result.lines())
    if result.code == EXIT_TIMEOUT and result.status == "RUNNING":
        echo(f"cutover-prep: run {result.run_id} is still running; later: cutover-prep status {result.run_id}",
             err=True)
    raise click.exceptions.Exit(result.code)


@click.command()
@click.option("--target", help="DB instance identifier (target.db_instance_identifier).  "
              "[required, unless --input gives it]")
@click.option("--secret-arn", help="Secrets Manager ARN of the credentials (target.secret_arn); never the secret.  "
              "[required, unless --input gives it]")
@click.option("--engine", type=click.Choice(engine_names()), help="Default: from the RDS instance.")
@click.option("--database", help="Database (PostgreSQL; MySQL, MariaDB: a schema) to connect to and read, or "
              "service name (Oracle); default: from the secret, and then every database is read.")
@click.option("--all-databases", is_flag=True, help="Read every database on the instance (target.databases \"all\"), "
              "also when --database names the one to connect to.")
@click.option("--run-id", help="Names the run and its execution; default ci-<UTC time>-<random>.")
@click.option("--benchmark/--no-benchmark", default=None, help="Run the benchmark after the warm-up (default: on).")
@click.option("--input", "input_file", metavar="FILE", help="A run input JSON file (- for stdin); flags override it.")
@click.option("--set", "sets", multiple=True, metavar="PATH=VALUE",
              help="Any input field, e.g. --set warmup.max_concurrency=16 (VALUE is JSON or a string; repeat).")
@click.option("--hotset", "hotset_file", metavar="FILE", help="A hot-set profile (`cutover-prep hotset --out FILE`) "
              "whose relations the run reads right after warmup.priority (warmup.hot_set).")
@click.option("--wait", is_flag=True, help="Print progress until the verdict; the exit code is the verdict's.")
@click.option("--timeout", type=FiniteFloatRange(1), default=6 * 3600, show_default=True,
              help="Seconds --wait waits before exit code 4 (the run goes on).")
@click.option("--poll", type=FiniteFloatRange(0.1, 600), default=15, show_default=True,
              help="Seconds between progress checks.")
@deployment_options
def start(target: str | None, secret_arn: str | None, engine: str | None, database: str | None,
          run_id: str | None, benchmark: bool | None, input_file: str | None, sets: tuple[str, ...], wait: bool,
          timeout: float, poll: float, stack: str, state_machine_arn: str | None, region: str | None,
          as_json: bool, hotset_file: str | None = None, all_databases: bool = False) -> None:
    """Start a run of the deployed workflow (validated here first)."""
    base = read_input(input_file) if input_file else None
    if all_databases:  # after the file's and before the --set ones: a --set says last
        sets = ("target.databases=all", *sets)
    if (hot := hotset_profile(hotset_file)) is not None:
        from cutover_prep.hotset import with_hot_set

        base = with_hot_set(base, hot)
    run_input = input_guard("input", lambda: remote.build_input(
        base=base, target=target, secret_arn=secret_arn, engine=engine, database=database, run_id=run_id,
        benchmark=benchmark, sets=sets))
    aws = guard(lambda: Aws(region))
    deployment = guard(lambda: aws.deployment(stack, state_machine_arn))
    check_started_by_arn(run_input, deployment.state_machine_arn)  # before the workflow's ValidateInput refuses it
    sfn = guard(lambda: aws.client("stepfunctions"))
    run = run_input["run_id"]
    execution_arn, attached = guard(lambda: remote.aws_call("start", lambda: remote.start(sfn, deployment,
                                                                                          run_input)))
    echo(f"{'following the running' if attached else 'started'} run {run}: {execution_arn}", err=True)
    if live_view := remote.live_view_line(deployment, run):
        echo(live_view, err=True)
    if not wait:
        if as_json:
            click.echo(json.dumps({"run_id": run, "execution_arn": execution_arn, "status": "RUNNING",
                                   "dashboard": deployment.dashboard_url}, indent=1))
        else:
            click.echo(run)
        return
    desc = guard(lambda: remote.wait(  # AWS errors while waiting are its own (exit 4, the run goes on)
        sfn, execution_arn, run, timeout_s=timeout, poll_s=poll, read_run=aws.run_reader(deployment),
        report=lambda line: echo(line, err=True)))
    finish(remote.outcome(desc, run), as_json)


@click.command()
@click.argument("run")
@click.option("--watch", is_flag=True, help="Print progress (units, MiB, the warm-up's ETA at the measured rate, "
              "RDS's storage progress) until the verdict, one line per change; the exit code is the verdict's.")
@click.option("--timeout", type=FiniteFloatRange(1), default=6 * 3600, show_default=True,
              help="Seconds --watch waits before exit code 4 (the run goes on).")
@click.option("--poll", type=FiniteFloatRange(0.1, 600), default=15, show_default=True,
              help="Seconds between progress checks (--watch).")
@deployment_options
def status(run: str, stack: str, state_machine_arn: str | None, region: str | None, as_json: bool,
           watch: bool = False, timeout: float = 6 * 3600, poll: float = 15) -> None:
    """Where a run stands (RUN: run id or execution ARN); exit code as start --wait's."""
    aws = guard(lambda: Aws(region))
    deployment = guard(lambda: aws.deployment(stack, state_machine_arn))
    run_id, arn = guard(lambda: remote.execution_arn_of(deployment.state_machine_arn, run))
    sfn = guard(lambda: aws.client("stepfunctions"))
    desc = guard(lambda: remote.aws_call("status", lambda: remote.describe(sfn, arn, run_id)))
    reader = aws.run_reader(deployment)
    if watch and desc["status"] == "RUNNING":
        desc = guard(lambda: remote.wait(sfn, arn, run_id, timeout_s=timeout, poll_s=poll, read_run=reader,
                                         report=lambda line: echo(line, err=True)))
    result = remote.outcome(desc, run_id)
    if result.status == "RUNNING" and not as_json and reader and not watch:
        echo(remote.progress_line(reader(run_id), None, 0).split("] ", 1)[1])
    finish(result, as_json)


@click.command()
@click.argument("run")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="Where to write findings.json, summary.md, report.html; default ./out/<run id>/.")
@deployment_options
def report(run: str, out: Path | None, stack: str, state_machine_arn: str | None, region: str | None,
           as_json: bool) -> None:
    """Download a finished run's evidence and print its summary.md (exit 0 once downloaded)."""
    aws = guard(lambda: Aws(region))
    deployment = guard(lambda: aws.deployment(stack, state_machine_arn))
    run_id, arn = guard(lambda: remote.execution_arn_of(deployment.state_machine_arn, run))
    desc = guard(lambda: remote.aws_call("report", lambda: remote.describe(aws.client("stepfunctions"), arn, run_id)))
    if desc["status"] == "RUNNING":
        fail(EXIT_TIMEOUT, f"run {run_id} is still running: its report is written when it ends")
    target = out or Path("out") / run_id
    written = guard(lambda: remote.aws_call("download", lambda: remote.download_evidence(
        aws.client("s3"), desc, run_id, deployment.bucket, target)))
    if not written:
        result = remote.outcome(desc, run_id)
        fail(EXIT_FAILED, f"run {run_id} left no report ({result.status}"
                          f"{': ' + str(result.error) if result.error else ''}); see cutover-prep status {run_id}")
    if as_json:
        click.echo(json.dumps({"run_id": run_id, "files": [str(p) for p in written]}, indent=1))
        return
    summary = target / "summary.md"
    if summary.exists():  # Markdown: its names are code spans already; a control character is shown, never sent
        echo(summary.read_text(errors="replace").rstrip().split("\n"))
    echo(f"evidence of run {run_id}: " + ", ".join(str(p) for p in written), err=True)
