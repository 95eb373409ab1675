"""examples/run-inputs/ (issue 33 §6): the run inputs a newcomer copies, validated as the deployed workflow
validates them (the pydantic models, and the published JSON Schemas), so a copied example is never refused.

- minimal.json, restore.json, full.json: run inputs (``parse_run_input``, schema/run-input.schema.json);
- comparison.json: a ``cutover-prep compare`` input (``parse_comparison_input``, schema/comparison-input.schema.json);
- restore-trigger-profile.json: a stored profile for the restore trigger (``profiles.check``, as
  ``cutover-prep profile put`` checks it), which the trigger turns into a run input (``trigger.build_input``)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from cutover_prep.comparison.workflow import parse_comparison_input
from cutover_prep.dal import profiles
from cutover_prep.models.run_input import InvalidInput, parse_run_input
from cutover_prep.rds.answers import DbInstance
from cutover_prep.restore.trigger import build_input

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "examples" / "run-inputs"
RUN_INPUTS = ("minimal.json", "restore.json", "full.json")


def load(name: str) -> dict:
    return json.loads((INPUTS / name).read_text())


def schema(name: str) -> dict:
    return json.loads((ROOT / "schema" / name).read_text())


def test_every_file_is_one_of_the_kinds_checked_here():
    assert sorted(p.name for p in INPUTS.iterdir()) == sorted(
        [*RUN_INPUTS, "comparison.json", "restore-trigger-profile.json"])


@pytest.mark.parametrize("name", RUN_INPUTS)
def test_the_run_inputs_are_valid_by_the_model_and_the_schema(name):
    example = load(name)
    parse_run_input(example)  # raises InvalidInput naming the field
    jsonschema.validate(example, schema("run-input.schema.json"))


def test_minimal_holds_only_what_is_required_and_full_sets_every_section():
    assert load("minimal.json") == {"target": {"db_instance_identifier": "orders-cutover",
                                               "secret_arn": load("full.json")["target"]["secret_arn"]}}
    assert set(load("full.json")) == {"run_id", "target", "restore", "warmup", "benchmark", "preflight", "verdict"}


def test_the_comparison_is_valid_by_the_model_and_the_schema():
    example = load("comparison.json")
    parse_comparison_input(example)
    jsonschema.validate(example, schema("comparison-input.schema.json"))


def test_the_profile_is_what_profile_put_stores_and_the_trigger_starts_a_valid_run_from_it():
    profile = load("restore-trigger-profile.json")
    profiles.check(profile)
    instance = {"DBInstanceIdentifier": "orders-restored-1", "TagList": [
        {"Key": "cutover-prep:enabled", "Value": "true"}, {"Key": "cutover-prep:profile", "Value": "oracle-prod"}]}
    run = build_input(DbInstance.model_validate(instance), profile)
    assert run["target"]["db_instance_identifier"] == "orders-restored-1"
    parse_run_input(run)


@pytest.mark.parametrize("name", [*RUN_INPUTS, "comparison.json", "restore-trigger-profile.json"])
def test_a_misspelt_field_in_any_example_is_refused(name):
    """The checks above can fail: the same file with one field misspelt is refused, by its name."""
    bad = {**load(name), "benchmrak": {}}
    check = {"comparison.json": parse_comparison_input, "restore-trigger-profile.json": profiles.check}.get(
        name, parse_run_input)
    with pytest.raises(InvalidInput, match="benchmrak"):
        check(bad)


def test_the_comparison_example_is_the_one_compare_md_shows():
    """docs/compare.md shows the example inline (its own test validates it); the file is the same input."""
    import re

    page = (ROOT / "docs" / "compare.md").read_text()
    (shown,) = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", page, re.S) if "configurations" in b]
    assert load("comparison.json") == shown
    assert "](../examples/run-inputs/comparison.json)" in page
