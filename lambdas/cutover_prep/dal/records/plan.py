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

from typing import Any, NamedTuple

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    field_serializer,
    model_serializer,
)

from cutover_prep.dal.records.base import Record
from cutover_prep.dal.records.section import Json, SegmentNames
from cutover_prep.engines.locators import KeysInOrder
from cutover_prep.models.steps import CensusScope, EndCensusPlan
from cutover_prep.models.warmup import Warmup

# how an oversized segment is read (the plan's ``oversized_segments[].read_by``): by the datafile pass, or its own unit
BY_DATAFILES, BY_OWN_UNIT = "datafile_pass", "own_unit"

class OversizedEntry(BaseModel):
    """A segment too big for one work unit (``warmup.modes``): its key, kind, bytes and how it is read
    (``BY_DATAFILES`` or ``BY_OWN_UNIT``)."""

    model_config = ConfigDict(extra="allow")

    key: str
    kind: str | None = None
    bytes: int = 0
    read_by: str | None = None


class PlanSummary(BaseModel):
    """``plan.json``'s ``summary`` (also the run item's ``plan``): ``planning.Plan.summary`` with what Discover
    adds (the mode, the engine, how it reads, the selection line, the rate the units were sized at)."""

    model_config = ConfigDict(extra="allow")

    units: int = 0
    segments: int = 0
    bytes: int = 0
    ranges: int = 0
    unit_bytes_target: int = 0
    max_unit_bytes: int = 0
    mean_unit_bytes: int = 0
    oversized_units: int = 0
    mode: str | None = None
    engine: str | None = None
    read_methods: dict[str, str | None] | None = None  # database -> the read method the engine chose for it
    connection: dict[str, Any] | None = None  # the connection's transport, as Discover said it
    selection: str | None = None
    assumed_cold_mib_per_s: float | None = None
    # planning.cache_hot_set's decision; left out when the hot set is not loaded into the cache
    hot_set_cache: dict[str, Any] | None = None


class RangeLocator(KeysInOrder):
    """Where the engine finds a range (``ReadRange.locator``): the engine's own fields, kept; the findings read
    ``cache`` (the range goes into the engine's buffer cache, ``planning.cache_hot_set``) and ``file_volumes``
    (``{file number: RDS additional storage volume}``, ``engines.oracle.volumes``)."""

    model_config = ConfigDict(extra="allow")

    cache: bool | None = None
    file_volumes: dict[str, str] | None = None

    @model_serializer(mode="wrap")
    def _in_order(self, handler: SerializerFunctionWrapHandler) -> dict[str, Json]:
        """The fields as the engine wrote them: in its order (the Map hands the unit on as it is)."""
        fields = handler(self)
        return {**{k: fields[k] for k in self._order if k in fields}, **fields}


class PlanRange(BaseModel):
    """One range of a unit (``engines.base.ReadRange.to_json``): its segment, locator, extents
    ``[file, first block, blocks]``, block size and whether a chunk may stop inside it."""

    model_config = ConfigDict(extra="allow")

    segment: str = ""
    locator: RangeLocator | None = None
    extents: list[tuple[int | str, int, int]] = []
    block_size: int = 0
    splittable: bool = True

    @property
    def blocks(self) -> int:
        return sum(e[2] for e in self.extents)

    @property
    def bytes(self) -> int:
        return self.blocks * self.block_size

    @property
    def cached(self) -> bool:
        return bool(self.locator and self.locator.cache)


class PlanSegment(SegmentNames):
    """One segment of the plan (a row of ``plan-segments.jsonl``, ``dal.plan_evidence``; a plan of before issue 32
    kept the list in plan.json): its key and names, size, the units that hold its ranges and the hot set's names it
    answers to (``planning.hot_set_labels``; absent before issue 32)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    bytes: int = 0
    blocks: int = 0
    units: list[str] = []
    labels: list[str] | None = None

    def names(self) -> list[str]:
        """The names a hot set may give it by: as the planner matched them, or (a plan of before issue 32)
        ``schema.name`` and ``database/schema.name``."""
        if self.labels:
            return list(self.labels)
        plain = f"{self.schema_}.{self.name}"
        return [plain, f"{self.database}/{plain}"] if self.database else [plain]


class PlanUnit(BaseModel):
    """One work unit of ``units.json`` (``planning.WorkUnit.to_json``): the WarmUp Map's item, as it is. A unit
    without a ``priority`` is of the last rank (the findings' rule)."""

    model_config = ConfigDict(extra="allow")

    unit_id: str
    priority: int | None = None
    bytes: int = 0
    blocks: int = 0
    ranges: list[PlanRange] = []

    def stored(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True)

    def summary(self) -> UnitSummary:
        return UnitSummary(self.unit_id, self.bytes, self.blocks, self.priority, len(self.ranges),
                           any(r.cached for r in self.ranges))


class UnitSummary(NamedTuple):
    """What the findings keep of a unit beyond its ranges (issue 32 §8: the units are few, their ranges many): its
    id, bytes, blocks, rank, how many ranges it holds and whether one asks for the engine's buffer cache."""

    unit_id: str
    bytes: int = 0
    blocks: int = 0
    priority: int | None = None
    ranges: int = 0
    cache: bool = False


class Plan(Record):
    """``runs/<id>/plan.json``. ``options`` is the run's whole ``warmup`` section as Discover resolved it (the
    databases it reads), written with the fields the input set only: its other fields read as ``Warmup``'s
    defaults (the end census reads ``chunk_mb`` and the discovery options from it)."""

    run_id: str
    engine: str
    target: dict[str, Any]  # the run input's target, as the workflow state carries it (the fields the input set)
    options: Warmup
    summary: PlanSummary
    segments: dict[str, Any] | list[dict[str, Any]] | None = None  # segments_ref; a list in a plan of before 32
    oversized_units: list[str] = []
    # census_ref (a list in a plan of before issue 32); None: the engine takes none
    census: dict[str, Any] | list[dict[str, Any]] | None = None
    mode: str | None = None  # modes.plan_fields
    oversized_segments: list[OversizedEntry] = []
    datafile_units: list[str] = []

    @field_serializer("options")
    def _options_as_given(self, options: Warmup) -> dict[str, Any]:
        return options.model_dump(mode="json", exclude_unset=True)

    def stored(self) -> dict[str, Any]:
        """The document as written: the fields given (``census: null`` stays), nothing else added."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)

    def listed_segments(self) -> list[PlanSegment]:
        """The segments a plan of before issue 32 kept in the document itself (none for a plan of today: they are in
        their own object, ``dal.plan_evidence.plan_segments``)."""
        return [PlanSegment.model_validate(s) for s in self.segments] if isinstance(self.segments, list) else []

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
