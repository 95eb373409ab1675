"""``cutover-prep validate``: a run input checked offline as the workflow's ValidateInput would, and what the run
would do in one line; the started-by check ``start`` makes too."""

from __future__ import annotations

from typing import Any

import click

from cutover_prep.cli import remote
from cutover_prep.cli.files import read_input
from cutover_prep.cli.options import region_option
from cutover_prep.cli.output import EXIT_USAGE, echo, fail


@click.command()
@click.option("--input", "input_file", metavar="FILE", required=True, help="The run input JSON file (- for stdin).")
@click.option("--state-machine-arn", envvar="CUTOVER_PREP_STATE_MACHINE_ARN",
              help="The deployment the run is for: AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID must name an "
              "execution in its account and region (offline: nothing is asked of AWS).")
@region_option
def validate(input_file: str, state_machine_arn: str | None, region: str | None) -> None:
    """Check a run input as the workflow's ValidateInput would, offline; print what the run would do."""
    from cutover_prep.models.run_input import InvalidInput, parse_run_input

    data = read_input(input_file)
    from cutover_prep.cli.compare import is_comparison_input, validate_comparison

    if is_comparison_input(data):  # a comparison input (cutover-prep compare), told by its keys
        raise click.exceptions.Exit(validate_comparison(data))
    deployment = offline_place(state_machine_arn, region) if data.get(STARTED_BY) else None
    try:
        config = parse_run_input(data, deployment=deployment)
    except InvalidInput as exc:
        echo([f"cutover-prep: {line}" for line in exc.problems], err=True)
        raise click.exceptions.Exit(EXIT_USAGE) from None
    echo(plan_line(config, run_id_given=data.get("run_id") is not None, deployment=deployment))


STARTED_BY = "AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID"


def check_started_by_arn(run_input: dict[str, Any], state_machine_arn: str) -> None:
    """The input's started-by execution must be in the deployment's partition, region and account (exit 2)."""
    from cutover_prep.models.run_input import AwsPlace, InvalidInput, check_started_by

    try:
        check_started_by(run_input.get(STARTED_BY), AwsPlace.of_arn(state_machine_arn))
    except InvalidInput as exc:
        fail(EXIT_USAGE, f"input: {exc}")


def offline_place(state_machine_arn: str | None, region: str | None) -> Any:
    """Where the deployment is, as far as this machine knows without asking AWS: the state machine's
    ARN, else the configured region (--region, AWS_REGION, AWS_DEFAULT_REGION, the profile's)."""
    import re

    from cutover_prep.models.run_input import AwsPlace

    if state_machine_arn:
        if not re.fullmatch(remote.STATE_MACHINE_ARN, state_machine_arn):
            fail(EXIT_USAGE, f"--state-machine-arn {state_machine_arn[:200]!r}: not a state machine ARN "
                             "(arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)")
        return AwsPlace.of_arn(state_machine_arn)
    if not region:
        import botocore.session

        try:
            region = botocore.session.Session().get_config_variable("region")
        except Exception:  # noqa: BLE001 (an unreadable AWS configuration: the region is just not known)
            region = None
    return AwsPlace(region=region) if region else None


def plan_line(config: dict[str, Any], *, run_id_given: bool, deployment: Any = None) -> str:
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
    from cutover_prep.access.selection import input_text

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
