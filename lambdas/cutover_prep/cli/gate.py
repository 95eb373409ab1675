"""``cutover-prep gate``: "can we switch now?" — the run's verdict, RDS's storage and instance, and the
replication that carries the last writes, each with its evidence (``cutover_prep.gate``).

Exit codes a pipeline branches on: 0 the gate is open; 1 closed (every reason printed); 3 unknown (a
condition could not be checked); 2 a usage or input error. ``--wait`` checks until it opens or
``--timeout`` passes, one line per change, and ends with the last state's code."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from cutover_prep.cli import remote
from cutover_prep.cli.options import FiniteFloatRange
from cutover_prep.dal.records.findings import Findings
from cutover_prep.escape import for_terminal
from cutover_prep.gate.evaluate import Sources, evaluate, publish, wait_for
from cutover_prep.gate.model import Condition, DmsSpec, GateResult, GateSpec

EXIT_USAGE = 2


def _echo(lines: list[str], *, err: bool = False) -> None:
    click.echo("\n".join(for_terminal(line) for line in lines), err=err)


def _fail(message: str, code: int = EXIT_USAGE) -> None:
    _echo([f"cutover-prep: {message}"], err=True)
    raise click.exceptions.Exit(code)


def _findings_reader(path: Path) -> Any:
    def read() -> Findings | None:
        if not path.exists():
            return None
        return Findings.read(json.loads(path.read_text()))
    return read


def _run_item_reader(session: Any, stack: str, run_id: str) -> Any:
    from cutover_prep.dal.store import Store

    stores: list[Store] = []  # the stack's table, looked up at the first check only (not at every --poll)

    def read() -> Any:  # the run item (records.run.RunItem) or None
        if not stores:
            deployment = remote.find_deployment(session.client("cloudformation"), stack=stack,
                                                state_machine_arn=None)
            if not deployment.table:
                raise remote.CliProblem(f"stack {stack!r} has no TableName output")
            stores.append(Store(dynamodb=session.client("dynamodb"), s3=session.client("s3"),
                                table=deployment.table, bucket=deployment.bucket or ""))
        return stores[0].get_run(run_id)
    return read


def _replication_reader(replica_dsn: str, source_dsn: str | None, spec: GateSpec) -> Any:
    from cutover_prep.cli.preflight import dsn_spec
    from cutover_prep.engines.registry import family

    replica = dsn_spec(replica_dsn)
    source = dsn_spec(source_dsn) if source_dsn else None
    fam = family(replica.engine)
    if fam.replication is None:
        raise remote.CliProblem(f"--replica-dsn: native replication is checked on PostgreSQL and MySQL/MariaDB, "
                                f"not {fam.label}; name an AWS DMS task with --dms-task")
    if source is not None and family(source.engine).replication is not fam.replication:
        raise remote.CliProblem("--source-dsn names another engine than --replica-dsn")

    def check() -> Condition:
        found = fam.replication(replica, source, max_lag_seconds=spec.max_lag_seconds,
                                max_lag_bytes=spec.max_lag_bytes)
        return Condition(name="replication", **found._asdict())
    return check


@click.command("gate")
@click.option("--findings", "findings_file", type=click.Path(path_type=Path, dir_okay=False),
              help="A run's findings.json (a local run's --out, or downloaded): its verdict is the first condition.")
@click.option("--run-id", help="A deployed run: its verdict from the stack's table (with --stack).")
@click.option("--stack", envvar="CUTOVER_PREP_STACK", default="CutoverPrep", show_default=True,
              help="The deployed stack that holds --run-id (env CUTOVER_PREP_STACK).")
@click.option("--accept-hot-set", is_flag=True, help="Open on the verdict when the run's hot set is warm, "
              "READY or not (needs --findings).")
@click.option("--target", help="DB instance identifier: RDS's storage initialization on every volume, and the "
              "instance available with nothing pending.")
@click.option("--dms-task", help="An AWS DMS task ARN: running, full load complete, CDC latency under "
              "--max-latency for --window, validation clean.")
@click.option("--max-latency", type=FiniteFloatRange(0.001, 86_400), default=10, show_default=True,
              help="DMS: CDCLatencySource and CDCLatencyTarget at most this (seconds).")
@click.option("--window", type=click.IntRange(60, 86_400), default=300, show_default=True,
              help="DMS: the latency stays under the threshold for this many seconds.")
@click.option("--no-validation", is_flag=True, help="DMS: do not require table validation.")
@click.option("--replica-dsn", help="Native replication, read on the target: mysql://… (SHOW REPLICA STATUS) or "
              "postgresql://…/DB (its subscriptions).")
@click.option("--source-dsn", help="PostgreSQL: the publisher, for the slot's lag in bytes.")
@click.option("--max-lag-seconds", type=FiniteFloatRange(0, 86_400), default=10, show_default=True,
              help="MySQL/MariaDB: seconds behind the source at most.")
@click.option("--max-lag-bytes", type=click.IntRange(0), default=0, show_default=True,
              help="PostgreSQL: the slot's lag behind the source's WAL at most (bytes). 0: every transaction the "
              "source committed is applied; above 0, committed transactions may still be missing.")
@click.option("--wait", is_flag=True, help="Check until the gate opens or --timeout passes; a line per change.")
@click.option("--timeout", type=FiniteFloatRange(1, 7 * 86_400), default=3600, show_default=True,
              help="Seconds --wait waits.")
@click.option("--poll", type=FiniteFloatRange(1, 3600), default=30, show_default=True, help="Seconds between checks.")
@click.option("--event-bus", help="Put a GateOpened/GateClosed/GateUnknown event on this EventBridge bus "
              "(the last result; with --wait, each change).")
@click.option("--region", envvar="AWS_REGION", help="AWS region; default: your AWS configuration.")
@click.option("--json", "as_json", is_flag=True, help="Print the last result as one JSON object on stdout.")
def gate(findings_file: Path | None, run_id: str | None, stack: str, accept_hot_set: bool, target: str | None,
         dms_task: str | None, max_latency: float, window: int, no_validation: bool, replica_dsn: str | None,
         source_dsn: str | None, max_lag_seconds: float, max_lag_bytes: int, wait: bool, timeout: float,
         poll: float, event_bus: str | None, region: str | None, as_json: bool) -> None:
    """Answer "switch now?": 0 open, 1 closed (every reason), 3 unknown."""
    if findings_file and run_id:
        _fail("give --findings (a run's findings.json) or --run-id (a deployed run), not both")
    if accept_hot_set and not findings_file:
        _fail("--accept-hot-set reads the hot set from a run's findings: give --findings")
    if source_dsn and not replica_dsn:
        _fail("--source-dsn goes with --replica-dsn (the target that replicates)")
    if dms_task and not re.fullmatch(DmsSpec.model_fields["task_arn"].metadata[0].pattern, dms_task):
        _fail(f"--dms-task {dms_task!r}: not a DMS task ARN (arn:aws:dms:REGION:ACCOUNT:task:ID)")
    if not any((findings_file, run_id, target, dms_task, replica_dsn)):
        _fail("nothing to check: give --findings or --run-id, --target, --dms-task or --replica-dsn")
    try:
        spec = GateSpec(db_instance_identifier=target,
                        require_verdict=("hot_set_warm" if accept_hot_set else "ready") if findings_file or run_id
                        else "off",
                        dms=DmsSpec(task_arn=dms_task, max_latency_seconds=max_latency, window_seconds=window,
                                    require_validation=not no_validation) if dms_task else None,
                        max_lag_seconds=max_lag_seconds, max_lag_bytes=max_lag_bytes)
    except ValidationError as exc:
        first = exc.errors()[0]
        _fail(f"{'.'.join(map(str, first['loc']))}: {first['msg']}")
    try:
        sources, events = _sources(spec, findings_file, run_id, stack, replica_dsn, source_dsn, region, event_bus)
    except remote.CliProblem as exc:
        _fail(str(exc), exc.code)

    def changed(result: GateResult) -> None:
        if not as_json:
            _echo(result.lines())
        if events is not None and event_bus:
            publish(events, result, run_id=run_id, bus=event_bus)

    check = lambda: evaluate(spec, sources)  # noqa: E731
    if wait:
        result, timed_out = wait_for(check, timeout_s=timeout, poll_s=poll, on_change=changed)
        if timed_out and not as_json:
            _echo([f"cutover-prep: the gate did not open within {timeout:g} s"], err=True)
    else:
        result = check()
        changed(result)
    if as_json:
        click.echo(json.dumps(result.model_dump(), indent=1, default=str))
    raise click.exceptions.Exit(result.exit_code)


def _sources(spec: GateSpec, findings_file: Path | None, run_id: str | None, stack: str, replica_dsn: str | None,
             source_dsn: str | None, region: str | None, event_bus: str | None) -> tuple[Sources, Any]:
    session = None
    if run_id or spec.db_instance_identifier or spec.dms or event_bus:
        import boto3

        session = remote.aws_call("AWS configuration", lambda: boto3.Session(region_name=region))
    client = (lambda name: remote.aws_call(f"{name} client", lambda: session.client(name))) if session else None
    record = _findings_reader(findings_file) if findings_file else \
        _run_item_reader(session, stack, run_id) if run_id else None
    return Sources(
        run_id=run_id or (findings_file.parent.name if findings_file else None), record=record,
        rds=client("rds") if client and spec.db_instance_identifier else None,
        dms=client("dms") if client and spec.dms else None,
        cloudwatch=client("cloudwatch") if client and spec.dms else None,
        replication=_replication_reader(replica_dsn, source_dsn, spec) if replica_dsn else None,
    ), (client("events") if client and event_bus else None)
