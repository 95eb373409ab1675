"""The ``cutover-prep`` command line.

``local`` runs the whole workflow on this machine; ``start``, ``status`` and ``report``
drive the deployed one (see ``remote``); ``validate`` checks a run input offline;
``analyze`` reads a points CSV.

Exit codes: 0 READY (every planned unit read, the evidence complete); 1 NOT_READY (the
reasons are printed); 2 a usage or input error; 3 the run failed (unreachable database,
restore ...); 4 ``--timeout`` reached or the run is still going.
User mistakes are one line on stderr, never a traceback. Every line goes out through
``escape.for_terminal`` (``_echo``): a name or a database's message shows its control characters,
never sends them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from cutover_prep.analysis.cli import analyze
from cutover_prep.cli import remote
from cutover_prep.cli.estimate import estimate
from cutover_prep.cli.options import FiniteFloatRange
from cutover_prep.engines.registry import engine_names, families
from cutover_prep.escape import for_terminal
from cutover_prep.models.run_input import Benchmark

EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE, EXIT_FAILED, EXIT_TIMEOUT = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports it
# `local --preflight`: the run input's preflight section (fail: its defaults)
PREFLIGHT_MODES: dict[str, dict[str, Any]] = {"fail": {}, "warn": {"on_failure": "warn"}, "off": {"enabled": False}}

DSN_FORMS = " or ".join(f"{f.dsn_schemes[0]}://USER:PW@HOST:PORT/{f.database_term}" for f in families())


def _echo(lines: str | list[str], *, err: bool = False) -> None:
    """Lines for a terminal, each escaped on its own: a line feed inside one is shown, not obeyed."""
    click.echo("\n".join(for_terminal(line) for line in ([lines] if isinstance(lines, str) else lines)), err=err)


def _fail(code: int, message: str) -> None:
    _echo(f"cutover-prep: {message}", err=True)
    raise click.exceptions.Exit(code)


@click.group(help="Get a restored RDS database ready for a cutover, and prove it.")
@click.version_option(package_name="cutover-prep", prog_name="cutover-prep", message="%(prog)s %(version)s")
def app() -> None:
    pass


@app.command()
@click.option("--dsn", help=f"{DSN_FORMS}; PostgreSQL also as libpq's keyword form 'host=HOST port=5432 "
              "dbname=DB user=USER password=PW' (the other engines: the URL only). TLS as the engine's own "
              "parameters say (?sslmode=verify-full&sslrootcert=CA.pem; ?ssl-mode=VERIFY_IDENTITY&ssl-ca=CA.pem; "
              "?protocol=tcps), else TLS when the server offers it. Default: an embedded "
              "PostgreSQL with a generated sample database.")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="Where to write the evidence; default ./out/<run id>/.")
@click.option("--size-mb", type=click.IntRange(10, 100_000), default=300, show_default=True,
              help="Size of the generated sample database.")
@click.option("--max-concurrency", type=click.IntRange(1, 1000),
              help="Units read at the same time; default 4 with --dsn, 16 for the demo database (its emulated "
              "volume rewards reads in flight).")
@click.option("--unit-mb", type=click.IntRange(1, 100_000),
              help="Work unit size; default: from the assumed cold rate and the Lambda time limit.")
@click.option("--chunk-mb", type=click.IntRange(1, 4096), default=64, show_default=True,
              help="Bytes read per database call.")
@click.option("--database", multiple=True, help="Database (PostgreSQL) or schema (MySQL, MariaDB) to warm "
              "(glob; repeat). Default: the one the DSN names.")
@click.option("--all-databases", is_flag=True, help="Warm every database on the server (MySQL, MariaDB: every "
              "schema but the system ones), not only the one the DSN names.")
@click.option("--include-schema", multiple=True, help="Only these schemas (glob; repeat).")
@click.option("--exclude-schema", multiple=True, help="Skip these schemas (glob; repeat).")
@click.option("--priority", multiple=True, help="Read these first: SCHEMA.NAME globs, in order (repeat).")
@click.option("--hotset", "hotset_file", type=click.Path(path_type=Path, dir_okay=False),
              help="A hot-set profile (`cutover-prep hotset --out FILE`): its relations are read right after the "
              "--priority ones, before the rest (warmup.hot_set).")
@click.option("--create-extension", is_flag=True, help="Allow CREATE EXTENSION pg_prewarm (a write).")
@click.option("--benchmark/--no-benchmark", default=True, show_default=True,
              help="Probe cold/warm blocks and run the benchmark sweep after the warm-up.")
@click.option("--point-seconds", type=FiniteFloatRange(1, 600), default=5, show_default=True,
              help="Duration of each benchmark point.")
@click.option("--probe-blocks", type=click.IntRange(0, 100_000),
              help="Blocks each of the cold and warm probes reads at most (0: no probes); default: the run input's "
              f"benchmark.probe_blocks, {Benchmark.model_fields['probe_blocks'].default}. A probe reads at most a "
              "quarter of the database's readable 512 KiB snapshot blocks, so the warm probe's fresh blocks lie in "
              "snapshot blocks the cold probe did not read (it says so when it reads fewer).")
@click.option("--write-test", is_flag=True, help="Add the opt-in write points (scratch schema, dropped after).")
@click.option("--run-id", help="Run id (default local-<time>). The same command again, with the same run id and "
              "--out, resumes the run: what it read is not read again; another target or other options on it are "
              "refused (RunIdReused), as is a second run on it while one runs (RunIdInUse).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar.")
@click.option("--storage-emulation/--no-storage-emulation", default=True, show_default=True,
              help="Put the sample database on an emulated restored volume (FUSE; root) so the first-touch "
              "penalty is real. Without --dsn only.")
@click.option("--storage-type", type=click.Choice(["gp2", "gp3", "io1", "io2"]),
              help="Emulated storage type; default: the calibrated profile's.")
@click.option("--allocated-gb", type=click.IntRange(20, 65_536), help="Emulated allocated storage (GiB).")
@click.option("--iops", type=click.IntRange(100, 256_000), help="Emulated provisioned IOPS (gp3, io1, io2).")
@click.option("--storage-throughput", type=click.IntRange(125, 4_000),
              help="Emulated provisioned throughput in MiB/s (gp3).")
@click.option("--instance-class", help="Emulated instance class, whose EBS ceiling applies (e.g. db.r6i.large).")
@click.option("--preflight", "preflight_mode", type=click.Choice(["fail", "warn", "off"]), default="fail",
              show_default=True, help="The preflight after Discover (input preflight): fail ends the run at a "
              "failed check, naming it; warn records it and the run goes on (a user without a grant on purpose); "
              "off skips it.")
@click.option("--input", "input_file", type=click.Path(path_type=Path, dir_okay=False),
              help="A run input (JSON, the deployed run's: schema/run-input.schema.json): its warmup, benchmark, "
              "verdict, preflight and run_id sections, with the flags typed here over them. Its target is not used "
              "(the database is --dsn's, or the demo's); restore and comparison are refused.")
@click.option("--compare", type=click.Path(path_type=Path, dir_okay=False),
              help="A comparison input (docs/compare.md): measure each configuration on its own emulated volume, "
              "write comparison.json and comparison.html (exit 0: a recommendation, 1: none meets the targets).")
def local(dsn: str | None, out: Path | None, size_mb: int, max_concurrency: int | None, unit_mb: int | None,
          chunk_mb: int, database: tuple[str, ...], include_schema: tuple[str, ...],
          exclude_schema: tuple[str, ...], priority: tuple[str, ...], create_extension: bool,
          benchmark: bool, point_seconds: float, write_test: bool, run_id: str | None, progress: bool,
          storage_emulation: bool, storage_type: str | None, allocated_gb: int | None, iops: int | None,
          storage_throughput: int | None, instance_class: str | None, compare: Path | None = None,
          preflight_mode: str = "fail", hotset_file: Path | None = None, probe_blocks: int | None = None,
          input_file: Path | None = None, all_databases: bool = False) -> None:
    """Run the whole workflow on this machine (moto plays AWS) and write the evidence."""
    from cutover_prep.cli.selection import databases_flags

    databases = _guard(lambda: databases_flags(database, all_databases))
    if compare is not None:  # each configuration on its own emulated volume (local/compare.py)
        from cutover_prep.local.compare import main as compare_main

        raise click.exceptions.Exit(compare_main(compare, out=out, size_mb=size_mb, progress=progress, dsn=dsn))
    from cutover_prep.local.input_file import InputFileProblem, local_sections
    from cutover_prep.local.runner import Interrupted, LocalOptions, TargetUnreachable, UsageProblem, run_local

    typed = _typed_flags()
    # each run input key from its flag: (section, key, flag's parameter, value; None: not set)
    flags = [("warmup", "max_concurrency", "max_concurrency", max_concurrency or (4 if dsn else 16)),
             ("warmup", "chunk_mb", "chunk_mb", chunk_mb), ("warmup", "create_extension", "create_extension",
                                                            create_extension),
             ("warmup", "databases", "database", list(database)),
             ("warmup", "include_schemas", "include_schema", list(include_schema)),
             ("warmup", "exclude_schemas", "exclude_schema", list(exclude_schema)),
             ("warmup", "priority", "priority", list(priority)),
             ("warmup", "unit_mb", "unit_mb",  # the demo: a few dozen units, so it shows the Map at work
              unit_mb if unit_mb is not None else (None if dsn else max(1, size_mb // 25))),
             ("benchmark", "enabled", "benchmark", benchmark), ("benchmark", "seconds_per_point", "point_seconds",
                                                                point_seconds),
             ("benchmark", "write_test", "write_test", write_test), ("benchmark", "probe_blocks", "probe_blocks",
                                                                     probe_blocks)]
    defaults: dict[str, dict] = {"warmup": {}, "benchmark": {}, "preflight": PREFLIGHT_MODES[preflight_mode]}
    given: dict[str, dict] = {"warmup": {}, "benchmark": {}}
    for section, key, param, value in flags:
        if value is not None:
            (given if param in typed else defaults)[section][key] = value
    if "preflight_mode" in typed:
        given["preflight"] = PREFLIGHT_MODES[preflight_mode]
    try:
        if (hot := _hotset_profile(hotset_file)) is not None:
            given["warmup"]["hot_set"] = hot.to_input()
        data = remote.read_input_file(str(input_file)) if input_file is not None else None
        sections = local_sections(data, str(input_file), defaults=defaults, given=given, run_id=run_id)
        for note in sections.notes:
            _echo(f"cutover-prep: {note}", err=True)
        storage = {k: v for k, v in (("storage_type", storage_type), ("allocated_gb", allocated_gb), ("iops", iops),
                                     ("storage_throughput", storage_throughput),
                                     ("instance_class", instance_class)) if v is not None}
        result = run_local(LocalOptions(dsn=dsn, out=out, size_mb=size_mb, warmup=sections.warmup,
                                        benchmark=sections.benchmark, verdict=sections.verdict,
                                        run_id=sections.run_id, progress=progress, storage=storage,
                                        emulate=storage_emulation, preflight=sections.preflight,
                                        databases=databases))
    except (InputFileProblem, remote.CliProblem) as exc:
        _fail(EXIT_USAGE, str(exc))
    except UsageProblem as exc:
        _fail(EXIT_USAGE, str(exc))
    except TargetUnreachable as exc:
        _fail(EXIT_FAILED, str(exc))
    except Interrupted as exc:  # ends the line the runner began when it started stopping the run, or one of its own
        _echo(str(exc) if exc.continues else f"cutover-prep: interrupted: {exc}", err=True)
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
    except KeyboardInterrupt:  # before the run started (building the sample, connecting): the runner says so else
        _fail(EXIT_INTERRUPTED, "interrupted before the run started; nothing was read")
    _echo(_summary(result))
    if result["status"] != "SUCCEEDED":
        code = EXIT_USAGE if result.get("error") == "InvalidInput" else EXIT_FAILED
        _fail(code, f"run failed: {result.get('error')}: {result.get('cause')}")
    if (result.get("output") or {}).get("verdict") != "READY":
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


def _typed_flags() -> set[str]:
    """The parameters of the running command typed on its command line (not defaults): they win over --input."""
    ctx = click.get_current_context()
    return {name for name in ctx.params if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE}


def _units_text(units: dict, run: dict) -> str:
    """The findings' units; without findings (the run failed before Finalize made them), the counts its
    record kept, never a 0/0 that contradicts the bytes it read."""
    if not units and "units_total" in run:
        units = {"done": run.get("units_done", 0), "total": run["units_total"], "failed": run.get("units_failed", 0)}
    if not units:
        return "no units planned"
    return f"units {units.get('done', 0)}/{units.get('total', 0)} done, {units.get('failed', 0)} failed"


def _summary(result: dict) -> list[str]:
    run = result.get("run") or {}
    out = result.get("output") or {}
    units = out.get("units") or {}
    plan = run.get("plan") or {}
    lines = [
        f"run {result['run_id']}: {result['status']} in {result['seconds']} s",
        f"  engine {run.get('engine', '?')}, read method(s) {', '.join(sorted(set((plan.get('read_methods') or {}).values()))) or '?'}",  # noqa: E501
        f"  {_units_text(units, run)}; "
        f"{run.get('bytes_read', 0) / 2**20:,.1f} MiB read of {run.get('bytes_planned', 0) / 2**20:,.1f} MiB planned; "
        + (f"coverage {out['coverage_pct']} %" if "coverage_pct" in out
           else "coverage not computed (the run ended before its findings were made)"),
    ]
    findings_file = Path(result["out"]) / "findings.json"
    if findings_file.exists():
        from cutover_prep.report.terminal import terminal_lines

        lines += terminal_lines(json.loads(findings_file.read_text()))
    lines.append(f"  evidence: {result['out']}")
    if (Path(result["out"]) / "report.html").exists():
        lines.append(f"  report:   {Path(result['out']) / 'report.html'}")
    return lines


app.add_command(analyze)
from cutover_prep.cli.compare import compare as _compare  # noqa: E402  (issue 15: the comparison workflow)

app.add_command(_compare)
app.add_command(estimate)

from cutover_prep.cli.preflight import preflight  # noqa: E402  (issue 22: prove each read method)

app.add_command(preflight)

from cutover_prep.cli.hotset import hotset  # noqa: E402  (issue 23: the hot set first)

app.add_command(hotset)

from cutover_prep.cli.gate import gate  # noqa: E402 - beside the other commands

app.add_command(gate)


def _hotset_profile(path: Path | str | None) -> Any:
    """The hot-set profile ``--hotset`` names (``cutover-prep hotset --out FILE``), or exit 2 in one line."""
    from cutover_prep.engines.hotset import HotsetProblem
    from cutover_prep.hotset import load

    if path is None:
        return None
    try:
        profile = load(path)
        profile.to_input()
    except HotsetProblem as exc:
        _fail(EXIT_USAGE, str(exc))
    return profile


# ---- the deployed workflow -------------------------------------------------------------------

def _stack_option(what: str) -> Any:
    return click.option("--stack", envvar="CUTOVER_PREP_STACK", default="CutoverPrep", show_default=True,
                        help=f"The deployed stack whose outputs name {what} (env CUTOVER_PREP_STACK).")


_region_option = click.option("--region", envvar="AWS_REGION", help="AWS region; default: your AWS configuration.")


def _deployment_options(command: Any) -> Any:
    for option in reversed([
        _stack_option("the state machine"),
        click.option("--state-machine-arn", envvar="CUTOVER_PREP_STATE_MACHINE_ARN",
                     help="The state machine itself, instead of the stack's outputs."),
        _region_option,
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout."),
    ]):
        command = option(command)
    return command


class _Aws:
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
                every = [s.summary() for s in store.storage_samples(run_id)]
            except (ClientError, BotoCoreError):
                every = []
            samples = [s for s in every if s.get("status")]
            if not run or not samples:
                return run
            from cutover_prep.findings.storage_init import etas_of_samples

            # RDS's initialization ETA per volume from the same samples (issue 36 §3)
            return {**run, "storage": samples[-1], "storage_eta": etas_of_samples(every)}
        return read


def _finish(result: remote.Outcome, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(result.as_json(), indent=1))
    else:
        _echo(result.lines())
    if result.code == EXIT_TIMEOUT and result.status == "RUNNING":
        _echo(f"cutover-prep: run {result.run_id} is still running; later: cutover-prep status {result.run_id}",
              err=True)
    raise click.exceptions.Exit(result.code)


def _guard(call: Any) -> Any:
    try:
        return call()
    except remote.CliProblem as exc:
        _fail(exc.code, str(exc))


def _input_guard(what: str, call: Any) -> Any:
    """Reading and building the input: JSON nested thousands deep is one line, not a RecursionError."""
    try:
        return _guard(call)
    except RecursionError:
        _fail(EXIT_USAGE, f"{what}: nested too deeply (a run input is a few levels deep; "
                          "see schema/run-input.schema.json)")


def _read_input(path: str) -> dict[str, Any]:
    return _input_guard(f"--input {path}", lambda: remote.read_input_file(path))


@app.command()
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
@_deployment_options
def start(target: str | None, secret_arn: str | None, engine: str | None, database: str | None,
          run_id: str | None, benchmark: bool | None, input_file: str | None, sets: tuple[str, ...], wait: bool,
          timeout: float, poll: float, stack: str, state_machine_arn: str | None, region: str | None,
          as_json: bool, hotset_file: str | None = None, all_databases: bool = False) -> None:
    """Start a run of the deployed workflow (validated here first)."""
    base = _read_input(input_file) if input_file else None
    if all_databases:  # after the file's and before the --set ones: a --set says last
        sets = ("target.databases=all", *sets)
    if (hot := _hotset_profile(hotset_file)) is not None:
        from cutover_prep.hotset import with_hot_set

        base = with_hot_set(base, hot)
    run_input = _input_guard("input", lambda: remote.build_input(
        base=base, target=target, secret_arn=secret_arn, engine=engine, database=database, run_id=run_id,
        benchmark=benchmark, sets=sets))
    aws = _guard(lambda: _Aws(region))
    deployment = _guard(lambda: aws.deployment(stack, state_machine_arn))
    _check_started_by(run_input, deployment.state_machine_arn)  # before the workflow's ValidateInput refuses it
    sfn = _guard(lambda: aws.client("stepfunctions"))
    run = run_input["run_id"]
    execution_arn, attached = _guard(lambda: remote.aws_call("start", lambda: remote.start(sfn, deployment,
                                                                                           run_input)))
    _echo(f"{'following the running' if attached else 'started'} run {run}: {execution_arn}", err=True)
    if live_view := remote.live_view_line(deployment, run):
        _echo(live_view, err=True)
    if not wait:
        if as_json:
            click.echo(json.dumps({"run_id": run, "execution_arn": execution_arn, "status": "RUNNING",
                                   "dashboard": deployment.dashboard_url}, indent=1))
        else:
            click.echo(run)
        return
    desc = _guard(lambda: remote.wait(  # AWS errors while waiting are its own (exit 4, the run goes on)
        sfn, execution_arn, run, timeout_s=timeout, poll_s=poll, read_run=aws.run_reader(deployment),
        report=lambda line: _echo(line, err=True)))
    _finish(remote.outcome(desc, run), as_json)


@app.command()
@click.option("--input", "input_file", metavar="FILE", required=True, help="The run input JSON file (- for stdin).")
@click.option("--state-machine-arn", envvar="CUTOVER_PREP_STATE_MACHINE_ARN",
              help="The deployment the run is for: AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID must name an "
              "execution in its account and region (offline: nothing is asked of AWS).")
@_region_option
def validate(input_file: str, state_machine_arn: str | None, region: str | None) -> None:
    """Check a run input as the workflow's ValidateInput would, offline; print what the run would do."""
    from cutover_prep.models.run_input import InvalidInput, parse_run_input

    data = _read_input(input_file)
    from cutover_prep.cli.compare import is_comparison_input, validate_comparison

    if is_comparison_input(data):  # a comparison input (cutover-prep compare), told by its keys
        raise click.exceptions.Exit(validate_comparison(data))
    deployment = _offline_place(state_machine_arn, region) if data.get(STARTED_BY) else None
    try:
        config = parse_run_input(data, deployment=deployment)
    except InvalidInput as exc:
        _echo([f"cutover-prep: {line}" for line in exc.problems], err=True)
        raise click.exceptions.Exit(EXIT_USAGE) from None
    _echo(_plan_line(config, run_id_given=data.get("run_id") is not None, deployment=deployment))


STARTED_BY = "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID"


def _check_started_by(run_input: dict[str, Any], state_machine_arn: str) -> None:
    from cutover_prep.models.run_input import AwsPlace, InvalidInput, check_started_by

    try:
        check_started_by(run_input.get(STARTED_BY), AwsPlace.of_arn(state_machine_arn))
    except InvalidInput as exc:
        _fail(EXIT_USAGE, f"input: {exc}")


def _offline_place(state_machine_arn: str | None, region: str | None) -> Any:
    """Where the deployment is, as far as this machine knows without asking AWS: the state machine's
    ARN, else the configured region (--region, AWS_REGION, AWS_DEFAULT_REGION, the profile's)."""
    import re

    from cutover_prep.models.run_input import AwsPlace

    if state_machine_arn:
        if not re.fullmatch(remote.STATE_MACHINE_ARN, state_machine_arn):
            _fail(EXIT_USAGE, f"--state-machine-arn {state_machine_arn[:200]!r}: not a state machine ARN "
                              "(arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)")
        return AwsPlace.of_arn(state_machine_arn)
    if not region:
        import botocore.session

        try:
            region = botocore.session.Session().get_config_variable("region")
        except Exception:  # noqa: BLE001 (an unreadable AWS configuration: the region is just not known)
            region = None
    return AwsPlace(region=region) if region else None


def _plan_line(config: dict[str, Any], *, run_id_given: bool, deployment: Any = None) -> str:
    """What a valid input makes the workflow do, in one line."""
    target, restore, warmup, bench = config["target"], config["restore"], config["warmup"], config["benchmark"]
    where = [f"engine {target['engine']}"] if target["engine"] else []
    if target["host"]:
        where.append(f"via {target['host']}" + (f":{target['port']}" if target["port"] else ""))
    parts = [f"target {target['db_instance_identifier']}" + (f" ({', '.join(where)})" if where else "")]
    if restore:
        parts.append(f"restore from snapshot {restore['snapshot_identifier']}"
                     + (f" as {restore['db_instance_class']}" if restore["db_instance_class"] else ""))
    else:
        parts.append("no restore (the instance exists)")
    from cutover_prep.selection import input_text

    parts.append(f"reads {input_text(target, warmup)}")
    parts.append(f"warm-up max_concurrency {warmup['max_concurrency']}")
    if bench["enabled"]:
        writes = (f"write test on, at most {bench['write_max_mib']} MiB" if bench["write_test"]
                  else "write test off")
        parts.append(f"benchmark on ({writes})")
    else:
        parts.append("benchmark off, so no write test" if bench["write_test"] else "benchmark off, write test off")
    parts.append(f"run id {config['run_id']}" if run_id_given
                 else "run id from the execution name (start: ci-<UTC time>-<hex>)")
    unchecked = []
    if (config.get("verdict") or {}).get("baseline_run_id"):
        unchecked.append("verdict.baseline_run_id (must name a finished run of the deployment)")
    if target["host"]:
        unchecked.append("target.host (must be in the deployment's allowed_db_hosts)")
    if config.get("started_by") and not (deployment and deployment.account):
        unchecked.append(f"{STARTED_BY} (must be an execution in the deployment's "
                         f"{'account' if deployment else 'account and region'}: give --state-machine-arn)")
    line = "valid: " + ", ".join(parts)
    return line + ("; not checked offline: " + ", ".join(unchecked) if unchecked else "")


@app.command()
@click.argument("run")
@click.option("--watch", is_flag=True, help="Print progress (units, MiB, the warm-up's ETA at the measured rate, "
              "RDS's storage progress) until the verdict, one line per change; the exit code is the verdict's.")
@click.option("--timeout", type=FiniteFloatRange(1), default=6 * 3600, show_default=True,
              help="Seconds --watch waits before exit code 4 (the run goes on).")
@click.option("--poll", type=FiniteFloatRange(0.1, 600), default=15, show_default=True,
              help="Seconds between progress checks (--watch).")
@_deployment_options
def status(run: str, stack: str, state_machine_arn: str | None, region: str | None, as_json: bool,
           watch: bool = False, timeout: float = 6 * 3600, poll: float = 15) -> None:
    """Where a run stands (RUN: run id or execution ARN); exit code as start --wait's."""
    aws = _guard(lambda: _Aws(region))
    deployment = _guard(lambda: aws.deployment(stack, state_machine_arn))
    run_id, arn = _guard(lambda: remote.execution_arn_of(deployment.state_machine_arn, run))
    sfn = _guard(lambda: aws.client("stepfunctions"))
    desc = _guard(lambda: remote.aws_call("status", lambda: remote.describe(sfn, arn, run_id)))
    reader = aws.run_reader(deployment)
    if watch and desc["status"] == "RUNNING":
        desc = _guard(lambda: remote.wait(sfn, arn, run_id, timeout_s=timeout, poll_s=poll, read_run=reader,
                                          report=lambda line: _echo(line, err=True)))
    result = remote.outcome(desc, run_id)
    if result.status == "RUNNING" and not as_json and reader and not watch:
        _echo(remote.progress_line(reader(run_id), None, 0).split("] ", 1)[1])
    _finish(result, as_json)


@app.command()
@click.argument("run")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="Where to write findings.json, summary.md, report.html; default ./out/<run id>/.")
@_deployment_options
def report(run: str, out: Path | None, stack: str, state_machine_arn: str | None, region: str | None,
           as_json: bool) -> None:
    """Download a finished run's evidence and print its summary.md (exit 0 once downloaded)."""
    aws = _guard(lambda: _Aws(region))
    deployment = _guard(lambda: aws.deployment(stack, state_machine_arn))
    run_id, arn = _guard(lambda: remote.execution_arn_of(deployment.state_machine_arn, run))
    desc = _guard(lambda: remote.aws_call("report", lambda: remote.describe(aws.client("stepfunctions"), arn, run_id)))
    if desc["status"] == "RUNNING":
        _fail(EXIT_TIMEOUT, f"run {run_id} is still running: its report is written when it ends")
    target = out or Path("out") / run_id
    written = _guard(lambda: remote.aws_call("download", lambda: remote.download_evidence(
        aws.client("s3"), desc, run_id, deployment.bucket, target)))
    if not written:
        result = remote.outcome(desc, run_id)
        _fail(EXIT_FAILED, f"run {run_id} left no report ({result.status}"
                           f"{': ' + str(result.error) if result.error else ''}); see cutover-prep status {run_id}")
    if as_json:
        click.echo(json.dumps({"run_id": run_id, "files": [str(p) for p in written]}, indent=1))
        return
    summary = target / "summary.md"
    if summary.exists():  # Markdown: its names are code spans already; a control character is shown, never sent
        _echo(summary.read_text(errors="replace").rstrip().split("\n"))
    _echo(f"evidence of run {run_id}: " + ", ".join(str(p) for p in written), err=True)


@app.group()
def profile() -> None:
    """Stored profiles: the options the restore trigger starts runs with (tag cutover-prep:profile)."""


def _profile_table(stack: str, region: str | None) -> tuple[Any, str]:
    aws = _guard(lambda: _Aws(region))
    deployment = _guard(lambda: aws.deployment(stack, None))
    if not deployment.table:
        _fail(EXIT_USAGE, f"stack {stack!r} has no TableName output: is it a Cutover Prep stack?")
    return _guard(lambda: aws.client("dynamodb")), str(deployment.table)


@profile.command("put")
@click.argument("name")
@click.option("--input", "input_file", metavar="FILE", required=True,
              help="A run input JSON file (- for stdin) without target.db_instance_identifier, run_id or restore.")
@click.option("--hotset", "hotset_file", metavar="FILE", help="A hot-set profile (`cutover-prep hotset --out FILE`) "
              "stored as the profile's warmup.hot_set.")
@_stack_option("the table that holds the profiles")
@_region_option
def profile_put(name: str, input_file: str, stack: str, region: str | None, hotset_file: str | None = None) -> None:
    """Validate a profile as the workflow would, then store it as NAME ('default' when untagged)."""
    from cutover_prep.dal import profiles
    from cutover_prep.models.run_input import InvalidInput

    data = _read_input(input_file)
    if (hot := _hotset_profile(hotset_file)) is not None and isinstance(data, dict):
        from cutover_prep.hotset import with_hot_set

        data = with_hot_set(data, hot)
    try:
        profiles.check_name(name)
        profiles.check(data)
    except InvalidInput as exc:
        _fail(EXIT_USAGE, str(exc))
    ddb, table = _profile_table(stack, region)
    _guard(lambda: remote.aws_call("profile put", lambda: profiles.save(ddb, table, name, data)))
    click.echo(f"profile {name!r} stored in {table}; instances tagged cutover-prep:profile={name} "
               f"start with it", err=True)


@profile.command("show")
@click.argument("name")
@_stack_option("the table that holds the profiles")
@_region_option
def profile_show(name: str, stack: str, region: str | None) -> None:
    """Print a stored profile as JSON (exit 2 when there is none)."""
    from cutover_prep.dal import profiles
    from cutover_prep.models.run_input import InvalidInput

    ddb, table = _profile_table(stack, region)
    try:
        data = _guard(lambda: remote.aws_call("profile show", lambda: profiles.load(ddb, table, name)))
    except InvalidInput as exc:
        _fail(EXIT_USAGE, str(exc))
    if data is None:
        _fail(EXIT_USAGE, f"no profile {name!r} in {table}: store one with `cutover-prep profile put {name} "
                          "--input FILE`")
    click.echo(json.dumps(data, indent=2, sort_keys=True))


def main(argv: list[str] | None = None) -> int:
    """Entry point: usage errors become one line and exit code 2."""
    try:
        code = app.main(args=argv, prog_name="cutover-prep", standalone_mode=False)
    except click.UsageError as exc:
        _echo(f"cutover-prep: {exc.format_message()} (see --help)", err=True)
        return EXIT_USAGE
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.Abort:
        click.echo("cutover-prep: interrupted", err=True)
        return 130
    return code if isinstance(code, int) else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
