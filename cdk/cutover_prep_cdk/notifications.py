"""Optional SNS notification of each finished run (and of each opted-in restore that could not
start one): a rule on the completion events → an SNS topic.

The topic is encrypted with a key of its own whose policy lets EventBridge publish (the AWS
managed key of SNS does not), and denies plain HTTP. The message is one readable line per
field, taken from the event by an input transformer: no Lambda function is involved. A completion
event EventBridge could not deliver to the topic is kept in a dead-letter queue (an alarm says so).
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from .dead_letters import DeadLetters

# The completion event (lambdas/cutover_prep/live/completion.py): the tests assert both sides agree.
EVENT_SOURCE = "cutover-prep"
EVENT_DETAIL_TYPE = "Cutover Prep Run Finished"
EVENT_NOT_STARTED = "Cutover Prep Run Not Started"  # an opted-in restore whose tags make a bad input


class Notifications(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, emails: tuple[str, ...] = ()) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(
            self, "TopicKey", enable_key_rotation=True, removal_policy=RemovalPolicy.DESTROY,
            pending_window=Duration.days(7), description="cutover-prep: run notifications topic",
        )
        self.key.add_to_resource_policy(iam.PolicyStatement(
            sid="EventBridgePublishes", principals=[iam.ServicePrincipal("events.amazonaws.com")],
            actions=["kms:Decrypt", "kms:GenerateDataKey*"], resources=["*"],
        ))
        self.topic = sns.Topic(self, "RunFinished", display_name="Cutover Prep run finished",
                               master_key=self.key, enforce_ssl=True)
        for address in emails:
            self.topic.add_subscription(subscriptions.EmailSubscription(address))
        message = events.RuleTargetInput.from_multiline_text("\n".join([
            f"Cutover Prep: {events.EventField.from_path('$.detail.verdict')} for "
            f"{events.EventField.from_path('$.detail.target.db_instance_identifier')}",
            f"run {events.EventField.from_path('$.detail.run_id')}, "
            f"status {events.EventField.from_path('$.detail.status')}",
            f"reasons: {events.EventField.from_path('$.detail.reasons')}",
            f"report: {events.EventField.from_path('$.detail.report')}",
            f"summary: {events.EventField.from_path('$.detail.summary')}",
        ]))
        self.undelivered = DeadLetters(self, "Undelivered",
                                       holds="a run's notification EventBridge could not deliver to the topic")
        self.rule = events.Rule(
            self, "RunFinishedRule",
            description="cutover-prep: a run ended; tell the topic's subscribers",
            event_pattern=events.EventPattern(source=[EVENT_SOURCE],
                                              detail_type=[EVENT_DETAIL_TYPE, EVENT_NOT_STARTED]),
            targets=[targets.SnsTopic(self.topic, message=message, dead_letter_queue=self.undelivered.queue)],
        )
