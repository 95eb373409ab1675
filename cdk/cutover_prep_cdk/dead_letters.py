"""A dead-letter queue and its alarm: where an event lands that an asynchronously invoked function failed
on, or that EventBridge could not deliver to a rule's target, instead of being dropped.

SSE-SQS encryption (no key policy to write: EventBridge cannot use the AWS managed key aws/sqs), TLS only,
messages kept 14 days (SQS's longest), and an alarm in ALARM while a message waits.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from . import checkov
from .nag import acknowledge

RETENTION = Duration.days(14)


class DeadLetters(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, holds: str) -> None:
        """``holds``: what lands here, as the end of "cutover-prep: ...", e.g. "an event OnRestore failed on"."""
        super().__init__(scope, construct_id)
        self.queue = sqs.Queue(
            self,
            "Queue",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=RETENTION,
            removal_policy=RemovalPolicy.RETAIN,
        )
        acknowledge(
            self.queue,
            "AwsSolutions-SQS3",
            f"This queue is itself a dead-letter queue ({holds}); a dead-letter queue of its own would only "
            "move the same messages.",
        )
        checkov.skip(
            self.queue,
            "CKV_AWS_27",
            "Encrypted at rest with SSE-SQS (SqsManagedSseEnabled), which checkov does not look at. A KMS key "
            "would need a key policy for EventBridge, which the AWS managed key aws/sqs cannot give.",
        )
        self.alarm = cloudwatch.Alarm(
            self,
            "Alarm",
            alarm_description=f"cutover-prep: {holds}; it waits in a dead-letter queue (docs/deploy.md, "
            "Failed events and concurrency)",
            metric=self.queue.metric_approximate_number_of_messages_visible(period=Duration.minutes(5)),
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
