"""``cutover-prep compare --input FILE [--wait]``: start a comparison of the deployed stack.

The input is validated here with the model the workflow uses (a bad field is one line and exit
code 2, before anything is restored). The execution is named after the comparison id, as ``start``
names a run's after its run id, so a retried pipeline step follows the comparison already running.

Exit codes as ``start``: 0 a recommendation (a configuration met every target); 1 none did (the
reasons are printed); 2 a usage or input error; 3 the comparison failed; 4 ``--timeout`` reached
(the comparison goes on); 5 an AWS call failed.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click
from botocore.exceptions import ClientError

from cutover_prep.cli import remote
from cutover_prep.cli.options import FiniteFloatRange
from cutover_prep.escape import for_terminal
from cutover_prep.models.run_input import InvalidInput, execution_arn
from cutover_prep.workflows import COMPARE

if TYPE_CHECKING:
    from cutover_prep.comparison.workflow import ChildRun

EXIT_OK, EXIT_NONE = remote.EXIT_READY, remote.EXIT_NOT_READY
STATE_MACHINE_ARN = remote.STATE_MACHINE_ARN


def _echo(lines: str | list[str], *, err: bool = False) -> None:
    """Lines for a terminal, each through ``escape.for_terminal`` (as ``cutover-prep start`` does)."""
    click.echo("\n".join(for_terminal(line) for line in ([lines] if isinstance(lines, str) else lines)), err=err)


def _fail(code: int, message: str) -> None:
    _echo(f"cutover-prep: {message}", err=True)
    raise click.exceptions.Exit(code)


def _guard(call: Any) -> Any:
    try:
        return call()
    except remote.CliProblem as exc:
        _fail(exc.code, str(exc))
    except RecursionError:
        _fail(remote.EXIT_USAGE, "input: nested too deeply (see schema/comparison-input.schema.json)")


def check_input(data: dict[str, Any]) -> Any:
    """The validated comparison (and its child runs, checked as the run workflow checks them)."""
    from cutover_prep.comparison.workflow import child_runs, parse_comparison_input

    try:
        comparison = parse_comparison_input(data)
        return comparison, child_runs(comparison)
    except InvalidInput as exc:
        raise remote.CliProblem("input: " + "; ".join(exc.problems), problems=exc.problems) from None


def plan_line(comparison: Any, runs: list[ChildRun]) -> str:
    names = ", ".join(f"{r.name} ({r.run_input['restore'].get('db_instance_class') or 'snapshot class'}, "
                      f"{r.run_input['restore'].get('storage_type') or 'snapshot storage'})" for r in runs)
    return (f"valid comparison {comparison.comparison_id}: restore {comparison.snapshot_identifier} onto "
            f"{len(runs)} configurations: {names}; {comparison.max_parallel} at a time; instances deleted after, "
            f"the reaper deletes any left after {comparison.ttl_hours} h")


def validate_comparison(data: dict[str, Any]) -> int:
    """``cutover-prep validate`` on a comparison input: the problems, or what it would do; the exit code."""
    try:
        comparison, runs = check_input(data)
    except remote.CliProblem as exc:
        # a problem's own text may hold "; " (e.g. "check the spelling; see ..."): one line per problem
        _echo([f"cutover-prep: {line}" for line in exc.problems], err=True)
        return remote.EXIT_USAGE
    _echo(plan_line(comparison, runs))
    return EXIT_OK


def is_comparison_input(data: dict[str, Any]) -> bool:
    """A comparison input, told from a run input by its keys."""
    return "configurations" in data or "comparison_id" in data or "snapshot_identifier" in data


def find_state_machine(cloudformation: Any, stack: str) -> str:
    try:
        stacks = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    except ClientError as exc:
        if "does not exist" in str(exc):
            raise remote.CliProblem(f"stack {stack!r} not found in this account and region: deploy it, or pass "
                                    "--stack NAME, --region or --state-machine-arn") from None
        raise
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}
    if COMPARE.output_name not in outputs:
        raise remote.CliProblem(f"stack {stack!r} has no {COMPARE.output_name} output: deploy this version of "
                                "Cutover Prep (the comparison workflow came with it)")
    return outputs[COMPARE.output_name]


def start(sfn: Any, state_machine_arn: str, comparison_id: str, data: dict[str, Any]) -> tuple[str, bool]:
    """(execution ARN, True when that comparison was already running and is followed instead)."""
    try:
        return sfn.start_execution(stateMachineArn=state_machine_arn, name=comparison_id,
                                   input=json.dumps(data))["executionArn"], False
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "ExecutionAlreadyExists":
            raise
    arn = execution_arn(state_machine_arn, comparison_id)
    if remote.describe(sfn, arn, comparison_id)["status"] == "RUNNING":
        return arn, True
    raise remote.CliProblem(f"comparison_id {comparison_id!r} was used already and has ended: pick another one")


def outcome(desc: dict[str, Any], comparison_id: str) -> tuple[int, dict[str, Any], list[str]]:
    """(exit code, JSON answer, lines) of a comparison's execution."""
    status = desc["status"]
    answer: dict[str, Any] = {"comparison_id": comparison_id, "execution_arn": desc["executionArn"], "status": status}
    if status in ("RUNNING", "PENDING_REDRIVE"):
        return remote.EXIT_TIMEOUT, {**answer, "exit_code": remote.EXIT_TIMEOUT}, [
            f"comparison {comparison_id}: still running ({desc['executionArn']})"]
    if status != "SUCCEEDED":
        error = desc.get("error") or status
        code = remote.EXIT_USAGE if error == "InvalidInput" else remote.EXIT_FAILED
        cause = (desc.get("cause") or "")[:1000]
        return code, {**answer, "error": error, "cause": cause, "exit_code": code}, [
            f"comparison {comparison_id}: {status}: {error}: {cause}".rstrip(": ")]
    out = json.loads(desc.get("output") or "{}")
    recommendation = out.get("recommendation") or {}
    code = EXIT_OK if recommendation.get("name") else EXIT_NONE
    lines = [f"comparison {comparison_id}: " + (f"recommendation {recommendation['name']}" if code == EXIT_OK
                                                  else "no recommendation")
             + (f": {recommendation['why']}" if recommendation.get("why") else "")]
    for configuration in out.get("configurations") or []:
        meets = {True: "meets the targets", False: "misses the targets", None: "not judged"}[
            configuration.get("meets_targets")]
        lines.append(f"  - {configuration.get('name')}: {configuration.get('status')}, {meets}"
                     + (f": {configuration['why']}" if configuration.get("why") else ""))
    cleanup = out.get("cleanup") or {}
    lines.append(f"  cleanup: {len(cleanup.get('deleted') or [])} instance(s) deleted"
                 + (f", LEFT: {', '.join(cleanup['left'])}" if cleanup.get("left") else ", none left")
                 + (f"; kept, not proven its own: {', '.join(cleanup['not_ours'])}" if cleanup.get("not_ours")
                    else ""))
    if out.get("comparison_uri"):
        lines.append(f"  comparison: {out['comparison_uri']}")
    return code, {**answer, **out, "exit_code": code}, lines


@click.command("compare")
@click.option("--input", "input_file", metavar="FILE", required=True,
              help="A comparison input JSON file (- for stdin); see schema/comparison-input.schema.json.")
@click.option("--wait", is_flag=True, help="Print progress until the result; the exit code is the result's.")
@click.option("--timeout", type=FiniteFloatRange(1), default=12 * 3600, show_default=True,
              help="Seconds --wait waits before exit code 4 (the comparison goes on).")
@click.option("--poll", type=FiniteFloatRange(0.1, 600), default=30, show_default=True,
              help="Seconds between progress checks.")
@click.option("--stack", envvar="CUTOVER_PREP_STACK", default=remote.DEFAULT_STACK, show_default=True,
              help="The deployed stack whose outputs name the comparison state machine (env CUTOVER_PREP_STACK).")
@click.option("--state-machine-arn", envvar="CUTOVER_PREP_COMPARE_STATE_MACHINE_ARN",
              help="The comparison state machine itself, instead of the stack's outputs.")
@click.option("--region", envvar="AWS_REGION", help="AWS region; default: your AWS configuration.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def compare(input_file: str, wait: bool, timeout: float, poll: float, stack: str, state_machine_arn: str | None,
            region: str | None, as_json: bool) -> None:
    """Start a comparison of configurations in the deployed stack (validated here first)."""
    import re

    import boto3

    data = _guard(lambda: remote.read_input_file(input_file))
    comparison, _ = _guard(lambda: check_input(data))
    comparison_id = comparison.comparison_id
    if state_machine_arn and not re.fullmatch(STATE_MACHINE_ARN, state_machine_arn):
        _fail(remote.EXIT_USAGE, f"--state-machine-arn {state_machine_arn!r}: not a state machine ARN "
                                 "(arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)")
    session = _guard(lambda: remote.aws_call("AWS configuration", lambda: boto3.Session(region_name=region)))
    arn = state_machine_arn or _guard(lambda: remote.aws_call(f"stack {stack}", lambda: find_state_machine(
        session.client("cloudformation"), stack)))
    sfn = _guard(lambda: remote.aws_call("stepfunctions client", lambda: session.client("stepfunctions")))
    execution, attached = _guard(lambda: remote.aws_call("start", lambda: start(sfn, arn, comparison_id, data)))
    _echo(f"{'following the running' if attached else 'started'} comparison {comparison_id}: {execution}", err=True)
    if not wait:
        if as_json:
            click.echo(json.dumps({"comparison_id": comparison_id, "execution_arn": execution, "status": "RUNNING"},
                                  indent=1))
        else:
            click.echo(comparison_id)
        return
    desc = _guard(lambda: remote.wait(sfn, execution, comparison_id, timeout_s=timeout, poll_s=poll, read_run=None,
                                      report=lambda line: _echo(line, err=True)))
    code, answer, lines = outcome(desc, comparison_id)
    if as_json:
        click.echo(json.dumps(answer, indent=1))
    else:
        _echo(lines)
    if code == remote.EXIT_TIMEOUT:
        _echo(f"cutover-prep: comparison {comparison_id} is still running", err=True)
    raise click.exceptions.Exit(code)
