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

What the harness changes in moto lives beside it, one module per part: ``moto_dynamodb`` (the backend's lock,
transactions, projections and answers), ``moto_sfn`` (the interpreter's waits, its Step Functions integration
and its clients), ``moto_fast`` (moto's per-call costs: an UpdateExpression parsed and checked once per text,
item sizes, JSONPaths); the Lambda context and stdout in ``lambda_runtime``.
"""

from __future__ import annotations

import importlib
import io
import json
import sys
import threading
import time
import traceback
import uuid
import zipfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypedDict
from unittest import mock

import boto3
from botocore.client import BaseClient

from cutover_prep import deps
from cutover_prep.engines.registry import POSTGRES
from cutover_prep.live.names import DASHBOARD_OUTPUT, dashboard_url
from cutover_prep.local import moto_dynamodb, moto_fast, moto_sfn
from cutover_prep.local.lambda_runtime import FakeContext, lambda_output_off_stdout
from cutover_prep.settings import DEPLOYMENT_ID_ENV, environment
from cutover_prep.workflows import (
    BUCKET_SUBSTITUTION,
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
DEBUG_ENV = "CUTOVER_PREP_DEBUG"  # set (not empty): a handler's error is also printed with its traceback


class ExecutionDescription(TypedDict, total=False):
    """Step Functions' DescribeExecution answer, as boto3 gives it (``output``, ``error``, ``cause`` only when the
    execution has them)."""

    executionArn: str
    stateMachineArn: str
    name: str
    status: str  # RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED
    startDate: datetime
    stopDate: datetime
    input: str
    output: str
    error: str
    cause: str


class DBInstance(TypedDict, total=False):
    """The instance of RDS's CreateDBInstance answer, as boto3 gives it (what names it; boto3 gives more)."""

    DBInstanceIdentifier: str
    DBInstanceArn: str
    DBInstanceClass: str
    Engine: str
    DBInstanceStatus: str


def render_definition(path: Path, substitutions: dict[str, str]) -> str:
    """Apply ``${Key}`` substitutions exactly as CloudFormation's definition_substitutions does."""
    text = path.read_text()
    for key, value in substitutions.items():
        text = text.replace("${" + key + "}", value)
    if "${" in text:
        start = text.index("${")
        raise ValueError(f"{path.name}: unresolved substitution {text[start:text.index('}', start) + 1]}")
    return text


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
        self._clients: dict[str, BaseClient] = {}
        self._env: dict[str, str] = {}  # what the functions' environment holds, as the harness set it
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
        self._env = env
        self._patches.append(mock.patch.dict("os.environ", env))  # the functions' environment, as Lambda sets it
        self._patches.append(mock_aws(config={"stepfunctions": {"execute_state_machine": True}}))
        self._patches.append(mock.patch("moto.awslambda.models.LambdaFunction._invoke_lambda", self._invoker()))
        self._patches.extend(moto_sfn.scaled_waits(self.time_scale))
        self._patches.append(self._ended_patch())
        self._patches.extend(moto_dynamodb.serialise_dynamodb())
        self._patches.extend(moto_sfn.sfn_integration_as_aws())
        self._patches.extend(moto_sfn.sfn_clients_shared())
        self._patches.extend(lambda_output_off_stdout())
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

    def client(self, service: str) -> BaseClient:
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
        """Let the local run's credentials go to ``host`` (the deployed stack's allowed_db_hosts) until the harness
        ends."""
        hosts = [h for h in self._env["ALLOWED_DB_HOSTS"].split(",") if h]
        self._env["ALLOWED_DB_HOSTS"] = ",".join([*hosts, host])
        allowed = mock.patch.dict("os.environ", {"ALLOWED_DB_HOSTS": self._env["ALLOWED_DB_HOSTS"]})
        allowed.start()
        self._patches.append(allowed)  # undone with the harness's environment, in __exit__
        deps.reset()

    def create_secret(self, name: str, value: dict[str, str | int], *, tags: dict[str, str] | None = None) -> str:
        extra = {"Tags": [{"Key": k, "Value": v} for k, v in tags.items()]} if tags else {}
        return self.client("secretsmanager").create_secret(Name=name, SecretString=json.dumps(value), **extra)["ARN"]

    def create_instance(self, identifier: str, *, engine: str = POSTGRES.rds_engines[0],
                        db_name: str = POSTGRES.default_database,
                        instance_class: str = "db.m5.large", storage_type: str = "gp3",
                        allocated_storage: int = 100, engine_version: str | None = None,
                        iops: int | None = None, storage_throughput: int | None = None) -> DBInstance:
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

    def describe(self, execution_arn: str) -> ExecutionDescription:
        return self.client("stepfunctions").describe_execution(executionArn=execution_arn)

    def wait(self, execution_arn: str, *, timeout_s: float = 600, poll_s: float = 0.2,
             on_poll: Callable[[], None] | None = None) -> ExecutionDescription:
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
                if any(environment(DEBUG_ENV).values()):
                    traceback.print_exc()
                return json.dumps(body), True, ""

        return invoke
