"""Synthesize the CDK app once per test module and hand out the template and report."""

from __future__ import annotations

import json
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

    def load(name: str) -> dict[str, Any]:
        path = outdir / name
        return json.loads(path.read_text()) if path.exists() else {}

    return Synth(
        outdir=outdir,
        stack_name=stack.stack_name,
        template=load(f"{stack.stack_name}.template.json"),
        report=load("validation-report.json"),
        metadata=load(f"{stack.stack_name}.metadata.json"),
        error=error,
    )


@pytest.fixture(scope="module")
def synth_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[[dict[str, Any]], Synth]:
    def make(context: dict[str, Any]) -> Synth:
        return synthesize(tmp_path_factory.mktemp("cdk.out"), context)

    return make
