"""The published JSON Schema of the run input matches the pydantic model."""

import json
import re
from pathlib import Path

import jsonschema
import pytest

from cutover_prep.models.run_input import RunInput, parse_run_input

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schema" / "run-input.schema.json"


def test_schema_file_is_generated_from_the_model():
    published = json.loads(SCHEMA.read_text())
    generated = RunInput.model_json_schema()
    assert {k: v for k, v in published.items() if k not in ("$schema", "title")} == {
        k: v for k, v in generated.items() if k != "title"}


def readme_inputs() -> list[dict]:
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", (ROOT / "README.md").read_text(), re.S)]
    return [b for b in blocks if "target" in b]


def test_the_readme_shows_several_example_inputs():
    assert len(readme_inputs()) >= 3


@pytest.mark.parametrize("example", readme_inputs(), ids=lambda e: e.get("run_id") or sorted(e)[-1])
def test_every_example_input_in_the_readme_is_valid_by_the_model_and_the_schema(example):
    parse_run_input(example)  # raises InvalidInput naming the field
    jsonschema.validate(example, json.loads(SCHEMA.read_text()))
