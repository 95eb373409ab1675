"""Synthesize the CDK app once per test module and hand out the template and report.

The two templates most modules read (``plain``, ``in_vpc``) are synthesized once per run: under pytest-xdist
the first worker to need one synthesizes it, under a file lock, into a folder every worker of the run sees;
the other reads the same files (a synth: 10-60 s of CPU for the CDK's node process and cdk-nag)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "cdk"))

# A VPC, two subnets and a security group: ids only, nothing is looked up.
VPC_CONTEXT = {
    "vpc_id": "vpc-0123456789abcdef0",
    "subnet_ids": "subnet-0aaaaaaaaaaaaaaaa,subnet-0bbbbbbbbbbbbbbbb",
    "security_group_id": "sg-0123456789abcdef0",
}


@dataclass
class Synth:
    outdir: Path
    stack_name: str
    template: dict[str, Any]
    report: dict[str, Any]
    metadata: dict[str, Any]
    error: Exception | None

    def resources(self, cfn_type: str) -> dict[str, dict[str, Any]]:
        return {k: r for k, r in self.template["Resources"].items() if r["Type"] == cfn_type}

    def plugin(self, name: str) -> dict[str, Any]:
        return next((p for p in self.report.get("pluginReports", []) if p["pluginName"] == name), {})


def synthesize(outdir: Path, context: dict[str, Any]) -> Synth:
    from cutover_prep_cdk import build_app

    app, stack = build_app({"skip_layer_build": True, **context}, outdir=str(outdir))
    error: Exception | None = None
    try:
        app.synth()
    except Exception as exc:  # cdk-nag violations: ValidationFailed; the test on nag reports it
        error = exc
    return loaded(outdir, stack.stack_name, error)


class SynthFailed(Exception):
    """The synth of another worker of this run failed: its exception, as text."""


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this run that every pytest-xdist worker sees: the parent of a worker's own basetemp
    (xdist makes it ``<the controller's basetemp>/<worker id>``), or the basetemp of a run without xdist."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def synthesized_once(tmp_path_factory: pytest.TempPathFactory, context: dict[str, Any]) -> Synth:
    """The synth of ``context``, made by the first worker of this run that asks for it; the others wait on
    its lock and read the files it wrote."""
    key = hashlib.sha256(json.dumps(context, sort_keys=True).encode()).hexdigest()[:16]
    folder = run_folder(tmp_path_factory) / "cdk-synths"
    folder.mkdir(exist_ok=True)
    outdir, done = folder / key, folder / f"{key}.done.json"
    with open(folder / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            synth = synthesize(outdir, context)
            error = None if synth.error is None else f"{type(synth.error).__name__}: {synth.error}"
            done.write_text(json.dumps({"stack_name": synth.stack_name, "error": error}))
            return synth
    made = json.loads(done.read_text())
    return loaded(outdir, made["stack_name"], None if made["error"] is None else SynthFailed(made["error"]))


def loaded(outdir: Path, stack_name: str, error: Exception | None) -> Synth:
    """The synth whose files are in ``outdir``."""

    def load(name: str) -> dict[str, Any]:
        path = outdir / name
        return json.loads(path.read_text()) if path.exists() else {}

    return Synth(outdir=outdir, stack_name=stack_name, template=load(f"{stack_name}.template.json"),
                 report=load("validation-report.json"), metadata=load(f"{stack_name}.metadata.json"), error=error)


@pytest.fixture(scope="module")
def synth_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[[dict[str, Any]], Synth]:
    """``make(context)`` -> the synth of that context, made once per run like ``plain``'s: two modules that ask
    for the same context (test_stack and test_safety both set one ``secret_arn_pattern``) share one synth."""
    def make(context: dict[str, Any]) -> Synth:
        return synthesized_once(tmp_path_factory, context)

    return make


@pytest.fixture(scope="session")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    return synthesized_once(tmp_path_factory, {})


@pytest.fixture(scope="session")
def in_vpc(tmp_path_factory: pytest.TempPathFactory) -> Synth:
    """In a VPC, with the optional notifications topic (so cdk-nag and cfn-lint see it too)."""
    return synthesized_once(tmp_path_factory, {**VPC_CONTEXT, "notify_emails": "dba@example.com, oncall@example.com"})


# -- reading the template -------------------------------------------------------------------------
def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def functions_by_handler(synth: Synth) -> dict[str, tuple[str, dict[str, Any]]]:
    return {r["Properties"]["Handler"]: (k, r) for k, r in synth.resources("AWS::Lambda::Function").items()}


def role_of(function: dict[str, Any]) -> str:
    return function["Properties"]["Role"]["Fn::GetAtt"][0]


def statements_of_role(synth: Synth, role_id: str) -> list[dict[str, Any]]:
    statements = []
    for policy in synth.resources("AWS::IAM::Policy").values():
        if {"Ref": role_id} in policy["Properties"]["Roles"]:
            statements += policy["Properties"]["PolicyDocument"]["Statement"]
    return statements


def actions_of_role(synth: Synth, role_id: str) -> set[str]:
    return {a for s in statements_of_role(synth, role_id) for a in as_list(s["Action"])}


def flat(value: Any) -> str:
    """A resource value as one string, intrinsics rendered as <Logical.Attr>/<Ref>."""
    if isinstance(value, str):
        return value
    if "Fn::Join" in value:
        return value["Fn::Join"][0].join(flat(v) for v in value["Fn::Join"][1])
    if "Ref" in value:
        return f"<{value['Ref']}>"
    if "Fn::GetAtt" in value:
        return f"<{'.'.join(value['Fn::GetAtt'])}>"
    return json.dumps(value)


def statements_with(synth: Synth, role_id: str, action: str) -> list[dict[str, Any]]:
    return [s for s in statements_of_role(synth, role_id) if action in as_list(s["Action"])]


def resources_for(synth: Synth, role_id: str, action: str) -> set[str]:
    return {flat(r) for s in statements_with(synth, role_id, action) for r in as_list(s["Resource"])}
