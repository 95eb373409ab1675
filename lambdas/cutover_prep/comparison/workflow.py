"""The comparison workflow's steps in AWS (``statemachines/compare.asl.json``).

- ``start``: validate the comparison input (a bad one is ``InvalidInput``, before anything is
  restored), record the comparison in the table, plan one child run per configuration (the run
  workflow's input, ``model.child_run_input``, checked as the run workflow will check it).
- ``collect``: read each child's ``findings.json``, price the configurations, write
  ``comparison.json`` (``result.py``, ``pricing.py``).
- ``finish``: the Cleanup state, on every path that can run a state: delete what the comparison
  restored (``cleanup.py``), record deleted/left in ``comparison.json`` and the table.

Table: ``pk=COMPARISON#<id>``, ``sk=COMPARISON``: status, execution ARN, instances, cleanup
(the reaper reads the execution ARN to tell whether the comparison still runs).
S3: ``runs/<id>/comparison.json`` (the children's evidence is under ``runs/<id>-<name>/``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import ClientError
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError

from cutover_prep.comparison.cleanup import clean_up
from cutover_prep.comparison.model import (
    Cleanup,
    ComparisonError,
    ComparisonInput,
    ComparisonResult,
    Recommendation,
    child_run_input,
    comparison_key,  # noqa: F401  (the record's key, for the tests)
)
from cutover_prep.comparison.page import render_page
from cutover_prep.comparison.result import comparison_result
from cutover_prep.dal.dynamo import now_iso
from cutover_prep.dal.records import evidence
from cutover_prep.dal.records.deployment import ComparisonItem
from cutover_prep.dal.records.findings import Findings
from cutover_prep.dal.store import Store
from cutover_prep.models.run_input import InvalidInput, check_depth, error_lines, parse_run_input
from cutover_prep.settings import deployment_id

COMPARISON_FILE = evidence.COMPARISON
PAGE_FILE = evidence.COMPARISON_PAGE
# An instance RDS would not delete yet (still creating, say) is asked again after the ASL's
# CleanupAgain wait, at most this many times in all; then it is left to the reaper.
CLEANUP_ATTEMPTS = 6


# -- what the workflow hands the steps --------------------------------------------------------------
class _State(BaseModel):
    model_config = ConfigDict(extra="ignore")


class StepError(_State):
    """A Catch's error: Step Functions' ``Error`` and ``Cause``."""

    error: str | None = Field(None, alias="Error")
    cause: str | None = Field(None, alias="Cause")


class ChildRun(_State):
    """A configuration's child run, as StartComparison plans it (``runs[]``) and the Map hands it on."""

    name: str
    run_id: str
    db_instance_identifier: str
    run_input: dict[str, Any] = Field(default_factory=dict)  # the run workflow's input (``model.child_run_input``)
    status: str | None = None  # the Map's result: SUCCEEDED, FAILED ...
    error: StepError | None = None  # the Map's Catch


class ChildExecution(_State):
    """A failed child's DescribeExecution answer (a Catch's cause), its fields in either case."""

    error: str | None = Field(None, validation_alias=AliasChoices("Error", "error"))
    status: str | None = Field(None, validation_alias=AliasChoices("Status", "status"))
    cause: str | None = Field(None, validation_alias=AliasChoices("Cause", "cause"))


class CleanupAttempt(_State):
    attempt: int | None = 0


class PlannedInstance(_State):
    db_instance_identifier: str


class CleanupState(_State):
    """The workflow's state when it reaches Cleanup: the plan, an earlier attempt, the error that led here."""

    runs: list[PlannedInstance] = Field(default_factory=list)
    cleanup: CleanupAttempt = Field(default_factory=CleanupAttempt)
    error: StepError | None = None


# -- where things are (the record's key: model.comparison_key) -------------------------------------
def evidence_key(comparison_id: str, name: str = COMPARISON_FILE) -> str:
    return evidence.key(comparison_id, name)


def get_comparison(store: Store, comparison_id: str) -> ComparisonItem | None:
    return store.deployment.comparison(comparison_id)


def update_comparison(store: Store, comparison_id: str, **attrs: Any) -> None:
    store.deployment.update_comparison(comparison_id, **attrs)


# -- StartComparison ------------------------------------------------------------------------------
def parse_comparison_input(raw: Any) -> ComparisonInput:
    """The validated ``ComparisonInput``; ``InvalidInput`` naming each bad field otherwise."""
    if not isinstance(raw, dict):
        raise InvalidInput("input: must be a JSON object with comparison_id, snapshot_identifier, target and "
                           "configurations (see schema/comparison-input.schema.json)")
    check_depth(raw)
    try:
        return ComparisonInput.model_validate(raw, strict=True)
    except ValidationError as exc:
        lines = [line.replace("schema/run-input.schema.json", "schema/comparison-input.schema.json")
                 for line in error_lines(exc)]
        raise InvalidInput("; ".join(lines), lines) from None


def child_runs(comparison: ComparisonInput, execution_arn: str | None = None) -> list[ChildRun]:
    """One child run per configuration: its run input, checked as the run workflow's ValidateInput
    will (a configuration it would reject is a bad comparison input now, not a failed child later).
    With the comparison's execution ARN the child names it as its parent (the console links them)."""
    runs = []
    for configuration in comparison.configurations:
        run_input = child_run_input(comparison, configuration)
        if execution_arn:
            run_input["AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID"] = execution_arn
        try:
            parse_run_input(run_input)
        except InvalidInput as exc:
            raise InvalidInput(f"configurations.{configuration.name}: the run it starts would be rejected: {exc}",
                               [f"configurations.{configuration.name}: {line}" for line in exc.problems]) from None
        runs.append(ChildRun(name=configuration.name, run_id=run_input["run_id"],
                             db_instance_identifier=run_input["target"]["db_instance_identifier"],
                             run_input=run_input))
    return runs


def start(raw: Any, *, execution_name: str | None, execution_arn: str | None, store: Store) -> dict[str, Any]:
    comparison = parse_comparison_input(raw)
    runs = child_runs(comparison, execution_arn)
    comparison_id = comparison.comparison_id
    record = ComparisonItem.new(
        comparison_id=comparison_id, status="RUNNING", execution_arn=execution_arn, execution_name=execution_name,
        started_at=datetime.now(UTC).isoformat(), updated_at=now_iso(),
        snapshot_identifier=comparison.snapshot_identifier, ttl_hours=comparison.ttl_hours,
        configurations=[r.name for r in runs], instances=[r.db_instance_identifier for r in runs],
        # each child's ValidateInput records its restore here before StartRestore calls RDS
        # (ownership.claim_restore); only an instance recorded here can be proven the comparison's own
        restores={},
    )
    # one execution per comparison id: a second one would restore onto the same instance names
    if not store.deployment.start_comparison(record):
        raise InvalidInput(f"comparison_id: {comparison_id!r} was used by another execution already; "
                           "pick a new comparison_id")
    store.put_json(evidence_key(comparison_id, evidence.COMPARISON_INPUT), comparison.model_dump(mode="json"))
    return {"comparison_id": comparison_id, "max_parallel": comparison.max_parallel,
            "ttl_hours": comparison.ttl_hours, "evidence_key": evidence_key(comparison_id),
            "runs": [r.model_dump(include={"name", "run_id", "db_instance_identifier", "run_input"}) for r in runs]}


# -- CollectResults ---------------------------------------------------------------------------------
def collect(comparison_id: str, results: list[dict[str, Any]], *, store: Store, pricing: Any = None) -> dict[str, Any]:
    """comparison.json from each child's findings (a child that failed or left none is FAILED)."""
    comparison = ComparisonInput.model_validate(store.get_json(evidence_key(comparison_id, evidence.COMPARISON_INPUT)))
    findings: dict[str, Findings] = {}
    failures: dict[str, str] = {}
    for child in map(ChildRun.model_validate, results):
        if child.status == "SUCCEEDED":
            try:
                findings[child.name] = Findings.read(store.get_json(evidence.key(child.run_id, evidence.FINDINGS)))
                continue
            except ClientError as exc:
                failures[child.name] = f"its run {child.run_id} left no findings.json ({exc.response['Error']['Code']})"
        else:
            failures[child.name] = _child_failure(child)
    result = comparison_result(comparison, findings, failures, store=store, pricing=pricing)
    store.put_json(evidence_key(comparison_id), result.stored())
    update_comparison(store, comparison_id, step="collected", recommendation=result.recommendation.name)
    return {"comparison_uri": store.uri(evidence_key(comparison_id)),
            "recommendation": result.recommendation.model_dump(mode="json")}


def _child_failure(child: ChildRun) -> str:
    error = child.error or StepError()
    cause = str(error.cause or "")
    try:  # startExecution.sync: the cause is the child's DescribeExecution answer, as JSON
        described = ChildExecution.model_validate_json(cause)
        cause = f"{described.error or described.status}: {described.cause or ''}"
    except ValidationError:
        pass
    return f"its run {child.run_id} failed: {error.error or 'error'}: {cause}"[:500].rstrip(": ")


# -- Cleanup -----------------------------------------------------------------------------------------
def finish(comparison_id: str, state: dict[str, Any], *, rds: Any, store: Store) -> dict[str, Any]:
    """Delete what the comparison restored; record it; the execution's output (or its failure cause)."""
    given = CleanupState.model_validate(state)
    attempt = (given.cleanup.attempt or 0) + 1
    cleanup = clean_up(rds, comparison_id, [r.db_instance_identifier for r in given.runs],
                       record=get_comparison(store, comparison_id), deployment=deployment_id())
    key = evidence_key(comparison_id)
    stored = ComparisonResult.model_validate(store.get_json(key)) if store.exists(key) else None
    deleted = [o.model_dump(mode="json", exclude_unset=True) for o in cleanup.deleted]
    if attempt > 1 and stored is not None:  # deleted by an earlier attempt: still deleted
        earlier = {d["db_instance_identifier"]: d for d in stored.cleanup.details if "db_instance_identifier" in d}
        seen_now = {o.db_instance_identifier for o in cleanup.deleted + cleanup.left + cleanup.not_ours}
        deleted = [earlier.get(i) or {"db_instance_identifier": i, "status": "deleting"}
                   for i in stored.cleanup.deleted if i not in seen_now] + deleted
    document = stored or ComparisonResult(comparison_id=comparison_id, configurations=[], recommendation=Recommendation(
        name=None, why="the comparison did not finish: no results to compare"))
    # deleted: proven the comparison's own, deleted without a final snapshot (each detail: final_snapshot
    # null and the proof); left: RDS would not delete it yet; not_ours: found by tag or name, never deleted
    document.cleanup = Cleanup(
        deleted=[d["db_instance_identifier"] for d in deleted], left=cleanup.identifiers("left"),
        not_ours=cleanup.identifiers("not_ours"),
        details=deleted + [o.model_dump(mode="json", exclude_unset=True) for o in cleanup.left + cleanup.not_ours])
    error = given.error
    if error is not None:
        document.error = ComparisonError(error=error.error, cause=str(error.cause or "")[:1000])
    store.put_json(key, document.stored())
    page_key = evidence_key(comparison_id, PAGE_FILE)  # the page beside the document, as the local run writes it
    store.put_text(page_key, render_page(document), evidence.HTML)
    status = "FAILED" if error is not None else "SUCCEEDED"
    kept = document.cleanup.model_dump(mode="json")
    update_comparison(store, comparison_id, status=status, step="cleaned-up", cleanup=kept)
    retry = attempt < CLEANUP_ATTEMPTS and any(o.transient for o in cleanup.left)
    summary = {
        "attempt": attempt, "retry": retry,
        "comparison_id": comparison_id, "status": status, "comparison_uri": store.uri(key),
        "page_uri": store.uri(page_key),
        "recommendation": document.recommendation.model_dump(mode="json"),
        "configurations": [c.model_dump(mode="json", include={"name", "status", "meets_targets", "why"})
                           for c in document.configurations],
        "cleanup": kept,
    }
    if error is not None:
        left = f"; {len(cleanup.left)} instance(s) left: {', '.join(document.cleanup.left)}" if cleanup.left else ""
        summary["cause"] = (f"{error.error or 'error'}: {str(error.cause or '')[:500]}; cleanup deleted "
                            f"{len(cleanup.deleted)} instance(s){left}")
    if cleanup.not_ours:
        summary["not_ours"] = (f"{len(cleanup.not_ours)} instance(s) carry the comparison's tag or an instance name "
                               f"it planned but are not proven its own, so were not deleted: "
                               f"{', '.join(document.cleanup.not_ours)} (see cleanup.details)")
    return summary
