"""The permission groups of the Lambda functions (``FunctionSpec.grants``), the reasons for every
wildcard in them, and how a group's statements are attached to a function's role.

- A resource ARN with a wildcard (``db:*``) goes into the role's policy; its cdk-nag finding names
  that ARN and is acknowledged on the role with the reason of its group (``WILDCARD_REASONS``).
- A statement on Resource "*" (actions AWS offers no resource-level permissions for) goes into a
  policy of its own with its own acknowledgment and reason (``STAR_REASONS``, by Sid; see
  ``nag.star_policy``). Any other ``Resource: "*"`` stops the synth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from aws_cdk import ArnFormat, Aws, Stack
from aws_cdk import aws_iam as iam
from constructs import Construct

from .catalogue import COMPARISON_INSTANCE_PREFIX, COMPARISON_TAG, DEPLOYMENT_TAG, TTL_TAG
from .config import Config
from .nag import acknowledge_wildcard_resource, nag_format, star_policy
from .storage import Storage

# The tag a user puts on a database secret so that the functions may read it (docs/deploy.md).
SECRET_TAG_KEY = "cutover-prep:access"
SECRET_TAG_VALUE = "read"
# The tag the restore puts on the instance it creates (lambdas/cutover_prep/rds/instances.py RUN_TAG).
RUN_TAG = "cutover-prep:run-id"
# What a comparison names the instances it restores: cprep-<comparison_id>-<name>
COMPARISON_INSTANCES = f"{COMPARISON_INSTANCE_PREFIX}-*"


def delete_condition() -> dict[str, dict[str, str]]:
    """DeleteDBInstance only on an instance that carries this deployment's tag with this stack's id and a
    comparison's tag: RDS's condition key for a DB instance's tag (rds:db-tag/<key>, "Specifying conditions:
    Using custom tags" in the RDS user guide). The code deletes only what ownership.judge proves its own."""
    return {"StringEquals": {f"rds:db-tag/{DEPLOYMENT_TAG}": Aws.STACK_ID},
            "StringLike": {f"rds:db-tag/{COMPARISON_TAG}": "?*"}}

# Why each permission group has wildcards in its resource ARNs (cdk-nag AwsSolutions-IAM5).
WILDCARD_REASONS = {
    "rds_describe": "DescribeDBInstances on DB instances of this account and region: the instance to warm "
    "up is named in each run's input, not at deploy time.",
    "rds_blue_green": "DescribeBlueGreenDeployments on the deployments of this account and region: whether the "
    "instance named in the run's input is the green one of a deployment is found by listing them.",
    "rds_restore": "The restore creates an instance named in the run's input from a snapshot named there, "
    "with the subnet, option, parameter and security groups the input chooses; none is known "
    "at deploy time. It may tag only in a request that carries the run's cutover-prep:run-id tag "
    "and this deployment's id (the restore's own), a comparison's tag only on the instances a comparison "
    f"restores ({COMPARISON_INSTANCES}); KMS use is limited to calls made through RDS (kms:ViaService).",
    "secrets": "Database credentials are a Secrets Manager secret named by ARN in each run's input: only "
    f"secrets tagged {SECRET_TAG_KEY}={SECRET_TAG_VALUE} (an IAM condition), or those matching the "
    "deploy-time context secret_arn_pattern. kms:Decrypt only through Secrets Manager (kms:ViaService).",
    "s3_read_write": "Evidence objects of every run live under runs/<run_id>/ in this one bucket; run ids "
    "are made at run time.",
    "enhanced_monitoring": "Enhanced Monitoring writes one log stream per DB instance (its DbiResourceId) in the "
    "RDSOSMetrics log group; the instance is named in each run's input.",
    "s3_put": "Evidence objects of every run live under runs/<run_id>/ in this one bucket; run ids are "
    "made at run time.",
    "dms_read": "DescribeTableStatistics on the AWS DMS task a pipeline names when it starts the gate "
    "(read-only); the task is not known at deploy time.",
    "rds_delete_comparison": f"DeleteDBInstance on the instances a comparison restored ({COMPARISON_INSTANCES}, "
    "named at run time): only "
    f"on an instance that carries the tag {DEPLOYMENT_TAG} with this stack's id and the tag {COMPARISON_TAG} "
    "(IAM conditions on the resource tags, rds:db-tag); the code also proves each one the comparison's own "
    "(its record, its tags, its creation time).",
}
ENI_REASON = (
    "Lambda creates and deletes its own network interfaces in the configured subnets; their "
    "ids are not known in advance (network-interface/*)."
)
# Statements on Resource "*", by Sid: each is its own policy with this acknowledgment.
STAR_REASONS = {
    "WriteXRayTraces": "Tracing.ACTIVE: xray:PutTraceSegments and xray:PutTelemetryRecords support no "
    "resource-level permissions.",
    "DescribeNetwork": "Lambda in a VPC: ec2:DescribeNetworkInterfaces and ec2:DescribeSubnets support no "
    "resource-level permissions.",
    "ReadRdsMetrics": "CollectMetrics reads the AWS/RDS metrics of each point's time window: "
    "cloudwatch:GetMetricData supports no resource-level permissions.",
    "ReadFreeStorage": "PlanSweep caps the opt-in write test by the free storage RDS reports (FreeStorageSpace): "
    "cloudwatch:GetMetricStatistics supports no resource-level permissions.",
    "ReadDmsTasks": "The gate (EvaluateGate) reads the AWS DMS task a pipeline names at run time: "
    "dms:DescribeReplicationTasks and DescribeReplicationInstances support no resource-level permissions.",
    "ReadDmsLatency": "The gate reads the named DMS task's CDCLatencySource/CDCLatencyTarget (AWS/DMS): "
    "cloudwatch:GetMetricStatistics supports no resource-level permissions.",
    "ReadPrices": "The comparison prices each configuration from the AWS Price List API: pricing:GetProducts "
    "supports no resource-level permissions.",
}


def attach(
    role: iam.Role,
    statements: Iterable[iam.PolicyStatement],
    wildcard_reason: str | None,
    acknowledged: set[str],
) -> None:
    """Attach ``statements`` to ``role``: Resource "*" each in its own acknowledged policy, the
    rest in the role's policy with each wildcard ARN acknowledged (once per role, the ARNs are
    collected in ``acknowledged``) with ``wildcard_reason``."""
    for statement in statements:
        if statement.resources == ["*"]:
            if statement.sid not in STAR_REASONS:
                raise ValueError(f"statement {statement.sid!r} on Resource '*' needs a reason in STAR_REASONS")
            star_policy(role, statement, STAR_REASONS[statement.sid])
            continue
        role.add_to_policy(statement)
        for resource in statement.resources:
            rendered = nag_format(role, resource)
            if "*" in rendered and rendered != "*" and rendered not in acknowledged:
                if wildcard_reason is None:
                    raise ValueError(f"{statement.sid}: wildcard resource {rendered} needs a reason")
                acknowledged.add(rendered)
                acknowledge_wildcard_resource(role, resource, wildcard_reason)


class Permissions:
    """The statements of each permission group, for the functions of one stack."""

    def __init__(self, scope: Construct, *, config: Config, storage: Storage) -> None:
        self._stack = Stack.of(scope)
        self._config = config
        self._storage = storage

    def group(self, name: str) -> list[iam.PolicyStatement]:
        return _GROUPS[name](self)

    def arn(self, service: str, resource: str, name: str, fmt: ArnFormat = ArnFormat.COLON_RESOURCE_NAME) -> str:
        return self._stack.format_arn(service=service, resource=resource, resource_name=name, arn_format=fmt)

    # -- every function --------------------------------------------------------------------------
    @staticmethod
    def xray() -> iam.PolicyStatement:
        """What ``Tracing.ACTIVE`` would add to the role's default policy (the role is passed to the
        function without policy updates, so that it lands in a policy of its own)."""
        return iam.PolicyStatement(
            sid="WriteXRayTraces", actions=["xray:PutTraceSegments", "xray:PutTelemetryRecords"], resources=["*"]
        )

    def eni(self, subnet_ids: Iterable[str], security_group_id: str) -> list[iam.PolicyStatement]:
        """The inline equivalent of AWSLambdaVPCAccessExecutionRole's EC2 part, scoped where EC2 allows."""
        eni = self.eni_arn()
        subnets = [self.arn("ec2", "subnet", s, ArnFormat.SLASH_RESOURCE_NAME) for s in subnet_ids]
        sg = self.arn("ec2", "security-group", security_group_id, ArnFormat.SLASH_RESOURCE_NAME)
        return [
            iam.PolicyStatement(
                sid="CreateFunctionEni", actions=["ec2:CreateNetworkInterface"], resources=[eni, *subnets, sg]
            ),
            iam.PolicyStatement(
                sid="ManageFunctionEni",
                actions=[
                    "ec2:DeleteNetworkInterface",
                    "ec2:AssignPrivateIpAddresses",
                    "ec2:UnassignPrivateIpAddresses",
                ],
                resources=[eni],
            ),
            iam.PolicyStatement(
                sid="DescribeNetwork",
                actions=["ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets"],
                resources=["*"],
            ),
        ]

    def eni_arn(self) -> str:
        return self.arn("ec2", "network-interface", "*", ArnFormat.SLASH_RESOURCE_NAME)

    # -- the groups ---------------------------------------------------------------------------------
    def _rds_describe(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(
                sid="DescribeDbInstances",
                actions=["rds:DescribeDBInstances"],
                resources=[self.arn("rds", "db", "*")],
            )
        ]

    def _rds_blue_green(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(
                sid="DescribeBlueGreenDeployments",
                actions=["rds:DescribeBlueGreenDeployments"],
                resources=[self.arn("rds", "deployment", "*")],
            )
        ]

    def _rds_restore(self) -> list[iam.PolicyStatement]:
        kinds = ("db", "snapshot", "subgrp", "og", "pg", "secgrp")
        return [
            iam.PolicyStatement(
                sid="RestoreFromSnapshot",
                actions=["rds:RestoreDBInstanceFromDBSnapshot"],
                resources=[self.arn("rds", kind, "*") for kind in kinds],
            ),
            # The Tags of RestoreDBInstanceFromDBSnapshot are authorized as rds:AddTagsToResource on the
            # new instance, with the tags as aws:RequestTag ("Grant permission to tag Amazon RDS resources
            # during creation", RDS User Guide); RDS offers no condition key that tells that check from a
            # later AddTagsToResource call. So every tagging must carry what the restore always sends (the
            # run's tag, this deployment's id: restore.rds.restore_tags), and the tags that mark an
            # instance for the reaper's delete (a comparison's, delete_condition) only on the names a
            # comparison restores: IAM alone keeps any other instance out of the reaper's reach.
            iam.PolicyStatement(
                sid="TagRestoredInstance",
                actions=["rds:AddTagsToResource"],
                resources=[self.arn("rds", "db", "*")],
                conditions={"StringLike": {f"aws:RequestTag/{RUN_TAG}": "?*"},
                            "StringEquals": {f"aws:RequestTag/{DEPLOYMENT_TAG}": Aws.STACK_ID},
                            "Null": {f"aws:RequestTag/{COMPARISON_TAG}": "true",
                                     f"aws:RequestTag/{TTL_TAG}": "true"}},
            ),
            iam.PolicyStatement(
                sid="TagComparisonInstance",
                actions=["rds:AddTagsToResource"],
                resources=[self.arn("rds", "db", COMPARISON_INSTANCES)],
                conditions={"StringLike": {f"aws:RequestTag/{RUN_TAG}": "?*"},
                            "StringEquals": {f"aws:RequestTag/{DEPLOYMENT_TAG}": Aws.STACK_ID}},
            ),
            iam.PolicyStatement(
                sid="DescribeSnapshots",
                actions=["rds:DescribeDBSnapshots"],
                resources=[self.arn("rds", "snapshot", "*")],
            ),
            *self._rds_describe(),
            # A snapshot encrypted with a customer managed key: RDS creates a grant for the new
            # instance on the caller's behalf. Only through RDS in this region.
            iam.PolicyStatement(
                sid="UseSnapshotKeyViaRds",
                actions=["kms:CreateGrant", "kms:DescribeKey"],
                resources=[self.arn("kms", "key", "*", ArnFormat.SLASH_RESOURCE_NAME)],
                conditions={"StringEquals": {"kms:ViaService": f"rds.{Aws.REGION}.amazonaws.com"}},
            ),
        ]

    def _secrets(self) -> list[iam.PolicyStatement]:
        pattern = self._config.secret_arn_pattern
        # DescribeSecret: the tags of a secret RDS manages (aws:rds:primaryDBInstanceArn names its instance:
        # access/secret_binding.py), on the same secrets only
        actions = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
        if pattern:  # the operator named the secrets at deploy time
            read = iam.PolicyStatement(sid="ReadDatabaseSecret", actions=actions, resources=[pattern])
        else:  # only secrets the user tagged for Cutover Prep, never every secret of the account
            read = iam.PolicyStatement(
                sid="ReadTaggedDatabaseSecret",
                actions=actions,
                resources=[self.arn("secretsmanager", "secret", "*")],
                conditions={"StringEquals": {f"secretsmanager:ResourceTag/{SECRET_TAG_KEY}": SECRET_TAG_VALUE}},
            )
        return [
            read,
            iam.PolicyStatement(
                sid="DecryptSecretViaSecretsManager",
                actions=["kms:Decrypt"],
                resources=[self.arn("kms", "key", "*", ArnFormat.SLASH_RESOURCE_NAME)],
                conditions={"StringEquals": {"kms:ViaService": f"secretsmanager.{Aws.REGION}.amazonaws.com"}},
            ),
        ]

    def _table(self, sid: str, actions: list[str], with_index: bool) -> iam.PolicyStatement:
        table = self._storage.table
        resources = [table.table_arn] + ([self._storage.table_index_arn] if with_index else [])
        return iam.PolicyStatement(sid=sid, actions=actions, resources=resources)

    def _table_read_write(self) -> list[iam.PolicyStatement]:
        return [
            self._table(
                "ReadWriteTable",
                [
                    "dynamodb:GetItem",
                    "dynamodb:BatchGetItem",
                    "dynamodb:Query",
                    "dynamodb:PutItem",
                    "dynamodb:UpdateItem",
                    "dynamodb:BatchWriteItem",
                    "dynamodb:ConditionCheckItem",
                ],
                True,
            )
        ]

    def _table_item_write(self) -> list[iam.PolicyStatement]:
        return [
            self._table("WriteItems", ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"], False)
        ]

    def _table_query_update(self) -> list[iam.PolicyStatement]:
        return [
            self._table("QueryAndUpdate", ["dynamodb:Query", "dynamodb:GetItem", "dynamodb:UpdateItem"], True)
        ]

    def _s3_read_write(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(
                sid="ReadWriteEvidence",
                actions=["s3:GetObject", "s3:PutObject"],
                resources=[self._storage.evidence_objects_arn],
            ),
            # Without ListBucket a HeadObject of a missing key answers 403 instead of 404.
            iam.PolicyStatement(
                sid="ListEvidence", actions=["s3:ListBucket"], resources=[self._storage.bucket.bucket_arn]
            ),
        ]

    def _s3_put(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(
                sid="WriteEvidence", actions=["s3:PutObject"], resources=[self._storage.evidence_objects_arn]
            )
        ]

    def _cloudwatch_metrics(self) -> list[iam.PolicyStatement]:
        return [iam.PolicyStatement(sid="ReadRdsMetrics", actions=["cloudwatch:GetMetricData"], resources=["*"])]

    def _free_storage(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(sid="ReadFreeStorage", actions=["cloudwatch:GetMetricStatistics"], resources=["*"])
        ]

    def _enhanced_monitoring(self) -> list[iam.PolicyStatement]:
        group = self.arn("logs", "log-group", "RDSOSMetrics")
        return [
            iam.PolicyStatement(
                sid="ReadEnhancedMonitoring",
                actions=["logs:GetLogEvents", "logs:FilterLogEvents"],
                resources=[group, f"{group}:log-stream:*"],
            )
        ]

    def _rds_delete_comparison(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(
                sid="DeleteComparisonInstances",
                actions=["rds:DeleteDBInstance"],
                resources=[self.arn("rds", "db", COMPARISON_INSTANCES)],  # the names a comparison restores
                conditions=delete_condition(),
            )
        ]

    def _table_item_read(self) -> list[iam.PolicyStatement]:
        return [self._table("ReadItems", ["dynamodb:GetItem"], False)]

    def _table_query(self) -> list[iam.PolicyStatement]:
        return [self._table("QueryItems", ["dynamodb:Query"], False)]

    def _dms_read(self) -> list[iam.PolicyStatement]:
        # Service Authorization Reference, AWS DMS: DescribeReplicationTasks and DescribeReplicationInstances
        # have no resource type (Resource "*"); DescribeTableStatistics is on a task (task:*)
        return [iam.PolicyStatement(sid="ReadDmsTasks", actions=["dms:DescribeReplicationTasks",
                                    "dms:DescribeReplicationInstances"], resources=["*"]),
                iam.PolicyStatement(sid="ReadDmsTableStatistics", actions=["dms:DescribeTableStatistics"],
                                    resources=[self.arn("dms", "task", "*")])]

    def _dms_latency(self) -> list[iam.PolicyStatement]:
        return [iam.PolicyStatement(sid="ReadDmsLatency", actions=["cloudwatch:GetMetricStatistics"],
                                    resources=["*"])]

    def _pricing(self) -> list[iam.PolicyStatement]:
        return [iam.PolicyStatement(sid="ReadPrices", actions=["pricing:GetProducts"], resources=["*"])]

    def _completion_event(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(
                sid="PublishCompletionEvent",
                actions=["events:PutEvents"],
                resources=[self.arn("events", "event-bus", "default", ArnFormat.SLASH_RESOURCE_NAME)],
            )
        ]


_GROUPS: dict[str, Callable[[Permissions], list[iam.PolicyStatement]]] = {
    "rds_describe": Permissions._rds_describe,
    "rds_blue_green": Permissions._rds_blue_green,
    "rds_restore": Permissions._rds_restore,
    "secrets": Permissions._secrets,
    "table_read_write": Permissions._table_read_write,
    "table_item_write": Permissions._table_item_write,
    "table_query_update": Permissions._table_query_update,
    "s3_read_write": Permissions._s3_read_write,
    "s3_put": Permissions._s3_put,
    "cloudwatch_metrics": Permissions._cloudwatch_metrics,
    "free_storage": Permissions._free_storage,
    "enhanced_monitoring": Permissions._enhanced_monitoring,
    "completion_event": Permissions._completion_event,
    "rds_delete_comparison": Permissions._rds_delete_comparison,
    "pricing": Permissions._pricing,
    "table_item_read": Permissions._table_item_read,
    "table_query": Permissions._table_query,
    "dms_read": Permissions._dms_read,
    "dms_latency": Permissions._dms_latency,
}
GROUPS = frozenset(_GROUPS)
