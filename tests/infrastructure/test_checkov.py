"""checkov, the second judge of the synthesized template (issue 20, finding 7).

checkov runs its CloudFormation checks on the templates the other infrastructure tests synthesize
(without and with the VPC context: the template of `make synth`, and the one with every optional
resource). A failed check fails the build; a check that does not apply here is acknowledged on its
resource, with a reason, in the template's metadata (``Metadata.checkov.skip``: checkov's
"Suppressing and Skipping Policies", CloudFormation; read by checkov's
``cloudformation/context_parser.py``), through ``cutover_prep_cdk.checkov``.

checkov lives in a virtualenv of its own (``.venv-checkov``, built by ``make install``/``make test``):
its pins conflict with the project's boto3.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO_ROOT, Synth

CHECKOV = Path(os.environ.get("CHECKOV", REPO_ROOT / ".venv-checkov" / "bin" / "checkov"))
CHECK_ID = re.compile(r"CKV2?_AWS_\d+")


def _template_file(synth: Synth) -> Path:
    path = synth.outdir / f"{synth.stack_name}.template.json"
    assert path.is_file(), f"{path} was not synthesized: {synth.error}"
    return path


@pytest.fixture(scope="module")
def checkov_reports(plain: Synth, in_vpc: Synth, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """One checkov run over both templates, and over a copy of each without its acknowledgments:
    name ("plain", "in_vpc", "plain-unacknowledged", ...) -> {"passed"|"failed"|"skipped": [results]}."""
    if not CHECKOV.exists():
        pytest.fail(f"checkov is not installed at {CHECKOV}: run `make install` (it builds .venv-checkov from "
                    "tools/checkov-requirements.txt), or set CHECKOV to a checkov 3.3 executable")
    files: dict[str, str] = {}
    for name, synth in (("plain", plain), ("in_vpc", in_vpc)):
        files[str(_template_file(synth).resolve())] = name
        bare = tmp_path_factory.mktemp("unacknowledged") / f"{name}.template.json"
        # indented like the CDK's own template: on one line, every result's code block is the whole file
        # (300 MB of checkov JSON for four templates, 2/3 of the run spent encoding and printing it)
        bare.write_text(json.dumps(_without_acknowledgments(synth.template), indent=1))
        files[str(bare.resolve())] = f"{name}-unacknowledged"
    # the JSON report goes to a file: the advanced form of --output-file-path in checkov --help (one
    # destination per -o, comma-separated; here json only) writes it there and not to stdout,
    # where colorama scans every byte for ANSI codes
    report_file = tmp_path_factory.mktemp("checkov-report") / "results.json"
    args = [str(CHECKOV), "--skip-download", "--framework", "cloudformation", "-o", "json",
            "--output-file-path", f"{report_file},"]
    for path in files:
        args += ["-f", path]
    # checkov's HCL parser (lark) writes a grammar cache into the temporary directory and leaves it there:
    # a temporary directory of its own, removed with the test's (it saves no measurable time here)
    env = {**os.environ, "TMPDIR": str(tmp_path_factory.mktemp("checkov-tmp"))}
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False, env=env)
    assert done.returncode in (0, 1), f"checkov failed to run ({done.returncode}): {done.stderr[-2000:]}"
    assert report_file.is_file(), f"checkov wrote no report: {done.stdout[-2000:]} {done.stderr[-2000:]}"
    output = json.loads(report_file.read_text())
    reports = output if isinstance(output, list) else [output]
    by_file: dict[str, dict[str, list[dict[str, Any]]]] = {p: {"passed": [], "failed": [], "skipped": []}
                                                         for p in files}
    for report in reports:
        assert report["summary"]["parsing_errors"] == 0, report["summary"]
        for kind in ("passed", "failed", "skipped"):
            for result in report["results"][f"{kind}_checks"]:
                by_file[str(Path(result["file_abs_path"]).resolve())][kind].append(result)
    return {files[path]: results for path, results in by_file.items()}


def _without_acknowledgments(template: dict[str, Any]) -> dict[str, Any]:
    bare = json.loads(json.dumps(template))
    for resource in bare["Resources"].values():
        resource.get("Metadata", {}).pop("checkov", None)
    return bare


def _describe(results: list[dict[str, Any]]) -> str:
    return "\n".join(f"  {r['check_id']} {r['resource']}: {r['check_name']}" for r in results)


@pytest.mark.parametrize("template", ["plain", "in_vpc"])
def test_checkov_finds_nothing_unacknowledged(checkov_reports: dict[str, dict[str, Any]], template: str) -> None:
    report = checkov_reports[template]
    assert len(report["passed"]) > 500, "checkov checked far fewer things than the stack holds"
    assert not report["failed"], (
        f"checkov: {len(report['failed'])} failed checks in the {template} template; fix them, or acknowledge "
        f"one on its resource with a reason (cutover_prep_cdk.checkov.skip):\n{_describe(report['failed'])}"
    )


def _skips(synth: Synth) -> dict[str, list[dict[str, Any]]]:
    return {logical_id: resource["Metadata"]["checkov"]["skip"]
            for logical_id, resource in synth.template["Resources"].items()
            if "checkov" in resource.get("Metadata", {})}


@pytest.mark.parametrize("template", ["plain", "in_vpc"])
def test_every_acknowledgment_names_a_check_and_says_why(
    checkov_reports: dict[str, dict[str, Any]], plain: Synth, in_vpc: Synth, template: str
) -> None:
    synth = {"plain": plain, "in_vpc": in_vpc}[template]
    skips = _skips(synth)
    assert skips, "no checkov acknowledgments in the template"
    for logical_id, entries in skips.items():
        ids = [entry["id"] for entry in entries]
        assert len(ids) == len(set(ids)), f"{logical_id}: a check acknowledged twice: {ids}"
        for entry in entries:
            assert set(entry) == {"id", "comment"}, (logical_id, entry)
            assert CHECK_ID.fullmatch(entry["id"]), (logical_id, entry)
            assert len(entry["comment"].strip()) >= 40, f"{logical_id} {entry['id']}: no real reason given"
    # checkov read each acknowledgment with its reason ...
    skipped = {(r["resource"].split(".", 1)[1], r["check_id"]): r["check_result"].get("suppress_comment")
               for r in checkov_reports[template]["skipped"]}
    expected = {(logical_id, e["id"]): e["comment"] for logical_id, entries in skips.items() for e in entries}
    assert skipped == expected
    # ... and each one stands for a finding checkov makes without it: an acknowledgment of a check that
    # passes would hide the day it fails
    findings = {(r["resource"].split(".", 1)[1], r["check_id"])
                for r in checkov_reports[f"{template}-unacknowledged"]["failed"]}
    assert set(expected) == findings
