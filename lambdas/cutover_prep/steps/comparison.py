"""The comparison workflow's steps (``comparison.workflow``, ``comparison.reaper``), each answering its result
model: the JSON each has always returned, field for field."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from cutover_prep.comparison.model import Cleanup, Recommendation
from cutover_prep.comparison.reaper import run_reaper
from cutover_prep.comparison.workflow import ChildRun, collect, finish, start
from cutover_prep.dal.records.deployment import InstanceOutcome
from cutover_prep.dal.store import Store
from cutover_prep.models.steps import CompareCleanupEvent, CompareCollectEvent, CompareStartEvent


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ComparisonPlanned(_Result):
    """StartComparison's result: the comparison and one child run per configuration (its name, run id, instance
    and run input: what the Map starts)."""

    comparison_id: str
    max_parallel: int
    ttl_hours: int
    evidence_key: str
    runs: list[ChildRun]


class ComparisonCollected(_Result):
    """CollectResults's result: where comparison.json is and what it recommends."""

    comparison_uri: str
    recommendation: Recommendation


class ConfigurationLine(_Result):
    """A configuration as the comparison's output names it."""

    name: str
    status: str
    meets_targets: bool | None
    why: str


class ComparisonFinished(_Result):
    """Cleanup's result (the comparison's output, or its failure cause): what was deleted and the recommendation;
    ``retry``: an instance RDS would not delete yet, within the attempts."""

    attempt: int
    retry: bool
    comparison_id: str
    status: str
    comparison_uri: str
    page_uri: str
    recommendation: Recommendation
    configurations: list[ConfigurationLine]
    cleanup: Cleanup
    cause: str | None = None
    not_ours: str | None = None


class ReapedDetails(_Result):
    deleted: list[InstanceOutcome]
    left: list[InstanceOutcome]
    not_ours: list[InstanceOutcome]


class Reaped(_Result):
    """The reaper's result: the instances deleted, left and not proven the comparison's own, with each one's
    details."""

    deleted: list[str]
    left: list[str]
    not_ours: list[str]
    details: ReapedDetails


def start_comparison(event: CompareStartEvent, *, store: Store) -> ComparisonPlanned:
    return ComparisonPlanned.model_validate(start(event.input, execution_name=event.execution_name,
                                                  execution_arn=event.execution_arn, store=store))


def collect_results(event: CompareCollectEvent, *, store: Store, pricing: Any) -> ComparisonCollected:
    """``pricing``: the Price List API's client, in its own region."""
    return ComparisonCollected.model_validate(collect(event.comparison_id, event.results, store=store,
                                                      pricing=pricing))


def clean_up_comparison(event: CompareCleanupEvent, *, rds: Any, store: Store) -> ComparisonFinished:
    return ComparisonFinished.model_validate(finish(event.comparison_id, event.state, rds=rds, store=store))


def reap_instances(*, rds: Any, sfn: Any, store: Store) -> Reaped:
    return Reaped.model_validate(run_reaper(rds=rds, sfn=sfn, store=store))
