"""cutover-prep compare: exit codes as start's, the deployment found from the stack's outputs."""

from __future__ import annotations

import json

import boto3
import pytest
from moto import mock_aws

from cutover_prep.cli import compare, remote
from cutover_prep.cli.main import main
from cutover_prep.comparison.workflow import ChildRun, _child_failure

ARN = "arn:aws:states:us-east-1:123456789012:execution:cutover-prep-compare:c1"


def desc(status: str, **kw) -> dict:
    return {"executionArn": ARN, "status": status, **kw}


def test_a_recommendation_is_exit_0_and_none_is_exit_1():
    output = {"recommendation": {"name": "io1", "why": "cheapest meeting every target"},
              "configurations": [{"name": "gp2", "status": "MEASURED", "meets_targets": False,
                                  "why": "IOPS 900 < 2000"},
                                 {"name": "io1", "status": "MEASURED", "meets_targets": True, "why": ""}],
              "cleanup": {"deleted": ["cprep-c1-gp2", "cprep-c1-io1"], "left": []},
              "comparison_uri": "s3://b/runs/c1/comparison.json"}
    code, answer, lines = compare.outcome(desc("SUCCEEDED", output=json.dumps(output)), "c1")
    assert code == 0 and answer["exit_code"] == 0
    assert lines[0] == "comparison c1: recommendation io1: cheapest meeting every target"
    assert "  - gp2: MEASURED, misses the targets: IOPS 900 < 2000" in lines
    assert "  cleanup: 2 instance(s) deleted, none left" in lines
    output["recommendation"] = {"name": None, "why": "no configuration meets min_read_iops 2000"}
    output["cleanup"]["left"] = ["cprep-c1-io1"]
    code, _, lines = compare.outcome(desc("SUCCEEDED", output=json.dumps(output)), "c1")
    assert code == 1 and lines[0].startswith("comparison c1: no recommendation: no configuration")
    assert "LEFT: cprep-c1-io1" in lines[-2]
    output["cleanup"]["not_ours"] = ["customer-copy"]  # found by the comparison's tag, not proven its own
    _, _, lines = compare.outcome(desc("SUCCEEDED", output=json.dumps(output)), "c1")
    assert lines[-2].endswith("LEFT: cprep-c1-io1; kept, not proven its own: customer-copy")


@pytest.mark.parametrize(("status", "error", "code"), [
    ("FAILED", "InvalidInput", 2), ("FAILED", "ComparisonFailed", 3), ("ABORTED", None, 3), ("TIMED_OUT", None, 3),
    ("RUNNING", None, 4)])
def test_failures_and_timeouts_have_start_s_exit_codes(status, error, code):
    got, answer, lines = compare.outcome(desc(status, **({"error": error, "cause": "why"} if error else {})), "c1")
    assert got == code == answer["exit_code"]
    assert lines[0].startswith("comparison c1: ")


def test_the_state_machine_comes_from_the_stack_outputs():
    with mock_aws():
        cfn = boto3.client("cloudformation", region_name="us-east-1")
        template = {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}},
                    "Outputs": {"CompareStateMachineArn": {"Value": "arn:aws:states:us-east-1:123456789012:"
                                                                    "stateMachine:cutover-prep-compare"}}}
        cfn.create_stack(StackName="New", TemplateBody=json.dumps(template))
        cfn.create_stack(StackName="Old", TemplateBody=json.dumps({"Resources": template["Resources"]}))
        assert compare.find_state_machine(cfn, "New").endswith(":stateMachine:cutover-prep-compare")
        with pytest.raises(remote.CliProblem, match="has no CompareStateMachineArn output: deploy this version"):
            compare.find_state_machine(cfn, "Old")
        with pytest.raises(remote.CliProblem, match="stack 'Gone' not found"):
            compare.find_state_machine(cfn, "Gone")


def test_a_run_input_is_not_taken_for_a_comparison():
    assert not compare.is_comparison_input({"target": {"db_instance_identifier": "x"}, "restore": {
        "snapshot_identifier": "s"}})
    assert compare.is_comparison_input({"comparison_id": "c1"})


def test_compare_reads_its_input_file_and_says_what_is_wrong_in_one_line(tmp_path, capsys):
    assert main(["compare", "--input", str(tmp_path / "missing.json")]) == 2
    (tmp_path / "bad.json").write_text("{")
    assert main(["compare", "--input", str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("cutover-prep: --input ") for line in err)


def test_a_failed_child_s_cause_is_read_from_its_describe_execution_answer():
    cause = json.dumps({"ExecutionArn": "arn:x", "Status": "FAILED", "Error": "RestoreFailed",
                        "Cause": "restore of cprep-c1-gp2 was refused: StorageQuotaExceeded"})
    line = _child_failure(ChildRun.model_validate({"name": "gp2", "run_id": "c1-gp2",
                                                   "db_instance_identifier": "cprep-c1-gp2",
                                                   "error": {"Error": "States.TaskFailed", "Cause": cause}}))
    assert line == ("its run c1-gp2 failed: States.TaskFailed: RestoreFailed: restore of cprep-c1-gp2 was "
                    "refused: StorageQuotaExceeded")
