"""The Lambda functions of the workflow: one dependency layer, one code asset, and per
function its own role (inline, least-privilege policies), its own log group and its
settings. The state machine (``orchestration.py``) only invokes them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from aws_cdk import Acknowledgment, Annotations, ArnFormat, Aws, Duration, RemovalPolicy, Stack, Validations
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from .config import LAMBDA_DIR, Config
from .nag import acknowledge, acknowledge_wildcard_resource, nag_format
from .storage import Storage

RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.X86_64

# Not deployed: caches, build metadata and anything that is not the function code.
ASSET_EXCLUDES = [
    "**/__pycache__",
    "**/*.pyc",
    "**/*.pyo",
    "*.egg-info",
    "**/*.egg-info",
    "**/.pytest_cache",
    "**/.mypy_cache",
    "**/.ruff_cache",
    "**/.DS_Store",
    "requirements.txt",
]

RETENTION = {
    1: logs.RetentionDays.ONE_DAY,
    3: logs.RetentionDays.THREE_DAYS,
    5: logs.RetentionDays.FIVE_DAYS,
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    120: logs.RetentionDays.FOUR_MONTHS,
    150: logs.RetentionDays.FIVE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
    400: logs.RetentionDays.THIRTEEN_MONTHS,
    545: logs.RetentionDays.EIGHTEEN_MONTHS,
    731: logs.RetentionDays.TWO_YEARS,
    1096: logs.RetentionDays.THREE_YEARS,
    1827: logs.RetentionDays.FIVE_YEARS,
    2192: logs.RetentionDays.SIX_YEARS,
    2557: logs.RetentionDays.SEVEN_YEARS,
    2922: logs.RetentionDays.EIGHT_YEARS,
    3288: logs.RetentionDays.NINE_YEARS,
    3653: logs.RetentionDays.TEN_YEARS,
}

NO_VPC_WARNING = (
    "No VPC context (vpc_id, subnet_ids): the Discover and WarmUnit functions run outside any VPC, "
    "so the database must be publicly reachable from the internet. Pass -c vpc_id=... -c subnet_ids=... "
    "(and -c security_group_id=...) to run them in the database's VPC; see docs/deploy.md."
)


@dataclass(frozen=True)
class FunctionSpec:
    construct_id: str
    handler: str
    timeout_seconds: int
    memory_mb: int
    description: str
    in_vpc: bool = False
    grants: tuple[str, ...] = field(default=())


# construct id -> handler, limits and the permission groups (see Workers._GRANTS).
FUNCTIONS: tuple[FunctionSpec, ...] = (
    FunctionSpec(
        "ValidateInput",
        "handlers.validate_input.handler",
        30,
        256,
        "Validate the run input and record the run; nothing is started on bad input.",
        grants=("table_item_write",),  # Store.start_run: conditional PutItem, UpdateItem on a restart
    ),
    FunctionSpec(
        "StartRestore",
        "handlers.start_restore.handler",
        60,
        256,
        "Restore the DB instance from a snapshot (optional step).",
        grants=("rds_restore",),
    ),
    FunctionSpec(
        "DescribeInstance",
        "handlers.describe_instance.handler",
        30,
        256,
        "Report the DB instance's state while waiting for it.",
        grants=("rds_describe",),
    ),
    FunctionSpec(
        "Discover",
        "handlers.discover.handler",
        900,
        1024,
        "Read the catalogue and plan the warm-up units.",
        in_vpc=True,
        grants=("secrets", "rds_describe", "s3_read_write", "table_read_write"),
    ),
    FunctionSpec(
        "WarmUnit",
        "handlers.warm_unit.handler",
        900,
        512,
        "Read one work unit so its blocks are loaded from S3.",
        in_vpc=True,
        grants=("secrets", "table_item_write"),
    ),
    FunctionSpec(
        "UnitFailed",
        "handlers.unit_failed.handler",
        30,
        256,
        "Record a work unit that failed for good.",
        grants=("table_item_write",),
    ),
    FunctionSpec(
        "Finalize",
        "handlers.finalize.handler",
        300,
        512,
        "Summarise the run into findings, decide the verdict, publish the completion event.",
        grants=("table_query_update", "s3_read_write", "completion_event"),
    ),
    FunctionSpec(
        "Probe",
        "handlers.probe.handler",
        900,
        512,
        "Time reads of a fixed random sample of blocks, cold before the warm-up and warm after.",
        in_vpc=True,
        grants=("secrets", "s3_read_write", "table_read_write"),
    ),
    FunctionSpec(
        "PlanSweep",
        "handlers.plan_sweep.handler",
        120,
        512,
        "Choose the benchmark sweep's points and the segment its scans read.",
        in_vpc=True,
        grants=("secrets", "s3_read_write", "table_item_write"),
    ),
    FunctionSpec(
        "RunPoint",
        "handlers.run_point.handler",
        900,
        1024,
        "Run one benchmark point alone in its own recorded time window.",
        in_vpc=True,
        grants=("secrets", "s3_read_write", "table_item_write"),
    ),
    FunctionSpec(
        "CollectMetrics",
        "handlers.collect_metrics.handler",
        300,
        512,
        "Collect CloudWatch and Enhanced Monitoring data for every point's time window.",
        grants=("cloudwatch_metrics", "enhanced_monitoring", "rds_describe", "table_query_update", "s3_read_write"),
    ),
    FunctionSpec(
        "Analyze",
        "handlers.analyze.handler",
        300,
        1024,
        "Analyse the probes and the sweep: IO bounds, crossover, limits, conclusions.",
        grants=("table_query_update", "s3_read_write"),
    ),
    FunctionSpec(
        "BenchmarkFailed",
        "handlers.benchmark_failed.handler",
        30,
        256,
        "Record a benchmark step that failed; the run goes on to its findings.",
        grants=("table_item_write",),
    ),
    FunctionSpec(
        "OnRestore",
        "handlers.on_restore.handler",
        120,
        256,
        "Start one run per restore of an opted-in instance (RDS events and a scheduled sweep).",
        # states:StartExecution is added by Triggers; PutEvents tells of a restore whose tags start no run
        grants=("rds_describe", "table_item_write", "completion_event"),
    ),
    FunctionSpec(
        "RunFailed",
        "handlers.run_failed.handler",
        60,
        256,
        "Record a failed run and its evidence, publish the completion event.",
        grants=("table_item_write", "s3_put", "completion_event"),
    ),
)


# Why each permission group has wildcards in its resource ARNs (cdk-nag AwsSolutions-IAM5).
WILDCARD_REASONS = {
    "rds_describe": "DescribeDBInstances on DB instances of this account and region: the instance to warm "
    "up is named in each run's input, not at deploy time.",
    "rds_restore": "The restore creates an instance named in the run's input from a snapshot named there, "
    "with the subnet, option, parameter and security groups the input chooses; none is known "
    "at deploy time. KMS use is limited to calls made through RDS (kms:ViaService).",
    "secrets": "Database credentials are a Secrets Manager secret named by ARN in each run's input; "
    "narrow with context secret_arn_pattern. kms:Decrypt only through Secrets Manager "
    "(kms:ViaService).",
    "s3_read_write": "Evidence objects of every run live under runs/<run_id>/ in this one bucket; run ids "
    "are made at run time.",
    "enhanced_monitoring": "Enhanced Monitoring writes one log stream per DB instance (its DbiResourceId) in the "
    "RDSOSMetrics log group; the instance is named in each run's input.",
    "s3_put": "Evidence objects of every run live under runs/<run_id>/ in this one bucket; run ids are "
    "made at run time.",
}
ENI_REASON = (
    "Lambda creates and deletes its own network interfaces in the configured subnets; their "
    "ids are not known in advance (network-interface/*)."
)


class Workers(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: Config, storage: Storage) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._storage = storage
        self._stack = Stack.of(self)

        self.layer = lambda_.LayerVersion(
            self,
            "Dependencies",
            code=lambda_.Code.from_asset(str(config.resolved_layer_dir())),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="cutover-prep Python dependencies (lambdas/requirements.txt)",
        )
        self._code = lambda_.Code.from_asset(str(LAMBDA_DIR), exclude=ASSET_EXCLUDES)
        self._vpc, self._subnets, self.security_group = self._network()

        self.functions: dict[str, lambda_.Function] = {}
        self.roles: dict[str, iam.Role] = {}
        for spec in FUNCTIONS:
            self._function(spec)

    # -- network ------------------------------------------------------------------------------
    def _network(self) -> tuple[ec2.IVpc | None, ec2.SubnetSelection | None, ec2.ISecurityGroup | None]:
        cfg = self._config
        if not cfg.in_vpc:
            Annotations.of(self).add_warning_v2("cutover-prep:no-vpc", NO_VPC_WARNING)
            return None, None, None
        vpc = ec2.Vpc.from_vpc_attributes(
            self, "Vpc", vpc_id=cfg.vpc_id, availability_zones=list(cfg.availability_zones) or ["unknown"]
        )
        subnets = [
            ec2.Subnet.from_subnet_attributes(
                self,
                f"Subnet{i}",
                subnet_id=subnet_id,
                availability_zone=cfg.availability_zones[i] if cfg.availability_zones else None,
            )
            for i, subnet_id in enumerate(cfg.subnet_ids)
        ]
        for subnet in subnets:
            Validations.of(subnet).acknowledge(
                Acknowledgment(
                    id="Annotation::@aws-cdk/aws-ec2:noSubnetRouteTableId",
                    reason="The functions only place network interfaces in these subnets; nothing reads "
                    "their route tables.",
                )
            )
        if cfg.security_group_id:
            sg: ec2.ISecurityGroup = ec2.SecurityGroup.from_security_group_id(
                self, "DatabaseClientSecurityGroup", cfg.security_group_id, mutable=False
            )
        else:
            sg = ec2.SecurityGroup(
                self,
                "DatabaseClientSecurityGroup",
                vpc=vpc,
                allow_all_outbound=True,
                description="cutover-prep functions that connect to the database - allow this group "
                "in the database security group on the database port",
            )
        return vpc, ec2.SubnetSelection(subnets=subnets), sg

    # -- one function -------------------------------------------------------------------------
    def _function(self, spec: FunctionSpec) -> None:
        role = iam.Role(
            self,
            f"{spec.construct_id}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"cutover-prep {spec.construct_id} function",
        )
        log_group = logs.LogGroup(
            self,
            f"{spec.construct_id}Logs",
            retention=RETENTION[self._config.log_retention_days],
            removal_policy=RemovalPolicy.RETAIN,
        )
        # The inline equivalent of AWSLambdaBasicExecutionRole, scoped to this log group.
        role.add_to_policy(
            iam.PolicyStatement(
                sid="WriteOwnLogs",
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[log_group.log_group_arn],
            )
        )
        acknowledged: set[str] = set()
        for grant in spec.grants:
            for statement in self._GRANTS[grant](self):
                role.add_to_policy(statement)
                # A wildcard in a resource ARN is acknowledged with the reason of its group.
                for resource in statement.resources:
                    rendered = nag_format(self, resource)
                    if "*" in rendered and rendered != "*" and rendered not in acknowledged:
                        if grant not in WILDCARD_REASONS:
                            raise ValueError(f"{grant}: wildcard resource {rendered} needs a reason")
                        acknowledged.add(rendered)
                        acknowledge_wildcard_resource(role, resource, WILDCARD_REASONS[grant])

        vpc_props = {}
        if spec.in_vpc and self._vpc is not None:
            vpc_props = {
                "vpc": self._vpc,
                "vpc_subnets": self._subnets,
                "security_groups": [self.security_group],
            }
            for statement in self._eni_statements():
                role.add_to_policy(statement)
            acknowledge_wildcard_resource(
                role, self._arn("ec2", "network-interface", "*", ArnFormat.SLASH_RESOURCE_NAME), ENI_REASON
            )

        function = lambda_.Function(
            self,
            spec.construct_id,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=spec.handler,
            code=self._code,
            layers=[self.layer],
            role=role,
            log_group=log_group,
            timeout=Duration.seconds(spec.timeout_seconds),
            memory_size=spec.memory_mb,
            tracing=lambda_.Tracing.ACTIVE,
            description=spec.description,
            environment={
                "TABLE_NAME": self._storage.table.table_name,
                "BUCKET_NAME": self._storage.bucket.bucket_name,
                "POWERTOOLS_SERVICE_NAME": "cutover-prep",
                "POWERTOOLS_METRICS_NAMESPACE": "CutoverPrep",
                "LOG_LEVEL": "INFO",
            },
            **vpc_props,
        )
        self.functions[spec.construct_id] = function
        self.roles[spec.construct_id] = role

        acknowledge(
            function,
            "AwsSolutions-L1",
            "Pinned to Python 3.12 on purpose: the dependency layer (oracledb, psycopg, "
            "cryptography wheels) is built for cp312 and the code is tested on it; moving the "
            "runtime is a deliberate change together with the layer build.",
        )
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::*]",
            "Only the X-Ray statement that Tracing.ACTIVE adds (xray:PutTraceSegments, "
            "xray:PutTelemetryRecords) and, for functions in a VPC, ec2:DescribeNetworkInterfaces"
            "/ec2:DescribeSubnets use Resource '*'"
            + (" and, for CollectMetrics, cloudwatch:GetMetricData" if "cloudwatch_metrics" in spec.grants else "")
            + ": these actions support no resource-level permissions.",
        )

    # -- permission groups ----------------------------------------------------------------------
    def _arn(
        self, service: str, resource: str, name: str, fmt: ArnFormat = ArnFormat.COLON_RESOURCE_NAME
    ) -> str:
        return self._stack.format_arn(service=service, resource=resource, resource_name=name, arn_format=fmt)

    def _rds_describe(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(
                sid="DescribeDbInstances",
                actions=["rds:DescribeDBInstances"],
                resources=[self._arn("rds", "db", "*")],
            )
        ]

    def _rds_restore(self) -> list[iam.PolicyStatement]:
        kinds = ("db", "snapshot", "subgrp", "og", "pg", "secgrp")
        return [
            iam.PolicyStatement(
                sid="RestoreFromSnapshot",
                actions=["rds:RestoreDBInstanceFromDBSnapshot"],
                resources=[self._arn("rds", kind, "*") for kind in kinds],
            ),
            iam.PolicyStatement(
                sid="TagRestoredInstance",
                actions=["rds:AddTagsToResource"],
                resources=[self._arn("rds", "db", "*")],
            ),
            iam.PolicyStatement(
                sid="DescribeSnapshots",
                actions=["rds:DescribeDBSnapshots"],
                resources=[self._arn("rds", "snapshot", "*")],
            ),
            *self._rds_describe(),
            # A snapshot encrypted with a customer managed key: RDS creates a grant for the new
            # instance on the caller's behalf. Only through RDS in this region.
            iam.PolicyStatement(
                sid="UseSnapshotKeyViaRds",
                actions=["kms:CreateGrant", "kms:DescribeKey"],
                resources=[self._arn("kms", "key", "*", ArnFormat.SLASH_RESOURCE_NAME)],
                conditions={"StringEquals": {"kms:ViaService": f"rds.{Aws.REGION}.amazonaws.com"}},
            ),
        ]

    def _secrets(self) -> list[iam.PolicyStatement]:
        pattern = self._config.secret_arn_pattern or self._arn("secretsmanager", "secret", "*")
        return [
            iam.PolicyStatement(
                sid="ReadDatabaseSecret", actions=["secretsmanager:GetSecretValue"], resources=[pattern]
            ),
            iam.PolicyStatement(
                sid="DecryptSecretViaSecretsManager",
                actions=["kms:Decrypt"],
                resources=[self._arn("kms", "key", "*", ArnFormat.SLASH_RESOURCE_NAME)],
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
        # GetMetricData supports no resource-level permissions (Resource "*", acknowledged per role).
        return [iam.PolicyStatement(sid="ReadRdsMetrics", actions=["cloudwatch:GetMetricData"], resources=["*"])]

    def _enhanced_monitoring(self) -> list[iam.PolicyStatement]:
        group = self._arn("logs", "log-group", "RDSOSMetrics")
        return [
            iam.PolicyStatement(
                sid="ReadEnhancedMonitoring",
                actions=["logs:GetLogEvents", "logs:FilterLogEvents"],
                resources=[group, f"{group}:log-stream:*"],
            )
        ]

    def _completion_event(self) -> list[iam.PolicyStatement]:
        return [
            iam.PolicyStatement(
                sid="PublishCompletionEvent",
                actions=["events:PutEvents"],
                resources=[self._arn("events", "event-bus", "default", ArnFormat.SLASH_RESOURCE_NAME)],
            )
        ]

    def _eni_statements(self) -> list[iam.PolicyStatement]:
        """The inline equivalent of AWSLambdaVPCAccessExecutionRole's EC2 part, scoped where EC2 allows."""
        cfg = self._config
        eni = self._arn("ec2", "network-interface", "*", ArnFormat.SLASH_RESOURCE_NAME)
        subnets = [self._arn("ec2", "subnet", s, ArnFormat.SLASH_RESOURCE_NAME) for s in cfg.subnet_ids]
        sg = self._arn(
            "ec2", "security-group", self.security_group.security_group_id, ArnFormat.SLASH_RESOURCE_NAME
        )
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

    _GRANTS: dict[str, Callable[[Workers], list[iam.PolicyStatement]]] = {
        "rds_describe": _rds_describe,
        "rds_restore": _rds_restore,
        "secrets": _secrets,
        "table_read_write": _table_read_write,
        "table_item_write": _table_item_write,
        "table_query_update": _table_query_update,
        "s3_read_write": _s3_read_write,
        "s3_put": _s3_put,
        "cloudwatch_metrics": _cloudwatch_metrics,
        "enhanced_monitoring": _enhanced_monitoring,
        "completion_event": _completion_event,
    }
