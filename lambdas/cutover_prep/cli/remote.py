"""``cutover-prep start | status | report``: drive the deployed workflow from a CI/CD pipeline.

The run input is validated here with the same pydantic model the workflow uses, so a bad
field is one line and exit code 2 before anything starts. The execution is named after the
run id, so ``status RUN`` and ``report RUN`` need only the state machine, found from the
deployed stack's outputs (or given). Nothing here reads or prints a secret: the input holds
only the secret's ARN.
"""

from __future__ import annotations

import json
import re
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError, ProfileNotFound

from cutover_prep.dal.store import read_object
from cutover_prep.findings.eta import clock_text, eta_seconds
from cutover_prep.live.names import DASHBOARD_OUTPUT, is_dashboard_url
from cutover_prep.models import json_text
from cutover_prep.models.fields import RUN_ID
from cutover_prep.models.run_input import InvalidInput, execution_arn, parse_run_input
from cutover_prep.workflows import TRIGGERED_WORKFLOW, WORKFLOWS

EXIT_READY, EXIT_NOT_READY, EXIT_USAGE, EXIT_FAILED, EXIT_TIMEOUT = 0, 1, 2, 3, 4
EXIT_AWS = 5  # an AWS call failed (access denied, throttled, unreachable): nothing wrong with the input
DEFAULT_STACK = "CutoverPrep"
EVIDENCE = ("findings.json", "summary.md", "report.html")
STATE_MACHINE_ARN = "arn:aws[a-z-]*:states:[a-z0-9-]+:[0-9]{12}:stateMachine:[A-Za-z0-9_-]+"


class CliProblem(Exception):
    """A user mistake or an unusable answer from AWS: one line, with its exit code; ``problems``: the
    input's problems one by one, when a command prints one line each."""

    def __init__(self, message: str, code: int = EXIT_USAGE, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.problems = problems or [message]


@dataclass(frozen=True)
class Deployment:
    state_machine_arn: str
    bucket: str | None = None
    table: str | None = None
    dashboard_url: str | None = None  # the live view (stack output DashboardUrl); None with --state-machine-arn


@dataclass(frozen=True)
class Outcome:
    """Where a run stands, as the CLI reports it."""

    run_id: str
    execution_arn: str
    status: str
    code: int
    verdict: str | None = None
    reasons: tuple[str, ...] = ()
    error: str | None = None
    cause: str | None = None
    uris: tuple[tuple[str, str], ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "execution_arn": self.execution_arn, "status": self.status,
                "verdict": self.verdict, "reasons": list(self.reasons), "error": self.error, "cause": self.cause,
                **dict(self.uris), "exit_code": self.code}

    def lines(self) -> list[str]:
        if self.status == "RUNNING":
            return [f"run {self.run_id}: still running ({self.execution_arn})"]
        if self.verdict and self.status == "SUCCEEDED":
            head = [f"run {self.run_id}: {self.verdict}"]
            return head + [f"  - {r}" for r in self.reasons] + [f"  {k}: {v}" for k, v in self.uris]
        return [f"run {self.run_id}: {self.status}: {self.error or 'no error named'}: {self.cause or ''}".rstrip(": ")]


def aws_problem(exc: ClientError | BotoCoreError) -> str:
    """``Code: Message`` of an AWS error, or botocore's own sentence."""
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        return f"{err.get('Code', 'error')}: {err.get('Message', exc)}"
    return str(exc)


def aws_call(what: str, call: Callable[[], Any]) -> Any:
    """Call AWS; turn the mistakes a pipeline makes (credentials, region, access) into one line."""
    try:
        return call()
    except NoCredentialsError:
        raise CliProblem(f"{what}: no AWS credentials found (configure a role or AWS_PROFILE)") from None
    except NoRegionError:
        raise CliProblem(f"{what}: no AWS region (pass --region or set AWS_REGION)") from None
    except ProfileNotFound as exc:  # the pipeline's own configuration: a usage error
        raise CliProblem(f"{what}: {exc}") from None
    except (ClientError, BotoCoreError) as exc:  # AWS answered no, or could not be reached: not the input's fault
        raise CliProblem(f"{what}: {aws_problem(exc)}", code=EXIT_AWS) from None


# ---- the input -------------------------------------------------------------------------------

def new_run_id() -> str:
    return f"ci-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def read_input_file(path: str, stdin: Any = None) -> dict[str, Any]:
    try:
        text = (stdin or sys.stdin).read() if path == "-" else Path(path).read_text()
    except OSError as exc:
        raise CliProblem(f"--input {path}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise CliProblem(f"--input {path}: not UTF-8 text (save the JSON as UTF-8)") from None
    try:
        data = json_text.loads(text)  # a key given twice, Infinity, a 5,000-digit number: one line naming where
    except json.JSONDecodeError as exc:
        raise CliProblem(f"--input {path}: not JSON (line {exc.lineno} column {exc.colno}: {exc.msg})") from None
    except json_text.JsonProblem as exc:
        raise CliProblem(f"{exc} (--input {path})") from None
    if not isinstance(data, dict):
        raise CliProblem(f"--input {path}: must be a JSON object (see schema/run-input.schema.json)")
    return data


def apply_set(data: dict[str, Any], assignment: str) -> None:
    """``--set warmup.max_concurrency=16``: the value is JSON when it parses, else a string."""
    path, sep, text = assignment.partition("=")
    keys = path.strip().split(".")
    if not sep or not all(keys):
        raise CliProblem(f"--set {assignment!r}: write PATH=VALUE, e.g. --set warmup.max_concurrency=16")
    try:
        value = json_text.loads(text)
    except json.JSONDecodeError:
        value = text
    except json_text.JsonProblem as exc:
        raise CliProblem(f"--set {path.strip()}: {exc.why}") from None
    node = data
    for key in keys[:-1]:
        child = node.setdefault(key, {})
        if not isinstance(child, dict):
            raise CliProblem(f"--set {assignment!r}: {key} is not an object in the input")
        node = child
    node[keys[-1]] = value


def build_input(*, base: dict[str, Any] | None, target: str | None, secret_arn: str | None, engine: str | None,
                database: str | None, run_id: str | None, benchmark: bool | None,
                sets: Iterable[str]) -> dict[str, Any]:
    """The execution input from a file and the flags (flags win), validated as the workflow will."""
    data = json.loads(json.dumps(base or {}))
    flags = {"db_instance_identifier": target, "secret_arn": secret_arn, "engine": engine, "database": database}
    for key, value in flags.items():
        if value is not None:
            data.setdefault("target", {})
            if not isinstance(data["target"], dict):
                raise CliProblem("input: target must be an object")
            data["target"][key] = value
    if benchmark is not None:
        data.setdefault("benchmark", {})["enabled"] = benchmark
    for assignment in sets:
        apply_set(data, assignment)
    if run_id is not None:
        data["run_id"] = run_id
    if data.get("run_id") is None:  # absent, or null in the file
        data["run_id"] = new_run_id()
    try:
        parse_run_input(data)
    except InvalidInput as exc:
        raise CliProblem("input: " + "; ".join(_name_flags(line) for line in exc.problems)) from None
    return data


# the fields `start` has a flag for: a problem with one names the flag too
FLAG_OF_FIELD = {"target.db_instance_identifier": "--target", "target.secret_arn": "--secret-arn",
                 "target.engine": "--engine", "target.database": "--database", "target.databases": "--all-databases",
                 "run_id": "--run-id"}


def _name_flags(problem: str) -> str:
    """A missing field that has a flag names the flag: ``--target (target.db_instance_identifier): is required``."""
    field_name, sep, why = problem.partition(": ")
    if field_name == "target" and why.startswith("is required"):
        return "--target and --secret-arn are required (or target in --input)"
    flag = FLAG_OF_FIELD.get(field_name)
    return f"{flag} ({field_name}): {why}" if sep and flag and why.startswith("is required") else problem


# ---- the deployment ----------------------------------------------------------------------------

def find_deployment(cloudformation: Any, *, stack: str, state_machine_arn: str | None) -> Deployment:
    if state_machine_arn:
        if not re.fullmatch(STATE_MACHINE_ARN, state_machine_arn):
            raise CliProblem(f"--state-machine-arn {state_machine_arn!r}: not a state machine ARN "
                             "(arn:aws:states:REGION:ACCOUNT:stateMachine:NAME)")
        return Deployment(state_machine_arn)
    try:
        stacks = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    except ClientError as exc:
        if "does not exist" in str(exc):
            raise CliProblem(f"stack {stack!r} not found in this account and region: deploy it (make deploy), "
                             "or pass --stack NAME, --region or --state-machine-arn") from None
        raise
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}
    workflow = WORKFLOWS[TRIGGERED_WORKFLOW]
    # The workflow's output by its catalogue name; a stack deployed before the rename has only the old one.
    names = (workflow.output_name, *workflow.legacy_output_names)
    arn = next((outputs[name] for name in names if name in outputs), None)
    if arn is None:
        raise CliProblem(f"stack {stack!r} has no {' output nor '.join(reversed(names))} output: "
                         "is it a Cutover Prep stack?")
    dashboard = outputs.get(DASHBOARD_OUTPUT)
    return Deployment(arn, outputs.get("EvidenceBucketName"), outputs.get("TableName"),
                      dashboard if is_dashboard_url(dashboard) else None)


def live_view_line(deployment: Deployment, run_id: str) -> str | None:
    """Where to watch the run in the AWS console (the stack's dashboard; the run is chosen in its variable)."""
    if not deployment.dashboard_url:
        return None
    return f"live view: {deployment.dashboard_url} (CloudWatch dashboard: choose run {run_id})"


def execution_arn_of(state_machine_arn: str, run: str) -> tuple[str, str]:
    """(run id, execution ARN) from a run id or an execution ARN."""
    if run.startswith("arn:"):
        if ":execution:" not in run:
            raise CliProblem(f"{run!r}: not an execution ARN; pass the run id or the execution's ARN")
        return run.rsplit(":", 1)[1], run
    if not RUN_ID.match(run):
        raise CliProblem(f"{run!r}: not a run id (1-80 letters, digits, '.', '_' or '-')")
    return run, execution_arn(state_machine_arn, run)


# ---- running -----------------------------------------------------------------------------------

def start(sfn: Any, deployment: Deployment, run_input: dict[str, Any]) -> tuple[str, bool]:
    """(execution ARN, True when a run of that id was already running and is followed instead).

    A pipeline step that is retried (after exit 4, say) finds its run still going and
    follows it; a finished run id is not started again."""
    run_id = run_input["run_id"]
    try:
        return sfn.start_execution(stateMachineArn=deployment.state_machine_arn, name=run_id,
                                   input=json.dumps(run_input))["executionArn"], False
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "ExecutionAlreadyExists":
            raise
    _, arn = execution_arn_of(deployment.state_machine_arn, run_id)
    if describe(sfn, arn, run_id)["status"] == "RUNNING":
        return arn, True
    raise CliProblem(f"run id {run_id!r} was used already and has ended: pick another --run-id, or see it with "
                     f"`cutover-prep status {run_id}`")


def describe(sfn: Any, execution_arn: str, run_id: str) -> dict[str, Any]:
    try:
        return sfn.describe_execution(executionArn=execution_arn)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("ExecutionDoesNotExist", "ResourceNotFound"):
            raise CliProblem(f"run {run_id!r} not found on this state machine ({execution_arn})") from None
        raise


def outcome(desc: dict[str, Any], run_id: str) -> Outcome:
    status = desc["status"]
    base = {"run_id": run_id, "execution_arn": desc["executionArn"], "status": status}
    if status in ("RUNNING", "PENDING_REDRIVE"):
        return Outcome(**base, code=EXIT_TIMEOUT)
    if status == "SUCCEEDED":
        out = json.loads(desc.get("output") or "{}")
        verdict = out.get("verdict")
        uris = tuple((f"{name.split('.')[0]}_uri", out[f"{name.split('.')[0]}_uri"]) for name in EVIDENCE
                     if out.get(f"{name.split('.')[0]}_uri"))
        return Outcome(**base, code=EXIT_READY if verdict == "READY" else EXIT_NOT_READY, verdict=verdict,
                       reasons=tuple(out.get("reasons") or ([] if verdict == "READY" else ["no verdict recorded"])),
                       uris=uris)
    error = desc.get("error") or status
    code = EXIT_USAGE if error == "InvalidInput" else EXIT_FAILED
    cause = (desc.get("cause") or "")[:1000]
    return Outcome(**base, code=code, verdict="NOT_READY", reasons=(f"the run failed: {error}: {cause}".rstrip(": "),),
                   error=error, cause=cause)


def progress_line(run: dict[str, Any] | None, state: str | None, elapsed_s: float, *,
                  eta_s: float | None = None) -> str:
    """One line of progress: the step, units, MiB read of planned, failures; the warm-up's ETA at the measured
    rate (``eta_s``: ``findings.eta.eta_seconds`` on the bytes this watcher saw) and RDS's own storage progress
    (the run's last storage sample, ``storage``) when there are."""
    stamp = f"[{int(elapsed_s) // 60:02d}:{int(elapsed_s) % 60:02d}]"
    if not run or "bytes_planned" not in run:
        return f"{stamp} {state or 'starting'}"
    planned, read = run.get("bytes_planned") or 0, run.get("bytes_read") or 0
    pct = 100 * read / planned if planned else 0.0
    step = run.get("step") or state or "running"
    line = (f"{stamp} {step}: {run.get('units_done', 0)}/{run.get('units_total', 0)} units, "
            f"{read / 2**20:,.1f}/{planned / 2**20:,.1f} MiB ({pct:.0f} %), {run.get('units_failed', 0)} failed")
    if eta_s is not None and read < planned:
        line += f"; warm-up ETA ~{clock_text(eta_s)} at the measured rate"
    storage = run.get("storage") or {}
    if storage.get("status"):
        percent = f" {storage['percent']} %" if storage.get("percent") is not None else ""
        line += f"; RDS storage {storage['status']}{percent}"
        line += _storage_eta_text(run.get("storage_eta"))
    if run.get("step") == "benchmark" and run.get("benchmark_points"):
        line += f"; benchmark of {run['benchmark_points']} points"
    return line


def _storage_eta_text(etas: dict[str, Any] | None) -> str:
    """`` (ETA ~1:05:00; rdsdbdata2 ~2:10:00 slowest)``: RDS's initialization ETA per volume (restore.volume_eta)."""
    volumes = (etas or {}).get("volumes") or {}
    if not volumes:
        return ""
    if etas.get("instance_eta_s") is None:
        why = next((v["source"] for v in volumes.values() if v.get("eta_s") is None), "no rate yet")
        return f" (ETA unknown: {why})"
    parts = [f"ETA ~{clock_text(etas['instance_eta_s'])}"]
    if len(volumes) > 1:
        parts += [f"{name} ~{clock_text(v['eta_s'])}" for name, v in volumes.items()]
    return " (" + "; ".join(parts) + ")"


def last_state(sfn: Any, execution_arn: str) -> str | None:
    events = sfn.get_execution_history(executionArn=execution_arn, reverseOrder=True, maxResults=20)["events"]
    for event in events:
        details = event.get("stateEnteredEventDetails")
        if details:
            return details.get("name")
    return None


LOST_CONTACT_AFTER = 5  # failed polls in a row


def wait(sfn: Any, execution_arn: str, run_id: str, *, timeout_s: float, poll_s: float,
         read_run: Callable[[str], dict[str, Any] | None] | None, report: Callable[[str], None],
         clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """Poll until the execution ends or ``timeout_s`` passes (then return it still RUNNING).

    The run is started by now: an AWS error while polling (a network blip, throttling, a role
    session that expired during a long run) is reported and polled again; after
    ``LOST_CONTACT_AFTER`` in a row it is exit code 4, the run going on, never 2 or 3."""
    started, said, failures, selection_said = clock(), None, 0, False
    samples: list[tuple[float, float]] = []  # (s, bytes read) as this watcher saw them: the ETA's measured rate
    while True:
        try:
            desc = describe(sfn, execution_arn, run_id)
            if desc["status"] != "RUNNING" or clock() - started >= timeout_s:
                return desc
            run = read_run(run_id) if read_run else None
            if run and run.get("selection") and not selection_said:  # what it reads and leaves out (issue 33 §1)
                elapsed = int(clock() - started)
                report(f"[{elapsed // 60:02d}:{elapsed % 60:02d}] {run['selection']}")
                selection_said = True
            eta = None
            if run and run.get("bytes_planned") and run.get("bytes_read"):
                samples.append((clock() - started, float(run["bytes_read"])))
                eta = eta_seconds(samples, float(run["bytes_planned"])) if len(samples) > 1 else None
            line = progress_line(run, None if run else last_state(sfn, execution_arn), clock() - started,
                                 eta_s=eta)
            failures = 0
        except (ClientError, BotoCoreError) as exc:
            failures += 1
            problem = aws_problem(exc)
            if failures >= LOST_CONTACT_AFTER or clock() - started >= timeout_s:
                raise CliProblem(f"wait: lost contact with AWS ({problem}); run {run_id} goes on: "
                                 f"cutover-prep status {run_id}", code=EXIT_TIMEOUT) from None
            elapsed = int(clock() - started)
            line = f"[{elapsed // 60:02d}:{elapsed % 60:02d}] AWS did not answer ({problem}); asking again"
        if line.split("] ", 1)[1] != said:
            report(line)
            said = line.split("] ", 1)[1]
        sleep(min(poll_s, max(0.0, timeout_s - (clock() - started))))


# ---- evidence ----------------------------------------------------------------------------------

def download_evidence(s3: Any, desc: dict[str, Any], run_id: str, bucket: str | None, out: Path) -> list[Path]:
    """findings.json, summary.md and report.html of a finished run into ``out``."""
    out_json = json.loads(desc.get("output") or "{}") if desc.get("status") == "SUCCEEDED" else {}
    written = []
    for name in EVIDENCE:
        uri = out_json.get(f"{name.split('.')[0]}_uri")
        if uri:
            parts = urlsplit(uri)
            where = (parts.netloc, parts.path.lstrip("/"))
        elif bucket:
            where = (bucket, f"runs/{run_id}/{name}")
        else:
            continue
        body = read_object(s3, *where)
        if body is None:
            continue
        out.mkdir(parents=True, exist_ok=True)
        (out / name).write_bytes(body)
        written.append(out / name)
    return written
