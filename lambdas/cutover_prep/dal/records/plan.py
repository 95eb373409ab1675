"""The run's plan: ``plan.json`` (``Plan``) and the work units of ``units.json`` (``PlanUnit``).

Discover (``warmup.discovery``) writes both once per run id; a restarted run reads its plan back and keeps its
unit ids. ``plan.json`` is read by Python alone (Discover's restart, EndCensus, Finalize): it carries a
``schema_version``. A unit of ``units.json`` is the WarmUp Map's item (its ``ItemReader``): the ASL hands it to
every WarmUnit event as it is, so a unit's document gets no field (no ``schema_version``), and its JSON is what
``warmup.planning.WorkUnit.to_json`` writes.

What a plan of before kept in the document itself reads as it was: ``segments`` and ``census`` were lists
before issue 32 (now a reference to their own JSON Lines object: ``findings.plan_evidence.segments_ref``,
``findings.census.census_ref``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_serializer

from cutover_prep.dal.records.base import Record
from cutover_prep.models.steps import CensusScope, EndCensusPlan
from cutover_prep.models.warmup import Warmup

Document = dict[str, Any]


# how an oversized segment is read (the plan's ``oversized_segments[].read_by``): by the datafile pass, or its own unit
BY_DATAFILES, BY_OWN_UNIT = "datafile_pass", "own_unit"

class PlanSummary(BaseModel):
    """``plan.json``'s ``summary`` (also the run item's ``plan``): ``planning.Plan.summary`` with what Discover
    adds (the mode, the engine, how it reads, the selection line, the rate the units were sized at)."""

    model_config = ConfigDict(extra="allow")

    units: int
    segments: int
    bytes: int
    ranges: int = 0
    unit_bytes_target: int = 0
    max_unit_bytes: int = 0
    mean_unit_bytes: int = 0
    oversized_units: int = 0
    mode: str | None = None
    engine: str | None = None
    read_methods: Document | None = None
    connection: Document | None = None
    selection: str | None = None
    assumed_cold_mib_per_s: float | None = None
    hot_set_cache: Document | None = None  # left out when the hot set is not loaded into the cache


class PlanUnit(BaseModel):
    """One work unit of ``units.json`` (``planning.WorkUnit.to_json``): the WarmUp Map's item, as it is."""

    model_config = ConfigDict(extra="allow")

    unit_id: str
    priority: int
    bytes: int
    blocks: int
    ranges: list[Document]

    def stored(self) -> Document:
        return self.model_dump(mode="json", exclude_unset=True)


class Plan(Record):
    """``runs/<id>/plan.json``. ``options`` is the run's whole ``warmup`` section as Discover resolved it (the
    databases it reads), written with the fields the input set only: its other fields read as ``Warmup``'s
    defaults (the end census reads ``chunk_mb`` and the discovery options from it)."""

    run_id: str
    engine: str
    target: Document  # as the workflow state carries it (the fields the input set)
    options: Warmup
    summary: PlanSummary
    segments: Document | list[Document] | None = None  # segments_ref; a list in a plan of before issue 32
    oversized_units: list[str] = []
    census: Document | list[Document] | None = None  # census_ref; None: the engine takes none
    mode: str | None = None  # modes.plan_fields
    oversized_segments: list[Document] = []
    datafile_units: list[str] = []

    @field_serializer("options")
    def _options_as_given(self, options: Warmup) -> Document:
        return options.model_dump(mode="json", exclude_unset=True)

    def stored(self) -> Document:
        """The document as written: the fields given (``census: null`` stays), nothing else added."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)

    def end_census(self) -> EndCensusPlan:
        """What EndCensus takes of the plan (Discover's result hands it on): it does not read plan.json again."""
        scope = self.options
        return EndCensusPlan(census=self.census, segments=self.segments, scope=CensusScope(
            databases=list(scope.databases), include_schemas=list(scope.include_schemas),
            exclude_schemas=list(scope.exclude_schemas), include_system=scope.include_system))

    @property
    def warmup(self) -> Warmup:
        """The run's warm-up section (its unset fields: the defaults)."""
        return self.options
