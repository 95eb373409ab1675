"""``cutover-prep profile put|show``: the stored profiles the restore trigger starts runs with (tag
cutover-prep:profile), validated as the workflow would before they are stored."""

from __future__ import annotations

import json
from typing import Any

import click

from cutover_prep.cli import deployed, remote
from cutover_prep.cli.files import hotset_profile, read_input
from cutover_prep.cli.options import region_option, stack_option
from cutover_prep.cli.output import EXIT_USAGE, fail, guard


@click.group()
def profile() -> None:
    """Stored profiles: the options the restore trigger starts runs with (tag cutover-prep:profile)."""


def profile_table(stack: str, region: str | None) -> tuple[Any, str]:
    """A DynamoDB client and the stack's table, which holds the profiles (exit 2 when the stack has none)."""
    aws = guard(lambda: deployed.Aws(region))
    deployment = guard(lambda: aws.deployment(stack, None))
    if not deployment.table:
        fail(EXIT_USAGE, f"stack {stack!r} has no TableName output: is it a Cutover Prep stack?")
    return guard(lambda: aws.client("dynamodb")), str(deployment.table)


@profile.command("put")
@click.argument("name")
@click.option("--input", "input_file", metavar="FILE", required=True,
              help="A run input JSON file (- for stdin) without target.db_instance_identifier, run_id or restore.")
@click.option("--hotset", "hotset_file", metavar="FILE", help="A hot-set profile (`cutover-prep hotset --out FILE`) "
              "stored as the profile's warmup.hot_set.")
@stack_option("the table that holds the profiles")
@region_option
def profile_put(name: str, input_file: str, stack: str, region: str | None, hotset_file: str | None = None) -> None:
    """Validate a profile as the workflow would, then store it as NAME ('default' when untagged)."""
    from cutover_prep.dal import profiles
    from cutover_prep.models.run_input import InvalidInput

    data = read_input(input_file)
    if (hot := hotset_profile(hotset_file)) is not None and isinstance(data, dict):
        from cutover_prep.hotset import with_hot_set

        data = with_hot_set(data, hot)
    try:
        profiles.check_name(name)
        profiles.check(data)
    except InvalidInput as exc:
        fail(EXIT_USAGE, str(exc))
    ddb, table = profile_table(stack, region)
    guard(lambda: remote.aws_call("profile put", lambda: profiles.save(ddb, table, name, data)))
    click.echo(f"profile {name!r} stored in {table}; instances tagged cutover-prep:profile={name} "
               f"start with it", err=True)


@profile.command("show")
@click.argument("name")
@stack_option("the table that holds the profiles")
@region_option
def profile_show(name: str, stack: str, region: str | None) -> None:
    """Print a stored profile as JSON (exit 2 when there is none)."""
    from cutover_prep.dal import profiles
    from cutover_prep.models.run_input import InvalidInput

    ddb, table = profile_table(stack, region)
    try:
        data = guard(lambda: remote.aws_call("profile show", lambda: profiles.load(ddb, table, name)))
    except InvalidInput as exc:
        fail(EXIT_USAGE, str(exc))
    if data is None:
        fail(EXIT_USAGE, f"no profile {name!r} in {table}: store one with `cutover-prep profile put {name} "
                         "--input FILE`")
    click.echo(json.dumps(data, indent=2, sort_keys=True))
