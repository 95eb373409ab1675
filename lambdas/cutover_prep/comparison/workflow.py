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
from pydantic import ValidationError

from cutover_prep.comparison.cleanup import clean_up
from cutover_prep.comparison.model import comparison_key  # noqa: F401  (the record's key, for the tests)
from cutover_prep.comparison.page import render_page
from cutover_prep.dal.dynamo import now_iso
from cutover_prep.dal.records import evidence
from cutover_prep.dal.records.deployment import ComparisonItem
from cutover_prep.dal.store import Store
from cutover_prep.models.run_input import InvalidInput, check_depth, error_lines, parse_run_input
from cutover_prep.settings import deployment_id

COMPARISON_FILE = evidence.COMPARISON
PAGE_FILE = evidence.COMPARISON_PAGE
# An instance RDS would not delete yet (still creating, say) is asked again after the ASL's
# CleanupAgain wait, at most this many times in all; then it is left to the reaper.
CLEANUP_ATTEMPTS = 6


# -- where things are (the record's key: model.comparison_key) -------------------------------------
def evidence_key(comparison_id: str, name: str = COMPARISON_FILE) -> str:
    return evidence.key(comparison_id, name)


def get_comparison(store: Store, comparison_id: str) -> ComparisonItem | None:
    return store.deployment.comparison(comparison_id)


def update_comparison(store: Store, comparison_id: str, **attrs: Any) -> None:
    store.deployment.update_comparison(comparison_id, **attrs)


# -- StartComparison ------------------------------------------------------------------------------
def parse_comparison_input(raw: Any) -> Any:
    """The validated ``ComparisonInput``; ``InvalidInput`` naming each bad field otherwise."""
    from cutover_prep.comparison.model import ComparisonInput

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


def child_runs(comparison: Any, execution_arn: str | None = None) -> list[dict[str, Any]]:
    """One child run per configuration: its run input, checked as the run workflow's ValidateInput
    will (a configuration it would reject is a bad comparison input now, not a failed child later).
    With the comparison's execution ARN the child names it as its parent (the console links them)."""
    from cutover_prep.comparison.model import child_run_input

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
        runs.append({"name": configuration.name, "run_id": run_input["run_id"],
                     "db_instance_identifier": run_input["target"]["db_instance_identifier"],
                     "run_input": run_input})
    return runs


def start(raw: Any, *, execution_name: str | None, execution_arn: str | None, store: Store) -> dict[str, Any]:
    comparison = parse_comparison_input(raw)
    runs = child_runs(comparison, execution_arn)
    comparison_id = comparison.comparison_id
    record = ComparisonItem.new(
        comparison_id=comparison_id, status="RUNNING", execution_arn=execution_arn, execution_name=execution_name,
        started_at=datetime.now(UTC).isoformat(), updated_at=now_iso(),
        snapshot_identifier=comparison.snapshot_identifier, ttl_hours=comparison.ttl_hours,
        configurations=[r["name"] for r in runs], instances=[r["db_instance_identifier"] for r in runs],
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
            "ttl_hours": comparison.ttl_hours, "evidence_key": evidence_key(comparison_id), "runs": runs}


# -- CollectResults ---------------------------------------------------------------------------------
def collect(comparison_id: str, results: list[dict[str, Any]], *, store: Store, pricing: Any = None) -> dict[str, Any]:
    """comparison.json from each child's findings (a child that failed or left none is FAILED)."""
    from cutover_prep.comparison.model import ComparisonInput

    comparison = ComparisonInput.model_validate(store.get_json(evidence_key(comparison_id, evidence.COMPARISON_INPUT)))
    findings: dict[str, Any] = {}
    failures: dict[str, str] = {}
    for result in results:
        name, run_id = result["name"], result["run_id"]
        if result.get("status") == "SUCCEEDED":
            try:
                findings[name] = store.get_json(evidence.key(run_id, evidence.FINDINGS))
                continue
            except ClientError as exc:
                failures[name] = f"its run {run_id} left no findings.json ({exc.response['Error']['Code']})"
        else:
            failures[name] = _child_failure(result)
    document = build_document(comparison, findings, failures, store=store, pricing=pricing)
    store.put_json(evidence_key(comparison_id), document)
    update_comparison(store, comparison_id, step="collected",
                      recommendation=(document.get("recommendation") or {}).get("name"))
    return {"comparison_uri": store.uri(evidence_key(comparison_id)),
            "recommendation": document.get("recommendation")}


def _child_failure(result: dict[str, Any]) -> str:
    error = result.get("error") or {}
    cause = str(error.get("Cause") or "")
    try:  # startExecution.sync: the cause is the child's DescribeExecution answer, as JSON
        import json

        child = json.loads(cause)
        cause = f"{child.get('Error') or child.get('error') or child.get('Status') or child.get('status')}: " \
                f"{child.get('Cause') or child.get('cause') or ''}"
    except (ValueError, AttributeError):
        pass
    return f"its run {result.get('run_id')} failed: {error.get('Error', 'error')}: {cause}"[:500].rstrip(": ")


def build_document(comparison: Any, findings: dict[str, Any], failures: dict[str, str], *, store: Store | None,
                   pricing: Any) -> dict[str, Any]:
    from cutover_prep.comparison import result as result_module

    return result_module.comparison_document(comparison, findings, failures, store=store, pricing=pricing)


# -- Cleanup -----------------------------------------------------------------------------------------
def finish(comparison_id: str, state: dict[str, Any], *, rds: Any, store: Store) -> dict[str, Any]:
    """Delete what the comparison restored; record it; the execution's output (or its failure cause)."""
    identifiers = [r["db_instance_identifier"] for r in state.get("runs") or []]
    attempt = int((state.get("cleanup") or {}).get("attempt") or 0) + 1
    cleanup = clean_up(rds, comparison_id, identifiers, record=get_comparison(store, comparison_id),
                       deployment=deployment_id())
    if attempt > 1 and store.exists(evidence_key(comparison_id)):  # deleted by an earlier attempt: still deleted
        earlier = store.get_json(evidence_key(comparison_id)).get("cleanup") or {}
        details = {d.get("db_instance_identifier"): d for d in earlier.get("details") or []}
        seen_now = {d["db_instance_identifier"] for kind in cleanup.values() for d in kind}
        cleanup["deleted"] = [details.get(i) or {"db_instance_identifier": i, "status": "deleting"}
                              for i in earlier.get("deleted") or [] if i not in seen_now] + cleanup["deleted"]
    error = state.get("error")
    key = evidence_key(comparison_id)
    document: dict[str, Any] = store.get_json(key) if store.exists(key) else {
        "comparison_id": comparison_id, "configurations": [],
        "recommendation": {"name": None, "why": "the comparison did not finish: no results to compare"}}
    # deleted: proven the comparison's own, deleted without a final snapshot (each detail: final_snapshot
    # null and the proof); left: RDS would not delete it yet; not_ours: found by tag or name, never deleted
    document["cleanup"] = {kind: [d["db_instance_identifier"] for d in cleanup[kind]]
                           for kind in ("deleted", "left", "not_ours")}
    document["cleanup"]["details"] = cleanup["deleted"] + cleanup["left"] + cleanup["not_ours"]
    if error:
        document["error"] = {"error": error.get("Error"), "cause": str(error.get("Cause") or "")[:1000]}
    store.put_json(key, document)
    page_key = evidence_key(comparison_id, PAGE_FILE)  # the page beside the document, as the local run writes it
    store.put_text(page_key, render_page(document), evidence.HTML)
    status = "FAILED" if error else "SUCCEEDED"
    update_comparison(store, comparison_id, status=status, step="cleaned-up", cleanup=document["cleanup"])
    retry = attempt < CLEANUP_ATTEMPTS and any(d.get("transient") for d in cleanup["left"])
    summary = {
        "attempt": attempt, "retry": retry,
        "comparison_id": comparison_id, "status": status, "comparison_uri": store.uri(key),
        "page_uri": store.uri(page_key),
        "recommendation": document.get("recommendation"),
        "configurations": [{k: c.get(k) for k in ("name", "status", "meets_targets", "why")}
                           for c in document.get("configurations") or []],
        "cleanup": document["cleanup"],
    }
    if error:
        left = f"; {len(cleanup['left'])} instance(s) left: {', '.join(document['cleanup']['left'])}" \
            if cleanup["left"] else ""
        summary["cause"] = (f"{error.get('Error', 'error')}: {str(error.get('Cause') or '')[:500]}; cleanup deleted "
                            f"{len(cleanup['deleted'])} instance(s){left}")
    if cleanup["not_ours"]:
        summary["not_ours"] = (f"{len(cleanup['not_ours'])} instance(s) carry the comparison's tag or an instance name "
                               f"it planned but are not proven its own, so were not deleted: "
                               f"{', '.join(document['cleanup']['not_ours'])} (see cleanup.details)")
    return summary
