"""The Lambda functions of the workflows: one dependency layer, one code asset, and per
function its own role (inline, least-privilege policies), its own log group and its
settings. Which functions exist, their handlers, limits and permission groups come from the
catalogue (``lambdas/cutover_prep/workflows.py``); what a group grants is in ``permissions.py``.
The state machines (``orchestration.py``) only invoke them.
"""

from __future__ import annotations

import json
from typing import Any

from aws_cdk import Acknowledgment, Annotations, Aws, Duration, RemovalPolicy, Size, Validations
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from . import checkov
from .catalogue import (
    ALLOW_UNBOUND_SECRETS_ENV,
    ALLOWED_DB_HOSTS_ENV,
    DEPLOYMENT_ID_ENV,
    FUNCTIONS,
    WARM_CONCURRENCY_ENV,
    WORKFLOWS,
    Function,
    live_metrics,
)
from .config import LAMBDA_DIR, RETENTION, Config
from .dashboard import dashboard_name
from .dead_letters import DeadLetters
from .nag import acknowledge
from .permissions import ENI_REASON, GROUPS, WILDCARD_REASONS, Permissions, attach
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
    # Not run by any function: the CLI, the local run and its sample database (pgserver, moto, click).
    "cutover_prep/cli",
    "cutover_prep/local",
    "cutover_prep/analysis/cli.py",
    "cutover_prep/engines/*/sample_db.py",
]

# The function the WarmUp Map fans out into: its reserved concurrency is the context's warm_concurrency.
WARM_UNIT = "WarmUnit"
# An asynchronous invocation (EventBridge) that fails its retries lands in the function's dead-letter queue.
ASYNC_RETRY_ATTEMPTS = 2

NO_VPC_WARNING = (
    "No VPC context (vpc_id, subnet_ids): the functions that connect to the database run outside any "
    "VPC, so the database must be publicly reachable from the internet. Pass -c vpc_id=... -c subnet_ids=... "
    "(and -c security_group_id=...) to run them in the database's VPC; see docs/deploy.md."
)


class Workers(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: Config, storage: Storage) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        self._storage = storage
        self._permissions = Permissions(self, config=config, storage=storage)

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
        self.dead_letter_queues: dict[str, sqs.IQueue] = {}
        self._fanned_out = fanned_out_functions()
        for spec in FUNCTIONS.values():  # every function of the catalogue, in its order
            if unknown := set(spec.permission_groups) - GROUPS:
                raise ValueError(f"{spec.construct_id}: unknown permission groups {sorted(unknown)}")
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
    def _function(self, spec: Function) -> None:
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
        acknowledged: set[str] = set()
        # The inline equivalent of AWSLambdaBasicExecutionRole, scoped to this log group, and X-Ray.
        writes = iam.PolicyStatement(
            sid="WriteOwnLogs",
            actions=["logs:CreateLogStream", "logs:PutLogEvents"],
            resources=[log_group.log_group_arn],
        )
        attach(role, [writes, self._permissions.xray()], None, acknowledged)
        for grant in spec.permission_groups:
            attach(role, self._permissions.group(grant), WILDCARD_REASONS.get(grant), acknowledged)

        vpc_props = {}
        if spec.in_vpc and self._vpc is not None:
            vpc_props = {
                "vpc": self._vpc,
                "vpc_subnets": self._subnets,
                "security_groups": [self.security_group],
            }
            eni = self._permissions.eni(self._config.subnet_ids, self.security_group.security_group_id)
            attach(role, eni, ENI_REASON, acknowledged)

        environment = {
            "TABLE_NAME": self._storage.table.table_name,
            "BUCKET_NAME": self._storage.bucket.bucket_name,
            "POWERTOOLS_SERVICE_NAME": live_metrics.SERVICE,
            "POWERTOOLS_METRICS_NAMESPACE": live_metrics.NAMESPACE,  # the dashboard reads the same names
            "LOG_LEVEL": "INFO",
            # this deployment's id: the run tags what it restores with it, and the comparison's Cleanup and
            # the reaper delete only instances that carry it (DeleteDBInstance is conditioned on it too)
            DEPLOYMENT_ID_ENV: Aws.STACK_ID,
            # the live view's name (dashboard.py): the report and the completion event link to it
            live_metrics.DASHBOARD_ENV: dashboard_name(),
        }
        if spec.checks_db_host:
            environment[ALLOWED_DB_HOSTS_ENV] = ",".join(self._config.allowed_db_hosts)
        if "secrets" in spec.permission_groups:  # it reads a secret: which secrets it may use (secret_binding)
            environment[ALLOW_UNBOUND_SECRETS_ENV] = "true" if self._config.allow_unbound_secrets else "false"
        if spec.sees_target_host and self._config.warm_concurrency:  # ValidateInput checks the input against it
            environment[WARM_CONCURRENCY_ENV] = str(self._config.warm_concurrency)

        # Invoked asynchronously (EventBridge): what fails its retries is kept, not dropped.
        async_props: dict[str, Any] = {}
        if not spec.in_workflow:
            queue = self._dead_letter_queue(spec, role)
            async_props = {"dead_letter_queue": queue, "retry_attempts": ASYNC_RETRY_ATTEMPTS}
        reserved = self._config.warm_concurrency if spec.construct_id == WARM_UNIT else 0

        function = lambda_.Function(
            self,
            spec.construct_id,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=spec.handler,
            code=self._code,
            layers=[self.layer],
            # Every statement is attached above; what CDK would add by itself (Tracing.ACTIVE's X-Ray
            # statement) would land in the role's default policy, where Resource "*" must not be.
            # So grant through permission groups, not function.grant_*/add_to_role_policy.
            role=role.without_policy_updates(),
            log_group=log_group,
            timeout=Duration.seconds(spec.timeout_seconds),
            memory_size=spec.memory_mb,
            ephemeral_storage_size=Size.mebibytes(spec.tmp_mb),
            tracing=lambda_.Tracing.ACTIVE,
            description=spec.description,
            environment=environment,
            reserved_concurrent_executions=reserved or None,
            **vpc_props,
            **async_props,
        )
        self.functions[spec.construct_id] = function
        self.roles[spec.construct_id] = role
        self._acknowledge_checkov(spec, function, log_group, reserved)

        acknowledge(
            function,
            "AwsSolutions-L1",
            "Pinned to Python 3.12 on purpose: the dependency layer (oracledb, psycopg, "
            "cryptography wheels) is built for cp312 and the code is tested on it; moving the "
            "runtime is a deliberate change together with the layer build.",
        )

    def _dead_letter_queue(self, spec: Function, role: iam.Role) -> sqs.IQueue:
        """The SQS queue where an asynchronous invocation that failed its retries lands; the rules that
        invoke the function send there what they could not deliver (triggers.py, comparison.py)."""
        dead_letters = DeadLetters(self, f"{spec.construct_id}DeadLetters",
                                   holds=f"{spec.construct_id} failed on an event, or EventBridge could not deliver "
                                   "one to it")
        # The role is passed to the function without policy updates, so the grant Lambda needs to deliver
        # to the queue is stated here (CreateFunction checks it).
        role.add_to_policy(iam.PolicyStatement(sid="DeliverDeadLetters", actions=["sqs:SendMessage"],
                                               resources=[dead_letters.queue.queue_arn]))
        self.dead_letter_queues[spec.construct_id] = dead_letters.queue
        return dead_letters.queue

    def _acknowledge_checkov(self, spec: Function, function: lambda_.Function, log_group: logs.LogGroup,
                             reserved: int) -> None:
        checkov.skip(log_group, "CKV_AWS_158", checkov.LOG_GROUP_KMS)
        checkov.skip(function, "CKV_AWS_173", checkov.LAMBDA_ENVIRONMENT_KMS)
        if spec.in_workflow:
            checkov.skip(function, "CKV_AWS_116", checkov.LAMBDA_SYNCHRONOUS)
        if not spec.in_vpc:
            checkov.skip(function, "CKV_AWS_117", checkov.LAMBDA_NOT_IN_VPC)
        elif self._vpc is None:
            checkov.skip(function, "CKV_AWS_117", checkov.LAMBDA_NO_VPC_CONTEXT)
        if spec.construct_id == WARM_UNIT:
            if not reserved:
                checkov.skip(function, "CKV_AWS_115", checkov.LAMBDA_RESERVATION_OFF)
        elif spec.construct_id in self._fanned_out:
            checkov.skip(function, "CKV_AWS_115", checkov.LAMBDA_IN_WARMUP_MAP)
        elif spec.in_workflow:
            checkov.skip(function, "CKV_AWS_115", checkov.LAMBDA_ONCE_PER_STEP)
        else:
            checkov.skip(function, "CKV_AWS_115", checkov.LAMBDA_EVENTBRIDGE)


def fanned_out_functions() -> set[str]:
    """Construct ids of the functions a Map of some workflow runs in parallel: a Task inside a Map whose
    MaxConcurrency is not fixed at 1 (the ASL files are the single source of the workflows)."""
    by_substitution = {f"${{{spec.substitution}}}": fid for fid, spec in FUNCTIONS.items()}
    found: set[str] = set()

    def walk(states: dict[str, Any], parallel: bool) -> None:
        for state in states.values():
            if parallel and state.get("Type") == "Task" and state.get("Resource") in by_substitution:
                found.add(by_substitution[state["Resource"]])
            for nested in (state.get("ItemProcessor"), state.get("Iterator")):
                if nested:
                    walk(nested["States"], parallel or state.get("MaxConcurrency") != 1)
            for branch in state.get("Branches", []):
                walk(branch["States"], parallel)

    for workflow in WORKFLOWS.values():
        walk(json.loads(workflow.asl_path.read_text())["States"], False)
    return found
