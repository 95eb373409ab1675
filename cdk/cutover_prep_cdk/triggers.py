"""The ways a run starts by itself: the RDS restore events rule and the scheduled sweep,
both invoking the OnRestore function, which may start executions of this state machine only. An event
EventBridge could not deliver goes to the function's dead-letter queue (workers.py), as does one the
function failed on."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

RESTORE_EVENT_IDS = ["RDS-EVENT-0043", "RDS-EVENT-0019"]  # restored from snapshot, point-in-time restore


class Triggers(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, function: lambda_.Function, role: iam.Role,
                 state_machine: sfn.IStateMachine, sweep_minutes: int = 15, sweep: bool = True,
                 lookback_hours: int = 24) -> None:
        super().__init__(scope, construct_id)
        function.add_environment("STATE_MACHINE_ARN", state_machine.state_machine_arn)
        function.add_environment("RESTORE_LOOKBACK_HOURS", str(lookback_hours))
        role.add_to_policy(iam.PolicyStatement(sid="StartRuns", actions=["states:StartExecution"],
                                               resources=[state_machine.state_machine_arn]))
        self.restore_rule = events.Rule(
            self, "RestoreEvents",
            description="cutover-prep: an RDS instance was restored (snapshot or point in time)",
            event_pattern=events.EventPattern(source=["aws.rds"], detail_type=["RDS DB Instance Event"],
                                              detail={"EventID": RESTORE_EVENT_IDS}),
            targets=[targets.LambdaFunction(function, retry_attempts=4, dead_letter_queue=function.dead_letter_queue)],
        )
        self.sweep_rule = events.Rule(
            self, "RestoreSweep",
            description="cutover-prep: RDS events are best effort; find opted-in restores they missed",
            schedule=events.Schedule.rate(Duration.minutes(sweep_minutes)),
            targets=[targets.LambdaFunction(function, retry_attempts=2, dead_letter_queue=function.dead_letter_queue)],
        ) if sweep else None
