"""The synthesized CloudFormation template: storage, functions, roles, state machine, cdk-nag."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App
from aws_cdk.assertions import Match, Template

from cutover_prep.workflows import FUNCTIONS as CATALOGUE
from cutover_prep.workflows import TRIGGERED_WORKFLOW, WORKFLOWS

from .conftest import (
    REPO_ROOT,
    VPC_CONTEXT,
    Synth,
    actions_of_role,
    as_list,
    flat,
    functions_by_handler,
    resources_for,
    role_of,
    statements_with,
)

# What the stack must deploy comes from the catalogue (tests/unit/test_workflows.py pins its values).
WORKFLOW = WORKFLOWS[TRIGGERED_WORKFLOW]
ASL_FILE = WORKFLOW.asl_path
FUNCTIONS = {f.handler: (f.timeout_seconds, f.memory_mb) for f in CATALOGUE.values()}  # handler -> limits
# EventBridge invokes them, or another workflow (the comparison) calls them
NOT_IN_WORKFLOW = {f.handler for f in CATALOGUE.values() if f.construct_id not in WORKFLOW.functions}
VPC_HANDLERS = {f.handler for f in CATALOGUE.values() if f.in_vpc}
SUBSTITUTIONS = WORKFLOW.substitution_keys()
# Actions AWS offers no resource-level permissions for: the only ones allowed on Resource "*".
STAR_RESOURCE_ACTIONS = (
    {f"xray:{a}" for a in ("PutTraceSegments", "PutTelemetryRecords", "GetSamplingRules", "GetSamplingTargets")}
    | {f"logs:{a}" for a in ("CreateLogDelivery", "GetLogDelivery", "UpdateLogDelivery", "DeleteLogDelivery",
                             "ListLogDeliveries", "PutResourcePolicy", "DescribeResourcePolicies", "DescribeLogGroups")}
    | {"ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "cloudwatch:GetMetricData",
       "cloudwatch:GetMetricStatistics", "pricing:GetProducts",
       # the gate (issue 36): Service Authorization Reference, AWS DMS — no resource type for these two
       "dms:DescribeReplicationTasks", "dms:DescribeReplicationInstances"}
)


def asl_state_names(definition: dict[str, Any]) -> set[str]:
    names = set()
    for name, state in definition["States"].items():
        names.add(name)
        for nested in (state.get("ItemProcessor"), state.get("Iterator"), *state.get("Branches", [])):
            if nested:
                names |= asl_state_names(nested)
    return names


# -- synthesis and cdk-nag -----------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["plain", "in_vpc"])
def test_synth_passes_cdk_nag(variant: str, request: pytest.FixtureRequest) -> None:
    synth: Synth = request.getfixturevalue(variant)
    assert synth.error is None, f"synth failed: {synth.error}"
    nag = synth.plugin("AwsSolutions")
    assert nag, "cdk-nag AwsSolutions did not run"
    assert nag["conclusion"] == "success"
    assert [v["ruleName"] for v in nag["violations"]] == []


def test_only_the_no_vpc_warning_is_left(plain: Synth, in_vpc: Synth) -> None:
    def warnings(synth: Synth) -> list[str]:
        return [v["ruleName"] for v in synth.plugin("Construct Annotations").get("violations", [])]

    assert warnings(plain) == ["Annotation::cutover-prep:no-vpc"]
    assert warnings(in_vpc) == []


def test_every_acknowledgment_has_a_reason(plain: Synth) -> None:
    acknowledged = {
        rule: reason
        for entries in plain.metadata.values()
        for entry in entries
        if entry["type"] == "aws:cdk:acknowledged-rules"
        for rule, reason in entry["data"].items()
    }
    assert acknowledged, "no acknowledgments recorded"
    assert all(len(reason.strip()) >= 20 for reason in acknowledged.values()), acknowledged


# -- storage ------------------------------------------------------------------------------------
def test_table_keys_index_encryption_and_recovery(plain: Synth) -> None:
    template = Template.from_json(plain.template)
    template.resource_count_is("AWS::DynamoDB::Table", 1)
    template.has_resource(
        "AWS::DynamoDB::Table",
        {
            "DeletionPolicy": "Retain",
            "UpdateReplacePolicy": "Retain",
            "Properties": Match.object_like(
                {
                    "KeySchema": [
                        {"AttributeName": "pk", "KeyType": "HASH"},
                        {"AttributeName": "sk", "KeyType": "RANGE"},
                    ],
                    "BillingMode": "PAY_PER_REQUEST",
                    "SSESpecification": {"SSEEnabled": True},
                    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                    "TimeToLiveSpecification": {"AttributeName": "expires_at", "Enabled": True},
                    "GlobalSecondaryIndexes": [
                        {
                            "IndexName": "by_target",
                            "KeySchema": [
                                {"AttributeName": "gsi1pk", "KeyType": "HASH"},
                                {"AttributeName": "gsi1sk", "KeyType": "RANGE"},
                            ],
                            "Projection": {"ProjectionType": "ALL"},
                        }
                    ],
                }
            ),
        },
    )
    attributes = next(iter(plain.resources("AWS::DynamoDB::Table").values()))["Properties"][
        "AttributeDefinitions"
    ]
    assert {a["AttributeName"]: a["AttributeType"] for a in attributes} == {
        "pk": "S",
        "sk": "S",
        "gsi1pk": "S",
        "gsi1sk": "S",
    }


def _evidence_bucket(synth: Synth) -> tuple[str, dict[str, Any]]:
    return next((k, r) for k, r in synth.resources("AWS::S3::Bucket").items() if "EvidenceBucket" in k)


def test_evidence_bucket_is_private_encrypted_versioned_and_expires(plain: Synth) -> None:
    logical_id, bucket = _evidence_bucket(plain)
    props = bucket["Properties"]
    assert bucket["DeletionPolicy"] == "Retain"
    assert props["BucketEncryption"]["ServerSideEncryptionConfiguration"] == [
        {"ServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}
    ]
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    rule = props["LifecycleConfiguration"]["Rules"][0]
    assert rule["Status"] == "Enabled"
    assert rule["ExpirationInDays"] == 365
    assert rule["NoncurrentVersionExpiration"]["NoncurrentDays"] > 0
    assert rule["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"] > 0
    log_bucket = props["LoggingConfiguration"]["DestinationBucketName"]["Ref"]
    assert "AccessLogBucket" in log_bucket and log_bucket != logical_id


def test_buckets_deny_plain_http(plain: Synth) -> None:
    policies = {
        p["Properties"]["Bucket"]["Ref"]: p["Properties"]["PolicyDocument"]["Statement"]
        for p in plain.resources("AWS::S3::BucketPolicy").values()
    }
    assert set(policies) == set(plain.resources("AWS::S3::Bucket"))
    for statements in policies.values():
        assert any(
            s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
            for s in statements
        ), statements


def test_evidence_retention_comes_from_context(synth_factory) -> None:
    from cutover_prep_cdk.config import Config

    config = Config.from_node(App(context={"skip_layer_build": True, "evidence_retention_days": "30"}).node)
    assert config.evidence_retention_days == 30


# -- functions ----------------------------------------------------------------------------------
def test_every_function_python312_traced_with_settings(plain: Synth) -> None:
    functions = functions_by_handler(plain)
    assert set(functions) == set(FUNCTIONS)
    for handler, (_, function) in functions.items():
        props = function["Properties"]
        assert props["Runtime"] == "python3.12"
        assert props["Architectures"] == ["x86_64"]
        assert props["TracingConfig"] == {"Mode": "Active"}
        assert (props["Timeout"], props["MemorySize"]) == FUNCTIONS[handler], handler
        # Finalize joins the plan in /tmp (findings.plan_pass: ~226 MiB at 1M objects): 2 GiB; the others the default
        assert props["EphemeralStorage"] == {"Size": 2048 if handler == "handlers.finalize.handler" else 512}, handler
        assert len(props["Layers"]) == 1
        env = props["Environment"]["Variables"]
        assert env["POWERTOOLS_SERVICE_NAME"] == "cutover-prep"
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == "CutoverPrep"
        assert env["LOG_LEVEL"] == "INFO"
        assert env["TABLE_NAME"] == {"Ref": next(iter(plain.resources("AWS::DynamoDB::Table")))}
        assert env["BUCKET_NAME"] == {"Ref": _evidence_bucket(plain)[0]}


def test_every_function_has_its_own_role_and_log_group(plain: Synth) -> None:
    functions = functions_by_handler(plain)
    roles = [role_of(f) for _, f in functions.values()]
    assert len(set(roles)) == len(roles) == len(FUNCTIONS)
    log_groups = plain.resources("AWS::Logs::LogGroup")
    used = []
    for _, function in functions.values():
        log_group = function["Properties"]["LoggingConfig"]["LogGroup"]["Ref"]
        used.append(log_group)
        assert log_groups[log_group]["Properties"]["RetentionInDays"] == 90
        # Its role writes exactly its own log group.
        assert resources_for(plain, role_of(function), "logs:PutLogEvents") == {f"<{log_group}.Arn>"}
    assert len(set(used)) == len(FUNCTIONS)


def test_no_role_uses_managed_policies(plain: Synth, in_vpc: Synth) -> None:
    for synth in (plain, in_vpc):
        for role in synth.resources("AWS::IAM::Role").values():
            assert "ManagedPolicyArns" not in role["Properties"]


def test_log_retention_comes_from_context(synth_factory) -> None:
    from cutover_prep_cdk.config import Config, ConfigError

    assert (
        Config.from_node(
            App(context={"skip_layer_build": True, "log_retention_days": "30"}).node
        ).log_retention_days
        == 30
    )
    with pytest.raises(ConfigError, match="log_retention_days"):
        Config.from_node(App(context={"skip_layer_build": True, "log_retention_days": "31"}).node)


def test_vpc_functions_get_vpc_config_from_context(in_vpc: Synth) -> None:
    for handler, (_, function) in functions_by_handler(in_vpc).items():
        vpc_config = function["Properties"].get("VpcConfig")
        if handler in VPC_HANDLERS:
            assert vpc_config == {
                "SubnetIds": VPC_CONTEXT["subnet_ids"].split(","),
                "SecurityGroupIds": [VPC_CONTEXT["security_group_id"]],
            }
            actions = actions_of_role(in_vpc, role_of(function))
            assert {"ec2:CreateNetworkInterface", "ec2:DeleteNetworkInterface"} <= actions
        else:
            assert vpc_config is None, handler
    assert in_vpc.resources("AWS::EC2::SecurityGroup") == {}


def test_without_vpc_context_no_function_is_in_a_vpc(plain: Synth) -> None:
    assert all("VpcConfig" not in f["Properties"] for _, f in functions_by_handler(plain).values())


def test_vpc_context_errors_are_explained() -> None:
    from cutover_prep_cdk.config import Config, ConfigError

    with pytest.raises(ConfigError, match="subnet_ids"):
        Config.from_node(App(context={"skip_layer_build": True, "vpc_id": "vpc-1"}).node)
    with pytest.raises(ConfigError, match="vpc_id"):
        Config.from_node(App(context={"skip_layer_build": True, "subnet_ids": "subnet-1"}).node)


def test_missing_layer_says_how_to_build_it(tmp_path: Path) -> None:
    from cutover_prep_cdk.config import Config, LayerNotBuilt

    with pytest.raises(LayerNotBuilt, match=r"run `make build-lambda` first"):
        Config.from_node(App(context={"layer_dir": str(tmp_path / "missing")}).node)


# -- least privilege -----------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["plain", "in_vpc"])
def test_policies_have_no_wildcard_actions_and_star_only_where_required(
    variant: str, request: pytest.FixtureRequest
) -> None:
    synth: Synth = request.getfixturevalue(variant)
    for name, policy in synth.resources("AWS::IAM::Policy").items():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            actions = as_list(statement["Action"])
            assert not any("*" in a for a in actions), (name, actions)
            if "*" in as_list(statement["Resource"]):
                assert set(actions) <= STAR_RESOURCE_ACTIONS, (name, actions)


def test_function_permissions(in_vpc: Synth) -> None:
    roles = {h: role_of(f) for h, (_, f) in functions_by_handler(in_vpc).items()}
    logs_and_xray = {
        "logs:CreateLogStream",
        "logs:PutLogEvents",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
    }

    # Validation records the run (Store.start_run), nothing else.
    assert actions_of_role(in_vpc, roles["handlers.validate_input.handler"]) == logs_and_xray | {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
    }

    restore = actions_of_role(in_vpc, roles["handlers.start_restore.handler"])
    assert {
        "rds:RestoreDBInstanceFromDBSnapshot",
        "rds:AddTagsToResource",
        "rds:DescribeDBSnapshots",
        "rds:DescribeDBInstances",
    } <= restore
    restore_arns = resources_for(
        in_vpc, roles["handlers.start_restore.handler"], "rds:RestoreDBInstanceFromDBSnapshot"
    )
    assert {a.rsplit(":", 2)[-2] for a in restore_arns} == {"db", "snapshot", "subgrp", "og", "pg", "secgrp"}
    assert all(a.startswith("arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:") for a in restore_arns)

    # Each answer is a sample of RDS's storage progress (UpdateItem); once available, is it a green instance?
    assert actions_of_role(in_vpc, roles["handlers.describe_instance.handler"]) == logs_and_xray | {
        "rds:DescribeDBInstances", "rds:DescribeBlueGreenDeployments",
        "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem",
    }
    assert resources_for(in_vpc, roles["handlers.describe_instance.handler"], "rds:DescribeBlueGreenDeployments") == {
        "arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:deployment:*"}

    for handler in sorted(VPC_HANDLERS):
        role = roles[handler]
        (read_secret,) = statements_with(in_vpc, role, "secretsmanager:GetSecretValue")
        secrets = "arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:*"
        assert flat(read_secret["Resource"]) == secrets
        assert read_secret["Condition"] == {"StringEquals": {"secretsmanager:ResourceTag/cutover-prep:access": "read"}}
        (decrypt,) = statements_with(in_vpc, role, "kms:Decrypt")
        assert (
            flat(decrypt["Condition"]["StringEquals"]["kms:ViaService"])
            == "secretsmanager.<AWS::Region>.amazonaws.com"
        )

    discover = actions_of_role(in_vpc, roles["handlers.discover.handler"])
    assert {
        "s3:GetObject",
        "s3:PutObject",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
        "rds:DescribeDBInstances",
    } <= discover
    assert not {"s3:DeleteObject", "dynamodb:DeleteItem", "dynamodb:Scan"} & discover

    # Issue 22: the preflight reads the secret (above) and the database, writes preflight.json (PutObject only)
    # and its summary on the run record (UpdateItem); it calls no RDS API and reads no evidence.
    preflight = actions_of_role(in_vpc, roles["handlers.preflight.handler"])
    assert {a for a in preflight if a.startswith(("s3:", "dynamodb:", "rds:", "cloudwatch:", "events:"))} == {
        "s3:PutObject", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}
    assert resources_for(in_vpc, roles["handlers.preflight.handler"], "s3:PutObject") == {
        f"<{_evidence_bucket(in_vpc)[0]}.Arn>/runs/*"}

    warm = actions_of_role(in_vpc, roles["handlers.warm_unit.handler"])
    assert {a for a in warm if a.startswith(("dynamodb:", "s3:"))} == {
        "dynamodb:Query",  # the run's storage samples, for the ETA of RDS's initialization (issue 36 §3)
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
    }
    assert {a for a in warm if a.startswith("rds:")} == {"rds:DescribeDBInstances"}  # RDS's storage progress

    unit_failed = actions_of_role(in_vpc, roles["handlers.unit_failed.handler"])
    assert unit_failed == logs_and_xray | {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}

    finalize = actions_of_role(in_vpc, roles["handlers.finalize.handler"])
    assert {
        "dynamodb:Query",
        "dynamodb:GetItem",
        "dynamodb:UpdateItem",
        "s3:GetObject",
        "s3:PutObject",
    } <= finalize
    assert not any(a.startswith(("secretsmanager:", "kms:")) for a in finalize)
    # RDS's storage progress at the end of the run (verdict.require_storage_initialized): describe only
    assert {a for a in finalize if a.startswith("rds:")} == {"rds:DescribeDBInstances"}

    run_failed = actions_of_role(in_vpc, roles["handlers.run_failed.handler"])
    assert run_failed == logs_and_xray | {
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "s3:PutObject",
        "events:PutEvents",
    }
    for handler in ("handlers.finalize.handler", "handlers.run_failed.handler"):
        assert resources_for(in_vpc, roles[handler], "events:PutEvents") == {
            "arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:event-bus/default"
        }

    # Benchmark: database access only where the database is read; metrics only where collected.
    for handler in ("handlers.probe.handler", "handlers.plan_sweep.handler", "handlers.run_point.handler"):
        actions = actions_of_role(in_vpc, roles[handler])
        assert not any(a.startswith("rds:") for a in actions), handler
        assert not {"s3:DeleteObject", "dynamodb:DeleteItem", "dynamodb:Scan"} & actions
        # PlanSweep caps the opt-in write test by the free storage RDS reports (FreeStorageSpace).
        expected = {"cloudwatch:GetMetricStatistics"} if handler == "handlers.plan_sweep.handler" else set()
        assert {a for a in actions if a.startswith("cloudwatch:")} == expected, handler
    cleanup = actions_of_role(in_vpc, roles["handlers.cleanup_scratch.handler"])
    assert {"secretsmanager:GetSecretValue", "rds:DescribeDBInstances", "s3:GetObject", "s3:PutObject",
            "dynamodb:Query", "dynamodb:UpdateItem"} <= cleanup
    assert not {"s3:DeleteObject", "dynamodb:DeleteItem", "dynamodb:Scan", "rds:AddTagsToResource"} & cleanup
    assert not any(a.startswith("cloudwatch:") for a in cleanup)
    collect = actions_of_role(in_vpc, roles["handlers.collect_metrics.handler"])
    assert {"cloudwatch:GetMetricData", "logs:GetLogEvents", "logs:FilterLogEvents",
            "rds:DescribeDBInstances"} <= collect
    assert not any(a.startswith("secretsmanager:") for a in collect)
    assert resources_for(in_vpc, roles["handlers.collect_metrics.handler"], "logs:GetLogEvents") == {
        "arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:RDSOSMetrics",
        "arn:<AWS::Partition>:logs:<AWS::Region>:<AWS::AccountId>:log-group:RDSOSMetrics:log-stream:*",
    }
    analyze = actions_of_role(in_vpc, roles["handlers.analyze.handler"])
    assert not any(a.startswith(("secretsmanager:", "rds:", "kms:", "cloudwatch:", "logs:Get")) for a in analyze)

    # Objects only under the evidence prefix.
    bucket = _evidence_bucket(in_vpc)[0]
    for role in roles.values():
        for action in ("s3:GetObject", "s3:PutObject"):
            assert resources_for(in_vpc, role, action) <= {f"<{bucket}.Arn>/runs/*"}


def test_secret_pattern_comes_from_context(synth_factory) -> None:
    pattern = "arn:aws:secretsmanager:eu-west-1:111122223333:secret:cutover/*"
    synth = synth_factory({"secret_arn_pattern": pattern})
    assert synth.error is None, synth.error
    roles = {h: role_of(f) for h, (_, f) in functions_by_handler(synth).items()}
    assert resources_for(synth, roles["handlers.warm_unit.handler"], "secretsmanager:GetSecretValue") == {
        pattern
    }


# -- state machine ---------------------------------------------------------------------------------
def _state_machine(synth: Synth) -> dict[str, Any]:
    # the run workflow's (the comparison's is tested in test_compare_stack.py)
    (state_machine,) = [r for r in synth.resources("AWS::StepFunctions::StateMachine").values()
                        if r["Properties"]["StateMachineName"] == WORKFLOW.state_machine_name]
    return state_machine["Properties"]


def test_state_machine_is_standard_logged_and_traced(plain: Synth) -> None:
    props = _state_machine(plain)
    assert props["StateMachineType"] == "STANDARD"
    assert props["StateMachineName"] == "cutover-prep-warmup"
    assert props["TracingConfiguration"] == {"Enabled": True}
    logging = props["LoggingConfiguration"]
    assert logging["Level"] == "ALL"
    log_group = logging["Destinations"][0]["CloudWatchLogsLogGroup"]["LogGroupArn"]["Fn::GetAtt"][0]
    assert plain.template["Resources"][log_group]["Properties"]["RetentionInDays"] == 90


def test_definition_is_the_asl_file_with_every_placeholder_substituted(plain: Synth) -> None:
    props = _state_machine(plain)
    asl_text = ASL_FILE.read_text()
    # The definition body is the ASL file itself, uploaded as an asset (DefinitionBody.from_file).
    key = props["DefinitionS3Location"]["Key"]
    staged = plain.outdir / f"asset.{key}"
    assert staged.read_text() == asl_text
    definition = json.loads(staged.read_text())
    assert asl_state_names(definition) == asl_state_names(json.loads(asl_text))
    assert {"ValidateInput", "Discover", "Preflight", "Finalize"} <= asl_state_names(definition)

    substitutions = props["DefinitionSubstitutions"]
    assert set(substitutions) == SUBSTITUTIONS
    placeholders = set(re.findall(r"\$\{([^}]+)\}", asl_text))
    assert placeholders <= set(substitutions), placeholders - set(substitutions)
    # Every value is resolved by CloudFormation (GetAtt/Ref), none is a literal with "${".
    for name, value in substitutions.items():
        assert isinstance(value, dict) and ({"Fn::GetAtt"} == set(value) or {"Ref"} == set(value)), name
    functions = {k for h, (k, _) in functions_by_handler(plain).items() if h not in NOT_IN_WORKFLOW}
    assert {v["Fn::GetAtt"][0] for k, v in substitutions.items() if k.endswith("FunctionArn")} == functions
    assert substitutions["EvidenceBucketName"] == {"Ref": _evidence_bucket(plain)[0]}


def test_state_machine_role(plain: Synth) -> None:
    props = _state_machine(plain)
    role = props["RoleArn"]["Fn::GetAtt"][0]
    functions = {k for h, (k, _) in functions_by_handler(plain).items() if h not in NOT_IN_WORKFLOW}
    invoke = resources_for(plain, role, "lambda:InvokeFunction")  # only what the definition calls
    assert invoke == {f"<{f}.Arn>" for f in functions} | {f"<{f}.Arn>:*" for f in functions}
    assert resources_for(plain, role, "states:StartExecution") == {
        "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:stateMachine:cutover-prep-warmup"
    }
    assert resources_for(plain, role, "states:DescribeExecution") == {
        "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:cutover-prep-warmup:*",
        "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:cutover-prep-warmup/*",
    }
    bucket = _evidence_bucket(plain)[0]
    assert f"<{bucket}.Arn>/runs/*" in resources_for(plain, role, "s3:GetObject")
    # The Distributed Map's ResultWriter may write where the ASL file says.
    writes = resources_for(plain, role, "s3:PutObject")
    assert writes and all(w.startswith(f"<{bucket}.Arn>/") and w.endswith("/*") for w in writes)
    for prefix in _result_writer_prefixes(json.loads(ASL_FILE.read_text())):
        assert f"<{bucket}.Arn>/{prefix.strip('/')}/*" in writes
    trust = plain.template["Resources"][role]["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]
    assert trust["Principal"] == {"Service": "states.amazonaws.com"}


def _result_writer_prefixes(definition: dict[str, Any]) -> list[str]:
    found = []
    for state in definition["States"].values():
        prefix = state.get("ResultWriter", {}).get("Parameters", {}).get("Prefix")
        if isinstance(prefix, str):
            found.append(prefix)
        for nested in (state.get("ItemProcessor"), state.get("Iterator"), *state.get("Branches", [])):
            if nested:
                found += _result_writer_prefixes(nested)
    return found


def test_outputs_for_the_cli(plain: Synth) -> None:
    outputs = plain.template["Outputs"]
    # CutoverRunStateMachineArn, and StateMachineArn (its name before the rename) for one more release.
    assert {"CutoverRunStateMachineArn", "StateMachineArn", "EvidenceBucketName", "TableName"} <= set(outputs)
    assert all("Export" not in o for o in outputs.values())
    for name in ("CutoverRunStateMachineArn", "StateMachineArn"):
        assert outputs[name]["Value"] == {"Ref": next(k for k, r in plain.resources(
            "AWS::StepFunctions::StateMachine").items()
            if r["Properties"]["StateMachineName"] == WORKFLOW.state_machine_name)}


# -- cfn-lint --------------------------------------------------------------------------------------
def test_cfn_lint_is_clean(plain: Synth, in_vpc: Synth) -> None:
    pytest.importorskip("cfnlint", reason="cfn-lint is not installed (pip install -e '.[dev]')")
    from cfnlint.api import ManualArgs, lint_file

    for synth in (plain, in_vpc):
        # W3005: CDK adds a DependsOn on a role that a GetAtt already implies; harmless.
        matches = lint_file(
            synth.outdir / f"{synth.stack_name}.template.json", ManualArgs(ignore_checks=["W3005"])
        )
        assert [str(m) for m in matches] == []


def test_cli_is_pinned_to_the_2_line() -> None:
    """npm's 'latest' aws-cdk (3.0.0) cannot read aws-cdk-lib 2.x assemblies: the 2.1xxx CLI is pinned."""
    package = json.loads((REPO_ROOT / "package.json").read_text())
    assert re.fullmatch(r"2\.1\d{3}\.\d+", package["devDependencies"]["aws-cdk"])
    lock = json.loads((REPO_ROOT / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/aws-cdk"]["version"] == package["devDependencies"]["aws-cdk"]


def test_restore_triggers_start_only_this_state_machine(plain: Synth) -> None:
    from cutover_prep.restore.trigger import EVENT_PATTERN

    rules = plain.resources("AWS::Events::Rule")
    patterns = [r["Properties"].get("EventPattern") for r in rules.values() if r["Properties"].get("EventPattern")]
    assert EVENT_PATTERN in patterns  # the rule is exactly the pattern the trigger code checks
    handler, function = functions_by_handler(plain)["handlers.on_restore.handler"]
    schedules = [r["Properties"]["ScheduleExpression"] for r in rules.values()
                 if r["Properties"].get("ScheduleExpression")
                 and r["Properties"]["Targets"][0]["Arn"] == {"Fn::GetAtt": [handler, "Arn"]}]
    assert schedules == ["rate(15 minutes)"]  # the reaper's schedule: test_compare_stack.py
    assert "STATE_MACHINE_ARN" in function["Properties"]["Environment"]["Variables"]
    role = role_of(function)
    (start,) = statements_with(plain, role, "states:StartExecution")
    assert "StateMachine" in flat(start["Resource"]) and "*" not in flat(start["Resource"])
    assert not any(a.startswith(("secretsmanager:", "s3:", "cloudwatch:")) for a in actions_of_role(plain, role))
    (put_events,) = statements_with(plain, role, "events:PutEvents")  # a rejected restore is told, not lost
    assert "event-bus/default" in flat(put_events["Resource"])


# -- notifications ---------------------------------------------------------------------------------
def test_notifications_are_off_unless_asked_for(plain: Synth) -> None:
    assert plain.resources("AWS::SNS::Topic") == {}
    assert "NotificationTopicArn" not in plain.template["Outputs"]


def test_notifications_topic_gets_the_completion_event(in_vpc: Synth) -> None:
    from cutover_prep.live import completion as events

    (topic_id, topic), = in_vpc.resources("AWS::SNS::Topic").items()
    key_ref = topic["Properties"]["KmsMasterKeyId"]
    (key_id, key), = in_vpc.resources("AWS::KMS::Key").items()
    assert key_ref == {"Fn::GetAtt": [key_id, "Arn"]} and key["Properties"]["EnableKeyRotation"] is True
    (grant,) = [s for s in key["Properties"]["KeyPolicy"]["Statement"] if s.get("Sid") == "EventBridgePublishes"]
    assert grant["Principal"] == {"Service": "events.amazonaws.com"}
    assert set(grant["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey*"}
    rules = [r["Properties"] for r in in_vpc.resources("AWS::Events::Rule").values()
             if (r["Properties"].get("EventPattern") or {}).get("source") == [events.SOURCE]]
    (rule,) = rules
    assert rule["EventPattern"]["detail-type"] == [events.DETAIL_TYPE, events.NOT_STARTED]
    (target,) = rule["Targets"]
    assert target["Arn"] == {"Ref": topic_id}
    template = target["InputTransformer"]["InputTemplate"]
    assert "<detail-verdict>" in template and "<detail-report>" in template
    assert set(target["InputTransformer"]["InputPathsMap"].values()) >= {"$.detail.verdict", "$.detail.report",
                                                                          "$.detail.run_id"}
    endpoints = sorted(s["Properties"]["Endpoint"] for s in in_vpc.resources("AWS::SNS::Subscription").values())
    assert endpoints == ["dba@example.com", "oncall@example.com"]
    (policy,) = in_vpc.resources("AWS::SNS::TopicPolicy").values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert any(s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
               for s in statements)
    assert any(s["Effect"] == "Allow" and s["Principal"] == {"Service": "events.amazonaws.com"} for s in statements)
    assert in_vpc.template["Outputs"]["NotificationTopicArn"]["Value"] == {"Ref": topic_id}


def test_the_function_code_asset_ships_no_cli_and_no_local_run(plain: Synth) -> None:
    """The Lambda asset is the function code: no CLI (click), no local run (moto, pgserver), no sample database."""
    code = {fn["Properties"]["Code"]["S3Key"] for fn in plain.resources("AWS::Lambda::Function").values()}
    assert len(code) == 1  # one code asset for every function
    [asset_dir] = [d for d in plain.outdir.glob("asset.*") if (d / "handlers").is_dir()]
    shipped = {str(p.relative_to(asset_dir)) for p in asset_dir.rglob("*.py")}
    assert "handlers/run_point.py" in shipped and "cutover_prep/workflows.py" in shipped
    assert not [p for p in shipped if p.startswith(("cutover_prep/cli/", "cutover_prep/local/"))
                or p.endswith("sample_db.py") or p == "cutover_prep/analysis/cli.py"], shipped
    assert (asset_dir / "cutover_prep/report/templates/report.html.j2").exists()
    assert (asset_dir / "cutover_prep/certs/rds-ca-bundle.pem").exists()
