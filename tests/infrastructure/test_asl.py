"""Every state machine definition passes asl-validator (npm, pinned in package.json)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .conftest import REPO_ROOT

VALIDATOR = REPO_ROOT / "node_modules" / ".bin" / "asl-validator"
DEFINITIONS = sorted((REPO_ROOT / "statemachines").glob("*.asl.json"))


def test_there_are_definitions() -> None:
    assert DEFINITIONS, "no statemachines/*.asl.json"


@pytest.mark.parametrize("definition", DEFINITIONS, ids=lambda p: p.name)
def test_asl_validator_accepts(definition: Path) -> None:
    if not VALIDATOR.exists():
        pytest.skip("node_modules/.bin/asl-validator is missing: run `npm ci` (Node 20+) to install it")
    result = subprocess.run(
        [str(VALIDATOR), "--json-path", str(definition)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_database_error_is_retried_in_one_place_only():
    """The functions retry transient database errors themselves (retry.Retries, counted); the ASL retrying
    them too read a chunk up to 9 times. The ASL retries only what Lambda itself throws."""
    import json
    from pathlib import Path

    def retries(states):
        for state in states.values():
            yield from (tuple(r["ErrorEquals"]) for r in state.get("Retry", []))
            for sub in ("ItemProcessor", "Iterator"):
                if sub in state:
                    yield from retries(state[sub]["States"])

    for asl in (Path(__file__).resolve().parents[2] / "statemachines").glob("*.asl.json"):
        errors = set(retries(json.loads(asl.read_text())["States"]))
        assert errors and all(all(e.startswith("Lambda.") for e in group) for group in errors), errors
