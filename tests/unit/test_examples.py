"""The files under examples/ match the code (issue 16): the completion events have the detail the
code publishes, the rules match them, the runs they start are valid inputs, and the CI jobs outlast
the CLI's --timeout while installing only the CLI's own dependencies."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from moto.events.models import EventPattern

from cutover_prep.live import completion
from cutover_prep.models.run_input import parse_run_input

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str) -> Any:
    return json.loads((EXAMPLES / name).read_text())


def path_value(event: dict[str, Any], path: str) -> Any:
    node: Any = event
    for key in path.removeprefix("$.").split("."):
        node = node[key]
    return node


def transform(transformer: dict[str, Any], event: dict[str, Any]) -> Any:
    """EventBridge's input transformer: <name> replaced by the value at its path (strings raw inside
    quotes, anything else as JSON), then the template parsed as JSON."""
    text = transformer["InputTemplate"]
    for name, path in transformer["InputPathsMap"].items():
        value = path_value(event, path)
        text = text.replace(f"<{name}>", value if isinstance(value, str) else json.dumps(value))
    assert not re.search(r"<[a-z_]+>", text), text
    return json.loads(text)


def test_the_finished_event_has_the_detail_the_code_publishes(monkeypatch):
    event = load("events/run-finished.json")
    # what the stack sets on Finalize (live view, docs/deploy.md), in the event's region
    monkeypatch.setenv("CUTOVER_PREP_DASHBOARD", f"CutoverPrep-live-{event['region']}")
    monkeypatch.setenv("AWS_REGION", event["region"])
    assert (event["source"], event["detail-type"]) == (completion.SOURCE, completion.DETAIL_TYPE)
    detail = event["detail"]
    bucket, key = re.fullmatch(r"s3://([^/]+)/(.+)", detail["findings"]).groups()
    rebuilt = completion.completion_detail(
        {"run_id": detail["run_id"], "target": {**detail["target"], "secret_arn": "never in the event"},
         "coverage_pct": detail["coverage_pct"], "started_at": detail["started_at"]},
        status=detail["status"], verdict=detail["verdict"], reasons=detail["reasons"], bucket=bucket,
        findings_key=key, error=detail["error"], timing=detail["timing"])
    assert detail == rebuilt  # every field, and report/summary beside findings.json
    assert key == f"runs/{detail['run_id']}/findings.json"


def test_the_not_started_event_has_the_detail_the_trigger_publishes():
    event = load("events/run-not-started.json")
    assert (event["source"], event["detail-type"]) == (completion.SOURCE, completion.NOT_STARTED)
    detail = event["detail"]
    code, why = detail["reasons"][0].split(": ", 1)
    assert detail == completion.not_started_detail(detail["target"]["db_instance_identifier"],
                                                   detail["target"]["engine"], why, code=code)


def test_the_notification_rule_takes_not_ready_and_not_started_and_its_target_reads_the_detail():
    rule = load("eventbridge/notify-not-ready.rule.json")
    pattern = EventPattern.load(rule["EventPattern"])
    finished, not_started = load("events/run-finished.json"), load("events/run-not-started.json")
    assert pattern.matches_event(finished) and pattern.matches_event(not_started)
    ready = {**finished, "detail": {**finished["detail"], "verdict": "READY", "reasons": []}}
    assert not pattern.matches_event(ready)
    (target,) = load("eventbridge/notify-not-ready.targets.json")["Targets"]
    assert load("eventbridge/notify-not-ready.targets.json")["Rule"] == rule["Name"]
    message = transform(target["InputTransformer"], finished)
    assert message["reasons"] == finished["detail"]["reasons"] and message["report"].endswith("report.html")
    assert "NOT_READY" in message["text"] and "orders-cutover" in message["text"]


def test_your_own_rule_starts_a_valid_run():
    rule = load("eventbridge/start-run.rule.json")
    event = load("eventbridge/rehearsal-requested.event.json")
    assert EventPattern.load(rule["EventPattern"]).matches_event(event)
    targets = load("eventbridge/start-run.targets.json")
    (target,) = targets["Targets"]
    assert targets["Rule"] == rule["Name"] and ":stateMachine:" in target["Arn"]
    run_input = transform(target["InputTransformer"], event)
    config = parse_run_input(run_input, execution_name="5f0c9a1e-8b7d-4c2a-9e3f-1a2b3c4d5e6f")
    assert config["target"]["db_instance_identifier"] == "orders-cutover"
    assert target["RoleArn"].endswith("/" + load("eventbridge/start-runs.role.json")["RoleName"])


def test_the_schedule_starts_a_valid_run_with_a_role_that_may():
    schedule = load("scheduler/nightly-rehearsal.schedule.json")
    target = schedule["Target"]
    parse_run_input(json.loads(target["Input"]), execution_name="5f0c9a1e-8b7d-4c2a-9e3f-1a2b3c4d5e6f")
    assert "run_id" not in json.loads(target["Input"])  # a fixed run id would resume last night's run
    role = load("eventbridge/start-runs.role.json")
    trust = json.loads(role["AssumeRolePolicyDocument"])["Statement"][0]["Principal"]["Service"]
    assert {"events.amazonaws.com", "scheduler.amazonaws.com"} <= set(trust)
    (allow,) = load("eventbridge/start-runs.policy.json")["Statement"]
    assert allow["Action"] == "states:StartExecution" and allow["Resource"] == target["Arn"]


def _timeout_of(command: str) -> float:
    words = shlex.split(command.replace("\\\n", " "))
    assert words[:2] == ["cutover-prep", "start"] and "--wait" in words
    return float(words[words.index("--timeout") + 1])


def _installs_only_the_cli(commands: list[str]) -> None:
    installs = [c for c in commands if c.startswith("pip install")]
    assert installs and all("cutover-prep[cli]" in c and "[local" not in c and "[dev" not in c for c in installs)


def test_github_actions_job_outlasts_the_cli_timeout():
    workflow = yaml.safe_load((EXAMPLES / "ci" / "github-actions.yml").read_text())
    (job,) = workflow["jobs"].values()
    runs = [s["run"] for s in job["steps"] if "run" in s]
    (start,) = [r.strip() for r in runs if r.strip().startswith("cutover-prep start")]
    assert job["timeout-minutes"] * 60 > _timeout_of(start) + 10 * 60  # room for setup and the evidence
    assert job["timeout-minutes"] <= 360  # GitHub-hosted runners stop any job at 6 h
    _installs_only_the_cli([r.strip() for r in runs])


def test_codebuild_project_outlasts_the_cli_timeout():
    spec = yaml.safe_load((EXAMPLES / "ci" / "buildspec.yml").read_text())
    project = load("ci/codebuild-project.json")
    (start,) = [c for c in spec["phases"]["build"]["commands"] if c.startswith("cutover-prep start")]
    assert project["timeoutInMinutes"] * 60 > _timeout_of(start) + 10 * 60
    assert project["timeoutInMinutes"] <= 2160  # CodeBuild's maximum (36 h)
    _installs_only_the_cli(spec["phases"]["install"]["commands"])


@pytest.mark.parametrize("name", sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.json")))
def test_every_json_example_parses(name):
    load(name)
