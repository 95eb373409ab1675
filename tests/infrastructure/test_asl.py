"""Every state machine definition the workflow catalogue names exists, passes asl-validator (npm, pinned in
package.json) and retries only Lambda's own errors; statemachines/ holds nothing else.

Each check is a function of its inputs, tested below on a synthetic folder or definition as well, so a
glob that matches nothing (or a catalogue that names a missing file) fails instead of passing empty."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from cutover_prep.workflows import WORKFLOWS

from .conftest import REPO_ROOT

VALIDATOR = REPO_ROOT / "node_modules" / ".bin" / "asl-validator"
STATEMACHINES = REPO_ROOT / "statemachines"
CATALOGUED = sorted({w.asl_file for w in WORKFLOWS.values()})


def catalogue_mismatch(folder: Path, catalogued: Iterable[str]) -> dict[str, list[str]]:
    """What differs between the folder and the catalogue: files the catalogue names that the ``*.asl.json``
    glob does not find, and files in the folder the catalogue does not name (any name, not only *.asl.json)."""
    catalogued = set(catalogued)
    found = {p.name for p in folder.glob("*.asl.json")}
    present = {p.name for p in folder.iterdir() if not p.name.startswith(".")}
    problems = {"catalogue names, glob does not find": sorted(catalogued - found),
                "in the folder, not in the catalogue": sorted(present - catalogued)}
    if not catalogued:
        problems["catalogue names no definition"] = ["WORKFLOWS[*].asl_file"]
    return {k: v for k, v in problems.items() if v}


def test_the_definitions_are_exactly_the_catalogues() -> None:
    assert len(CATALOGUED) == len(WORKFLOWS) >= 2  # cutover-run and compare today; one file per workflow
    assert catalogue_mismatch(STATEMACHINES, CATALOGUED) == {}
    assert all(w.asl_path.parent == STATEMACHINES for w in WORKFLOWS.values())


def test_the_catalogue_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "a.asl.json").write_text("{}")
    (tmp_path / "stray.asl.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    assert catalogue_mismatch(tmp_path, ["a.asl.json", "missing.asl.json"]) == {
        "catalogue names, glob does not find": ["missing.asl.json"],
        "in the folder, not in the catalogue": ["notes.txt", "stray.asl.json"]}
    empty = tmp_path / "empty"
    empty.mkdir()
    assert catalogue_mismatch(empty, []) == {"catalogue names no definition": ["WORKFLOWS[*].asl_file"]}
    assert catalogue_mismatch(empty, ["a.asl.json"]) == {"catalogue names, glob does not find": ["a.asl.json"]}


@pytest.mark.parametrize("asl_file", CATALOGUED)
def test_asl_validator_accepts(asl_file: str) -> None:
    if not VALIDATOR.exists():
        pytest.skip("node_modules/.bin/asl-validator is missing: run `npm ci` (Node 20+) to install it")
    definition = STATEMACHINES / asl_file
    assert definition.is_file(), f"the catalogue names {definition}, which does not exist"
    result = subprocess.run(
        [str(VALIDATOR), "--json-path", str(definition)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


def retried_errors(states: Mapping[str, Any]) -> Iterator[tuple[str, ...]]:
    """The ErrorEquals of every Retry, nested Map/Parallel states included."""
    for state in states.values():
        yield from (tuple(r["ErrorEquals"]) for r in state.get("Retry", []))
        for sub in ("ItemProcessor", "Iterator"):
            if sub in state:
                yield from retried_errors(state[sub]["States"])
        for branch in state.get("Branches", []):
            yield from retried_errors(branch["States"])


# Steps whose function retries no database error itself, so that the ASL retrying the whole step is the one
# place (issue 32: EndCensus, steps/end_census.py; bounded, see its Retry), and Discover, whose own retries
# cannot give it more time: a dictionary that outlasts one invocation (a cold volume, issue 35 §4) goes on in
# a fresh one from the pages it kept (warmup.discovery.StoredPages), on TransientDatabaseError only, twice.
WHOLE_STEP_RETRIES = {"EndCensus": ("TransientDatabaseError", "DatabaseUnreachable"),
                      "Discover": ("TransientDatabaseError",)}


def retries_only_lambdas_errors(definition: Mapping[str, Any]) -> bool:
    states = {name: state if name not in WHOLE_STEP_RETRIES else
              {**state, "Retry": [r for r in state.get("Retry", [])
                                  if tuple(r["ErrorEquals"]) != WHOLE_STEP_RETRIES[name]]}
              for name, state in definition["States"].items()}
    errors = set(retried_errors(states))
    return bool(errors) and all(all(e.startswith("Lambda.") for e in group) for group in errors)


@pytest.mark.parametrize("asl_file", CATALOGUED)
def test_a_database_error_is_retried_in_one_place_only(asl_file: str) -> None:
    """The functions retry transient database errors themselves (retry.Retries, counted); the ASL retrying
    them too read a chunk up to 9 times. The ASL retries only what Lambda itself throws."""
    definition = json.loads((STATEMACHINES / asl_file).read_text())
    assert retries_only_lambdas_errors(definition), sorted(set(retried_errors(definition["States"])))


def _task(*errors: str) -> dict[str, Any]:
    return {"Type": "Task", "End": True, "Retry": [{"ErrorEquals": list(errors)}] if errors else []}


@pytest.mark.parametrize(("definition", "ok"), [
    ({"States": {"A": _task("Lambda.ServiceException", "Lambda.TooManyRequestsException")}}, True),
    ({"States": {"A": _task("States.ALL")}}, False),
    ({"States": {"A": _task()}}, False),  # no Retry at all: a Lambda throttle would fail the run
    ({"States": {"M": {"Type": "Map", "ItemProcessor": {"States": {"A": _task("DatabaseUnreachable")}}},
                 "B": _task("Lambda.ServiceException")}}, False),
    ({"States": {"P": {"Type": "Parallel", "Branches": [{"States": {"A": _task("States.TaskFailed")}}]},
                 "B": _task("Lambda.ServiceException")}}, False),
    ({"States": {"EndCensus": _task("TransientDatabaseError", "DatabaseUnreachable")}}, False),  # no Lambda retry
    ({"States": {"EndCensus": {**_task("Lambda.ServiceException"), "Retry": [
        {"ErrorEquals": ["Lambda.ServiceException"]},
        {"ErrorEquals": ["TransientDatabaseError", "DatabaseUnreachable"]}]}}}, True),
    ({"States": {"Discover": {**_task("Lambda.ServiceException"), "Retry": [
        {"ErrorEquals": ["Lambda.ServiceException"]},
        {"ErrorEquals": ["TransientDatabaseError", "DatabaseUnreachable"]}]}}}, False),  # Discover: TDE only
])
def test_the_retry_check_can_fail(definition: dict[str, Any], ok: bool) -> None:
    assert retries_only_lambdas_errors(definition) is ok
