"""A deploy rehearsal: the synthesized template, created as a whole in moto's CloudFormation, runs a
real run to READY.

Nothing here can reach AWS, so this is the only place the template is exercised as one piece: the
app is synthesized as ``cdk synth -c skip_layer_build=true -c allowed_db_hosts=127.0.0.1`` would,
its file assets are published to the bootstrap bucket as ``cdk deploy`` does, and the stack is
created from the template by moto's CloudFormation. The run then starts on the deployed state
machine (found by the stack output the CLI reads), whose definition CloudFormation built from the
ASL asset and the definition substitutions; each Lambda task runs the deployed function's handler
in this process, with that function's own environment variables, timeout and memory.

What moto's CloudFormation lacks is worked around in one place, ``MOTO_WORKAROUNDS`` (what and why)
and ``moto_cloudformation()`` (how). Deviations from Lambda's runtime, both for this test only:
- ``CUTOVER_PREP_TLS=disable``: the PostgreSQL server here offers no TLS; deployed functions have
  no such variable and require verified TLS.
- ``POWERTOOLS_TRACE_DISABLED=1``: there is no X-Ray daemon here (the functions trace actively).
"""

from __future__ import annotations

import importlib
import io
import json
import os
import sys
import threading
import traceback
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from cutover_prep import deps
from cutover_prep.local.harness import LocalAws
from cutover_prep.local.lambda_runtime import FakeContext
from cutover_prep.workflows import FUNCTIONS, TRIGGERED_WORKFLOW, WORKFLOWS
from tests.integration.test_postgres_engine import expected_forks
from tests.integration.test_workflow import QUICK_BENCHMARK

pytestmark = pytest.mark.postgres

REPO_ROOT = Path(__file__).resolve().parents[2]
ACCOUNT, REGION = "123456789012", "us-east-1"  # moto's account; the stack is environment-agnostic
BOOTSTRAP_QUALIFIER = "hnb659fds"  # the CDK's default bootstrap qualifier
WORKFLOW = WORKFLOWS[TRIGGERED_WORKFLOW]

# What moto 5.2's CloudFormation cannot create as deployed, and how the rehearsal gets around it.
MOTO_WORKAROUNDS = {
    "AWS::S3::BucketPolicy": "moto has no CloudFormation model for it (it would only warn and skip it): dropped "
                             "from the template. The policies deny plain-HTTP access, which moto does not model; "
                             "tests/infrastructure checks them.",
    "AWS::StepFunctions::StateMachine": "moto's model reads only DefinitionString (not DefinitionS3Location or "
                                        "DefinitionSubstitutions) and creates the machine in the backend that "
                                        "does not execute (mock_aws execute_state_machine uses another one): "
                                        "its create is replaced by one that reads the definition asset from the "
                                        "bootstrap bucket, substitutes as CloudFormation does and creates the "
                                        "machine (name, role, type, logging, tracing) in the executing backend.",
}
# The Lambda runtime's own variables; everything else a handler sees is its deployed environment.
LOCAL_RUNTIME_ENV = {"POWERTOOLS_TRACE_DISABLED": "1", "POWERTOOLS_METRICS_DISABLED": "true",
                     "POWERTOOLS_LOG_LEVEL": "WARNING", "CUTOVER_PREP_TLS": "disable"}


# -- synth and publish ---------------------------------------------------------------------------------
def synthesize(outdir: Path, allowed_db_host: str) -> Path:
    """``cdk synth`` with the placeholder layer, as tests/infrastructure does."""
    sys.path.insert(0, str(REPO_ROOT / "cdk"))
    from cutover_prep_cdk import build_app

    app, stack = build_app({"skip_layer_build": True, "allowed_db_hosts": allowed_db_host}, outdir=str(outdir))
    app.synth()
    return outdir / f"{stack.stack_name}.template.json"


def _zip(directory: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(directory))
    return buffer.getvalue()


def publish_assets(s3: Any, ssm: Any, outdir: Path, stack_name: str) -> None:
    """What ``cdk bootstrap`` and ``cdk deploy`` do before CloudFormation: the bootstrap version
    parameter, the assets bucket, and every file asset of the manifest (directories zipped)."""
    ssm.put_parameter(Name=f"/cdk-bootstrap/{BOOTSTRAP_QUALIFIER}/version", Value="30", Type="String")
    manifest = json.loads((outdir / f"{stack_name}.assets.json").read_text())
    buckets: set[str] = set()
    for asset in manifest["files"].values():
        source = outdir / asset["source"]["path"]
        body = _zip(source) if asset["source"]["packaging"] == "zip" else source.read_bytes()
        for destination in asset["destinations"].values():
            bucket = destination["bucketName"].replace("${AWS::AccountId}", ACCOUNT).replace("${AWS::Region}", REGION)
            if bucket not in buckets:
                s3.create_bucket(Bucket=bucket)
                buckets.add(bucket)
            s3.put_object(Bucket=bucket, Key=destination["objectKey"], Body=body)


# -- the one place moto is worked around -------------------------------------------------------------
def for_moto(template: dict[str, Any]) -> dict[str, Any]:
    """The template minus the resource types moto cannot create (``MOTO_WORKAROUNDS``)."""
    dropped = {t for t, why in MOTO_WORKAROUNDS.items() if why.startswith("moto has no CloudFormation model")}
    resources = {k: r for k, r in template["Resources"].items() if r["Type"] not in dropped}
    return {**template, "Resources": resources}


def _camel(value: Any) -> Any:
    """CloudFormation's property names (LogGroupArn) as the Step Functions API's (logGroupArn)."""
    if isinstance(value, dict):
        return {k[:1].lower() + k[1:]: _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


@contextmanager
def moto_cloudformation() -> Iterator[None]:
    """StateMachine resources created as CloudFormation does (``MOTO_WORKAROUNDS``)."""
    from moto.s3.models import s3_backends
    from moto.stepfunctions.models import StateMachine
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends

    def create(cls: Any, resource_name: str, cloudformation_json: Any, account_id: str, region_name: str,
               **kwargs: Any) -> Any:
        props = cloudformation_json["Properties"]
        location = props["DefinitionS3Location"]
        definition = s3_backends[account_id]["aws"].get_object(location["Bucket"], location["Key"]).value.decode()
        for key, value in (props.get("DefinitionSubstitutions") or {}).items():
            definition = definition.replace("${" + key + "}", str(value))
        if "${" in definition:
            left = definition[definition.index("${"):][:60]
            raise ValueError(f"{resource_name}: definition left unsubstituted: {left}")
        return stepfunctions_parser_backends[account_id][region_name].create_state_machine(
            name=props.get("StateMachineName", resource_name), definition=definition, roleArn=props["RoleArn"],
            sm_type=props.get("StateMachineType", "STANDARD"),
            loggingConfiguration=_camel(props.get("LoggingConfiguration")),
            tracingConfiguration=_camel(props.get("TracingConfiguration")),
        )

    with mock.patch.object(StateMachine, "create_from_cloudformation_json", classmethod(create)):
        yield


# -- the deployed stack, driven like the local harness --------------------------------------------------
class DeployedStack(LocalAws):
    """``LocalAws`` whose resources are the stack created from the synthesized template: the state
    machine, table and bucket are the stack's outputs, and each Lambda invocation runs the deployed
    function's handler with the deployed function's environment."""

    def __init__(self, outdir: Path, template_file: Path, stack_name: str) -> None:
        super().__init__(region=REGION)
        self.outdir, self.template_file, self.stack_name = outdir, template_file, stack_name
        self.outputs: dict[str, str] = {}
        self.handlers_seen: dict[str, dict[str, Any]] = {}  # handler -> what it ran with
        self._one_at_a_time = threading.RLock()  # one process environment: one function at a time

    def __enter__(self) -> DeployedStack:
        # Each invocation replaces the process environment (clear=True) under the lock, but moto's Map
        # threads keep creating clients and sending requests meanwhile, and botocore reads the proxy
        # variables (urllib's getproxies and proxy_bypass) by iterating os.environ: a key deleted between
        # the iteration's snapshot of the keys and its lookup was a KeyError, a failed work unit in CI
        # ("Exception: 'SHELL'"). Nothing here goes through a proxy: the proxy variables are read once,
        # before the first invocation, and every later reader gets that snapshot.
        import urllib.request

        import botocore.utils

        proxies = urllib.request.getproxies_environment()
        self._patches.append(mock.patch.object(urllib.request, "getproxies_environment", lambda: dict(proxies)))
        self._patches.append(mock.patch.object(botocore.utils, "getproxies", lambda: dict(proxies)))
        return super().__enter__()  # type: ignore[return-value]

    def _create_resources(self) -> None:
        publish_assets(self.client("s3"), self.client("ssm"), self.outdir, self.stack_name)
        cloudformation = self.client("cloudformation")
        template = for_moto(json.loads(self.template_file.read_text()))
        with moto_cloudformation():
            cloudformation.create_stack(StackName=self.stack_name, TemplateBody=json.dumps(template),
                                        Capabilities=["CAPABILITY_IAM"])
        stack = cloudformation.describe_stacks(StackName=self.stack_name)["Stacks"][0]
        assert stack["StackStatus"] == "CREATE_COMPLETE", stack.get("StackStatusReason")
        self.outputs = {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}
        self.state_machine_arn = self.outputs[WORKFLOW.output_name]
        self.table, self.bucket = self.outputs["TableName"], self.outputs["EvidenceBucketName"]

    def _invoker(self) -> Callable[[Any, Any], tuple[str, bool, str]]:
        stack = self

        def invoke(function: Any, event: Any = None) -> tuple[str, bool, str]:
            payload = json.loads(event) if isinstance(event, str) else (event or {})
            module, _, name = function.handler.rpartition(".")
            env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
                   "AWS_REGION": stack.region, "AWS_DEFAULT_REGION": stack.region,
                   "AWS_LAMBDA_FUNCTION_NAME": function.function_name, "PATH": os.environ.get("PATH", ""),
                   **LOCAL_RUNTIME_ENV, **function.environment_vars}
            with stack._one_at_a_time, mock.patch.dict(os.environ, env, clear=True):
                deps.reset()  # settings and clients of this function's environment, as in its own container
                stack.invocations[module] = stack.invocations.get(module, 0) + 1
                stack.handlers_seen[function.handler] = {"env": dict(function.environment_vars),
                                                         "timeout": function.timeout,
                                                         "memory": function.memory_size, "role": function.role}
                context = FakeContext(function.function_name, float(function.timeout))
                context.memory_limit_in_mb = function.memory_size
                try:
                    result = getattr(importlib.import_module(module), name)(payload, context)
                    return json.dumps(result), False, ""
                except Exception as exc:  # becomes the task's error, as in Lambda
                    body = {"errorType": type(exc).__name__, "errorMessage": str(exc),
                            "stackTrace": traceback.format_tb(exc.__traceback__)}
                    return json.dumps(body), True, ""
                finally:
                    deps.reset()

        return invoke


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    outdir = tmp_path_factory.mktemp("cdk.out")
    return outdir, synthesize(outdir, "127.0.0.1")


def test_the_synthesized_stack_deploys_and_runs_to_ready(synthesized: tuple[Path, Path], sample_db) -> None:
    if sample_db.host != "127.0.0.1":
        pytest.skip(f"the deployed allow-list is 127.0.0.1; this machine's PostgreSQL is at {sample_db.host}")
    outdir, template_file = synthesized
    template = json.loads(template_file.read_text())
    with DeployedStack(outdir, template_file, template_file.name.split(".")[0]) as aws:
        # The stack as deployed: every function of the catalogue, with its handler and settings.
        lam, iam = aws.client("lambda"), aws.client("iam")
        deployed = {f["Handler"]: f for f in lam.list_functions()["Functions"]}
        assert set(deployed) == {f.handler for f in FUNCTIONS.values()}
        for spec in FUNCTIONS.values():
            function = deployed[spec.handler]
            assert (function["Timeout"], function["MemorySize"]) == (spec.timeout_seconds, spec.memory_mb)
            env = function["Environment"]["Variables"]
            assert (env["TABLE_NAME"], env["BUCKET_NAME"]) == (aws.table, aws.bucket)
            assert env.get("ALLOWED_DB_HOSTS") == ("127.0.0.1" if spec.checks_db_host else None), spec.handler
            role = iam.get_role(RoleName=function["Role"].rsplit("/", 1)[1])["Role"]
            assert iam.list_role_policies(RoleName=role["RoleName"])["PolicyNames"], spec.handler
        assert deployed["handlers.on_restore.handler"]["Environment"]["Variables"]["STATE_MACHINE_ARN"] == \
            aws.state_machine_arn
        assert aws.outputs["StateMachineArn"] == aws.state_machine_arn  # the old output name, for one release

        sfn = aws.client("stepfunctions")
        machine = sfn.describe_state_machine(stateMachineArn=aws.state_machine_arn)
        (resource,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::StepFunctions::StateMachine"
                       and r["Properties"]["StateMachineName"] == WORKFLOW.state_machine_name]  # the comparison's too
        assert machine["name"] == resource["Properties"]["StateMachineName"]
        assert machine["roleArn"].rsplit("/", 1)[1] in {r["RoleName"] for r in iam.list_roles()["Roles"]}
        definition = machine["definition"]
        assert "${" not in definition
        for spec in FUNCTIONS.values():
            arn = deployed[spec.handler]["FunctionArn"]
            # substituted with the deployed ARNs (the comparison's functions are in its own state machine)
            assert (arn in definition) == (spec.construct_id in WORKFLOW.functions), spec.handler
        assert f'"{aws.bucket}"' in definition

        # One run, started where the CLI would start it, against the real database.
        aws.create_instance("restored-db")
        secret = aws.client("secretsmanager").create_secret(
            Name="cutover/restored-db", SecretString=json.dumps({"username": sample_db.user,
                                                                 "password": sample_db.password,
                                                                 "dbInstanceIdentifier": "restored-db"}),
            Tags=[{"Key": "cutover-prep:access", "Value": "read"}])["ARN"]  # the stack's IAM condition
        run_input = {"run_id": "rehearsal",
                     "target": {"db_instance_identifier": "restored-db", "secret_arn": secret, "engine": "postgres",
                                "host": sample_db.host, "port": sample_db.port, "database": sample_db.database},
                     "warmup": {"unit_mb": 2, "databases": [sample_db.database], "max_concurrency": 4},
                     "benchmark": QUICK_BENCHMARK,  # probes and a short sweep: every step of a good run
                     # the machine's own disk has no first-touch penalty, and under load a warm median a few ms
                     # above the cold one is the scheduler's: medians up to 1 s count as fast, so WARM_VS_COLD is
                     # said and not judged (test_workflow.py's bench run does the same); every other rule judges
                     "verdict": {"fast_read_ms": 1000}}
        # a guard against a hang, not a timing: a loaded 2-core machine took over 300 s (issue 24 §4)
        desc = aws.wait(aws.start(run_input, name="rehearsal"), timeout_s=1200)
        assert desc["status"] == "SUCCEEDED", desc.get("cause")
        out = json.loads(desc["output"])
        findings = json.loads(aws.client("s3").get_object(Bucket=aws.bucket,
                                                          Key="runs/rehearsal/findings.json")["Body"].read())
        assert out["verdict"] == "READY" and out["coverage_pct"] == 100.0, (out.get("reasons"),
                                                                            findings.get("failed_units"))
        # the product's default: the catalogues are read too (issue 21)
        assert findings["bytes"]["read"] == findings["bytes"]["planned"] == sum(expected_forks(sample_db).values())
        run = aws.client("dynamodb").get_item(TableName=aws.table, Key={"pk": {"S": "RUN#rehearsal"},
                                                                         "sk": {"S": "RUN"}})["Item"]
        assert run["verdict"]["S"] == "READY"
        # Each handler ran with its deployed function's settings; the database ones with the allow-list.
        seen = aws.handlers_seen
        not_on_this_path = {"UnitFailed", "RunFailed", "BenchmarkFailed", "StartRestore"}  # failures; no restore
        assert set(seen) == {FUNCTIONS[f].handler for f in WORKFLOW.functions if f not in not_on_this_path}
        for handler, ran in seen.items():
            assert ran["env"] == deployed[handler]["Environment"]["Variables"]
            assert ran["timeout"] == deployed[handler]["Timeout"] and ran["role"] == deployed[handler]["Role"]
        history = json.dumps(aws.history(desc["executionArn"]), default=str)
        assert sample_db.password == "" or sample_db.password not in history


def test_the_workarounds_name_only_what_the_template_has(synthesized: tuple[Path, Path]) -> None:
    """A workaround for a resource type the stack no longer has is stale: remove it."""
    template = json.loads(synthesized[1].read_text())
    types = {r["Type"] for r in template["Resources"].values()}
    assert set(MOTO_WORKAROUNDS) <= types
    assert {r["Type"] for r in for_moto(template)["Resources"].values()} == types - {"AWS::S3::BucketPolicy"}
