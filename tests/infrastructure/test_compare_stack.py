"""The comparison workflow in the synthesized template (issue 15): its own state machine and
least-privilege role, the tag condition on every DeleteDBInstance, the hourly reaper."""

from __future__ import annotations

import json
from typing import Any

from cutover_prep.settings import DEPLOYMENT_ID_ENV
from cutover_prep.workflows import (
    COMPARE,
    COMPARISON_TAG,
    CUTOVER_RUN,
    DEPLOYMENT_TAG,
    REAPER_FUNCTION,
    WORKFLOWS,
    workflow_functions,
)
from cutover_prep.workflows import FUNCTIONS as CATALOGUE

from .conftest import Synth, actions_of_role, as_list, flat, functions_by_handler, resources_for, role_of

PREFIX = "arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>"


def _machines(synth: Synth) -> dict[str, tuple[str, dict[str, Any]]]:
    return {r["Properties"]["StateMachineName"]: (k, r["Properties"])
            for k, r in synth.resources("AWS::StepFunctions::StateMachine").items()}


def _all_statements(synth: Synth) -> list[tuple[list[str], dict[str, Any]]]:
    found = []
    for policy in synth.resources("AWS::IAM::Policy").values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            found.append(([r["Ref"] for r in policy["Properties"]["Roles"]], statement))
    return found


def test_the_comparison_is_a_second_standard_state_machine_logged_and_traced(plain: Synth) -> None:
    machines = _machines(plain)
    assert set(machines) == {w.state_machine_name for w in WORKFLOWS.values()}  # the gate's too (issue 36)
    _, props = machines[COMPARE.state_machine_name]
    assert props["StateMachineType"] == "STANDARD"
    assert props["TracingConfiguration"] == {"Enabled": True}
    assert props["LoggingConfiguration"]["Level"] == "ALL"
    staged = plain.outdir / f"asset.{props['DefinitionS3Location']['Key']}"
    assert staged.read_text() == COMPARE.asl_path.read_text()  # the ASL file itself
    substitutions = props["DefinitionSubstitutions"]
    assert set(substitutions) == COMPARE.substitution_keys()
    run_logical_id, _ = machines[CUTOVER_RUN.state_machine_name]
    assert substitutions[CUTOVER_RUN.substitution] == {"Ref": run_logical_id}
    assert plain.template["Outputs"][COMPARE.output_name]["Value"] == {"Ref": machines[COMPARE.state_machine_name][0]}


def test_the_comparison_role_may_start_only_the_run_workflow_and_track_its_children(plain: Synth) -> None:
    _, props = _machines(plain)[COMPARE.state_machine_name]
    role = props["RoleArn"]["Fn::GetAtt"][0]
    handlers = functions_by_handler(plain)
    called = {handlers[f.handler][0] for f in workflow_functions(COMPARE)}
    assert resources_for(plain, role, "lambda:InvokeFunction") == ({f"<{f}.Arn>" for f in called}
                                                                    | {f"<{f}.Arn>:*" for f in called})
    run = CUTOVER_RUN.state_machine_name
    assert resources_for(plain, role, "states:StartExecution") == {f"{PREFIX}:stateMachine:{run}"}
    assert resources_for(plain, role, "states:DescribeExecution") == {f"{PREFIX}:execution:{run}:*"}
    assert resources_for(plain, role, "states:StopExecution") == {f"{PREFIX}:execution:{run}:*"}
    rule = ("arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:rule/"
            "StepFunctionsGetEventsForStepFunctionsExecutionRule")
    for action in ("events:PutTargets", "events:PutRule", "events:DescribeRule"):
        assert resources_for(plain, role, action) == {rule}
    actions = actions_of_role(plain, role)
    assert not any(a.startswith(("rds:", "secretsmanager:", "s3:", "dynamodb:")) for a in actions)


def test_every_delete_of_a_db_instance_is_conditioned_on_this_deployments_tag(plain: Synth, in_vpc: Synth) -> None:
    """Issue 20: the condition was the comparison tag with any value ("?*"), so IAM let a comparison delete
    another deployment's instances (or any instance that had the tag copied onto it). Now the instance must
    carry this stack's id in cutover-prep:deployment (RDS's rds:db-tag condition key, "Specifying conditions:
    Using custom tags", RDS User Guide) as well as a comparison's tag."""
    for synth in (plain, in_vpc):
        deletes = [(roles, s) for roles, s in _all_statements(synth) if "rds:DeleteDBInstance" in as_list(s["Action"])]
        handlers = functions_by_handler(synth)
        may_delete = {role_of(handlers[CATALOGUE[f].handler][1]) for f in ("CompareCleanup", REAPER_FUNCTION)}
        assert {r for roles, _ in deletes for r in roles} == may_delete  # no other role may delete
        for _, statement in deletes:
            assert as_list(statement["Action"]) == ["rds:DeleteDBInstance"]
            assert statement["Condition"] == {
                "StringEquals": {f"rds:db-tag/{DEPLOYMENT_TAG}": {"Ref": "AWS::StackId"}},
                "StringLike": {f"rds:db-tag/{COMPARISON_TAG}": "?*"}}
            # only the names a comparison restores (issue 32 §8.6): IAM keeps any other instance out of reach
            assert {flat(r) for r in as_list(statement["Resource"])} == {
                "arn:<AWS::Partition>:rds:<AWS::Region>:<AWS::AccountId>:db:cprep-*"}


def test_every_function_knows_its_deployment_by_the_stack_id(plain: Synth, in_vpc: Synth) -> None:
    """The value the run tags its restores with and the delete condition above compares: the same StackId."""
    for synth in (plain, in_vpc):
        functions = synth.resources("AWS::Lambda::Function")
        assert len(functions) >= len(CATALOGUE)
        for logical_id, function in functions.items():
            if function["Properties"].get("Handler") not in {f.handler for f in CATALOGUE.values()}:
                continue  # CDK's own helper functions (log retention, custom resources)
            variables = function["Properties"]["Environment"]["Variables"]
            assert variables[DEPLOYMENT_ID_ENV] == {"Ref": "AWS::StackId"}, logical_id


def test_the_reaper_runs_every_hour_and_may_ask_only_about_comparisons(plain: Synth) -> None:
    handlers = functions_by_handler(plain)
    logical_id, function = handlers[CATALOGUE[REAPER_FUNCTION].handler]
    rules = [r["Properties"] for r in plain.resources("AWS::Events::Rule").values()
             if any(t["Arn"] == {"Fn::GetAtt": [logical_id, "Arn"]} for t in r["Properties"].get("Targets", []))]
    assert [r["ScheduleExpression"] for r in rules] == ["rate(1 hour)"]
    role = role_of(function)
    assert resources_for(plain, role, "states:DescribeExecution") == {
        f"{PREFIX}:execution:{COMPARE.state_machine_name}:*"}
    actions = actions_of_role(plain, role)
    assert "states:StartExecution" not in actions and "rds:RestoreDBInstanceFromDBSnapshot" not in actions
    assert not any(a.startswith(("secretsmanager:", "s3:")) for a in actions)


def test_a_renamed_run_state_machine_gets_its_own_comparison_name(synth_factory) -> None:
    synth = synth_factory({"state_machine_name": "team-a-warmup"})
    machines = _machines(synth)
    assert set(machines) == {"team-a-warmup", "team-a-warmup-compare", "team-a-warmup-gate"}
    _, props = machines["team-a-warmup-compare"]
    role = props["RoleArn"]["Fn::GetAtt"][0]
    assert resources_for(synth, role, "states:StartExecution") == {f"{PREFIX}:stateMachine:team-a-warmup"}
    assert json.dumps(synth.report).count("ValidationFailed") == 0 and synth.error is None
