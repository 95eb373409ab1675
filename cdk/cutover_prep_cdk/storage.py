"""Findings store: the DynamoDB table (runs, units, history per DB instance) and the S3
evidence bucket (plans, Map items, findings, reports), plus the bucket's access-log bucket.

The key names come from the catalogue's ``TABLE_KEYS`` (``lambdas/cutover_prep/workflows.py``),
which the Lambda code's store writes with.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_s3 as s3
from constructs import Construct

from . import checkov
from .catalogue import TABLE_KEYS, TABLE_TTL_ATTRIBUTE
from .nag import acknowledge

TABLE_PARTITION_KEY = TABLE_KEYS["pk"]
TABLE_SORT_KEY = TABLE_KEYS["sk"]
TARGET_INDEX = TABLE_KEYS["gsi"]
TARGET_INDEX_PARTITION_KEY = TABLE_KEYS["gsi_pk"]
TARGET_INDEX_SORT_KEY = TABLE_KEYS["gsi_sk"]
TTL_ATTRIBUTE = TABLE_TTL_ATTRIBUTE
# Every object the workflow and the functions read or write lives under this prefix.
EVIDENCE_PREFIX = "runs/"

# Every bucket of the stack: SSE-S3, no public access, no ACLs, TLS 1.2+ only.
PRIVATE_BUCKET = {
    "encryption": s3.BucketEncryption.S3_MANAGED,
    "block_public_access": s3.BlockPublicAccess.BLOCK_ALL,
    "object_ownership": s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    "enforce_ssl": True,
    "minimum_tls_version": 1.2,
}


class Storage(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, evidence_retention_days: int) -> None:
        super().__init__(scope, construct_id)

        self.table = dynamodb.Table(
            self,
            "Table",
            partition_key=dynamodb.Attribute(name=TABLE_PARTITION_KEY, type=dynamodb.AttributeType.STRING),
            sort_key=dynamodb.Attribute(name=TABLE_SORT_KEY, type=dynamodb.AttributeType.STRING),
            billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
            encryption=dynamodb.TableEncryption.AWS_MANAGED,
            point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute=TTL_ATTRIBUTE,
            removal_policy=RemovalPolicy.RETAIN,
        )
        checkov.skip(
            self.table,
            "CKV_AWS_119",
            "Encrypted at rest with the AWS managed KMS key aws/dynamodb. It holds run records, no secret, and "
            "who may read it is decided by IAM on the table; a customer managed key would add a key to "
            "administer and pay for without changing that.",
        )
        # Runs of one DB instance, newest first: gsi1pk=DB#<instance>, gsi1sk=<started_at>#<run_id>.
        self.table.add_global_secondary_index(
            index_name=TARGET_INDEX,
            partition_key=dynamodb.Attribute(
                name=TARGET_INDEX_PARTITION_KEY, type=dynamodb.AttributeType.STRING
            ),
            sort_key=dynamodb.Attribute(name=TARGET_INDEX_SORT_KEY, type=dynamodb.AttributeType.STRING),
            projection_type=dynamodb.ProjectionType.ALL,
        )

        self.access_log_bucket = s3.Bucket(
            self,
            "AccessLogBucket",
            **PRIVATE_BUCKET,  # S3 server access logging delivers only to SSE-S3 buckets
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-access-logs",
                    expiration=Duration.days(evidence_retention_days),
                    abort_incomplete_multipart_upload_after=Duration.days(7),
                )
            ],
            removal_policy=RemovalPolicy.RETAIN,
        )
        acknowledge(
            self.access_log_bucket,
            "AwsSolutions-S1",
            "This bucket is the target of the evidence bucket's server access logs; logging "
            "the log bucket itself would only log its own log deliveries.",
        )
        checkov.skip(
            self.access_log_bucket,
            "CKV_AWS_18",
            "This bucket receives the evidence bucket's server access logs; logging it too would only log its "
            "own log deliveries.",
        )
        checkov.skip(
            self.access_log_bucket,
            "CKV_AWS_21",
            "S3 writes each access log as a new object under a unique key and never rewrites one, so versions "
            "would hold nothing; the evidence itself is in the versioned evidence bucket.",
        )

        self.bucket = s3.Bucket(
            self,
            "EvidenceBucket",
            **PRIVATE_BUCKET,
            versioned=True,
            server_access_logs_bucket=self.access_log_bucket,
            server_access_logs_prefix="evidence-bucket/",
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-evidence",
                    expiration=Duration.days(evidence_retention_days),
                    noncurrent_version_expiration=Duration.days(30),
                    abort_incomplete_multipart_upload_after=Duration.days(7),
                )
            ],
            removal_policy=RemovalPolicy.RETAIN,
        )

    # ARNs the roles are scoped to ----------------------------------------------------------
    @property
    def evidence_objects_arn(self) -> str:
        """Objects under the evidence prefix (``runs/*``)."""
        return self.bucket.arn_for_objects(EVIDENCE_PREFIX + "*")

    @property
    def table_index_arn(self) -> str:
        return f"{self.table.table_arn}/index/{TARGET_INDEX}"
