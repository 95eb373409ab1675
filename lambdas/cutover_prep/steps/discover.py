"""Discover: what the run reads and its plan (``warmup.discovery``), with the plan's estimate (``estimate``) on
the run item in the same write. Two phases: the step composes them, neither imports the other."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cutover_prep.dal.store import Store
from cutover_prep.estimate.compute import counted_of
from cutover_prep.estimate.run import run_estimate
from cutover_prep.models.steps import DiscoverResult, RunState
from cutover_prep.warmup import discovery


def plan_estimate(run: RunState, *, store: Store, plan_summary: dict[str, Any], engine: str,
                  segments: Iterable[Any], census: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """``discovery.PlanEstimator``: the estimate of the plan, with what its segments and the census count."""
    return run_estimate(run, store=store, plan_summary=plan_summary, engine=engine,
                        counted=counted_of(engine, segments, census))


def discover_and_plan(run: RunState, **kwargs: Any) -> DiscoverResult:
    """``warmup.discovery.discover_and_plan`` (its keywords) with the plan's estimate."""
    return discovery.discover_and_plan(run, estimate_plan=plan_estimate, **kwargs)
