"""Run the real workflow without AWS: moto plays AWS, the real handlers run in-process.

The very ASL files the CDK deploys are loaded from ``statemachines/`` and executed by
moto's Step Functions interpreter. Each Lambda task calls the real handler module in
this process (moto would otherwise need Docker) with a fake Lambda context whose
remaining time counts down from the configured timeout, so time-budget logic behaves
as in Lambda. Waits and retry back-offs are scaled by ``time_scale`` (0 = no sleeping).

One thing differs from AWS and shapes how the local run writes: moto's S3 replaces an object by
closing the old one's buffer (``FakeKey.dispose``), so a GET of it in flight in another thread
fails with ``ValueError: I/O operation on closed file`` where AWS returns the old or the new
object. Nothing may write an object while a thread of the run can read it: write it before the
run starts, or in a hook (``LocalAws.hooks``) run in sequence with the handler that reads it.
"""

from __future__ import annotations

import copy
import importlib
import io
import json
import os
import re
import sys
import threading
import time
import traceback
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import boto3

from cutover_prep import deps
from cutover_prep.engines.registry import POSTGRES
from cutover_prep.live.names import DASHBOARD_OUTPUT, dashboard_url
from cutover_prep.local import moto_fast
from cutover_prep.workflows import (
    BUCKET_SUBSTITUTION,
    DEPLOYMENT_ID_ENV,
    STATEMACHINES_DIR,
    TRIGGERED_WORKFLOW,
    WORKFLOWS,
    table_definition,
    workflow_functions,
)

REPO_STATEMACHINES = STATEMACHINES_DIR
# The workflow the harness runs, from the catalogue: its ASL file and the functions it calls.
WORKFLOW = WORKFLOWS[TRIGGERED_WORKFLOW]
# ASL substitution key -> handler module (the same keys the CDK passes as definition_substitutions).
FUNCTIONS: dict[str, str] = {f.substitution: f.module for f in workflow_functions(WORKFLOW)}

Fault = Callable[[dict[str, Any]], None]
LOCAL_DB_HOSTS = ("127.0.0.1", "localhost", "::1")
# ``LocalAws.wait`` describes a running execution at least this often, whatever moto says (seconds)
LOOK_S = 2.0


class _ScaledTime:
    """The workflow's own clock: its ``sleep`` lasts ``scale`` times as long (0: none); the ``time`` module as moto's
    retrier sees it, and the Wait states' sleep."""

    def __init__(self, scale: float) -> None:
        self._scale = scale

    def sleep(self, seconds: float) -> None:
        if self._scale:
            time.sleep(seconds * self._scale)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


def render_definition(path: Path, substitutions: dict[str, str]) -> str:
    """Apply ``${Key}`` substitutions exactly as CloudFormation's definition_substitutions does."""
    text = path.read_text()
    for key, value in substitutions.items():
        text = text.replace("${" + key + "}", value)
    if "${" in text:
        start = text.index("${")
        raise ValueError(f"{path.name}: unresolved substitution {text[start:text.index('}', start) + 1]}")
    return text


DYNAMODB_CALLS = ("get_item", "put_item", "update_item", "delete_item", "query", "scan",
                  "transact_write_items", "transact_get_items", "batch_write_item", "batch_get_item")


def _serialise_dynamodb() -> list[Any]:
    """moto's DynamoDB backend is not thread-safe (transactions deep-copy tables while
    other threads write); Lambda containers never share it, the local Map's threads do.
    Its transactions back up only the items they name (``_backing_up_items``)."""
    from moto.dynamodb import models
    from moto.dynamodb.models import DynamoDBBackend

    lock = threading.RLock()

    def guarded(method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return method(*args, **kwargs)

        return call

    def method(name: str) -> Callable[..., Any]:
        original = getattr(DynamoDBBackend, name)
        return _backing_up_items(original) if name == "transact_write_items" else original

    return [mock.patch.object(models, "copy", _TablesNotCopied), _projecting_named_attributes(),
            _attribute_values_as_they_are(),
            *(mock.patch.object(DynamoDBBackend, name, guarded(method(name))) for name in DYNAMODB_CALLS)]


def _projecting_named_attributes() -> Any:
    """moto's ``Item.project`` (a GetItem, Query or Scan with a ProjectionExpression) converts the whole item to
    plain JSON (a deep copy, then boto3's deserializer) once for every path of the expression, then picks the path
    out of it. The local run's progress polls six fields of the run item once a second (``Store.get_run_fields``),
    and the run item carries the plan's summary and the estimate: seven conversions of all of it, in the run's own
    interpreter, beside the Map's threads (on ``make demo`` beside ``stress-ng --cpu 2``, 15 % of the runner's
    samples, issue 24 §5). A path only ever reads the attribute its first name is (moto's ``find_nested_key``:
    ``a.b`` and ``a[1]`` start at ``a``), so only those attributes are converted; what is projected is
    moto's own ``find_nested_key`` and ``merge_dicts`` on them, unchanged."""
    from botocore.utils import merge_dicts
    from moto.dynamodb.models import dynamo_type
    from moto.dynamodb.models.utilities import find_nested_key

    def project(item: Any, projection_expressions: list[list[str]]) -> Any:
        result: dict[str, Any] = {}
        for expr in projection_expressions:  # each path on a fresh conversion, as moto's own
            indexed = _LIST_ITEM.match(expr[0])
            names = (expr[0], indexed.group(1)) if indexed else (expr[0],)
            plain = {name: dynamo_type.deserializer.deserialize(item.attrs[name].to_regular_json())
                     for name in names if name in item.attrs}
            merge_dicts(result, find_nested_key(expr, plain))
        return dynamo_type.Item(hash_key=item.hash_key, range_key=item.range_key,
                                attrs=dynamo_type.serializer.serialize(result)["M"])

    return mock.patch.object(dynamo_type.Item, "project", project)


def _attribute_values_as_they_are() -> Any:
    """moto serializes a DynamoDB answer by walking the API model: every AttributeValue of every item is a structure
    of ten members (S, N, B, ..., M, L), each looked up through its attribute picker, nested values again, in the
    run's own interpreter. A Query of a run's 71 unit items (the local progress's ETA reads them once a second while
    the counters move) took 0.64-0.83 s of CPU, almost all of it there (issue 24 §5). An AttributeValue moto hands
    over is already what DynamoDB's JSON protocol sends: a one-key dict of a string, a number's string, a boolean,
    a string set, a map or a list of AttributeValues. Those are passed on as they are (copied); anything else (a
    binary, which the protocol base64-encodes, or a value of another type) goes the model's way, unchanged."""
    from moto.core.serialize import BaseJSONSerializer

    original = BaseJSONSerializer._serialize_type_structure

    def structure(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        if key and shape.name == "AttributeValue" and self.operation_model.service_model.service_name == "dynamodb":
            plain = _plain_attribute_value(value)
            if plain is not None:
                self._default_serialize(serialized, plain, shape, key)
                return
        original(self, serialized, value, shape, key)

    return mock.patch.object(BaseJSONSerializer, "_serialize_type_structure", structure)


def _plain_attribute_value(value: Any) -> dict[str, Any] | None:
    """The AttributeValue as DynamoDB's JSON protocol sends it; None when it is not one this can pass on as it is."""
    if not isinstance(value, dict) or len(value) != 1:
        return None
    (kind, inner), = value.items()
    if kind in ("S", "N"):
        return {kind: inner} if isinstance(inner, str) else None
    if kind in ("BOOL", "NULL"):
        return {kind: inner} if isinstance(inner, bool) else None
    if kind in ("SS", "NS"):
        return {kind: list(inner)} if isinstance(inner, list) and all(isinstance(v, str) for v in inner) else None
    if kind == "M" and isinstance(inner, dict):
        members = {name: _plain_attribute_value(v) for name, v in inner.items()}
        return None if any(v is None for v in members.values()) else {"M": members}
    if kind == "L" and isinstance(inner, list):
        elements = [_plain_attribute_value(v) for v in inner]
        return None if any(v is None for v in elements) else {"L": elements}
    return None


_LIST_ITEM = re.compile(r"(.+)\[(\d+)\]$")  # moto's own pattern of a path's list element (``find_nested_key``)


class _TablesNotCopied:
    """``copy`` as moto's DynamoDB backend sees it in the harness: a table "copied" is the table itself.
    moto backs up every table a transaction writes to with a deep copy of the whole table, for its
    rollback; a run commits each chunk in a transaction, so every commit copied every item of every
    unit and run so far: a run slowed down with each item it wrote (a 24 MB sample: 44 WarmUnit
    invocations, 700 s of them in the copy and the lock around it). ``_backing_up_items`` backs up
    the items the transaction names instead and puts them back when it is cancelled."""

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        from moto.dynamodb.models import Table

        return value if isinstance(value, Table) else copy.deepcopy(value, memo)


def _backing_up_items(transact: Callable[..., Any]) -> Callable[..., Any]:
    def transact_write_items(backend: Any, transact_items: list[dict[str, Any]]) -> Any:
        saved = []
        for entry in transact_items:
            try:
                op = next(iter(entry.values()))
                table = backend.get_table(op["TableName"])
                key = op.get("Key") or {name: op["Item"][name] for name in (table.hash_key_attr,
                                                                         table.range_key_attr) if name}
                hash_key, range_key = backend.get_keys_value(table, key)
            except Exception:  # noqa: BLE001 - malformed: moto refuses it with its own error, before writing it
                continue
            saved.append((table, hash_key, range_key, copy.deepcopy(table.get_item(hash_key, range_key))))
        try:
            return transact(backend, transact_items)
        except Exception:
            for table, hash_key, range_key, item in reversed(saved):  # as it was, in the reverse order
                items = table.items[hash_key] if range_key is not None else table.items
                slot = range_key if range_key is not None else hash_key
                if item is None:
                    items.pop(slot, None)
                else:
                    items[slot] = item
            raise

    return transact_write_items


def _lambda_output_off_stdout() -> list[Any]:
    """What a Lambda writes to stdout is its log stream; in-process, stdout is the CLI's result.

    Powertools' Logger writes to the stdout it saw when built: here it goes to stderr. Its Metrics
    prints the metric set when one metric reaches 100 values even with ``POWERTOOLS_METRICS_DISABLED``
    (``AmazonCloudWatchEMFProvider.add_metric``; ``flush_metrics`` skips a disabled set without
    clearing it): a local run has no CloudWatch, so it records no metrics at all."""
    from cutover_prep.observability import logger, metrics

    return [mock.patch.object(logger.registered_handler, "stream", sys.stderr),
            mock.patch.object(metrics, "add_metric", lambda *args, **kwargs: None)]


def _sfn_integration_as_aws() -> list[Any]:
    """moto's Step Functions integration (``states:startExecution.sync:2``, the comparison's child runs)
    leaves parameter and response names as boto3 spells them (LocalStack's interpreter, which moto's
    is, normalises them elsewhere): ``StateMachineArn`` fails and ``ExecutionArn`` is missing. Do what
    AWS does: the ASL's parameters are the API's (PascalCase), the answer's fields are PascalCase with
    epoch-millisecond dates (``Status``, ``ExecutionArn``, ``Output``)."""
    from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import state_task_service_sfn

    service = state_task_service_sfn.StateTaskServiceSfn
    original = service._normalise_parameters

    def parameters(self: Any, parameters: dict[str, Any], boto_service_name: str | None = None,
                   service_action_name: str | None = None) -> None:
        original(self, parameters, boto_service_name=boto_service_name, service_action_name=service_action_name)
        for key in list(parameters):
            parameters[key[:1].lower() + key[1:]] = parameters.pop(key)

    def response(self: Any, response: Any, boto_service_name: str | None = None,
                 service_action_name: str | None = None) -> None:
        if isinstance(response, dict):
            for key in list(response):
                value = response.pop(key)
                response[key[:1].upper() + key[1:]] = (int(value.timestamp() * 1000) if hasattr(value, "timestamp")
                                                       else value)

    return [mock.patch.object(service, "_normalise_parameters", parameters),
            mock.patch.object(service, "_normalise_response", response)]


_SFN_CLIENT_USERS = (  # the interpreter's modules that make a client for a state this project's ASL has
    "state_task.lambda_eval_utils", "state_task.service.state_task_service_dynamodb",
    "state_task.service.state_task_service_events", "state_task.service.state_task_service_sfn",
    "state_task.service.state_task_service_aws_sdk", "state_map.item_reader.eval.resource_eval_s3")


def _sfn_clients_shared() -> list[Any]:
    """moto's interpreter makes a new boto3 client for every Task state it runs (``boto_client_for``: a Lambda
    client per invocation, a DynamoDB or EventBridge client per optimised integration), tens of ms of CPU each
    under the GIL: 9 % of a workflow test's samples (py-spy, tests/integration/test_workflow.py). One client per
    service and region serves them all while the harness runs (boto3 clients are thread-safe; moto's function
    does not use its ``state_credentials``). Patched where each interpreter module bound the name."""
    import importlib

    from moto.stepfunctions.parser.asl.utils import boto_client

    original = boto_client.boto_client_for
    clients: dict[tuple[str, str, bool], Any] = {}
    mutex = threading.Lock()

    def shared(region: str, service: str, state_credentials: Any = None) -> Any:
        key = (region, service, bool(boto_client.botocore_stubber.enabled))
        with mutex:
            if key not in clients:
                clients[key] = original(region=region, service=service, state_credentials=state_credentials)
            return clients[key]

    prefix = "moto.stepfunctions.parser.asl.component.state.exec."
    return [mock.patch.object(importlib.import_module(prefix + name), "boto_client_for", shared)
            for name in _SFN_CLIENT_USERS]


class FakeContext:
    """The parts of the Lambda context the handlers and Powertools use."""

    def __init__(self, function_name: str, timeout_s: float, region: str = "us-east-1") -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = 512
        # moto's default account; the region the harness's state machines are in
        self.invoked_function_arn = f"arn:aws:lambda:{region}:123456789012:function:{function_name}"
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = "local"
        self._deadline = time.monotonic() + timeout_s

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


class LocalAws:
    """Context manager: moto + in-process handlers + the deployed resources, locally."""

    def __init__(self, *, region: str = "us-east-1", time_scale: float = 0.0, lambda_timeout_s: float = 900,
                 env: dict[str, str] | None = None, statemachines: Path = REPO_STATEMACHINES,
                 server: bool = False) -> None:
        """``server=True`` also serves the same moto backends over HTTP (``endpoint_url``), so a
        separate process (the CLI under test) talks to AWS as it would in a pipeline."""
        self.region, self.time_scale, self.lambda_timeout_s = region, time_scale, lambda_timeout_s
        self.server, self.endpoint_url = server, ""
        self._server: Any = None
        self.extra_env = env or {}
        self.statemachines = statemachines
        self.table, self.bucket = "cutover-prep-local", "cutover-prep-evidence-local"
        self.faults: dict[str, list[Fault]] = {}  # handler module -> faults applied in order, once each
        # handler module -> called before every invocation of it, in the invoking thread: what it writes,
        # the handler reads whole (see the module's docstring)
        self.hooks: dict[str, Callable[[], None]] = {}
        self.invocations: dict[str, int] = {}
        # each step the run has started, once, in order: (handler module, the probe's phase or None, monotonic time)
        # (local.progress says a line as each begins)
        self.steps: list[tuple[str, str | None, float]] = []
        self._lock = threading.Lock()
        self._patches: list[Any] = []
        self._clients: dict[str, Any] = {}
        # moto's interpreter says here when an execution ends (``_ended_patch``); ``wait`` sleeps on it
        self._ended = threading.Condition()
        self._ended_count = 0

    # -- lifecycle ---------------------------------------------------------------------
    def __enter__(self) -> LocalAws:
        from moto import mock_aws

        env = {
            "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
            "AWS_DEFAULT_REGION": self.region, "AWS_REGION": self.region,
            "TABLE_NAME": self.table, "BUCKET_NAME": self.bucket,
            "POWERTOOLS_TRACE_DISABLED": "1", "POWERTOOLS_SERVICE_NAME": "cutover-prep",
            "POWERTOOLS_METRICS_NAMESPACE": "CutoverPrep", "POWERTOOLS_LOG_LEVEL": "WARNING",
            "POWERTOOLS_METRICS_DISABLED": "true",
            # A local run connects where its user points it: this machine, or the host of a DSN they
            # typed (``allow_db_host``), with TLS when the server offers it (the findings say which).
            "ALLOWED_DB_HOSTS": ",".join(LOCAL_DB_HOSTS), "CUTOVER_PREP_TLS": "prefer",
            # what the stack sets to its StackId: the run tags what it restores with it, the comparison's
            # Cleanup and the reaper delete only what carries it
            DEPLOYMENT_ID_ENV: f"arn:aws:cloudformation:{self.region}:123456789012:stack/cutover-prep-local/local",
            **self.extra_env,
        }
        self._patches.append(mock.patch.dict(os.environ, env))
        self._patches.append(mock_aws(config={"stepfunctions": {"execute_state_machine": True}}))
        self._patches.append(mock.patch("moto.awslambda.models.LambdaFunction._invoke_lambda", self._invoker()))
        scaled = _ScaledTime(self.time_scale)
        self._patches.append(mock.patch(
            "moto.stepfunctions.parser.asl.component.state.wait.wait_function.wait_function.WaitFunction._wait_interval",
            lambda _self, env, wait_seconds: scaled.sleep(wait_seconds)))
        # the Retry intervals: moto's retrier calls ``time.sleep`` through its own name ``time``, which is given
        # a scaled sleep; patching ``...retrier_decl.time.sleep`` would patch the ``time`` module itself, and
        # every sleep of the process (a retry's back-off, a poll) would return at once and its loop spin
        self._patches.append(mock.patch(
            "moto.stepfunctions.parser.asl.component.common.retry.retrier_decl.time", scaled))
        self._patches.append(self._ended_patch())
        self._patches.extend(_serialise_dynamodb())
        self._patches.extend(_sfn_integration_as_aws())
        self._patches.extend(_sfn_clients_shared())
        self._patches.extend(_lambda_output_off_stdout())
        self._patches.extend(moto_fast.patches())
        for p in self._patches:
            p.start()
        # moto's interpreter and the polling client are CPU-bound Python threads; with the default
        # 5 ms GIL switch interval every database round trip of an in-process handler waits up to
        # 5 ms for the GIL, which slows the run and falsifies the benchmark's latencies.
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(0.0002)
        deps.reset()
        self._create_resources()
        if self.server:
            from moto.server import ThreadedMotoServer

            self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
            self._server.start()
            host, port = self._server.get_host_and_port()
            self.endpoint_url = f"http://{host}:{port}"
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
        deps.reset()
        self._clients.clear()
        sys.setswitchinterval(self._switch_interval)
        for p in reversed(self._patches):
            p.stop()
        self._patches.clear()

    def client(self, service: str) -> Any:
        """One client per service: creating a boto3 client costs tens of ms of CPU (and the GIL),
        which would disturb the benchmark points measured in-process."""
        if service not in self._clients:
            self._clients[service] = boto3.client(service, region_name=self.region)
        return self._clients[service]

    # -- resources ---------------------------------------------------------------------
    def _create_resources(self) -> None:
        iam = self.client("iam")
        role = iam.create_role(RoleName="cutover-prep-local", AssumeRolePolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                    "Principal": {"Service": ["lambda.amazonaws.com",
                                                                              "states.amazonaws.com"]}}]}))
        role_arn = role["Role"]["Arn"]
        self.client("dynamodb").create_table(**table_definition(self.table))
        self.client("s3").create_bucket(Bucket=self.bucket)
        zipped = io.BytesIO()
        with zipfile.ZipFile(zipped, "w") as zf:
            zf.writestr("README.txt", "handlers run in-process in the local harness")
        lam = self.client("lambda")
        subs = {BUCKET_SUBSTITUTION: self.bucket}
        self._module_of: dict[str, str] = {}
        # Every workflow of the catalogue; one that another starts (startExecution.sync:2) first.
        self.state_machine_arns: dict[str, str] = {}
        for workflow in sorted(WORKFLOWS.values(), key=lambda w: len(w.starts)):
            for function in workflow_functions(workflow):
                key, module = function.substitution, function.module
                if key in subs:
                    continue
                name = "cutover-prep-" + module.split(".")[-1].replace("_", "-")
                subs[key] = lam.create_function(FunctionName=name, Runtime="python3.12", Role=role_arn,
                                                Handler=f"{module}.handler", Code={"ZipFile": zipped.getvalue()},
                                                Timeout=int(self.lambda_timeout_s))["FunctionArn"]
                self._module_of[name] = module
            definition = render_definition(self.statemachines / workflow.asl_file, subs)
            subs[workflow.substitution] = self.state_machine_arns[workflow.key] = self.client(
                "stepfunctions").create_state_machine(name=workflow.state_machine_name, definition=definition,
                                                      roleArn=role_arn, type="STANDARD")["stateMachineArn"]
        self.state_machine_arn = self.state_machine_arns[WORKFLOW.key]

    def create_stack(self, name: str = "CutoverPrep") -> str:
        """A CloudFormation stack with the outputs the deployed stack has (the CLI reads them)."""
        template = {"Resources": {"Marker": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{name}-marker"}}},
                    "Outputs": {**{key: {"Value": self.state_machine_arn}
                                   for key in (WORKFLOW.output_name, *WORKFLOW.legacy_output_names)},
                                **{w.output_name: {"Value": self.state_machine_arns[w.key]}
                                   for w in WORKFLOWS.values() if w.key != WORKFLOW.key},
                                "EvidenceBucketName": {"Value": self.bucket}, "TableName": {"Value": self.table},
                                # the deployed stack names its dashboard so (cdk/cutover_prep_cdk/dashboard.py)
                                DASHBOARD_OUTPUT: {"Value": dashboard_url(self.region,
                                                                          f"{name}-live-{self.region}")}}}
        return self.client("cloudformation").create_stack(StackName=name, TemplateBody=json.dumps(template))["StackId"]

    def client_env(self) -> dict[str, str]:
        """Environment of a process that talks to this harness's server as if to AWS."""
        if not self.endpoint_url:
            raise RuntimeError("LocalAws(server=True) serves AWS to other processes; this one does not")
        return {"AWS_ENDPOINT_URL": self.endpoint_url, "AWS_ACCESS_KEY_ID": "testing",
                "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing", "AWS_REGION": self.region,
                "AWS_DEFAULT_REGION": self.region}

    def allow_db_host(self, host: str) -> None:
        """Let the local run's credentials go to ``host`` (the deployed stack's allowed_db_hosts)."""
        hosts = [h for h in os.environ.get("ALLOWED_DB_HOSTS", "").split(",") if h]
        os.environ["ALLOWED_DB_HOSTS"] = ",".join([*hosts, host])
        deps.reset()

    def create_secret(self, name: str, value: dict[str, Any], *, tags: dict[str, str] | None = None) -> str:
        extra = {"Tags": [{"Key": k, "Value": v} for k, v in tags.items()]} if tags else {}
        return self.client("secretsmanager").create_secret(Name=name, SecretString=json.dumps(value), **extra)["ARN"]

    def create_instance(self, identifier: str, *, engine: str = POSTGRES.rds_engines[0],
                        db_name: str = POSTGRES.default_database,
                        instance_class: str = "db.m5.large", storage_type: str = "gp3",
                        allocated_storage: int = 100, engine_version: str | None = None,
                        iops: int | None = None, storage_throughput: int | None = None) -> dict[str, Any]:
        optional = {"EngineVersion": engine_version, "Iops": iops, "StorageThroughput": storage_throughput}
        return self.client("rds").create_db_instance(
            DBInstanceIdentifier=identifier, Engine=engine, DBInstanceClass=instance_class, DBName=db_name,
            AllocatedStorage=allocated_storage, StorageType=storage_type, MasterUsername="admin",
            MasterUserPassword="not-used-locally", **{k: v for k, v in optional.items() if v is not None},
        )["DBInstance"]

    # -- running -----------------------------------------------------------------------
    def start(self, run_input: Any, *, name: str | None = None) -> str:
        kwargs = {"stateMachineArn": self.state_machine_arn, "input": json.dumps(run_input),
                  "name": name or str(uuid.uuid4())}  # as AWS does; moto would name it "None"
        return self.client("stepfunctions").start_execution(**kwargs)["executionArn"]

    def describe(self, execution_arn: str) -> dict[str, Any]:
        return self.client("stepfunctions").describe_execution(executionArn=execution_arn)

    def wait(self, execution_arn: str, *, timeout_s: float = 600, poll_s: float = 0.2,
             on_poll: Callable[[], None] | None = None) -> dict[str, Any]:
        """The execution's description once it has ended. It is described again when moto's interpreter says an
        execution ended (any: a Map's child or another run), and at least every ``LOOK_S``; ``on_poll`` is called
        every ``poll_s`` meanwhile. Describing a running execution every ``poll_s`` took a fifth of a workflow
        test's CPU (py-spy), time the run's own threads waited for the GIL."""
        deadline = time.monotonic() + timeout_s
        while True:
            with self._ended:
                seen = self._ended_count
            desc = self.describe(execution_arn)
            if desc["status"] != "RUNNING":
                return desc
            look = min(time.monotonic() + LOOK_S, deadline)
            while (now := time.monotonic()) < look:
                with self._ended:
                    if self._ended.wait_for(lambda seen=seen: self._ended_count != seen,
                                            timeout=min(poll_s if on_poll else LOOK_S, look - now)):
                        break
                if on_poll:
                    on_poll()
            if time.monotonic() >= deadline:
                desc = self.describe(execution_arn)
                if desc["status"] != "RUNNING":
                    return desc
                raise TimeoutError(f"execution still running after {timeout_s:.0f} s")

    def _ended_patch(self) -> Any:
        """Wraps moto's end of an execution (``terminated``, called once its program has ended, whatever the
        outcome) to wake ``wait``."""
        from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication

        harness, original = self, BaseExecutionWorkerCommunication.terminated

        def terminated(communication: Any) -> None:
            try:
                original(communication)
            finally:
                with harness._ended:
                    harness._ended_count += 1
                    harness._ended.notify_all()
        return mock.patch.object(BaseExecutionWorkerCommunication, "terminated", terminated)

    def stop(self, execution_arn: str) -> None:
        self.client("stepfunctions").stop_execution(executionArn=execution_arn, error="Stopped",
                                                    cause="stopped by the local harness")

    def history(self, execution_arn: str) -> list[dict[str, Any]]:
        return self.client("stepfunctions").get_execution_history(executionArn=execution_arn,
                                                                  maxResults=1000)["events"]

    def _invoker(self) -> Callable[[Any, Any], tuple[str, bool, str]]:
        harness = self

        def invoke(function: Any, event: Any = None) -> tuple[str, bool, str]:
            module = harness._module_of[function.function_name]
            payload = json.loads(event) if isinstance(event, str) else (event or {})
            with harness._lock:
                harness.invocations[module] = harness.invocations.get(module, 0) + 1
                phase = payload.get("phase") if isinstance(payload, dict) else None
                step = (module, phase if isinstance(phase, str) else None)
                if not any(s[:2] == step for s in harness.steps):
                    harness.steps.append((*step, time.monotonic()))
                faults = harness.faults.get(module) or []
                fault = faults.pop(0) if faults else None
            try:
                if module in harness.hooks:
                    harness.hooks[module]()
                if fault is not None:
                    fault(payload)
                handler = importlib.import_module(module).handler
                result = handler(payload, FakeContext(function.function_name, harness.lambda_timeout_s,
                                                      harness.region))
                return json.dumps(result), False, ""
            except Exception as exc:  # becomes the task's error, as in Lambda
                body = {"errorType": type(exc).__name__, "errorMessage": str(exc),
                        "stackTrace": traceback.format_tb(exc.__traceback__)}
                if os.environ.get("CUTOVER_PREP_DEBUG"):
                    traceback.print_exc()
                return json.dumps(body), True, ""

        return invoke
