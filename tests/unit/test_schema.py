"""The published JSON Schema of the run input matches the pydantic model."""

import json
from pathlib import Path

from cutover_prep.inputs import RunInput

SCHEMA = Path(__file__).resolve().parents[2] / "schema" / "run-input.schema.json"


def test_schema_file_is_generated_from_the_model():
    published = json.loads(SCHEMA.read_text())
    generated = RunInput.model_json_schema()
    assert {k: v for k, v in published.items() if k not in ("$schema", "title")} == {
        k: v for k, v in generated.items() if k != "title"}
