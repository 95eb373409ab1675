"""Option types of the command line that click does not have, and the options every command that finds the
deployment shares."""

from __future__ import annotations

import math
from typing import Any

import click


class FiniteFloatRange(click.FloatRange):
    """``click.FloatRange`` without NaN and infinity: NaN passes every range check (all comparisons
    with it are false) and ``inf`` passes one without a maximum; neither is a number of seconds or MiB/s."""

    name = "finite float range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


# ---- the options naming the deployment (start, status, report, validate, profile, compare) -----------------

def stack_option(what: str) -> Any:
    """``--stack``: the deployed stack whose outputs name WHAT."""
    return click.option("--stack", envvar="CUTOVER_PREP_STACK", default="CutoverPrep", show_default=True,
                        help=f"The deployed stack whose outputs name {what} (env CUTOVER_PREP_STACK).")


region_option = click.option("--region", envvar="AWS_REGION", help="AWS region; default: your AWS configuration.")


def deployment_options(command: Any) -> Any:
    """The options of a command that finds the deployment: --stack, --state-machine-arn, --region, --json."""
    for option in reversed([
        stack_option("the state machine"),
        click.option("--state-machine-arn", envvar="CUTOVER_PREP_STATE_MACHINE_ARN",
                     help="The state machine itself, instead of the stack's outputs."),
        region_option,
        click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout."),
    ]):
        command = option(command)
    return command
