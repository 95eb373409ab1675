"""The run's own estimate (made when Discover plans) and ``findings.estimate``: that estimate beside
what the warm-up did, with ratios. The verdict never reads it.

``run_estimate`` looks for the rate as ``estimate.compute`` orders the sources: an earlier
finished run of the same instance (the table's ``by_target`` index, its findings.json), this local
run's emulated volume (its evidence object), the instance facts DescribeInstance returned (not a
local run's stand-in: ``benchmark.compare_limits`` is false there), else the emulator's default.
A lookup that fails leaves that source out; the estimate itself never fails the run.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError
from pydantic import ValidationError

from cutover_prep.analysis.limits import LimitsError
from cutover_prep.dal.records.findings import Findings
from cutover_prep.dal.records.findings_estimate import (
    NOTE,
    EstimateActual,
    EstimateFigures,
    EstimateFindings,
    EstimateRatios,
)
from cutover_prep.dal.records.plan import PlanSummary
from cutover_prep.dal.records.run_estimate import RunEstimate
from cutover_prep.dal.store import EMULATION_EVIDENCE, Store, evidence_key
from cutover_prep.estimate.compute import (
    Counted,
    EmulationEvidence,
    choose_rate,
    estimate,
    instance_limits_facts,
    readers_for,
)

if TYPE_CHECKING:
    from cutover_prep.models.steps import RunState

EARLIER_RUNS_READ = 3  # findings documents read at most, newest first
logger = logging.getLogger(__name__)
Number = int | float  # as stored: an int stays an int, a float a float


def earlier_findings(store: Store, ident: str, run_id: str | None = None) -> list[Findings]:
    """The findings of the latest finished runs of the instance ``ident`` (not the run ``run_id``)."""
    found: list[Findings] = []
    try:
        for item in store.runs_of_instance(ident):
            if item.run_id == run_id or not item.findings_key:
                continue
            findings = Findings.read(store.get_json(item.findings_key))
            if findings.target is not None and findings.target.db_instance_identifier == ident:
                found.append(findings)
            if len(found) >= EARLIER_RUNS_READ:
                break
    except (ClientError, BotoCoreError, ValueError) as exc:
        logger.warning("estimate: earlier runs not read: %s", type(exc).__name__)
    return found


def run_estimate(run: RunState, *, store: Store, plan_summary: dict[str, Any], engine: str,
                 ranges: int | None = None, counted: Counted | None = None) -> dict[str, Any] | None:
    """The estimate of this run's plan, as stored on the run item (JSON); None (logged) when the facts it is
    made from cannot be used: the warm-up goes on without it."""
    max_concurrency = run.warmup.max_concurrency
    summary = PlanSummary.model_validate(plan_summary)
    concurrency = readers_for(max_concurrency, summary)
    emulation = None
    key = evidence_key(run.run_id, EMULATION_EVIDENCE)
    try:
        if store.exists(key):
            emulation = store.get_json(key)
    except (ClientError, BotoCoreError, ValueError) as exc:
        logger.warning("estimate: emulation evidence not read: %s", type(exc).__name__)
    try:  # facts of an odd shape (a stored document, an instance RDS describes oddly) cost the estimate only
        instance = instance_limits_facts(run.instance) if run.benchmark.compare_limits else None
        rate = choose_rate(engine=engine, concurrency=concurrency,
                           measured=earlier_findings(store, run.target.db_instance_identifier, run.run_id),
                           emulation=EmulationEvidence.model_validate(emulation) if emulation else None,
                           instance=instance)
        return estimate(engine=engine, plan_summary=summary, max_concurrency=max_concurrency, rate=rate,
                        ranges=ranges, counted=counted, restore=run.restore is not None).model_dump(mode="json")
    except (ValidationError, LimitsError, ValueError, TypeError, KeyError, AttributeError) as exc:
        logger.warning("estimate not made: %s: %s", type(exc).__name__, str(exc)[:200])
        return None


def _ratio(actual: float | None, estimated: float | None) -> float | None:
    if actual is None or not estimated:
        return None
    return round(float(actual) / float(estimated), 3)


def estimate_section(estimated: RunEstimate | None, done: Findings) -> EstimateFindings | None:
    """``findings.estimate``: the ``estimated`` (the run item's), what happened (the findings' bytes, timings and
    read rate), and actual / estimate for each (None: no estimate, e.g. a run planned before estimates existed)."""
    if estimated is None or not estimated.model_fields_set | set(estimated.model_extra or {}):
        return None
    # every figure written, None where the estimate has none (``from_attributes`` sets each); ``counted`` as stored
    figures = EstimateFigures.model_validate(estimated, from_attributes=True)
    actual = EstimateActual(bytes_read=done.bytes.read if done.bytes else None,
                            warmup_seconds=done.timings.warmup_wall_seconds, mib_per_s=done.read_rate.mib_per_s_wall)
    return EstimateFindings(
        estimate=figures, actual=actual,
        ratios=EstimateRatios(bytes=_ratio(actual.bytes_read, figures.bytes_to_read),
                              seconds=_ratio(actual.warmup_seconds, figures.estimated_seconds),
                              mib_per_s=_ratio(actual.mib_per_s, figures.assumed_mib_per_s)),
        note=NOTE)
