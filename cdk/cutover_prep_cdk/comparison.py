"""The comparison workflow (issue 15): its own STANDARD state machine, loaded from
``statemachines/compare.asl.json``, with its own least-privilege role, and the hourly reaper.

The state machine runs the run workflow's state machine once per configuration as a child
execution (``states:startExecution.sync:2``); for that its role may start that one state machine,
describe and stop its executions, and manage the managed EventBridge rule through which Step
Functions learns that a child ended (``StepFunctionsGetEventsForStepFunctionsExecutionRule``, as the
Step Functions developer guide's "IAM policies for Step Functions" lists for the synchronous pattern).

The reaper (``ReapInstances``) runs every hour and deletes comparison instances past their TTL whose
comparison no longer runs; it may describe the comparison's executions and, like the Cleanup step,
delete only instances tagged with this deployment's id and a comparison's (``permissions.delete_condition``).
"""

from __future__ import annotations

from aws_cdk import ArnFormat, Aws, Duration, RemovalPolicy, Stack
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from . import checkov
from .catalogue import BUCKET_SUBSTITUTION, FUNCTIONS, WORKFLOWS, Workflow
from .config import DEFAULT_STATE_MACHINE_NAME, RETENTION, Config
from .nag import acknowledge_wildcard_resource
from .orchestration import grant_logging_and_tracing
from .storage import Storage

# The managed rule Step Functions creates for .sync integrations with Step Functions itself.
SYNC_RULE = "StepFunctionsGetEventsForStepFunctionsExecutionRule"
REAPER_SCHEDULE = Duration.hours(1)


def comparison_state_machine_name(config: Config, workflow: Workflow) -> str:
    """The catalogue's name; next to a run state machine renamed by context, a name derived from it
    (two deployments in one account and region must not share a comparison state machine)."""
    if config.state_machine_name == DEFAULT_STATE_MACHINE_NAME:
        return workflow.state_machine_name
    return f"{config.state_machine_name}-compare"[:80]


class Comparison(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: Config,
        storage: Storage,
        functions: dict[str, lambda_.IFunction],
        workflow: Workflow,
        children: dict[str, tuple[sfn.IStateMachine, str]],  # workflow key -> (state machine, its fixed name)
        reaper: lambda_.Function,
        reaper_role: iam.Role,
    ) -> None:
        super().__init__(scope, construct_id)
        stack = Stack.of(self)
        name = comparison_state_machine_name(config, workflow)
        called = {fid: functions[fid] for fid in workflow.functions}

        def executions_of(state_machine_name: str) -> str:
            return stack.format_arn(service="states", resource="execution", resource_name=f"{state_machine_name}:*",
                                    arn_format=ArnFormat.COLON_RESOURCE_NAME)

        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("states.amazonaws.com").with_conditions(
                {"StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID}}
            ),
            description="cutover-prep comparison state machine",
        )
        invoke = [arn for f in called.values() for arn in (f.function_arn, f"{f.function_arn}:*")]
        self.role.add_to_policy(iam.PolicyStatement(sid="InvokeWorkers", actions=["lambda:InvokeFunction"],
                                                    resources=invoke))
        # From the fixed names, as the run workflow's own role does: plain strings, no tokens to split.
        child_names = [children[key][1] for key in workflow.starts]
        child_arns = [stack.format_arn(service="states", resource="stateMachine", resource_name=n,
                                       arn_format=ArnFormat.COLON_RESOURCE_NAME) for n in child_names]
        child_executions = [executions_of(n) for n in child_names]
        self.role.add_to_policy(iam.PolicyStatement(sid="StartChildRuns", actions=["states:StartExecution"],
                                                    resources=child_arns))
        self.role.add_to_policy(iam.PolicyStatement(
            sid="TrackChildRuns", actions=["states:DescribeExecution", "states:StopExecution"],
            resources=child_executions))
        sync_rule = stack.format_arn(service="events", resource="rule", resource_name=SYNC_RULE,
                                     arn_format=ArnFormat.SLASH_RESOURCE_NAME)
        self.role.add_to_policy(iam.PolicyStatement(
            sid="SyncChildRunEvents", actions=["events:PutTargets", "events:PutRule", "events:DescribeRule"],
            resources=[sync_rule]))
        grant_logging_and_tracing(self.role)

        self.log_group = logs.LogGroup(self, "ExecutionLogs", retention=RETENTION[config.log_retention_days],
                                       removal_policy=RemovalPolicy.RETAIN)
        checkov.skip(self.log_group, "CKV_AWS_158", checkov.LOG_GROUP_KMS)
        substitutions = {FUNCTIONS[fid].substitution: f.function_arn for fid, f in called.items()}
        substitutions[BUCKET_SUBSTITUTION] = storage.bucket.bucket_name
        substitutions.update({WORKFLOWS[key].substitution: children[key][0].state_machine_arn
                              for key in workflow.starts})
        self.state_machine = sfn.StateMachine(
            self,
            "StateMachine",
            state_machine_name=name,
            state_machine_type=sfn.StateMachineType.STANDARD,
            definition_body=sfn.DefinitionBody.from_file(str(workflow.asl_path)),
            definition_substitutions=substitutions,
            role=self.role.without_policy_updates(),
            tracing_enabled=True,
            # The input names the secret by ARN only; the credentials never travel through the workflow.
            logs=sfn.LogOptions(destination=self.log_group, level=sfn.LogLevel.ALL, include_execution_data=True),
        )
        for arn in child_executions:
            acknowledge_wildcard_resource(
                self.role, arn, "DescribeExecution/StopExecution on the child runs of the run state machine "
                "(one per configuration), whose names are made at run time; .sync:2 polls and stops them.")
        for function in called.values():
            acknowledge_wildcard_resource(
                self.role, f"{function.function_arn}:*",
                "Invoking a published version or alias of the same function, as Step Functions' lambda:invoke "
                "integration may do; no other function is reachable.")

        # -- the reaper: hourly ---------------------------------------------------------------------
        own_executions = executions_of(name)
        reaper_role.add_to_policy(iam.PolicyStatement(
            sid="DescribeComparisons", actions=["states:DescribeExecution"], resources=[own_executions]))
        acknowledge_wildcard_resource(
            reaper_role, own_executions, "The reaper asks whether the comparison that restored an instance is "
            "still running: executions of the comparison state machine, named at run time.")
        self.reaper_rule = events.Rule(
            self, "ReaperSchedule",
            description="cutover-prep: delete comparison instances past their TTL whose comparison ended",
            schedule=events.Schedule.rate(REAPER_SCHEDULE),
            targets=[targets.LambdaFunction(reaper, retry_attempts=2, dead_letter_queue=reaper.dead_letter_queue)],
        )
