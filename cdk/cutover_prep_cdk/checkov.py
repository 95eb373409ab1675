"""checkov acknowledgments: a check that does not apply to a resource is skipped on that resource, with
its reason, in the template's metadata, as cdk-nag's acknowledgments are (``nag.py``).

checkov reads ``Metadata.checkov.skip = [{"id": "CKV_AWS_117", "comment": "why"}]`` of a CloudFormation
resource (checkov docs, "Suppressing and Skipping Policies", CloudFormation; checkov 3.3's
``cloudformation/context_parser.py``) and reports it as skipped with that comment. Nothing is skipped
for the whole template: a new resource, or a new check on an old one, fails the build until it is fixed
or acknowledged here (``tests/infrastructure/test_checkov.py``).

The reasons that repeat (one per concern) are written once below.
"""

from __future__ import annotations

from aws_cdk import CfnResource
from constructs import IConstruct

# -- reasons, one per concern ----------------------------------------------------------------------
LOG_GROUP_KMS = (
    "CloudWatch Logs always encrypts log data at rest with its own keys. A customer managed key would need a "
    "key policy for the logs service and a monthly key charge, and the logs hold no secret: credentials are "
    "read inside the functions by secret ARN and never logged (DESIGN: secrets stay secret)."
)
LAMBDA_ENVIRONMENT_KMS = (
    "The environment holds names only (table, bucket, state machine ARN, allowed hosts, log settings), no "
    "secret: credentials come from Secrets Manager at run time. Lambda encrypts it at rest with its AWS "
    "managed key; a customer managed key would add a key to administer for nothing secret."
)
LAMBDA_SYNCHRONOUS = (
    "Invoked only synchronously, by the state machines' Lambda tasks: a failure returns to the workflow, "
    "whose Retry and Catch record it (RunFailed, UnitFailed, BenchmarkFailed). A dead-letter queue receives "
    "only asynchronous invocations, so it would stay empty."
)
LAMBDA_NOT_IN_VPC = (
    "Talks only to AWS APIs (DynamoDB, S3, RDS control plane, Step Functions, EventBridge, CloudWatch), "
    "never to the database; in a VPC it would need a NAT gateway or an endpoint per service to reach them."
)
LAMBDA_NO_VPC_CONTEXT = (
    "Deployed without VPC context (vpc_id, subnet_ids), so this function that connects to the database runs "
    "outside any VPC and the database must be reachable from the internet; the synth warns "
    "(cutover-prep:no-vpc). docs/deploy.md: pass -c vpc_id=... -c subnet_ids=... to place it in the VPC."
)
LAMBDA_ONCE_PER_STEP = (
    "Called once per step of a run, never fanned out by a Map: its concurrency is the number of runs at "
    "once. A reservation would take that many executions from the account's pool for every other function, "
    "idle or not."
)
LAMBDA_IN_WARMUP_MAP = (
    "A short call of the WarmUp Map's children, each child calling WarmSlot, WarmUnit and UnitFailed one at "
    "a time: a run holds at most warmup.max_concurrency of them together, and ValidateInput refuses a "
    "max_concurrency above WarmUnit's reserved concurrency (context warm_concurrency)."
)
LAMBDA_EVENTBRIDGE = (
    "Invoked asynchronously by EventBridge (RDS restore events and the sweep, or the hourly reaper schedule): "
    "a few invocations at once. A reservation would take executions from the account's pool for every other "
    "function; a throttled asynchronous event is retried by Lambda, then kept in the dead-letter queue."
)
LAMBDA_RESERVATION_OFF = (
    "Deployed with warm_concurrency 0 (docs/deploy.md): no reserved concurrency, for an account whose "
    "concurrency quota cannot spare one above the 100 unreserved executions Lambda keeps; the Map's "
    "warmup.max_concurrency alone bounds a run."
)


def skip(scope: IConstruct, check_id: str, reason: str) -> None:
    """Acknowledge checkov check ``check_id`` (e.g. ``CKV_AWS_117``) on the CloudFormation resource of
    ``scope`` (a CfnResource, or an L2 construct whose default child is one), saying why."""
    resource = scope if isinstance(scope, CfnResource) else scope.node.default_child
    if not isinstance(resource, CfnResource):
        raise TypeError(f"{scope.node.path}: no CloudFormation resource to acknowledge {check_id} on")
    if len(reason.strip()) < 40:
        raise ValueError(f"acknowledgment of {check_id} on {scope.node.path} needs a real reason")
    entries = list((resource.get_metadata("checkov") or {}).get("skip", []))
    if any(entry["id"] == check_id for entry in entries):
        raise ValueError(f"{check_id} is already acknowledged on {scope.node.path}")
    entries.append({"id": check_id, "comment": reason})
    resource.add_metadata("checkov", {"skip": entries})
