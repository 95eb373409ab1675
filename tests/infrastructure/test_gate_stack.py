"""The gate workflow in the synthesized template (issue 36 §2): its own STANDARD state machine from the very
ASL file, logged (ALL) and traced, a role that may invoke EvaluateGate only, and EvaluateGate's own role: read
the run item, describe RDS and DMS, read DMS latency, put events on the default bus — no secret, no write."""

from __future__ import annotations

from cutover_prep.workflows import FUNCTIONS, GATE

from .conftest import Synth, actions_of_role, functions_by_handler, resources_for, role_of


def _gate_machine(synth: Synth) -> tuple[str, dict]:
    found = [(k, r["Properties"]) for k, r in synth.resources("AWS::StepFunctions::StateMachine").items()
             if r["Properties"]["StateMachineName"] == GATE.state_machine_name]
    assert len(found) == 1
    return found[0]


def test_the_gate_is_a_standard_state_machine_from_its_asl_file_logged_and_traced(plain: Synth) -> None:
    logical_id, props = _gate_machine(plain)
    assert props["StateMachineType"] == "STANDARD"
    assert props["TracingConfiguration"] == {"Enabled": True}
    assert props["LoggingConfiguration"]["Level"] == "ALL"
    staged = plain.outdir / f"asset.{props['DefinitionS3Location']['Key']}"
    assert staged.read_text() == GATE.asl_path.read_text()
    assert set(props["DefinitionSubstitutions"]) == {FUNCTIONS["EvaluateGate"].substitution}
    assert plain.template["Outputs"][GATE.output_name]["Value"] == {"Ref": logical_id}


def test_the_gate_role_invokes_evaluate_gate_only(plain: Synth) -> None:
    _, props = _gate_machine(plain)
    role = props["RoleArn"]["Fn::GetAtt"][0]
    evaluate, _ = functions_by_handler(plain)[FUNCTIONS["EvaluateGate"].handler]
    assert resources_for(plain, role, "lambda:InvokeFunction") == {f"<{evaluate}.Arn>", f"<{evaluate}.Arn>:*"}
    assert not {a for a in actions_of_role(plain, role) if a.startswith(("rds:", "dms:", "secretsmanager:"))}


def test_evaluate_gate_reads_and_publishes_but_never_writes_nor_reads_a_secret(plain: Synth) -> None:
    _, function = functions_by_handler(plain)[FUNCTIONS["EvaluateGate"].handler]
    actions = actions_of_role(plain, role_of(function))
    assert {"dynamodb:GetItem", "rds:DescribeDBInstances", "dms:DescribeReplicationTasks",
            "dms:DescribeTableStatistics", "cloudwatch:GetMetricStatistics", "events:PutEvents"} <= actions
    assert not {a for a in actions if a.startswith("secretsmanager:") or a in {
        "dynamodb:PutItem", "dynamodb:UpdateItem", "s3:PutObject", "rds:DeleteDBInstance", "rds:ModifyDBInstance"}}
