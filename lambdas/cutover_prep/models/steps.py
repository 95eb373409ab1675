"""The event of every Lambda step, as a pydantic model (parsed by Powertools' ``event_parser``).

The field names are the ASL's ``Parameters`` / ``ItemSelector`` of each state in
``statemachines/``; a state that hands on the whole workflow state uses ``RunState``,
which keeps every field it does not name. The run state's and the run context's sections are the
run input's own models (``RunState``, ``RunContext``); the other nested documents (a work unit, a
sweep point, the instance's facts) are validated by the logic that owns them.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_serializer, model_serializer

from cutover_prep.models.benchmark import Benchmark, Preflight
from cutover_prep.models.restore import Restore
from cutover_prep.models.run_input import ComparisonLink
from cutover_prep.models.status import WarmStep
from cutover_prep.models.target import Target
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.models.warmup import Warmup

Document = dict[str, Any]
OutageJson = dict[str, float | int | str]  # an outage under way, as engines.retry.Outage.to_json writes it


# what warmup/slots.py needs in every WarmSlot event (a restart may change max_concurrency: taken from this run)
ADMISSION_OPTIONS = ("max_concurrency", "adaptive", "adaptive_start", "adaptive_margin_pct", "adaptive_window_seconds",
                     "adaptive_window_chunks", "after_hot_set", "yielding")
# the warmup options the run context carries (RunContext), in this order: what the steps after Discover read
CONTEXT_WARMUP = ("chunk_mb", "assumed_cold_mib_per_s", "create_extension", *ADMISSION_OPTIONS)


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunContext(_Event):
    """What every step after Discover carries (``warmup.discovery.run_context``): the target, the read and
    benchmark options and the verdict's thresholds, no secret; each section in the run input's own model.

    ``warmup`` carries only the options the steps after Discover read (``CONTEXT_WARMUP``): its
    other fields read as the model's defaults, not the run's (the plan and the run item hold the whole
    section). A context is JSON between states: ``to_json`` hands it on as it came, no default added."""

    model_config = ConfigDict(extra="allow")

    run_id: str = Field(min_length=1, max_length=80)
    target: Target
    instance: Document = Field(default_factory=dict)
    warmup: Warmup = Field(default_factory=Warmup)
    benchmark: Benchmark = Field(default_factory=Benchmark)
    verdict: Thresholds | None = None  # None: a context Discover made before it carried them (decision 52)

    def to_json(self) -> dict[str, Any]:
        """The context as it came (the fields it was given, nothing added): what a step hands on."""
        return self.model_dump(mode="json", exclude_unset=True)


class RestoreRequest(BaseModel):
    """StartRestore's result (``$.restore_request``): the instance the snapshot was taken from, which
    DescribeInstance hands on in the instance's facts (``secret_binding``)."""

    model_config = ConfigDict(extra="allow")

    restored_from: dict[str, str] | None = None  # rds.instances.snapshot_source


class RunState(_Event):
    """The workflow's whole state before the run context exists (StartRestore, DescribeInstance, Discover,
    Preflight): ValidateInput's run, each section in the run input's own model, then what each step added
    (``restore_request``, ``instance``; the later ones are kept as they came). A section a state made by an
    earlier version lacks reads as the model's default."""

    model_config = ConfigDict(extra="allow")

    run_id: str = Field(min_length=1, max_length=80)
    target: Target
    restore: Restore | None = None
    warmup: Warmup = Field(default_factory=Warmup)
    benchmark: Benchmark = Field(default_factory=Benchmark)
    verdict: Thresholds = Field(default_factory=Thresholds)
    preflight: Preflight = Field(default_factory=Preflight)
    comparison: ComparisonLink | None = None
    started_at: datetime
    restore_request: RestoreRequest | None = None
    instance: Document = Field(default_factory=dict)  # DescribeInstance's facts (``restore.rds.instance_facts``)

    @field_serializer("started_at")
    def _started_at_as_recorded(self, started_at: datetime) -> str:
        """As ValidateInput has always written it (``datetime.isoformat``: ``+00:00``, not pydantic's ``Z``)."""
        return started_at.isoformat()


class StepResult(BaseModel):
    """A step's result, as the workflow stores it (its ``ResultPath``): ``to_json`` gives the fields the step set
    and no other, so a result reads in JSON exactly as the dict it replaced."""

    model_config = ConfigDict(extra="forbid")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True)


class DiscoverResult(StepResult):
    """Discover's result (``$.plan``): the plan's size and objects (HasUnits reads ``units``; the WarmUp Map's
    ItemReader ``units_key``), the run context every later step takes, and what EndCensus takes of the plan."""

    units: int
    bytes: int
    plan_key: str
    units_key: str
    reused: bool
    context: RunContext
    end_census: EndCensusPlan

    @field_serializer("context")
    def _context_as_discover_writes_it(self, context: RunContext) -> dict[str, Any]:
        return context_json(context)


def context_json(context: RunContext) -> dict[str, Any]:
    """The context's JSON as Discover has always written it: its ``warmup`` in ``CONTEXT_WARMUP``'s order (the
    payload of every state after Discover, byte for byte)."""
    out = context.to_json()
    if "warmup" in out:
        out["warmup"] = {k: out["warmup"][k] for k in CONTEXT_WARMUP if k in out["warmup"]}
    return out


class PreflightResult(StepResult):
    """Preflight's result (``$.preflight_result``; the run item keeps the whole summary)."""

    enabled: bool
    ok: bool | None
    failed: list[str] | None = None
    seconds: float | None = None
    evidence_key: str | None = None


class UnitRate(BaseModel):
    """A read rate a unit sizes its chunks by (``warmup.unit.known_rate``): the value and where it came from
    (``first_chunks``: an invocation's own chunks; ``cold_probe``; ``assumed``: the run's assumed cold rate)."""

    model_config = ConfigDict(extra="allow")

    mib_per_s: float
    source: str = "assumed"


class SlotGiven(BaseModel):
    """What a unit reads of AcquireSlot's answer (the WarmUnit event's ``slot``): the rate it came with."""

    rate: UnitRate | None = None


class SlotAnswer(StepResult):
    """AcquireSlot's answer (``$.slot``: SlotGranted reads ``granted``, WaitForSlot ``wait_seconds``; WarmUnit
    starts from its ``rate``)."""

    granted: bool
    level: int | None
    holders: int | None
    wait_seconds: int | float
    rate: UnitRate | None


class SlotReleased(StepResult):
    """ReleaseSlot's answer (discarded: ``ResultPath`` null)."""

    released: bool


class EndCensusResult(StepResult):
    """EndCensus's result (``$.end_census``), and RecordEndCensusFailure's (``$.end_census_failure``): the
    census-end.json summary (a retried step: that summary, ``reused``)."""

    model_config = ConfigDict(extra="allow")  # a summary an older step wrote, handed on as it is

    taken: bool
    objects: int | None = None
    caught_up: int | None = None
    not_caught_up: int | None = None
    bytes_caught_up: int | None = None
    error: str | None = None
    cause: str | None = None
    reused: bool | None = None


class StepError(BaseModel):
    """A Catch's error output: ``Error`` and ``Cause``."""

    model_config = ConfigDict(extra="allow")

    Error: str | None = None
    Cause: str | None = None


class ValidateInputEvent(_Event):
    input: Any = None
    execution_name: str | None = None


class RunFailedEvent(_Event):
    run_id: str | None = None
    error: StepError = Field(default_factory=StepError)
    input: Any = None
    execution_name: str | None = None


class RunStep(_Event):
    """A step that takes the run context alone (PlanSweep, Analyze, CleanupScratch)."""

    run: RunContext


class CensusScope(BaseModel):
    """What a census takes (``engines.DiscoveryOptions``): the run's warm-up selection as Discover resolved it
    (``selection.resolved_warmup``: the databases it reads)."""

    model_config = ConfigDict(extra="forbid")

    databases: list[str] = Field(default_factory=list)
    include_schemas: list[str] = Field(default_factory=list)
    exclude_schemas: list[str] = Field(default_factory=list)
    include_system: bool = False


class EndCensusPlan(BaseModel):
    """What the end census takes of the plan (Discover's result ``end_census``, ``$.plan.end_census``): the start
    census and the plan's segments (each a reference to its JSON Lines object, or a plan of before's list), and the
    selection the census takes. EndCensus reads them from its event, not from plan.json."""

    model_config = ConfigDict(extra="forbid")

    census: Document | list[Document] | None = None  # findings.census.census_ref; None: the engine takes none
    segments: Document | list[Document] | None = None  # findings.plan_evidence.segments_ref
    scope: CensusScope = Field(default_factory=CensusScope)


class EndCensusEvent(RunStep):
    """EndCensus; with ``error``, RecordEndCensusFailure: the Catch of EndCensus hands the same function the
    step's error to record (the verdict's END_CENSUS names it). ``plan``: Discover's ``end_census`` (None: an
    execution started by a definition of before, whose EndCensus reads plan.json)."""

    error: StepError | None = None
    plan: EndCensusPlan | None = None


class ProbeEvent(RunStep):
    phase: Literal["cold", "warm"]


class RunPointEvent(RunStep):
    point: Document


class CollectMetricsEvent(RunStep):
    attempt: int = Field(default=0, ge=0)


class WarmProgress(BaseModel):
    """WarmUnit's result (``ResultPath: $.warm``): what MoreToRead and UnitFinished read (``status``) and what the
    next invocation goes on from (``cursor``, ``rate``, an ``outage`` under way). No context: the Map item keeps
    its own ``run`` and ``unit``."""

    model_config = ConfigDict(extra="allow")

    status: WarmStep
    cursor: dict[str, int] | None = None
    rate: UnitRate | None = None
    outage: OutageJson | None = None  # retry.Outage.to_json

    @model_serializer(mode="wrap")
    def _without_nulls(self, dump: SerializerFunctionWrapHandler) -> dict[str, object]:
        """No null field: a field not known (no cursor yet, no outage) is left out, as it always was."""
        return {k: v for k, v in dump(self).items() if v is not None}


class CarriedWarmProgress(WarmProgress):
    """WarmUnit's result for an execution of a definition of before, whose WarmUnit had no ``ResultPath``: the
    progress with the run context as it came and the unit (the next state's whole input)."""

    run: RunContext
    unit: Document


class WarmUnitEvent(RunStep):
    """One work unit. ``warm``: the previous invocation's result (None on the first; the WarmUp Map's
    ItemSelector sets it, so a definition of before, which did not, is told apart: ``hands_on_context``).
    ``rate`` and ``outage`` at the top: a continuation of a definition of before, whose WarmUnit result was the
    next event."""

    model_config = ConfigDict(extra="allow")

    unit: Document
    slot: SlotGiven | None = None  # AcquireSlot's answer: its rate is the one the first invocation starts from
    warm: WarmProgress | None = None
    rate: UnitRate | None = None
    outage: OutageJson | None = None

    @property
    def hands_on_context(self) -> bool:
        """Whether the result must carry the context and the unit on (a definition of before: no ``ResultPath``,
        the result was the Map item's whole state)."""
        return "warm" not in self.model_fields_set

    @property
    def previous_rate(self) -> UnitRate | None:
        return self.warm.rate if self.warm and self.warm.rate else self.rate

    @property
    def previous_outage(self) -> OutageJson | None:
        return self.warm.outage if self.warm else self.outage


class WarmSlotEvent(RunStep):
    """Ask for a warm-up slot for a unit, or give it back (``warmup/slots.py``)."""

    unit_id: str = Field(min_length=1, max_length=200)
    action: Literal["acquire", "release"]


class UnitFailedEvent(RunStep):
    model_config = ConfigDict(extra="allow")

    unit: Document
    error: StepError = Field(default_factory=StepError)


class BenchmarkFailedEvent(_Event):
    run_id: str
    error: StepError = Field(default_factory=StepError)
    point_id: str | None = None


class FinalizeEvent(_Event):
    run_id: str


class EventBridgeEvent(BaseModel):
    """An event as EventBridge delivers it (only the fields read are required: test buses and replays
    may leave out others)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    source: str
    detail_type: str = Field(alias="detail-type")


class ScheduledEvent(EventBridgeEvent):
    """What starts the comparison reaper: its hourly rule's "Scheduled Event" (aws.events)."""


class CompareStartEvent(_Event):
    """The comparison's ValidateInput: the whole execution input and the execution's name and ARN."""

    input: Any = None
    execution_name: str | None = None
    execution_arn: str | None = None


class CompareCollectEvent(_Event):
    comparison_id: str
    results: list[Document]


class CompareCleanupEvent(_Event):
    comparison_id: str
    state: Document


class GateStepEvent(_Event):
    """EvaluateGate (statemachines/gate.asl.json): the gate workflow's state as it stands (its input, parsed by
    ``gate.step.parse_input`` so that a bad one fails by name, and the previous check's result) and the
    execution's start time (the deadline counts from it)."""

    state: dict[str, Any]
    started_at: datetime


class RdsEventDetail(BaseModel):
    """An RDS event's ``detail`` (the fields OnRestore reads; the scheduled sweep's is empty)."""

    model_config = ConfigDict(extra="allow")

    EventID: Any = None  # compared with the restore events' ids: any other value is not one
    SourceIdentifier: str | None = None
    SourceArn: str | None = None


class TriggerEvent(EventBridgeEvent):
    """What starts OnRestore: an RDS event or the scheduled sweep's event."""

    detail: RdsEventDetail = Field(default_factory=RdsEventDetail)


DiscoverResult.model_rebuild()


def cause_message(error: StepError) -> str:
    """A Lambda error's Cause is JSON with errorMessage (and a stack trace): keep the message."""
    cause = str(error.Cause or "")
    try:
        return str(json.loads(cause).get("errorMessage", cause))
    except (ValueError, AttributeError):
        return cause
