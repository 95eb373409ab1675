"""``cutover-prep preflight``: each read method and privilege the plan needs, proven on the live target.

``--dsn`` takes the DSNs, TLS rules and host checks of ``cutover-prep local --dsn`` (``local.dsn.parse_dsn``);
``--target``/``--secret-arn`` the connection path of a run (``cli.estimate.aws_connection``: the secret's tag
and binding, the endpoint or an allow-listed host, verified TLS). The checks: ``cutover_prep.preflight``.

Exit codes: 0 every check passed; 1 a check failed (each named); 2 a usage or input error (one line);
5 AWS could not be reached (as ``estimate``). Never a traceback, never a secret.
"""

from __future__ import annotations

import json
from typing import Any

import click

from cutover_prep.cli import remote
from cutover_prep.cli.options import FiniteFloatRange
from cutover_prep.cli.selection import all_databases_option, dsn_choice
from cutover_prep.engines.registry import engine_names
from cutover_prep.escape import for_terminal

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, remote.EXIT_USAGE


def _fail(code: int, message: str) -> None:
    click.echo(f"cutover-prep: {for_terminal(message)}", err=True)
    raise click.exceptions.Exit(code)


def dsn_spec(dsn: str) -> Any:
    from cutover_prep.local.dsn import UsageProblem, parse_dsn

    try:
        return parse_dsn(dsn)  # TLS as its parameters ask, else TLS when offered: as `cutover-prep local`
    except UsageProblem as exc:
        raise remote.CliProblem(str(exc)) from None


def aws_spec(target: str, secret_arn: str, engine: str | None, region: str | None) -> Any:
    from cutover_prep.cli.estimate import aws_connection
    from cutover_prep.models.run_input import InvalidInput, parse_run_input

    data = remote.build_input(base=None, target=target, secret_arn=secret_arn, engine=engine, database=None,
                              run_id=None, benchmark=None, sets=())
    try:
        config = parse_run_input(data)
    except InvalidInput as exc:
        raise remote.CliProblem(str(exc)) from None
    return aws_connection(config["target"], region=region)[2]


def target_spec(dsn: str | None, target: str | None, secret_arn: str | None, engine: str | None,
                region: str | None, *, verb: str) -> Any:
    """The connection a read-only command (``preflight``, ``hotset``) opens: ``--dsn``, or a run's path
    through ``--target``/``--secret-arn``; ``CliProblem`` (one line) for any other mix. ``verb``: what the
    command does with the database, for the message."""
    if dsn:
        if target or secret_arn or engine:
            raise remote.CliProblem(f"--dsn {verb} a database this machine reaches: drop --target, --secret-arn "
                                    "and --engine (they name an RDS instance)")
        return dsn_spec(dsn)
    if target and secret_arn:
        return aws_spec(target, secret_arn, engine, region)
    raise remote.CliProblem("give --dsn, or --target and --secret-arn")


@click.command("preflight")
@click.option("--dsn", help="A database this machine reaches, as `cutover-prep local --dsn` takes it (TLS "
              "parameters included).")
@click.option("--target", help="DB instance identifier (AWS): connects as a run would.")
@click.option("--secret-arn", help="Secrets Manager ARN of its credentials, tagged cutover-prep:access=read (AWS).")
@click.option("--engine", type=click.Choice(engine_names()), help="AWS: default from the RDS instance.")
@click.option("--database", multiple=True, help="Database (PostgreSQL) or schema (MySQL, MariaDB) the run "
              "selects (glob; repeat). Default: the one the DSN names, as a run (--target: all).")
@all_databases_option
@click.option("--include-schema", multiple=True, help="Only these schemas, as the run's warmup.include_schemas "
              "(glob; repeat): what the run will not read is not checked.")
@click.option("--exclude-schema", multiple=True, help="Skip these schemas, as the run's warmup.exclude_schemas "
              "(glob; repeat), e.g. pg_catalog for a user with per-schema grants.")
@click.option("--datafiles", is_flag=True, help="The run asks for the datafile pass (warmup.mode datafiles or both; "
              "Oracle): check rdsadmin_rman_util and its views too.")
@click.option("--timeout", type=FiniteFloatRange(1, 3600), default=60, show_default=True,
              help="Seconds the whole preflight may take; a check not reached fails as such.")
@click.option("--region", envvar="AWS_REGION", help="AWS region; default: your AWS configuration.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def preflight(dsn: str | None, target: str | None, secret_arn: str | None, engine: str | None,
              database: tuple[str, ...], include_schema: tuple[str, ...], exclude_schema: tuple[str, ...],
              datafiles: bool, timeout: float, region: str | None, as_json: bool,
              all_databases: bool = False) -> None:
    """Prove each read method and grant the run needs on the target, in about a minute; nothing is written."""
    from cutover_prep.preflight import Context
    from cutover_prep.preflight.runner import run

    # the run's selection (warmup.databases / include_schemas / exclude_schemas): the run's Preflight state
    # builds the same Context from its input (preflight.step.context_of)
    try:
        spec = target_spec(dsn, target, secret_arn, engine, region, verb="checks")
        # the database the DSN names, unless --database or --all-databases says otherwise (issue 33 §1)
        choice = dsn_choice(spec, database, all_databases, include_schema, from_dsn=bool(dsn))
    except remote.CliProblem as exc:
        _fail(exc.code, str(exc))
    ctx = Context(databases=choice.patterns, include_schemas=include_schema, exclude_schemas=exclude_schema,
                  datafiles=datafiles, timeout_seconds=timeout)
    report = run(spec, ctx)
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=1))
    else:
        click.echo("\n".join(for_terminal(line) for line in report.lines()))
    raise click.exceptions.Exit(EXIT_OK if report.ok else EXIT_FAILED)
