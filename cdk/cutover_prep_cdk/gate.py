"""The gate workflow (issue 36 §2): its own STANDARD state machine, loaded from
``statemachines/gate.asl.json``, with its own least-privilege role that may only invoke EvaluateGate.
Between checks it waits in Wait states (no Lambda sleeps): a pipeline or a Terraform local-exec starts an
execution and waits on it (docs/gate.md)."""

from __future__ import annotations

from aws_cdk import Aws, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from . import checkov
from .catalogue import FUNCTIONS, Workflow
from .config import DEFAULT_STATE_MACHINE_NAME, RETENTION, Config
from .nag import acknowledge_wildcard_resource
from .orchestration import grant_logging_and_tracing


def gate_state_machine_name(config: Config, workflow: Workflow) -> str:
    """The catalogue's name; next to a run state machine renamed by context, a name derived from it."""
    if config.state_machine_name == DEFAULT_STATE_MACHINE_NAME:
        return workflow.state_machine_name
    return f"{config.state_machine_name}-gate"[:80]


class Gate(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: Config,
                 functions: dict[str, lambda_.IFunction], workflow: Workflow) -> None:
        super().__init__(scope, construct_id)
        called = {fid: functions[fid] for fid in workflow.functions}
        self.role = iam.Role(
            self, "Role",
            assumed_by=iam.ServicePrincipal("states.amazonaws.com").with_conditions(
                {"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}}),
            description="cutover-prep gate state machine",
        )
        invoke = [arn for f in called.values() for arn in (f.function_arn, f"{f.function_arn}:*")]
        self.role.add_to_policy(iam.PolicyStatement(sid="InvokeWorkers", actions=["lambda:InvokeFunction"],
                                                    resources=invoke))
        grant_logging_and_tracing(self.role)
        self.log_group = logs.LogGroup(self, "ExecutionLogs", retention=RETENTION[config.log_retention_days],
                                       removal_policy=RemovalPolicy.RETAIN)
        checkov.skip(self.log_group, "CKV_AWS_158", checkov.LOG_GROUP_KMS)
        self.state_machine = sfn.StateMachine(
            self, "StateMachine",
            state_machine_name=gate_state_machine_name(config, workflow),
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_file(str(workflow.asl_path)),
            definition_substitutions={FUNCTIONS[fid].substitution: f.function_arn for fid, f in called.items()},
            role=self.role.without_policy_updates(),
            tracing_enabled=True,
            # The input holds identifiers (run id, instance, DMS task ARN), never a credential.
            logs=sfn.LogOptions(destination=self.log_group, level=sfn.LogLevel.ALL, include_execution_data=True),
        )
        for function in called.values():
            acknowledge_wildcard_resource(
                self.role, f"{function.function_arn}:*",
                "Invoking a published version or alias of the same function, as Step Functions' lambda:invoke "
                "integration may do; no other function is reachable.")
