"""The catalogue of workflows (cutover_prep.workflows): the one place the functions, their settings,
the ASL files, the table's key schema and the stack outputs are written."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest

from cutover_prep import workflows
from cutover_prep.cli import remote
from cutover_prep.cli.remote import CliProblem
from cutover_prep.workflows import FUNCTIONS, WORKFLOWS, Workflow

# The settings deployed before the catalogue existed, pinned: moving them into the catalogue changed
# none (handler -> timeout s, memory MB, in a VPC, permission groups).
DEPLOYED = {
    "handlers.validate_input.handler": (30, 256, False, {"table_item_write"}),
    "handlers.start_restore.handler": (60, 256, False, {"rds_restore"}),
    # issue 13: DescribeInstance samples RDS's storage progress (table) and looks for a Blue/Green deployment
    "handlers.describe_instance.handler": (30, 256, False, {"rds_describe", "rds_blue_green", "table_item_write"}),
    "handlers.discover.handler": (900, 1024, True, {"secrets", "rds_describe", "s3_read_write", "table_read_write"}),
    # issue 21: the end census reads the catalogue again and catches up on what was created (S3: its evidence)
    "handlers.end_census.handler": (900, 1024, True, {"secrets", "rds_describe", "s3_read_write"}),
    # issue 13; issue 36: Query of the run's storage samples, for the ETA of RDS's initialization
    "handlers.warm_unit.handler": (900, 512, True, {"secrets", "table_item_write", "table_query", "rds_describe"}),
    # issue 22: the preflight reads the secret, writes preflight.json (PutObject only) and its summary (UpdateItem)
    "handlers.preflight.handler": (120, 512, True, {"secrets", "s3_put", "table_item_write"}),
    # issue 13: adaptive concurrency; issue 36: the yield signal on the run's connection (VPC, its secret)
    "handlers.warm_slot.handler": (30, 256, True, {"secrets", "table_item_write"}),
    "handlers.unit_failed.handler": (30, 256, False, {"table_item_write"}),
    "handlers.finalize.handler": (300, 512, False, {"table_query_update", "s3_read_write", "completion_event",
                                                    "rds_describe"}),  # issue 13: RDS's progress at the end
    "handlers.run_failed.handler": (60, 256, False, {"table_item_write", "s3_put", "completion_event"}),
    "handlers.probe.handler": (900, 512, True, {"secrets", "s3_read_write", "table_read_write"}),
    "handlers.plan_sweep.handler": (120, 512, True, {"secrets", "s3_read_write", "table_item_write", "free_storage"}),
    "handlers.run_point.handler": (900, 1024, True, {"secrets", "s3_read_write", "table_item_write"}),
    "handlers.collect_metrics.handler": (300, 512, False, {"cloudwatch_metrics", "enhanced_monitoring", "rds_describe",
                                                           "table_query_update", "s3_read_write"}),
    "handlers.analyze.handler": (300, 1024, False, {"table_query_update", "s3_read_write"}),
    "handlers.benchmark_failed.handler": (30, 256, False, {"table_item_write"}),
    "handlers.on_restore.handler": (120, 256, False, {"rds_describe", "table_item_write", "completion_event"}),
    "handlers.cleanup_scratch.handler": (300, 512, True, {"secrets", "rds_describe", "s3_read_write",
                                                          "table_read_write"}),
    # issue 15: the comparison workflow and its reaper
    "handlers.compare_start.handler": (30, 256, False, {"table_item_write", "s3_put"}),
    "handlers.compare_collect.handler": (300, 512, False, {"s3_read_write", "table_read_write", "pricing"}),
    "handlers.compare_cleanup.handler": (120, 256, False, {"rds_describe", "rds_delete_comparison", "s3_read_write",
                                                           "table_item_write"}),
    "handlers.reap_instances.handler": (300, 256, False, {"rds_describe", "rds_delete_comparison",
                                                          "table_item_write"}),
    # issue 36: the gate workflow's one step (no VPC, no secret, no write)
    "handlers.evaluate_gate.handler": (60, 256, False, {"table_item_read", "rds_describe", "dms_read", "dms_latency",
                                                        "completion_event"}),
}


def test_catalogue_holds_the_deployed_settings() -> None:
    got = {f.handler: (f.timeout_seconds, f.memory_mb, f.in_vpc, set(f.permission_groups)) for f in FUNCTIONS.values()}
    assert got == DEPLOYED
    assert all(f.timeout_seconds <= 900 and 128 <= f.memory_mb <= 10240 for f in FUNCTIONS.values())
    assert all(f.description.strip() for f in FUNCTIONS.values())


def test_the_trigger_is_in_the_catalogue_but_in_no_workflow() -> None:
    called = {f for w in WORKFLOWS.values() for f in w.functions}
    assert {fid for fid, f in FUNCTIONS.items() if not f.in_workflow} == {
        workflows.TRIGGER_FUNCTION, workflows.REAPER_FUNCTION} == set(FUNCTIONS) - called
    assert workflows.TRIGGERED_WORKFLOW in WORKFLOWS


def test_only_validate_input_and_the_functions_that_read_the_secret_get_the_host_allow_list() -> None:
    assert {f.construct_id for f in FUNCTIONS.values() if f.checks_db_host} == {
        "ValidateInput", "Discover", "Preflight", "WarmUnit", "EndCensus", "Probe", "PlanSweep", "RunPoint",
        "CleanupScratch", "WarmSlot"}


@pytest.mark.parametrize("workflow", WORKFLOWS.values(), ids=lambda w: w.key)
def test_each_asl_file_uses_exactly_the_substitutions_of_its_functions(workflow: Workflow) -> None:
    text = workflow.asl_path.read_text()
    # the bucket's placeholder is offered to every ASL file; the comparison's has no use for it
    assert set(re.findall(r"\$\{([^}]+)\}", text)) | {workflows.BUCKET_SUBSTITUTION} == workflow.substitution_keys()
    definition = json.loads(text)
    # every workflow first validates its input: the gate's one step parses it before anything (InvalidGateInput)
    assert definition["StartAt"] == {"gate": "EvaluateGate"}.get(workflow.key, "ValidateInput")


def test_the_run_asl_is_named_for_the_whole_run() -> None:
    workflow = WORKFLOWS["cutover-run"]
    assert workflow.asl_file == "cutover-run.asl.json" and workflow.asl_path.is_file()
    assert not (workflow.asl_path.parent / "warmup.asl.json").exists()


def test_a_function_missing_from_the_catalogue_or_wrongly_marked_is_refused(monkeypatch) -> None:
    run = WORKFLOWS["cutover-run"]
    workflows.check()
    monkeypatch.setitem(workflows.WORKFLOWS, "cutover-run", replace(run, functions=(*run.functions, "Nope")))
    with pytest.raises(ValueError, match="unknown functions: \\['Nope'\\]"):
        workflows.check()
    monkeypatch.setitem(workflows.WORKFLOWS, "cutover-run", run)
    monkeypatch.setitem(workflows.FUNCTIONS, "OnRestore", replace(FUNCTIONS["OnRestore"], in_workflow=True))
    with pytest.raises(ValueError, match="OnRestore: in_workflow=True but no workflow calls it"):
        workflows.check()


def test_table_definition_is_the_key_schema_the_store_writes() -> None:
    from cutover_prep.dal import store

    assert store.TABLE_KEYS is workflows.TABLE_KEYS
    table = workflows.table_definition("t")
    assert table["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"},
                                  {"AttributeName": "sk", "KeyType": "RANGE"}]
    (index,) = table["GlobalSecondaryIndexes"]
    assert index["IndexName"] == "by_target"
    assert [k["AttributeName"] for k in index["KeySchema"]] == ["gsi1pk", "gsi1sk"]
    assert {a["AttributeName"] for a in table["AttributeDefinitions"]} == {"pk", "sk", "gsi1pk", "gsi1sk"}


def test_the_catalogue_imports_nothing_heavy() -> None:
    code = ("import sys, cutover_prep.workflows; "
            "print(sorted(m for m in ('boto3', 'botocore', 'psycopg', 'oracledb', 'aws_cdk', 'pydantic') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# -- the stack outputs the CLI reads ------------------------------------------------------------------
SM = "arn:aws:states:eu-west-1:123456789012:stateMachine:cutover-prep-warmup"


class FakeCfn:
    def __init__(self, outputs: dict[str, str]) -> None:
        self.outputs = [{"OutputKey": k, "OutputValue": v} for k, v in outputs.items()]

    def describe_stacks(self, StackName: str) -> dict[str, Any]:  # noqa: N803 (boto3's name)
        return {"Stacks": [{"Outputs": self.outputs}]}


def test_cli_finds_the_workflow_by_its_new_output_and_by_the_old_one() -> None:
    new = remote.find_deployment(FakeCfn({"CutoverRunStateMachineArn": SM, "TableName": "t"}), stack="S",
                                 state_machine_arn=None)
    assert new == remote.Deployment(SM, None, "t")
    old = remote.find_deployment(FakeCfn({"StateMachineArn": SM}), stack="S", state_machine_arn=None)
    assert old == remote.Deployment(SM)
    other = SM.replace("warmup", "other")
    both = remote.find_deployment(FakeCfn({"StateMachineArn": other, "CutoverRunStateMachineArn": SM}), stack="S",
                                  state_machine_arn=None)
    assert both.state_machine_arn == SM  # the new name wins
    with pytest.raises(CliProblem, match="has no StateMachineArn output nor CutoverRunStateMachineArn output"):
        remote.find_deployment(FakeCfn({"TableName": "t"}), stack="S", state_machine_arn=None)
