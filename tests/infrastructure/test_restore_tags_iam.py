"""Issue 32 §8.6: the reaper's IAM guarantee must not rest on code alone.

The reaper and the comparison's Cleanup may delete a DB instance only where it carries this deployment's id
and a comparison's tag (``permissions.delete_condition``). StartRestore could add those tags to ANY instance
(``rds:AddTagsToResource`` on ``db:*`` with only the run tag required in the request), so a fault in its
code could mark a production instance for deletion, and IAM would let the reaper delete it.

The judge is IAM's own evaluation rules, played here on the synthesized template for concrete requests, as
the IAM User Guide documents them ("Policy evaluation logic"; "IAM JSON policy elements: Condition
operators": StringEquals/StringLike compare a key that is present, a missing key fails them; ``Null``
"true" holds when the key is absent; several keys in one operator all hold, several values of one key any
holds; no Allow is an implicit deny). The requests are RDS's: a restore that passes ``Tags`` is authorized as
``rds:AddTagsToResource`` on the new instance with the tags as ``aws:RequestTag`` ("Grant permission to
tag Amazon RDS resources during creation", RDS User Guide); a delete is checked against the instance's own
tags (``rds:db-tag``, "Specifying conditions: Using custom tags")."""

from __future__ import annotations

import fnmatch
from typing import Any

from .conftest import Synth, as_list, flat

DB = "arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:db:"
STACK = "<AWS::StackId>"  # the deployment id the functions tag with (the stack's StackId)
RUN, DEPLOYMENT, COMPARISON, TTL = ("cutover-prep:run-id", "cutover-prep:deployment", "cutover-prep:comparison",
                                    "cutover-prep:ttl-hours")


def _policies_by_role(synth: Synth) -> dict[str, list[dict[str, Any]]]:
    statements: dict[str, list[dict[str, Any]]] = {}
    for logical_id, role in synth.resources("AWS::IAM::Role").items():
        for policy in role["Properties"].get("Policies", []):
            statements.setdefault(logical_id, []).extend(policy["PolicyDocument"]["Statement"])
    for policy in synth.resources("AWS::IAM::Policy").values():
        for role in policy["Properties"].get("Roles", []):
            statements.setdefault(role["Ref"], []).extend(policy["Properties"]["PolicyDocument"]["Statement"])
    assert not synth.resources("AWS::IAM::ManagedPolicy")  # would need reading here too
    return statements


def _like(value: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(value, pattern)  # IAM's * and ? (no character sets in these policies)


def _condition_holds(condition: dict[str, Any], context: dict[str, str]) -> bool:
    for operator, keys in condition.items():
        for key, wanted in keys.items():
            values = [flat(v) if not isinstance(v, str) else v for v in as_list(wanted)]
            present = key in context
            if operator == "Null":
                if (values[0] == "true") == present:
                    return False
            elif operator == "StringEquals":
                if not present or context[key] not in values:
                    return False
            elif operator == "StringLike":
                if not present or not any(_like(context[key], v) for v in values):
                    return False
            else:
                raise AssertionError(f"the judge does not know the operator {operator}: teach it (IAM User Guide)")
    return True


def _allowed(statements: list[dict[str, Any]], action: str, resource: str, context: dict[str, str]) -> bool:
    def matches(s: dict[str, Any]) -> bool:
        return (any(_like(action, a) for a in as_list(s["Action"]))
                and any(_like(resource, flat(r)) for r in as_list(s["Resource"]))
                and _condition_holds(s.get("Condition", {}), context))
    if any(s["Effect"] == "Deny" and matches(s) for s in statements):
        return False
    return any(s["Effect"] == "Allow" and matches(s) for s in statements)


def _tagging(tags: dict[str, str]) -> dict[str, str]:
    return {f"aws:RequestTag/{k}": v for k, v in tags.items()}


def _roles_allowed(synth: Synth, action: str, resource: str, context: dict[str, str]) -> set[str]:
    return {role for role, statements in _policies_by_role(synth).items()
            if _allowed(statements, action, resource, context)}


def _start_restore_role(synth: Synth) -> str:
    from .conftest import functions_by_handler, role_of

    return role_of(functions_by_handler(synth)["handlers.start_restore.handler"][1])


def test_restores_may_still_tag_what_they_create(plain: Synth, in_vpc: Synth) -> None:
    for synth in (plain, in_vpc):
        restore = _start_restore_role(synth)
        run = {"team": "dba", RUN: "orders-rehearsal-1", DEPLOYMENT: STACK}  # restore_tags of a run
        assert restore in _roles_allowed(synth, "rds:AddTagsToResource", DB + "orders-rehearsal", _tagging(run))
        child = {RUN: "c1-large", DEPLOYMENT: STACK, COMPARISON: "c1", TTL: "6"}  # a comparison's child run
        assert restore in _roles_allowed(synth, "rds:AddTagsToResource", DB + "cprep-c1-large", _tagging(child))


def test_no_role_may_mark_an_instance_it_did_not_create_for_the_reaper(plain: Synth, in_vpc: Synth) -> None:
    for synth in (plain, in_vpc):
        marks = [{RUN: "x", DEPLOYMENT: STACK, COMPARISON: "c1", TTL: "1"}, {RUN: "x", COMPARISON: "c1"},
                 {RUN: "x", DEPLOYMENT: STACK, COMPARISON: "c1"}]
        for tags in marks:  # on a production instance, by any role of the stack
            assert _roles_allowed(synth, "rds:AddTagsToResource", DB + "orders-prod", _tagging(tags)) == set(), tags
        # tagging that a run's restore never sends: without the run tag, or another deployment's id
        for tags in ({DEPLOYMENT: STACK, "team": "x"}, {RUN: "x", DEPLOYMENT: "arn:aws:cloudformation:other"}):
            assert _roles_allowed(synth, "rds:AddTagsToResource", DB + "orders-prod", _tagging(tags)) == set(), tags


def test_even_a_tagged_production_instance_is_not_deleted_by_iam(plain: Synth) -> None:
    tagged = {f"rds:db-tag/{DEPLOYMENT}": STACK, f"rds:db-tag/{COMPARISON}": "c1"}
    assert _roles_allowed(plain, "rds:DeleteDBInstance", DB + "orders-prod", tagged) == set()
    assert _roles_allowed(plain, "rds:DeleteDBInstance", DB + "cprep-c1-large", tagged)  # the comparison's own
