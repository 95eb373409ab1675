"""Stored profiles: the options the restore trigger starts a run with.

A profile is a run input without the instance (it comes from the restored instance) and
without a run id (made per restore); the secret may come from the instance's tag instead.
It is one item in the stack's table (``pk`` ``PROFILE#<name>``, ``sk`` ``PROFILE``,
``input`` the JSON), written by ``cutover-prep profile put`` after the same validation
the workflow applies, so a broken profile is refused when it is stored, not at 3 a.m.
when a restore finishes.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from cutover_prep.dal.deployment import DeploymentTable
from cutover_prep.models.run_input import InvalidInput, parse_run_input

DEFAULT = "default"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_PLACEHOLDER_SECRET = "arn:aws:secretsmanager:us-east-1:000000000000:secret:profile-check-AbCdEf"


def check_name(name: str) -> None:
    if not NAME.match(name):
        raise InvalidInput(f"profile name {name!r}: 1-64 letters, digits, '.', '_' or '-', starting with a "
                           "letter or digit")


def check(data: Any) -> None:
    """Raise InvalidInput naming the field when ``data`` cannot be a profile."""
    if not isinstance(data, dict):
        raise InvalidInput("profile: must be a JSON object (a run input without target.db_instance_identifier)")
    target = data.get("target", {})
    if not isinstance(target, dict):
        raise InvalidInput("profile: target must be an object")
    if "db_instance_identifier" in target:
        raise InvalidInput("profile: target.db_instance_identifier comes from the restored instance; remove it")
    if "run_id" in data:
        raise InvalidInput("profile: run_id is made per restore; remove it")
    if "restore" in data:
        raise InvalidInput("profile: restore has no place in a profile (the instance is restored already); "
                           "remove it")
    probe = copy.deepcopy(data)
    probe_target = probe.setdefault("target", {})
    probe_target["db_instance_identifier"] = "profile-check"
    probe_target.setdefault("secret_arn", _PLACEHOLDER_SECRET)  # or from the instance's tag
    try:
        parse_run_input(probe)
    except InvalidInput as exc:
        raise InvalidInput(f"profile: {exc}") from None


def load(dynamodb: Any, table: str, name: str) -> dict[str, Any] | None:
    check_name(name)
    item = DeploymentTable(dynamodb=dynamodb, table=table).profile(name)
    if item is None:
        return None
    try:
        data = json.loads(item.input)
    except (TypeError, ValueError):
        raise InvalidInput(f"profile {name!r}: its stored input is not JSON; store it again with "
                           f"`cutover-prep profile put {name} --input FILE`") from None
    try:
        check(data)  # stored by hand, or before a release that checks more
    except InvalidInput as exc:
        raise InvalidInput(f"stored {exc} (store it again with `cutover-prep profile put {name} --input FILE`)") \
            from None
    return data


def save(dynamodb: Any, table: str, name: str, data: Any) -> None:
    check_name(name)
    check(data)
    DeploymentTable(dynamodb=dynamodb, table=table).put_profile(name, json.dumps(data, sort_keys=True))
