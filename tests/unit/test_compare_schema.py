"""The published JSON Schema of the comparison input matches the pydantic model, and the example
in docs/compare.md is valid by both."""

import json
import re
from pathlib import Path

import jsonschema

from cutover_prep.comparison.model import ComparisonInput

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schema" / "comparison-input.schema.json"


def generated() -> dict:
    """What schema/comparison-input.schema.json holds (regenerate it with this module run as a script)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Cutover Prep comparison input",
            **{k: v for k, v in ComparisonInput.model_json_schema().items() if k != "title"}}


def test_schema_file_is_generated_from_the_model():
    assert json.loads(SCHEMA.read_text()) == generated()


def doc_examples() -> list[dict]:
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", (ROOT / "docs" / "compare.md").read_text(), re.S)]
    return [b for b in blocks if "configurations" in b]


def test_the_doc_example_is_valid_by_the_model_and_the_schema():
    (example,) = doc_examples()
    ComparisonInput.model_validate(example, strict=True)
    jsonschema.validate(example, json.loads(SCHEMA.read_text()))


def test_the_schema_refuses_what_the_model_refuses():
    (example,) = doc_examples()
    schema = json.loads(SCHEMA.read_text())
    for bad in ({**example, "max_paralel": 2}, {**example, "configurations": example["configurations"][:1]}):
        assert not jsonschema.Draft202012Validator(schema).is_valid(bad)


if __name__ == "__main__":
    SCHEMA.write_text(json.dumps(generated(), indent=2) + "\n")
