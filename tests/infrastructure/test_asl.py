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
