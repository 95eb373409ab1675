"""``cutover-prep estimate``: what a warm-up will read, how fast, how long and at what cost, before any run.

The bytes come from the run's own discovery and planner (``warmup.discovery.make_plan``: the
catalogue only, nothing is read or written); the rate, time and cost from ``estimate.compute``;
earlier local runs, the restored instance's price and the selection from ``estimate.inputs``. This
module is the command: its options, the connection (``aws_connection``, also ``cutover-prep
preflight``'s), the deployment's table of earlier runs, the exit codes.

- ``--dsn``: a database this machine reaches (any engine the registry knows). An earlier local run
  of the same database (``--evidence DIR``/*/findings.json) gives a measured rate.
- ``--target``/``--secret-arn``: an RDS instance. DescribeDBInstances gives the class and storage; the
  secret is read only when it carries the tag the deployed functions need (cutover-prep:access=read),
  secret must name that instance (``secret_binding``; else exit 2), and the credentials go only to the
  endpoint RDS reports (or a host in ``ALLOWED_DB_HOSTS``), over
  verified TLS unless ``CUTOVER_PREP_TLS`` says otherwise: the rules of ``connection``, as a run's. The
  deployment's table (``--stack``) gives the earlier runs of the instance, when it can be read.

The bytes are the bytes the units read, nothing added; ``counted`` says what they are (user relations,
catalogues, large objects, per database) and what the census names beside them. A selection that reads
no user relation gets one ``hint`` line (what was selected, the options that widen it).

Exit codes: 0 done, 1 done but the selection holds nothing to read (a run of it would be NOT_READY:
NOTHING_PLANNED; the estimate and the hint are still printed), 2 a usage or input error, 5 AWS or
the database could not be reached; one line on stderr, never a traceback, never a secret.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from cutover_prep.cli import remote
from cutover_prep.cli.selection import all_databases_option, databases_flags
from cutover_prep.dal.records.plan import PlanSummary
from cutover_prep.engines.registry import engine_names
from cutover_prep.escape import for_terminal
from cutover_prep.estimate.ceiling import InstanceFacts
from cutover_prep.estimate.inputs import local_findings, restored_price, selection_of

EXIT_USAGE, EXIT_AWS = remote.EXIT_USAGE, remote.EXIT_AWS
EXIT_NOTHING = 1  # the estimate is made, but its selection reads nothing: the run would be NOT_READY
SECRET_TAG = ("cutover-prep:access", "read")  # as cdk/cutover_prep_cdk/permissions.py grants the functions
DEFAULT_CONCURRENCY_DSN = 4  # as `cutover-prep local --dsn`


def _fail(code: int, message: str) -> None:
    click.echo(f"cutover-prep: {for_terminal(message)}", err=True)  # it may quote the database's own error
    raise click.exceptions.Exit(code)


def warmup_options(base: dict[str, Any] | None, **flags: Any) -> dict[str, Any]:
    """The run input's warm-up section (its defaults filled in), flags over ``base``."""
    from cutover_prep.models.run_input import error_lines
    from cutover_prep.models.warmup import Warmup

    data = dict(base or {})
    data.update({k: list(v) if isinstance(v, tuple) else v for k, v in flags.items()
                 if v is not None and v != ()})
    try:
        return Warmup.model_validate(data).model_dump(mode="json")
    except ValidationError as exc:  # the run input's own lines: a model validator's names its field
        raise remote.CliProblem(f"warmup.{error_lines(exc)[0]}") from None


def _plan(spec: Any, warmup: dict[str, Any]) -> Any:
    from cutover_prep.engines import EngineError, open_engine
    from cutover_prep.engines.registry import HotSetEngineMismatch, UnsupportedWarmupMode
    from cutover_prep.models.warmup import Warmup
    from cutover_prep.warmup.discovery import make_plan

    try:  # never create_extension: the estimate writes nothing
        return make_plan(spec, Warmup.model_validate(warmup), lambda s, _w: open_engine(s), attempts=1)
    except (UnsupportedWarmupMode, HotSetEngineMismatch) as exc:
        raise remote.CliProblem(str(exc)) from None
    except EngineError as exc:
        raise remote.CliProblem(f"{spec.engine} at {spec.host}:{spec.port}: {exc}", code=EXIT_AWS) from None


def _counted(spec: Any, planned: Any) -> Any:
    from cutover_prep.estimate.compute import counted_of

    return counted_of(spec.engine, planned.segments, planned.census)


def from_dsn(dsn: str, warmup: dict[str, Any], evidence: Path, *,
             all_databases: bool = False) -> tuple[Any, dict[str, Any]]:
    from cutover_prep.cli.selection import dsn_choice
    from cutover_prep.estimate.compute import choose_rate, estimate, readers_for
    from cutover_prep.local.dsn import UsageProblem, parse_dsn

    try:
        spec = parse_dsn(dsn)  # with the TLS its parameters ask for, else TLS when offered: as `cutover-prep local`
    except UsageProblem as exc:
        raise remote.CliProblem(str(exc)) from None
    # the database the DSN names, unless --database or --all-databases says otherwise (issue 33 §1)
    choice = dsn_choice(spec, warmup["databases"], all_databases, warmup["include_schemas"])
    warmup = {**warmup, "databases": list(choice.patterns)}
    planned = _plan(spec, warmup)
    summary = PlanSummary.model_validate(planned.plan.summary())
    rate = choose_rate(engine=spec.engine, concurrency=readers_for(warmup["max_concurrency"], summary),
                       measured=local_findings(evidence, spec))
    est = estimate(engine=spec.engine, plan_summary=summary, max_concurrency=warmup["max_concurrency"], rate=rate,
                   counted=_counted(spec, planned))
    where = {"engine": spec.engine, "host": spec.host, "port": spec.port, "database": spec.database}
    return est, {"target": where, "mode": planned.mode, "unit_bytes_target": summary.unit_bytes_target,
                 "selection": {**selection_of(warmup), "databases_from": choice.how}}


def _secret_tagged(secrets: Any, arn: str) -> None:
    from botocore.exceptions import ClientError

    try:
        tags = secrets.describe_secret(SecretId=arn).get("Tags") or []
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            raise remote.CliProblem(f"--secret-arn {arn}: no such secret in this account and region") from None
        raise remote.CliProblem(f"secret {arn}: {remote.aws_problem(exc)}", code=EXIT_AWS) from None
    if not any(t.get("Key") == SECRET_TAG[0] and t.get("Value") == SECRET_TAG[1] for t in tags):
        raise remote.CliProblem(f"secret {arn} is not tagged {SECRET_TAG[0]}={SECRET_TAG[1]}: the estimate reads "
                                "only the secrets the deployed functions may read; tag it (docs/deploy.md)")


def _describe(rds: Any, identifier: str) -> dict[str, Any]:
    from botocore.exceptions import ClientError

    try:
        return rds.describe_db_instances(DBInstanceIdentifier=identifier)["DBInstances"][0]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "DBInstanceNotFound":
            raise remote.CliProblem(f"--target {identifier}: no such DB instance in this account and region "
                                    "(for a restore, name the instance the snapshot was taken from)") from None
        raise


def aws_earlier_findings(session: Any, stack: str, identifier: str) -> tuple[list[dict[str, Any]], str | None]:
    """Findings of earlier runs of the instance in the deployment's table, or why none were looked up."""
    from botocore.exceptions import BotoCoreError, ClientError

    from cutover_prep.dal.store import Store
    from cutover_prep.estimate.run import earlier_findings

    try:
        deployment = remote.find_deployment(session.client("cloudformation"), stack=stack, state_machine_arn=None)
    except (remote.CliProblem, ClientError, BotoCoreError) as exc:
        return [], f"earlier runs not looked up ({str(exc)[:160]})"
    if not deployment.table or not deployment.bucket:
        return [], f"earlier runs not looked up (stack {stack} names no table or bucket)"
    store = Store(dynamodb=session.client("dynamodb"), s3=session.client("s3"), table=deployment.table,
                  bucket=deployment.bucket)
    return earlier_findings(store, identifier), None


def aws_connection(target: dict[str, Any], *, region: str | None) -> tuple[Any, dict[str, Any], Any]:
    """(boto3 session, the instance's facts, ConnectionSpec) for an RDS target, by a run's rules: the secret
    tagged for the functions and bound to the instance, the endpoint or an allow-listed host, TLS as
    ``CUTOVER_PREP_TLS`` says. ``CliProblem`` (exit 2 or 5) otherwise. Also ``cutover-prep preflight``'s."""
    import boto3

    from cutover_prep.access.connection import connection_spec, secrets_manager_reader, secrets_manager_tags
    from cutover_prep.access.secret_binding import SecretNotBound
    from cutover_prep.engines import DatabaseUnreachable
    from cutover_prep.models.target import Target
    from cutover_prep.rds.answers import DbInstance
    from cutover_prep.rds.instances import instance_facts
    from cutover_prep.settings import connection_policy

    identifier, arn = target["db_instance_identifier"], target["secret_arn"]
    session = remote.aws_call("AWS configuration", lambda: boto3.Session(region_name=region))
    rds = remote.aws_call("rds client", lambda: session.client("rds"))
    secrets = remote.aws_call("secretsmanager client", lambda: session.client("secretsmanager"))
    facts = instance_facts(DbInstance.model_validate(
        remote.aws_call(f"DescribeDBInstances {identifier}", lambda: _describe(rds, identifier))))
    _secret_tagged(secrets, arn)
    try:  # the endpoint RDS reports, or a host in ALLOWED_DB_HOSTS; TLS as CUTOVER_PREP_TLS says (default: verified);
        # only a secret that names this instance (SecretNotBound; ALLOW_UNBOUND_SECRETS=true for one that names none)
        spec = connection_spec(Target.model_validate(target), facts, secrets_manager_reader(secrets),
                               policy=connection_policy(),
                               read_tags=secrets_manager_tags(secrets))
    except SecretNotBound as exc:  # the secret is not this instance's: an input mistake
        raise remote.CliProblem(str(exc)) from None
    except DatabaseUnreachable as exc:
        raise remote.CliProblem(str(exc), code=EXIT_AWS) from None
    except ValueError as exc:  # CUTOVER_PREP_TLS that is not require, prefer or disable
        raise remote.CliProblem(str(exc)) from None
    return session, facts, spec


def from_aws(config: dict[str, Any], *, region: str | None, stack: str) -> tuple[Any, dict[str, Any]]:
    from cutover_prep.access.selection import choose_for_run
    from cutover_prep.estimate.compute import choose_rate, estimate, instance_limits_facts, readers_for

    target, warmup, restore = config["target"], config["warmup"], config.get("restore")
    identifier = target["db_instance_identifier"]
    session, facts, spec = aws_connection(target, region=region)
    choice = choose_for_run(spec.engine, target, warmup)  # as the run's Discover (issue 33 §1)
    warmup = {**warmup, "databases": list(choice.patterns)}
    planned = _plan(spec, warmup)
    summary = PlanSummary.model_validate(planned.plan.summary())
    measured, why_not = aws_earlier_findings(session, stack, identifier)
    limits = instance_limits_facts(facts)
    if restore:  # the restored instance's class and storage, where the input names them
        restored = {k: v for k, v in (("instance_class", restore.get("db_instance_class")),
                                      ("storage_type", restore.get("storage_type")),
                                      ("allocated_gb", restore.get("allocated_gb")), ("iops", restore.get("iops")),
                                      ("storage_throughput", restore.get("storage_throughput"))) if v}
        limits = InstanceFacts.model_validate({**limits.model_dump(), **restored})
    rate = choose_rate(engine=spec.engine, concurrency=readers_for(warmup["max_concurrency"], summary),
                       measured=measured, instance=limits)
    price, price_note = restored_price(session, limits, spec.engine) if restore else (None, None)
    est = estimate(engine=spec.engine, plan_summary=summary, max_concurrency=warmup["max_concurrency"], rate=rate,
                   counted=_counted(spec, planned), restore=bool(restore), instance_price_per_hour_usd=price,
                   price_note=price_note)
    if why_not:
        est.cost.notes.append(why_not)
    where = {"db_instance_identifier": identifier, "engine": spec.engine, "db_instance_class": facts.get(
        "db_instance_class"), "storage_type": facts.get("storage_type"),
        "allocated_storage_gb": facts.get("allocated_storage_gb")}
    return est, {"target": where, "mode": planned.mode, "unit_bytes_target": summary.unit_bytes_target,
                 "selection": {**selection_of(warmup), "databases_from": choice.how}}


@click.command("estimate")
@click.option("--dsn", help="A database this machine reaches: postgresql://USER:PW@HOST:PORT/DATABASE, mysql://..., "
              "mariadb://..., oracle://.../SERVICE; TLS parameters as for `cutover-prep local --dsn`.")
@click.option("--target", help="DB instance identifier (AWS).")
@click.option("--secret-arn", help="Secrets Manager ARN of its credentials, tagged cutover-prep:access=read (AWS).")
@click.option("--engine", type=click.Choice(engine_names()), help="AWS: default from the RDS instance.")
@click.option("--input", "input_file", metavar="FILE", help="A run input JSON file (AWS): its target, warm-up and "
              "restore; flags override it.")
@click.option("--database", multiple=True, help="Database (PostgreSQL) or schema (MySQL, MariaDB) to warm "
              "(glob; repeat). Default: the one the DSN names (--target: target.databases / target.database, "
              "else all).")
@all_databases_option
@click.option("--include-schema", multiple=True, help="Only these schemas (glob; repeat).")
@click.option("--exclude-schema", multiple=True, help="Skip these schemas (glob; repeat).")
@click.option("--max-concurrency", type=click.IntRange(1, 1000),
              help=f"Units read at the same time; default: the run's ({DEFAULT_CONCURRENCY_DSN} with --dsn, as "
              "`local`; the run input's default otherwise).")
@click.option("--unit-mb", type=click.IntRange(1, 100_000), help="Work unit size; default: as the run plans it.")
@click.option("--evidence", type=click.Path(path_type=Path, file_okay=False), default=Path("out"),
              show_default=True, help="--dsn: where earlier local runs' evidence is (DIR/*/findings.json).")
@click.option("--stack", envvar="CUTOVER_PREP_STACK", default=remote.DEFAULT_STACK, show_default=True,
              help="AWS: the deployment whose table holds earlier runs of the instance (env CUTOVER_PREP_STACK).")
@click.option("--region", envvar="AWS_REGION", help="AWS region; default: your AWS configuration.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def estimate(dsn: str | None, target: str | None, secret_arn: str | None, engine: str | None,
             input_file: str | None, database: tuple[str, ...], include_schema: tuple[str, ...],
             exclude_schema: tuple[str, ...], max_concurrency: int | None, unit_mb: int | None, evidence: Path,
             stack: str, region: str | None, as_json: bool, all_databases: bool = False) -> None:
    """Estimate a warm-up before starting it: bytes to read and what they are, rate and its source, time, cost.
    Exit 1 when the selection holds nothing to read."""
    from cutover_prep.estimate.compute import lines, nothing_hint

    selection = {"databases": database, "include_schemas": include_schema, "exclude_schemas": exclude_schema,
                 "unit_mb": unit_mb}
    try:
        if dsn:
            if target or secret_arn or input_file or engine:
                raise remote.CliProblem("--dsn estimates a database this machine reaches: drop --target, "
                                        "--secret-arn, --engine and --input (they name an RDS instance)")
            warmup = warmup_options(None, max_concurrency=max_concurrency or DEFAULT_CONCURRENCY_DSN, **selection)
            est, about = from_dsn(dsn, warmup, evidence, all_databases=all_databases)
        else:
            config = _aws_input(input_file, target, secret_arn, engine, max_concurrency, selection,
                                databases_flags(database, all_databases))
            est, about = from_aws(config, region=region, stack=stack)
    except remote.CliProblem as exc:
        _fail(exc.code, str(exc))
    except RecursionError:
        _fail(EXIT_USAGE, "--input: nested too deeply (see schema/run-input.schema.json)")
    est.hint = nothing_hint(est, about.get("selection") or {})
    if as_json:
        click.echo(json.dumps({**est.model_dump(mode="json"), **about}, indent=1))
    else:
        click.echo("\n".join(for_terminal(line) for line in lines(est)))
    if est.bytes_to_read == 0:  # the hint is on stdout with the estimate; stderr says why the exit code is 1
        click.echo(f"cutover-prep: {for_terminal(est.hint or 'nothing to read')}", err=True)
        raise click.exceptions.Exit(EXIT_NOTHING)


def _aws_input(input_file: str | None, target: str | None, secret_arn: str | None, engine: str | None,
               max_concurrency: int | None, selection: dict[str, Any],
               databases: str | None = None) -> dict[str, Any]:
    from cutover_prep.models.run_input import InvalidInput, parse_run_input

    base = remote.read_input_file(input_file) if input_file else None
    if not base and not (target and secret_arn):
        raise remote.CliProblem("give --dsn, or --target and --secret-arn (or --input FILE naming them)")
    data = remote.build_input(base=base, target=target, secret_arn=secret_arn, engine=engine, database=None,
                              run_id=None, benchmark=None, sets=())
    data["warmup"] = warmup_options(data.get("warmup"), max_concurrency=max_concurrency, **selection)
    if databases:  # --all-databases
        data["target"] = {**data["target"], "databases": databases}
    try:
        return parse_run_input(data)
    except InvalidInput as exc:
        raise remote.CliProblem(str(exc)) from None
