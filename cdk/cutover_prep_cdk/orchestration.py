"""One workflow of the catalogue (``lambdas/cutover_prep/workflows.py``): a STANDARD state
machine loaded from its ASL file, its own role and its execution log group. The ASL file is the
single source of the workflow; this construct only fills in the ``${...}`` placeholders
(CloudFormation DefinitionSubstitutions): ``<ConstructId>FunctionArn`` for each function the
catalogue says the workflow calls, and ``EvidenceBucketName``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from aws_cdk import ArnFormat, Aws, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from . import checkov
from .catalogue import BUCKET_SUBSTITUTION, FUNCTIONS, Workflow
from .config import RETENTION, Config
from .nag import acknowledge_wildcard_resource, star_policy
from .storage import EVIDENCE_PREFIX, Storage

# What aws_stepfunctions.StateMachine grants its role for logging and for tracing.
LOG_DELIVERY_ACTIONS = [
    "logs:CreateLogDelivery",
    "logs:GetLogDelivery",
    "logs:UpdateLogDelivery",
    "logs:DeleteLogDelivery",
    "logs:ListLogDeliveries",
    "logs:PutResourcePolicy",
    "logs:DescribeResourcePolicies",
    "logs:DescribeLogGroups",
]
XRAY_ACTIONS = ["xray:PutTraceSegments", "xray:PutTelemetryRecords", "xray:GetSamplingRules", "xray:GetSamplingTargets"]


def grant_logging_and_tracing(role: iam.Role) -> None:
    """What LogLevel.ALL and tracing need on a state machine's role, each in a policy of its own:
    Resource "*" only because AWS supports no resource-level permissions for these actions."""
    star_policy(
        role,
        iam.PolicyStatement(sid="DeliverExecutionLogs", actions=LOG_DELIVERY_ACTIONS, resources=["*"]),
        "Execution logging (LogLevel.ALL): the CloudWatch Logs log-delivery actions (logs:CreateLogDelivery, "
        "...) support no resource-level permissions.",
    )
    star_policy(
        role,
        iam.PolicyStatement(sid="WriteXRayTraces", actions=XRAY_ACTIONS, resources=["*"]),
        "Tracing: xray:PutTraceSegments, xray:PutTelemetryRecords, xray:GetSamplingRules and "
        "xray:GetSamplingTargets support no resource-level permissions.",
    )


class Orchestration(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: Config,
        storage: Storage,
        functions: dict[str, lambda_.IFunction],
        workflow: Workflow,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        name = config.state_machine_name
        definition_file = workflow.asl_path
        called = {fid: functions[fid] for fid in workflow.functions}  # only the functions it calls

        # Built from the fixed name, not from the state machine's attributes: the role's
        # policy must not depend on the state machine that depends on the role.
        state_machine_arn = stack.format_arn(
            service="states",
            resource="stateMachine",
            resource_name=name,
            arn_format=ArnFormat.COLON_RESOURCE_NAME,
        )
        executions = [
            stack.format_arn(
                service="states",
                resource="execution",
                resource_name=f"{name}:*",
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            ),
            # Child executions of a Distributed Map: execution:<name>/<map run label>:<id>
            stack.format_arn(
                service="states",
                resource="execution",
                resource_name=f"{name}/*",
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            ),
        ]

        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("states.amazonaws.com").with_conditions(
                {"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}}
            ),
            description="cutover-prep warm-up state machine",
        )
        invoke_resources: list[str] = []
        for function in called.values():
            invoke_resources += [function.function_arn, f"{function.function_arn}:*"]
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="InvokeWorkers", actions=["lambda:InvokeFunction"], resources=invoke_resources
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="ReadMapItems", actions=["s3:GetObject"], resources=[storage.evidence_objects_arn]
            )
        )
        # ResultWriter targets: the fixed prefixes the ASL file names, else the evidence prefix.
        result_objects = [
            storage.bucket.arn_for_objects(f"{prefix.strip('/')}/*")
            for prefix in sorted(set(result_writer_prefixes(definition_file)))
        ]
        result_objects = result_objects or [storage.evidence_objects_arn]
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="WriteMapResults",
                actions=[
                    "s3:PutObject",
                    "s3:GetObject",
                    "s3:ListMultipartUploadParts",
                    "s3:AbortMultipartUpload",
                ],
                resources=result_objects,
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="StartMapChildren", actions=["states:StartExecution"], resources=[state_machine_arn]
            )
        )
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="TrackMapChildren",
                actions=["states:DescribeExecution", "states:StopExecution"],
                resources=executions,
            )
        )

        # What LogLevel.ALL and tracing would add to the role's default policy, each in a policy of its
        # own (the role is passed without policy updates): Resource "*" only where AWS requires it.
        grant_logging_and_tracing(self.role)

        self.log_group = logs.LogGroup(
            self,
            "ExecutionLogs",
            retention=RETENTION[config.log_retention_days],
            removal_policy=RemovalPolicy.RETAIN,
        )
        checkov.skip(self.log_group, "CKV_AWS_158", checkov.LOG_GROUP_KMS)

        substitutions = {FUNCTIONS[fid].substitution: f.function_arn for fid, f in called.items()}
        substitutions[BUCKET_SUBSTITUTION] = storage.bucket.bucket_name

        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=name,
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_file(str(definition_file)),
            definition_substitutions=substitutions,
            role=self.role.without_policy_updates(),
            tracing_enabled=True,
            # Execution data is safe to log: credentials are read inside the functions by
            # secret ARN and never travel through the workflow.
            logs=sfn.LogOptions(
                destination=self.log_group, level=sfn.LogLevel.ALL, include_execution_data=True
            ),
        )

        acknowledge_wildcard_resource(
            self.role,
            storage.evidence_objects_arn,
            f"The Distributed Map reads its items ({EVIDENCE_PREFIX}<run_id>/units.json) and writes its "
            "results under the evidence prefix; run ids are only known at run time.",
        )
        for arn in result_objects:
            if arn != storage.evidence_objects_arn:
                acknowledge_wildcard_resource(
                    self.role,
                    arn,
                    "The Distributed Map's ResultWriter writes one folder per map run (named by Step "
                    "Functions at run time) under the prefix fixed in the ASL file.",
                )
        acknowledge_wildcard_resource(
            self.role,
            executions[0],
            "DescribeExecution/StopExecution on the executions of this one state machine, whose ids are "
            "only known at run time.",
        )
        acknowledge_wildcard_resource(
            self.role,
            executions[1],
            "DescribeExecution/StopExecution on the Distributed Map child executions of this state "
            "machine, whose ids are only known at run time.",
        )
        for function in called.values():
            acknowledge_wildcard_resource(
                self.role,
                f"{function.function_arn}:*",
                "Invoking a published version or alias of the same function, as Step Functions' "
                "lambda:invoke integration may do; no other function is reachable.",
            )


def result_writer_prefixes(definition_file: Path) -> list[str]:
    """The static ``ResultWriter.Parameters.Prefix`` values of every Map state in the file.

    A prefix given by a path (``Prefix.$``) is not known here; the evidence prefix covers it."""
    return [
        prefix
        for state in _states(json.loads(definition_file.read_text())["States"])
        if isinstance(prefix := state.get("ResultWriter", {}).get("Parameters", {}).get("Prefix"), str)
    ]


def _states(states: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for state in states.values():
        yield state
        for nested in (state.get("ItemProcessor"), state.get("Iterator"), *state.get("Branches", [])):
            if nested:
                yield from _states(nested["States"])
