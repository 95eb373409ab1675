"""Issue 11 (safety), the stack's side: which secrets the functions may read, which hosts may receive
them (fixed at deploy time), what the restore may tag, and that every permission on Resource "*" is
acknowledged for its own statement only, so that a new one stops the synth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App
from aws_cdk import aws_iam as iam

from .conftest import (
    VPC_CONTEXT,
    Synth,
    actions_of_role,
    as_list,
    flat,
    functions_by_handler,
    resources_for,
    role_of,
    statements_of_role,
    statements_with,
)
from .test_stack import STAR_RESOURCE_ACTIONS, VPC_HANDLERS

SECRETS = "arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:*"
SECRET_TAG = {"secretsmanager:ResourceTag/cutover-prep:access": "read"}
CONNECTING = VPC_HANDLERS  # the functions that read the secret and connect to the database
HOST_CHECKERS = CONNECTING | {"handlers.validate_input.handler"}
STAR_ACK = "AwsSolutions-IAM5[Resource::*]"


def _config(**context: Any):
    from cutover_prep_cdk.config import Config

    return Config.from_node(App(context={"skip_layer_build": True, **context}).node)


def _all_statements(synth: Synth) -> list[tuple[str, dict[str, Any]]]:
    return [
        (name, statement)
        for name, policy in synth.resources("AWS::IAM::Policy").items()
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


# -- secrets ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["plain", "in_vpc"])
def test_by_default_only_secrets_tagged_for_cutover_prep_are_readable(
    variant: str, request: pytest.FixtureRequest
) -> None:
    synth: Synth = request.getfixturevalue(variant)
    readers = set()
    for name, statement in _all_statements(synth):
        actions = as_list(statement["Action"])
        if not any(a.startswith("secretsmanager:") for a in actions):
            continue
        # DescribeSecret: the tags of an RDS-managed secret name its instance (secret_binding), same secrets
        assert sorted(actions) == ["secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue"], name
        assert {flat(r) for r in as_list(statement["Resource"])} == {SECRETS}, name
        # Never unconditioned: the secret must carry cutover-prep:access=read.
        assert statement.get("Condition") == {"StringEquals": SECRET_TAG}, name
        readers.add(name)
    reading = {
        handler
        for handler, (_, function) in functions_by_handler(synth).items()
        if statements_with(synth, role_of(function), "secretsmanager:GetSecretValue")
    }
    assert reading == CONNECTING
    assert len(readers) == len(CONNECTING)


def test_a_secret_arn_pattern_replaces_the_tag(synth_factory) -> None:
    pattern = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:cutover/*"
    synth = synth_factory({"secret_arn_pattern": pattern})
    assert synth.error is None, synth.error
    roles = {h: role_of(f) for h, (_, f) in functions_by_handler(synth).items()}
    for handler in CONNECTING:
        (statement,) = statements_with(synth, roles[handler], "secretsmanager:GetSecretValue")
        assert statement["Resource"] == pattern and "Condition" not in statement, handler
        # kms:Decrypt still only through Secrets Manager.
        (decrypt,) = statements_with(synth, roles[handler], "kms:Decrypt")
        via = flat(decrypt["Condition"]["StringEquals"]["kms:ViaService"])
        assert via == "secretsmanager.<AWS::Region>.amazonaws.com"
    assert not any(SECRETS in {flat(r) for r in as_list(s["Resource"])} for _, s in _all_statements(synth))


@pytest.mark.parametrize(
    "pattern",
    [
        "arn:aws:secretsmanager:eu-west-1:111122223333:secret:*",  # every secret: what the tag is for
        "arn:aws:secretsmanager:*:*:secret:?*",
        "cutover/*",  # not an ARN
        "arn:aws:s3:::bucket/*",  # not a secret
    ],
)
def test_a_secret_arn_pattern_must_name_secrets(pattern: str) -> None:
    from cutover_prep_cdk.config import ConfigError

    with pytest.raises(ConfigError, match="secret_arn_pattern") as info:
        _config(secret_arn_pattern=pattern)
    assert "\n" not in str(info.value)


# -- the deploy-time host allow-list -------------------------------------------------------------
def test_allowed_db_hosts_is_empty_by_default_on_every_function_that_sees_a_target_host(plain: Synth) -> None:
    for handler, (_, function) in functions_by_handler(plain).items():
        env = function["Properties"]["Environment"]["Variables"]
        if handler in HOST_CHECKERS:
            assert env["ALLOWED_DB_HOSTS"] == "", handler
        else:
            assert "ALLOWED_DB_HOSTS" not in env, handler


def test_allowed_db_hosts_comes_from_context(synth_factory) -> None:
    synth = synth_factory({"allowed_db_hosts": ["Proxy.Internal.Example.com", "10.0.0.5"]})
    assert synth.error is None, synth.error
    for handler in HOST_CHECKERS:
        _, function = functions_by_handler(synth)[handler]
        assert function["Properties"]["Environment"]["Variables"]["ALLOWED_DB_HOSTS"] == (
            "proxy.internal.example.com,10.0.0.5"
        ), handler


@pytest.mark.parametrize(
    ("value", "hosts"),
    [
        ("", ()),
        ([], ()),
        ("tunnel.example.com", ("tunnel.example.com",)),
        (" a.example.com , b-2.example.com ,", ("a.example.com", "b-2.example.com")),
        (["proxy.example.com.", "PROXY.example.com", "fd00::5"], ("proxy.example.com", "fd00::5")),
    ],
)
def test_allowed_db_hosts_forms(value: Any, hosts: tuple[str, ...]) -> None:
    assert _config(allowed_db_hosts=value).allowed_db_hosts == hosts


@pytest.mark.parametrize(
    "bad",
    [
        "proxy.example.com:5432",
        "*.example.com",
        "https://proxy.example.com",
        "bad_host.example.com",
        "-proxy.example.com",
        "a..example.com",
        f"{'x' * 64}.example.com",
        "999.1.1.1",
        "proxy example.com",
    ],
)
def test_allowed_db_hosts_rejects_what_is_not_a_host_name(bad: str) -> None:
    from cutover_prep_cdk.config import ConfigError

    with pytest.raises(ConfigError, match="allowed_db_hosts") as info:
        _config(allowed_db_hosts=f"ok.example.com,{bad}")
    assert "\n" not in str(info.value)


# -- secrets that name no instance (issue 20, finding 2) ----------------------------------------------
def test_unbound_secrets_are_refused_by_default_on_every_function_that_reads_a_secret(plain: Synth) -> None:
    for handler, (_, function) in functions_by_handler(plain).items():
        env = function["Properties"]["Environment"]["Variables"]
        if handler in CONNECTING:
            assert env["ALLOW_UNBOUND_SECRETS"] == "false", handler
        else:
            assert "ALLOW_UNBOUND_SECRETS" not in env, handler


def test_allow_unbound_secrets_comes_from_context(synth_factory) -> None:
    synth = synth_factory({"allow_unbound_secrets": "true"})
    assert synth.error is None, synth.error
    for handler in CONNECTING:
        _, function = functions_by_handler(synth)[handler]
        assert function["Properties"]["Environment"]["Variables"]["ALLOW_UNBOUND_SECRETS"] == "true", handler


@pytest.mark.parametrize(("value", "allowed"), [(None, False), ("false", False), ("TRUE", True), (True, True),
                                                 (False, False)])
def test_allow_unbound_secrets_forms(value: Any, allowed: bool) -> None:
    assert _config(allow_unbound_secrets=value).allow_unbound_secrets is allowed


@pytest.mark.parametrize("bad", ["yes", "1", "ture", "on"])
def test_allow_unbound_secrets_is_true_or_false_never_a_guess(bad: str) -> None:
    from cutover_prep_cdk.config import ConfigError

    with pytest.raises(ConfigError, match="allow_unbound_secrets must be true or false") as info:
        _config(allow_unbound_secrets=bad)
    assert "\n" not in str(info.value)


# -- the restore's tags ------------------------------------------------------------------------------
def test_the_restore_may_tag_only_the_instance_it_creates(in_vpc: Synth) -> None:
    from cutover_prep.rds.instances import RUN_TAG
    from cutover_prep.workflows import COMPARISON_TAG, DEPLOYMENT_TAG, TTL_TAG

    functions = functions_by_handler(in_vpc)
    restore_role = role_of(functions["handlers.start_restore.handler"][1])
    tags = {s["Sid"]: s for s in statements_with(in_vpc, restore_role, "rds:AddTagsToResource")}
    assert set(tags) == {"TagRestoredInstance", "TagComparisonInstance"}
    db = "arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:db:"
    # RDS authorizes the Tags of RestoreDBInstanceFromDBSnapshot as rds:AddTagsToResource; the run always
    # sends its run-id tag and this deployment's id there, a call without them (any other tagging) is refused,
    # and a comparison's tags (what the reaper deletes by) only on the names a comparison restores (issue 32
    # §8.6; tests/infrastructure/test_restore_tags_iam.py evaluates them)
    required = {"StringLike": {f"aws:RequestTag/{RUN_TAG}": "?*"},
                "StringEquals": {f"aws:RequestTag/{DEPLOYMENT_TAG}": {"Ref": "AWS::StackId"}}}
    assert tags["TagRestoredInstance"]["Condition"] == {
        **required, "Null": {f"aws:RequestTag/{COMPARISON_TAG}": "true", f"aws:RequestTag/{TTL_TAG}": "true"}}
    assert {flat(r) for r in as_list(tags["TagRestoredInstance"]["Resource"])} == {db + "*"}
    assert tags["TagComparisonInstance"]["Condition"] == required
    assert {flat(r) for r in as_list(tags["TagComparisonInstance"]["Resource"])} == {db + "cprep-*"}
    for statement in tags.values():
        assert as_list(statement["Action"]) == ["rds:AddTagsToResource"]
    for handler, (_, function) in functions.items():
        if handler != "handlers.start_restore.handler":
            assert "rds:AddTagsToResource" not in actions_of_role(in_vpc, role_of(function)), handler


# -- Resource "*": one acknowledgment per statement ------------------------------------------------
def _logical_ids(synth: Synth) -> dict[str, str]:
    return {
        path: entry["data"]
        for path, entries in synth.metadata.items()
        for entry in entries
        if entry["type"] == "aws:cdk:logicalId"
    }


def _star_acknowledgments(synth: Synth) -> dict[str, str]:
    return {
        path: reason
        for path, entries in synth.metadata.items()
        for entry in entries
        if entry["type"] == "aws:cdk:acknowledged-rules"
        for rule, reason in entry["data"].items()
        if rule.endswith(STAR_ACK)
    }


@pytest.mark.parametrize("variant", ["plain", "in_vpc"])
def test_each_star_acknowledgment_covers_one_statement_of_its_own(variant: str, request: pytest.FixtureRequest) -> None:
    synth: Synth = request.getfixturevalue(variant)
    ids = _logical_ids(synth)
    acknowledged = _star_acknowledgments(synth)
    assert acknowledged
    covered = set()
    for path, reason in acknowledged.items():
        # Acknowledged on an IAM Policy construct (path/Resource is its CfnPolicy), not on a role.
        logical_id = ids.get(f"{path}/Resource")
        policy = synth.template["Resources"].get(logical_id or "", {})
        assert policy.get("Type") == "AWS::IAM::Policy", f"{STAR_ACK} acknowledged on {path}, not on one policy"
        (statement,) = policy["Properties"]["PolicyDocument"]["Statement"]
        assert as_list(statement["Resource"]) == ["*"], path
        assert set(as_list(statement["Action"])) <= STAR_RESOURCE_ACTIONS, path
        assert len(reason) >= 20
        covered.add(logical_id)
    for name, statement in _all_statements(synth):
        if "*" in as_list(statement["Resource"]):
            assert name in covered, (name, statement["Action"])


def _synth_with_new_stars(tmp_path: Path, context: dict[str, Any], roles_of_stack) -> tuple[Exception | None, dict,
                                                                                             list[str]]:
    """The synth of ``context`` with a new Resource '*' statement on each role ``roles_of_stack(stack)`` names; and
    the construct path of each role's default policy, where cdk-nag must report it."""
    from cutover_prep_cdk import build_app

    app, stack = build_app({"skip_layer_build": True, **context}, outdir=str(tmp_path))
    policies = []
    for role in roles_of_stack(stack):
        role.add_to_policy(iam.PolicyStatement(sid="NewStar", actions=["rds:DeleteDBInstance"], resources=["*"]))
        policies.append(f"{role.node.path}/DefaultPolicy/Resource")
    error = None
    try:
        app.synth()
    except Exception as exc:  # noqa: BLE001 - ValidationFailed from the jsii kernel
        error = exc
    report_file = tmp_path / "validation-report.json"
    report = json.loads(report_file.read_text()) if report_file.exists() else {}
    return error, report, policies


# cdk-nag judges each construct on its own: the roles of one context share a synth (one synth is ~3 s of CPU for
# the CDK's node process), and each role's new statement must be reported on that role's own policy
@pytest.mark.parametrize(
    ("context", "role_names"),
    [
        (VPC_CONTEXT, ("Discover",)),  # a function in a VPC (ENI and X-Ray statements on Resource "*")
        # CollectMetrics: cloudwatch:GetMetricData on Resource "*"; StateMachine: the state machine's role (log
        # delivery and X-Ray on Resource "*")
        ({}, ("CollectMetrics", "StateMachine")),
    ],
)
def test_a_new_star_statement_fails_the_synth(tmp_path: Path, context: dict[str, Any],
                                              role_names: tuple[str, ...]) -> None:
    def pick(stack):
        return [stack.orchestration.role if name == "StateMachine" else stack.workers.roles[name]
                for name in role_names]

    error, report, policies = _synth_with_new_stars(tmp_path, context, pick)
    assert error is not None, "a new Resource '*' statement passed cdk-nag"
    assert "ValidationFailed" in str(error)
    nag = next(p for p in report["pluginReports"] if p["pluginName"] == "AwsSolutions")
    assert nag["conclusion"] == "failure"
    (violation,) = nag["violations"]
    assert violation["ruleName"] == STAR_ACK
    paths = [r["constructPath"] for r in violation["violatingConstructs"]]
    # one finding per new statement, each on its own role's default policy: none of them acknowledged
    assert sorted(paths) == sorted(policies), (paths, policies)
    assert len(set(policies)) == len(role_names) and all(p.endswith("/DefaultPolicy/Resource") for p in paths), paths


def test_star_policies_exist_before_what_needs_them(in_vpc: Synth) -> None:
    """Lambda checks the ENI permissions when it creates a function in a VPC, Step Functions the log
    delivery permissions when it creates a logged state machine: both wait for those policies."""
    policies = in_vpc.resources("AWS::IAM::Policy")

    def policy_with(role_id: str, action: str) -> str:
        (name,) = [
            n
            for n, p in policies.items()
            if {"Ref": role_id} in p["Properties"]["Roles"]
            and any(action in as_list(s["Action"]) for s in p["Properties"]["PolicyDocument"]["Statement"])
        ]
        return name

    for handler, (_name, function) in functions_by_handler(in_vpc).items():
        if handler in VPC_HANDLERS:
            role = role_of(function)
            for action in ("ec2:DescribeNetworkInterfaces", "ec2:CreateNetworkInterface"):
                assert policy_with(role, action) in function["DependsOn"], (handler, action)
    for state_machine in in_vpc.resources("AWS::StepFunctions::StateMachine").values():  # the run's, the comparison's
        role = state_machine["Properties"]["RoleArn"]["Fn::GetAtt"][0]
        assert policy_with(role, "logs:CreateLogDelivery") in state_machine["DependsOn"]


# -- the scratch clean-up function -------------------------------------------------------------------
def test_cleanup_scratch_runs_in_the_vpc_with_its_own_role(in_vpc: Synth) -> None:
    functions = functions_by_handler(in_vpc)
    name, function = functions["handlers.cleanup_scratch.handler"]
    props = function["Properties"]
    assert (props["Timeout"], props["MemorySize"]) == (300, 512)
    assert props["VpcConfig"]["SubnetIds"] == VPC_CONTEXT["subnet_ids"].split(",")
    role = role_of(function)
    assert [h for h, (_, f) in functions.items() if role_of(f) == role] == ["handlers.cleanup_scratch.handler"]
    actions = actions_of_role(in_vpc, role)
    assert {"secretsmanager:GetSecretValue", "rds:DescribeDBInstances", "s3:GetObject", "s3:PutObject",
            "dynamodb:Query", "dynamodb:UpdateItem", "ec2:CreateNetworkInterface"} <= actions
    assert "ALLOWED_DB_HOSTS" in props["Environment"]["Variables"]
    (state_machine,) = [r for r in in_vpc.resources("AWS::StepFunctions::StateMachine").values()
                        if "CleanupScratchFunctionArn" in r["Properties"]["DefinitionSubstitutions"]]  # the run's
    substitutions = state_machine["Properties"]["DefinitionSubstitutions"]
    assert substitutions["CleanupScratchFunctionArn"] == {"Fn::GetAtt": [name, "Arn"]}
    sm_role = state_machine["Properties"]["RoleArn"]["Fn::GetAtt"][0]
    assert f"<{name}.Arn>" in resources_for(in_vpc, sm_role, "lambda:InvokeFunction")
    assert statements_of_role(in_vpc, role)
