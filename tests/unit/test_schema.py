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


def documented_inputs() -> list[dict]:
    """Every run input a reader may copy: the JSON blocks of the README and docs/*.md that hold a target with
    an instance (a comparison's target has none), and examples/run-inputs/ (tests/unit/test_example_inputs.py)."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    blocks = [json.loads(b) for page in pages for b in re.findall(r"```json\n(.*?)```", page.read_text(), re.S)
              if '"target"' in b and '"configurations"' not in b]
    blocks = [b for b in blocks if isinstance(b.get("target"), dict) and "db_instance_identifier" in b["target"]]
    files = [json.loads(p.read_text()) for p in sorted((ROOT / "examples" / "run-inputs").glob("*.json"))]
    return blocks + [f for f in files if "db_instance_identifier" in f.get("target", {})]


def test_the_docs_show_several_example_inputs():
    assert len(documented_inputs()) >= 3


@pytest.mark.parametrize("example", documented_inputs(), ids=lambda e: e.get("run_id") or sorted(e)[-1])
def test_every_example_input_in_the_docs_is_valid_by_the_model_and_the_schema(example):
    parse_run_input(example)  # raises InvalidInput naming the field
    jsonschema.validate(example, json.loads(SCHEMA.read_text()))
