"""The catalogue of workflows: each workflow, its ASL file and the Lambda functions it calls,
with their settings; the functions no workflow calls (the restore trigger); the table's key
schema and the log retention periods. The CDK stack, the local harness and the tests all read
it, so a new workflow or function is written here once.

Pure data: nothing here imports boto3, psycopg or the CDK. What a permission group grants is the
CDK's business (``cdk/cutover_prep_cdk/permissions.py``); the catalogue only names the groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATEMACHINES_DIR = Path(__file__).resolve().parents[2] / "statemachines"
BUCKET_SUBSTITUTION = "EvidenceBucketName"  # ${EvidenceBucketName} in an ASL file: the evidence bucket
# The deploy-time allow-list of hosts besides the instance's own endpoint that may receive the
# credentials (CDK context allowed_db_hosts); settings.py reads it.
ALLOWED_DB_HOSTS_ENV = "ALLOWED_DB_HOSTS"
# "true": a secret that names no DB instance may be used (CDK context allow_unbound_secrets, default
# false), on every function that reads the secret; settings.py reads it, access/secret_binding.py applies it.
ALLOW_UNBOUND_SECRETS_ENV = "ALLOW_UNBOUND_SECRETS"


@dataclass(frozen=True)
class Function:
    """One Lambda function: its construct id, handler and settings, and the permission groups
    (names of ``permissions.py`` groups) its role gets."""

    construct_id: str
    handler: str  # module.function, e.g. handlers.validate_input.handler
    timeout_seconds: int
    memory_mb: int
    description: str
    in_vpc: bool = False  # connects to the database: runs in the database's VPC when one is given
    permission_groups: tuple[str, ...] = ()
    sees_target_host: bool = False  # checks target.host before any function connects (ValidateInput)
    in_workflow: bool = True  # False: invoked by something else (EventBridge), never by a state machine
    tmp_mb: int = 512  # its /tmp (Lambda's ephemeral storage; 512 MB is the default and the free amount)

    @property
    def module(self) -> str:
        return self.handler.rsplit(".", 1)[0]

    @property
    def substitution(self) -> str:
        """The ``${...}`` key that stands for this function's ARN in an ASL file."""
        return f"{self.construct_id}FunctionArn"

    @property
    def checks_db_host(self) -> bool:
        """Gets ALLOWED_DB_HOSTS: it connects to the database (reads its secret) or checks the input."""
        return "secrets" in self.permission_groups or self.sees_target_host


@dataclass(frozen=True)
class Workflow:
    """One state machine: its ASL file, the functions it calls and its stack output."""

    key: str  # short name, e.g. cutover-run
    asl_file: str  # file name under statemachines/
    functions: tuple[str, ...]  # construct ids, in the order of the run
    output_name: str  # the CloudFormation output holding its ARN
    state_machine_name: str  # default name of the deployed state machine (CDK context may override it)
    legacy_output_names: tuple[str, ...] = ()  # older output names kept for one release
    description: str = ""
    starts: tuple[str, ...] = ()  # keys of the workflows it runs as child executions (startExecution.sync:2)

    @property
    def substitution(self) -> str:
        """The ``${...}`` key that stands for this state machine's ARN in another workflow's ASL file."""
        return self.output_name

    @property
    def asl_path(self) -> Path:
        return STATEMACHINES_DIR / self.asl_file

    def substitution_keys(self) -> set[str]:
        """Every ``${...}`` key its ASL file may use: one per function, and the bucket."""
        return ({FUNCTIONS[f].substitution for f in self.functions} | {BUCKET_SUBSTITUTION}
                | {WORKFLOWS[w].substitution for w in self.starts})


_FUNCTIONS: tuple[Function, ...] = (
    Function(
        "ValidateInput", "handlers.validate_input.handler", 30, 256,
        "Validate the run input and record the run; nothing is started on bad input.",
        permission_groups=("table_item_write",),  # Store.start_run: conditional PutItem, UpdateItem on a restart
        sees_target_host=True,  # a target.host outside ALLOWED_DB_HOSTS is a bad input
    ),
    Function(
        "StartRestore", "handlers.start_restore.handler", 60, 256,
        "Restore the DB instance from a snapshot (optional step).",
        permission_groups=("rds_restore",),
    ),
    Function(
        "DescribeInstance", "handlers.describe_instance.handler", 30, 256,
        "Report the DB instance's state while waiting for it.",
        # table_item_write: each answer is a sample of RDS's storage progress (rds/progress.py);
        # rds_blue_green: is the instance a Blue/Green deployment's green one
        permission_groups=("rds_describe", "rds_blue_green", "table_item_write"),
    ),
    Function(
        "Discover", "handlers.discover.handler", 900, 1024,
        "Read the catalogue and plan the warm-up units.",
        in_vpc=True,
        permission_groups=("secrets", "rds_describe", "s3_read_write", "table_read_write"),
    ),
    Function(
        "Preflight", "handlers.preflight.handler", 120, 512,
        "Prove each grant and read method the plan needs on the target (about a minute), before any unit is read.",
        in_vpc=True,
        # secrets: the run's connection; s3_put: evidence preflight.json; table_item_write: its summary on the
        # run record (UpdateItem). No RDS call: the endpoint is DescribeInstance's, in the workflow state.
        permission_groups=("secrets", "s3_put", "table_item_write"),
    ),
    Function(
        "WarmUnit", "handlers.warm_unit.handler", 900, 512,
        "Read one work unit so its blocks are loaded from S3.",
        in_vpc=True,
        # rds_describe: RDS's storage progress, sampled at most once a minute across all units; table_query:
        # the run's samples, read back after a sample for the ETA of RDS's initialization (steps.live_emit.storage_eta)
        permission_groups=("secrets", "table_item_write", "table_query", "rds_describe"),
    ),
    Function(
        "EndCensus", "handlers.end_census.handler", 900, 1024,
        "After the warm-up: take the census of the volume again and read what was created or grew since.",
        in_vpc=True,
        permission_groups=("secrets", "rds_describe", "s3_read_write"),
    ),
    Function(
        "WarmSlot", "handlers.warm_slot.handler", 30, 256,
        "Admit a work unit to read (adaptive concurrency, yielding) and take its slot back after.",
        in_vpc=True,
        # table_item_write: the run item and the slot item (GetItem, PutItem); secrets: the run's connection, on
        # which the yield signal reads the database's own read counters every window (issue 36 §1)
        permission_groups=("secrets", "table_item_write"),
    ),
    Function(
        "UnitFailed", "handlers.unit_failed.handler", 30, 256,
        "Record a work unit that failed for good.",
        permission_groups=("table_item_write",),
    ),
    Function(
        "Finalize", "handlers.finalize.handler", 300, 512,
        "Summarise the run into findings, decide the verdict, publish the completion event.",
        # rds_describe: RDS's storage progress at the end of the run (verdict.require_storage_initialized)
        permission_groups=("table_query_update", "s3_read_write", "completion_event", "rds_describe"),
        # findings.plan_pass joins the plan in a SQLite file there: ~226 MiB at 1M census objects (issue 32 §8)
        tmp_mb=2048,
    ),
    Function(
        "Probe", "handlers.probe.handler", 900, 512,
        "Time reads of a fixed random sample of blocks, cold before the warm-up and warm after.",
        in_vpc=True,
        permission_groups=("secrets", "s3_read_write", "table_read_write"),
    ),
    Function(
        "PlanSweep", "handlers.plan_sweep.handler", 120, 512,
        "Choose the benchmark sweep's points and the segment its scans read.",
        in_vpc=True,
        # free_storage: the opt-in write test is capped by the free storage RDS reports
        permission_groups=("secrets", "s3_read_write", "table_item_write", "free_storage"),
    ),
    Function(
        "RunPoint", "handlers.run_point.handler", 900, 1024,
        "Run one benchmark point alone in its own recorded time window.",
        in_vpc=True,
        permission_groups=("secrets", "s3_read_write", "table_item_write"),
    ),
    Function(
        "CollectMetrics", "handlers.collect_metrics.handler", 300, 512,
        "Collect CloudWatch and Enhanced Monitoring data for every point's time window.",
        permission_groups=("cloudwatch_metrics", "enhanced_monitoring", "rds_describe", "table_query_update",
                           "s3_read_write"),
    ),
    Function(
        "Analyze", "handlers.analyze.handler", 300, 1024,
        "Analyse the probes and the sweep: IO bounds, crossover, limits, conclusions.",
        permission_groups=("table_query_update", "s3_read_write"),
    ),
    Function(
        "BenchmarkFailed", "handlers.benchmark_failed.handler", 30, 256,
        "Record a benchmark step that failed; the run goes on to its findings.",
        permission_groups=("table_item_write",),
    ),
    Function(
        "OnRestore", "handlers.on_restore.handler", 120, 256,
        "Start one run per restore of an opted-in instance (RDS events and a scheduled sweep).",
        # states:StartExecution is added by the CDK's Triggers; PutEvents tells of a restore whose tags
        # start no run
        permission_groups=("rds_describe", "table_item_write", "completion_event"),
        in_workflow=False,  # EventBridge (restore events, the scheduled sweep) invokes it
    ),
    Function(
        "RunFailed", "handlers.run_failed.handler", 60, 256,
        "Record a failed run and its evidence, publish the completion event.",
        permission_groups=("table_item_write", "s3_put", "completion_event"),
    ),
    Function(
        "CleanupScratch", "handlers.cleanup_scratch.handler", 300, 512,
        "Remove the scratch objects the run's opt-in write test created (every path after the sweep).",
        in_vpc=True,
        permission_groups=("secrets", "rds_describe", "s3_read_write", "table_read_write"),
    ),
    # -- the comparison workflow (issue 15) --
    Function(
        "CompareStart", "handlers.compare_start.handler", 30, 256,
        "Validate a comparison input, record it, plan one child run per configuration.",
        permission_groups=("table_item_write", "s3_put"),
    ),
    Function(
        "CompareCollect", "handlers.compare_collect.handler", 300, 512,
        "Read each configuration's findings, price it, write comparison.json with the recommendation.",
        permission_groups=("s3_read_write", "table_read_write", "pricing"),
    ),
    Function(
        "CompareCleanup", "handlers.compare_cleanup.handler", 120, 256,
        "Delete every instance the comparison proves its own (record, tags, creation time); keep the rest.",
        permission_groups=("rds_describe", "rds_delete_comparison", "s3_read_write", "table_item_write"),
    ),
    Function(
        "ReapInstances", "handlers.reap_instances.handler", 300, 256,
        "Delete comparison instances past their TTL whose comparison is no longer running (scheduled).",
        # states:DescribeExecution on the comparison's executions is added by the CDK's Comparison construct
        permission_groups=("rds_describe", "rds_delete_comparison", "table_item_write"),
        in_workflow=False,  # an EventBridge schedule invokes it
    ),
    # -- the gate workflow (issue 36 §2) --
    Function(
        "EvaluateGate", "handlers.evaluate_gate.handler", 60, 256,
        "Judge the cutover gate once: the run's verdict, RDS's storage and instance, an AWS DMS task.",
        # table_item_read: the run item's verdict; dms_read and dms_latency: the task and its CDC latency;
        # completion_event: GateOpened/GateClosed/GateUnknown on the default bus
        permission_groups=("table_item_read", "rds_describe", "dms_read", "dms_latency", "completion_event"),
    ),
)
# construct id -> function, in deployment order (the CDK creates them in this order).
FUNCTIONS: dict[str, Function] = {f.construct_id: f for f in _FUNCTIONS}

# The function that EventBridge invokes to start runs, and the workflow it starts.
TRIGGER_FUNCTION = "OnRestore"

CUTOVER_RUN = Workflow(
    key="cutover-run",
    asl_file="cutover-run.asl.json",
    functions=(
        "ValidateInput", "StartRestore", "DescribeInstance", "Discover", "Preflight", "WarmSlot", "WarmUnit",
        "UnitFailed", "EndCensus", "Finalize", "RunFailed", "Probe", "PlanSweep", "RunPoint", "CollectMetrics",
        "Analyze", "BenchmarkFailed", "CleanupScratch",
    ),
    output_name="CutoverRunStateMachineArn",
    # Kept from the first release: renaming a deployed state machine replaces it and changes every
    # execution ARN (the CLI names executions after run ids, so status/report would lose old runs).
    state_machine_name="cutover-prep-warmup",
    legacy_output_names=("StateMachineArn",),  # its name before issue 12; kept for one release
    description="The whole run: validate, restore, warm up, probe, benchmark, findings and verdict.",
)
COMPARE = Workflow(
    key="compare",
    asl_file="compare.asl.json",
    functions=("CompareStart", "CompareCollect", "CompareCleanup"),
    output_name="CompareStateMachineArn",
    state_machine_name="cutover-prep-compare",
    description="Restore one snapshot onto several configurations (a child run each), compare, recommend, "
    "delete what it restored.",
    starts=(CUTOVER_RUN.key,),
)
GATE = Workflow(
    key="gate",
    asl_file="gate.asl.json",
    functions=("EvaluateGate",),
    output_name="GateStateMachineArn",
    state_machine_name="cutover-prep-gate",
    description="Wait until the cutover gate opens (verdict READY, RDS storage initialized, nothing pending, "
    "DMS caught up) or the deadline passes; Wait states between checks.",
)
WORKFLOWS: dict[str, Workflow] = {CUTOVER_RUN.key: CUTOVER_RUN, COMPARE.key: COMPARE, GATE.key: GATE}
TRIGGERED_WORKFLOW = CUTOVER_RUN.key  # what OnRestore starts
REAPER_FUNCTION = "ReapInstances"  # what the hourly schedule invokes
COMPARISON_TAG = "cutover-prep:comparison"  # on every instance a comparison restores: its comparison id
# The instances a comparison restores are named cprep-<comparison_id>-<name> (comparison/model.py); IAM lets
# only those carry COMPARISON_TAG and be deleted (cdk permissions.py)
COMPARISON_INSTANCE_PREFIX = "cprep"
TTL_TAG = "cutover-prep:ttl-hours"  # hours after its creation the reaper may delete it
# On every instance a run restores: the deployment (its stack's StackId) whose run restored it. The
# comparison's Cleanup and the reaper delete only instances carrying their own deployment's value, and
# IAM allows rds:DeleteDBInstance only on those (cdk permissions.py).
DEPLOYMENT_TAG = "cutover-prep:deployment"
# DEPLOYMENT_ID_ENV (the environment variable the stack sets to its StackId on every function): settings, which reads it
# Tag keys only the service sets; a run input's restore.tags may not set them, in any case (a look-alike
# such as Cutover-Prep:Comparison is refused too).
RESERVED_TAG_PREFIX = "cutover-prep:"


# -- the findings table: key schema, written once ----------------------------------------------------
# Logical key name -> attribute name. ``store.py`` writes items with these keys; the CDK's storage
# construct and the local harness create the table from them.
TABLE_KEYS = {"pk": "pk", "sk": "sk", "gsi": "by_target", "gsi_pk": "gsi1pk", "gsi_sk": "gsi1sk"}
TABLE_TTL_ATTRIBUTE = "expires_at"


def table_definition(table_name: str) -> dict[str, Any]:
    """The ``create_table`` arguments (boto3) of the findings table, as the stack deploys it:
    string keys pk/sk, the ``by_target`` index (gsi1pk/gsi1sk, all attributes), on demand."""
    k = TABLE_KEYS
    return {
        "TableName": table_name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": k[n], "AttributeType": "S"}
                                 for n in ("pk", "sk", "gsi_pk", "gsi_sk")],
        "KeySchema": [{"AttributeName": k["pk"], "KeyType": "HASH"}, {"AttributeName": k["sk"], "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [{
            "IndexName": k["gsi"], "Projection": {"ProjectionType": "ALL"},
            "KeySchema": [{"AttributeName": k["gsi_pk"], "KeyType": "HASH"},
                          {"AttributeName": k["gsi_sk"], "KeyType": "RANGE"}],
        }],
    }


def workflow_functions(workflow: Workflow) -> list[Function]:
    return [FUNCTIONS[f] for f in workflow.functions]


def check() -> None:
    """The catalogue is consistent: every named function exists, each function of a workflow is
    marked as such, and every function outside the workflows is marked as not in one."""
    called = {f for w in WORKFLOWS.values() for f in w.functions}
    if unknown := called - set(FUNCTIONS):
        raise ValueError(f"workflows name unknown functions: {sorted(unknown)}")
    if unknown := {s for w in WORKFLOWS.values() for s in w.starts} - set(WORKFLOWS):
        raise ValueError(f"workflows start unknown workflows: {sorted(unknown)}")
    for function in FUNCTIONS.values():
        if function.in_workflow != (function.construct_id in called):
            raise ValueError(f"{function.construct_id}: in_workflow={function.in_workflow} but "
                             f"{'a' if function.construct_id in called else 'no'} workflow calls it")


check()
