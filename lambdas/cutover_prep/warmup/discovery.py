"""Discover what must be read and write the plan to S3 (idempotent per run id)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

from cutover_prep.access.connection import SecretReader, connection_spec
from cutover_prep.access.secret_binding import TagReader
from cutover_prep.access.selection import choose_for_run, resolved_warmup, selection_line
from cutover_prep.dal.plan_evidence import PLAN_SEGMENTS, segments_ref
from cutover_prep.dal.records.census import CENSUS_START, CensusObjectJson, census_json, census_ref
from cutover_prep.dal.records.plan import Plan as PlanRecord
from cutover_prep.dal.records.plan import PlanSummary
from cutover_prep.dal.store import Store, evidence_key
from cutover_prep.engines import ConnectionSpec, DiscoveryOptions, Engine
from cutover_prep.engines.registry import check_hot_set_engine, server_started
from cutover_prep.engines.retry import Retries
from cutover_prep.models.run_input import RunIdReused
from cutover_prep.models.steps import CONTEXT_WARMUP, DiscoverResult, RunContext
from cutover_prep.models.warmup import Warmup
from cutover_prep.warmup import modes
from cutover_prep.warmup.planning import (
    MIB,
    HotSetCache,
    Plan,
    PlanOptions,
    cache_hot_set,
    hot_set_labels,
    plan_units,
    unit_bytes_for,
)

if TYPE_CHECKING:
    from cutover_prep.models.steps import RunState

EngineOpener = Callable[[ConnectionSpec, Warmup], Engine]


class PlanEstimator(Protocol):
    """The run's estimate of its plan, as the run item stores it (None: it could not be made), or what it reads
    (``steps.discover.plan_estimate``: the estimate is another phase, the step composes the two)."""

    def __call__(self, run: RunState, *, store: Store, plan_summary: dict[str, Any], engine: str,
                 segments: Iterable[Any], census: list[CensusObjectJson] | None) -> dict[str, Any] | None: ...


NEWER_THRESHOLDS = ("engine_internal",)  # issue 33: in a context only when the input sets it to another value
NEWER_WARMUP = ("yielding",)  # issue 36: likewise (every state's payload stays as it was for a run with the default)


def run_context(run: RunState) -> RunContext:
    """What every step after Discover needs (``models.steps.RunContext``, as JSON): the target as the state
    carries it, the read options the steps read (those the state carries), the benchmark options and the
    verdict's thresholds whole (Analyze's conclusions judge by them), no secret."""
    warmup = run.warmup.model_dump(mode="json", exclude_unset=True)
    return RunContext.model_validate({
        "run_id": run.run_id,
        "target": run.target.model_dump(mode="json", exclude_unset=True),
        "instance": run.instance,
        "warmup": {k: warmup[k] for k in CONTEXT_WARMUP if k in warmup and not (
            k in NEWER_WARMUP and getattr(run.warmup, k) == type(run.warmup).model_fields[k].get_default(
                call_default_factory=True))},
        "benchmark": run.benchmark.model_dump(mode="json"),
        # a threshold newer than the context's shape is carried only when not its default (the payload of every
        # state stays as it was); Finalize judges by the run item's input, whole
        "verdict": run.verdict.model_dump(mode="json", exclude={
            k for k in NEWER_THRESHOLDS if getattr(run.verdict, k) == type(run.verdict).model_fields[k].default}),
    })


class Connection(BaseModel):
    """How the run's reads reach the database (the plan summary's ``connection``): the transport the engine
    negotiated (``engines.transport``) and how its sessions are kept read-only."""

    transport: str | None = None
    read_only_guard: str | None = None


class VolumeName(BaseModel):
    """One additional storage volume of the instance's facts: its name."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None


class InstanceVolumes(BaseModel):
    """What discovery reads of the instance's facts (``rds.instance_facts``): its RDS additional storage volumes."""

    model_config = ConfigDict(extra="allow")

    additional_storage_volumes: list[VolumeName] | None = None


@dataclass(frozen=True)
class Planned:
    """What discovery and the planner made of a target: the run's plan, and ``cutover-prep estimate``'s."""

    mode: str
    segments: list[Any]
    plan: Plan
    methods: dict[str, str]  # the engine's read methods (``read_methods``: database or ``*`` -> how it reads)
    transport: Connection
    selected: Any  # modes.select's answer (the datafile pass, the oversized segments)
    census: list[CensusObjectJson] | None = None  # everything on the volume (findings.census), if taken
    hot_set_cache: HotSetCache | None = None
    server_started_at: str | None = None  # when the server last started, as it said before the census


class StoredPages(MutableMapping[str, Any]):
    """The discovery pages of one run (``engines.oracle.discovery``), kept in its evidence
    (``runs/<id>/discovery-pages/<page id>.json``) as they are found: a Discover step that stopped (its
    invocation's time ran out, the connection was lost: ``TransientDatabaseError``, which the ASL retries)
    resumes at the first page it had not found instead of reading the dictionary again from the start."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store, self.prefix, self.held = store, evidence_key(run_id, "discovery-pages/"), {}

    def _key(self, page: str) -> str:
        return f"{self.prefix}{page}.json"

    def __getitem__(self, page: str) -> Any:
        if page not in self.held:
            if not self.store.exists(self._key(page)):
                raise KeyError(page)
            self.held[page] = self.store.get_json(self._key(page))
        return self.held[page]

    def __setitem__(self, page: str, value: Any) -> None:
        self.store.put_json(self._key(page), value)
        self.held[page] = value

    def __delitem__(self, page: str) -> None:
        self.held.pop(page, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self.held)

    def __len__(self) -> int:
        return len(self.held)


def make_plan(spec: ConnectionSpec, warmup: Warmup, open_engine: EngineOpener, *,
              lambda_timeout_s: float = 900, attempts: int = 3, additional_volumes: tuple[str, ...] = (),
              pages: MutableMapping[str, Any] | None = None) -> Planned:
    """Discover the segments ``warmup`` selects on ``spec`` and plan the work units (reads the catalogue only).
    ``additional_volumes``: the instance's RDS additional storage volumes (DescribeInstance's facts), to
    which the engine maps the segments' files (``findings.volumes``). ``pages``: the discovery pages found so
    far (``StoredPages``); a retried attempt resumes from them (``modes.discover``)."""
    pages = {} if pages is None else pages
    mode = warmup.mode
    modes.check(spec.engine, mode)  # before connecting: UnsupportedWarmupMode, one line
    # the engine found (the input's, else RDS's): a hot set of another engine names nothing here
    check_hot_set_engine(warmup.hot_set.engine if warmup.hot_set else None, spec.engine)

    def once() -> tuple[list[Any], dict[str, str], Connection, list[CensusObjectJson] | None, int | None,
                        str | None]:
        engine = open_engine(spec, warmup)
        try:
            started = server_started(engine)  # before the census: a restart after it moves it (findings.server)
            options = DiscoveryOptions(
                include_schemas=tuple(warmup.include_schemas), exclude_schemas=tuple(warmup.exclude_schemas),
                databases=tuple(warmup.databases), include_system=warmup.include_system,
                additional_volumes=additional_volumes,
            )
            # the census first: what is created between it and discovery is planned, so read
            census = census_json(engine.census(options)) if hasattr(engine, "census") else None
            found = modes.discover(engine, options, mode, pages)
            # the engine's buffer cache (bytes), if it can load it with a read: the hot set may go there too
            cache = engine.cache_bytes() if hasattr(engine, "cache_bytes") else None
            cache = cache if isinstance(cache, int) and not isinstance(cache, bool) else None
            return found, (engine.read_methods() if hasattr(engine, "read_methods") else {}), Connection(
                transport=getattr(engine, "transport", None),
                read_only_guard=getattr(engine, "read_only_guard", "session")), census, cache, started
        finally:
            engine.close()

    segments, methods, transport, census, cache, started = Retries(attempts).call(once)
    unit_bytes = (warmup.unit_mb * MIB if warmup.unit_mb
                  else unit_bytes_for(cold_mib_per_s=warmup.assumed_cold_mib_per_s,
                                      lambda_timeout_s=lambda_timeout_s, total_bytes=sum(s.bytes for s in segments),
                                      max_concurrency=warmup.max_concurrency))
    selected = modes.select(mode, segments, unit_bytes)  # in datafile modes the pass reads the oversized ones
    hot_set = hot_set_names(warmup)
    plan = plan_units(selected.segments, PlanOptions(unit_bytes=unit_bytes, priority=tuple(warmup.priority),
                                                     hot_set=hot_set))
    hot_cache = cache_hot_set(plan, len(warmup.priority) if hot_set else None,
                              cache if warmup.hot_set_cache else None)  # None: nothing marked
    return Planned(mode=mode, segments=selected.segments, plan=plan, methods=methods, transport=transport,
                   selected=selected, census=census, hot_set_cache=hot_cache, server_started_at=started)


def discover_and_plan(run: RunState, *, store: Store, read_secret: SecretReader,
                      open_engine: EngineOpener, lambda_timeout_s: float = 900,
                      attempts: int = 3, read_secret_tags: TagReader | None = None,
                      say: Callable[[str], Any] | None = None, estimate_plan: PlanEstimator) -> DiscoverResult:
    """``say``: where the one line of what the run reads and leaves out goes before the warm-up (the log);
    ``estimate_plan``: the plan's estimate, stored on the run item with it."""
    run_id, warmup = run.run_id, run.warmup
    target = run.target.model_dump(mode="json", exclude_unset=True)  # as the state carries it
    plan_key, units_key = evidence_key(run_id, "plan.json"), evidence_key(run_id, "units.json")
    if store.exists(plan_key):  # a restarted run keeps its plan, so unit ids stay the same
        plan_doc = PlanRecord.read(store.get_json(plan_key))
        if plan_doc.target != target:  # ValidateInput checked it; a plan is never reused elsewhere
            raise RunIdReused(f"run_id {run_id!r} has a plan for another target "
                              f"({plan_doc.target.get('db_instance_identifier')!r}); use a new run_id")
        store.update_run(run_id, step="planned", plan_reused=True)
        return _result(plan_doc, plan_key, units_key, run, reused=True)

    # SecretNotBound: before connecting
    spec = connection_spec(run.target, run.instance, read_secret, read_tags=read_secret_tags)
    # the databases it reads: those the input names, else the one target.database names, else all (issue 33 §1);
    # plan.json keeps them in its options, which the end census takes
    warmup = resolved_warmup(warmup, run.target, spec.engine)
    planned = make_plan(spec, warmup, open_engine, lambda_timeout_s=lambda_timeout_s, attempts=attempts,
                        additional_volumes=additional_volume_names(run), pages=StoredPages(store, run_id))
    mode, methods, transport, segments, plan, selected = (planned.mode, planned.methods, planned.transport,
                                                          planned.segments, planned.plan, planned.selected)
    how = choose_for_run(spec.engine, target, run.warmup.model_dump(mode="json")).how
    selection = selection_line(spec.engine, segments, planned.census, how)  # said before the warm-up reads
    hot_cache = planned.hot_set_cache
    summary = PlanSummary(**plan.summary(), mode=mode, engine=spec.engine, read_methods=methods,
                          connection=transport.model_dump(), selection=selection,
                          assumed_cold_mib_per_s=warmup.assumed_cold_mib_per_s,
                          **({"hot_set_cache": hot_cache._asdict()} if hot_cache else {}))
    summary_json = summary.model_dump(exclude_unset=True)  # the fields given: hot_set_cache only when loaded
    unit_of_segment: dict[str, list[str]] = {}
    for unit in plan.units:
        for rng in unit.ranges:
            unit_of_segment.setdefault(rng.segment_key, []).append(unit.unit_id)
    with store.json_array_writer(units_key) as writer:  # the Map's items; Finalize reads them one at a time
        for unit in plan.units:
            writer.write(unit.to_json())
    segments_key = evidence_key(run_id, PLAN_SEGMENTS)  # its own object, in parts, read as a stream (issue 32)
    store.put_json_lines(segments_key, (
        {"key": s.key, "database": s.database, "schema": s.schema, "name": s.name, "labels": hot_set_labels(s),
         "partition": s.partition, "kind": s.kind, "bytes": s.bytes, "blocks": s.blocks,
         "splittable": s.splittable, "units": unit_of_segment.get(s.key, [])} for s in segments))
    census = None  # the census is its own object, in parts: Finalize reads it as a stream (issue 32)
    if planned.census is not None:
        census_key = evidence_key(run_id, CENSUS_START)
        store.put_json_lines(census_key, planned.census)
        census = census_ref(census_key, planned.census)
    plan_doc = PlanRecord.new(
        run_id=run_id, engine=spec.engine, target=target, options=warmup, summary=summary,
        segments=segments_ref(segments_key, len(segments)), oversized_units=plan.oversized_units, census=census,
        **modes.plan_fields(selected, plan.units)._asdict())
    store.put_json(plan_key, plan_doc.stored())
    hot_rank = len(warmup.priority) if hot_set_names(warmup) else None
    if say is not None:
        say(selection)
    store.update_run(run_id, step="planned", engine=spec.engine, units_total=len(plan.units), selection=selection,
                     hot_set_units=[u.unit_id for u in plan.units if u.priority == hot_rank],
                     bytes_planned=plan.bytes, plan=summary_json, plan_key=plan_key,
                     server_started_at=planned.server_started_at,
                     # the facts DescribeInstance returned, for the findings (without the polling fields)
                     instance={k: v for k, v in run.instance.items() if k not in ("status", "ready") and v is not None},
                     estimate=estimate_plan(run, store=store, plan_summary=summary_json, engine=spec.engine,
                                            segments=segments, census=planned.census))
    return _result(plan_doc, plan_key, units_key, run, reused=False)



def hot_set_names(warmup: Warmup) -> tuple[str, ...]:
    """``warmup.hot_set.names`` (the profile's segments, hottest first), or none."""
    return tuple(warmup.hot_set.names) if warmup.hot_set else ()


def additional_volume_names(run: RunState) -> tuple[str, ...]:
    """The names of the instance's RDS additional storage volumes (``rds.instance_facts``), if any."""
    volumes = InstanceVolumes.model_validate(run.instance).additional_storage_volumes
    return tuple(str(v.name) for v in volumes or [] if v.name)


def _result(plan: PlanRecord, plan_key: str, units_key: str, run: RunState, *, reused: bool) -> DiscoverResult:
    return DiscoverResult(units=plan.summary.units, bytes=plan.summary.bytes, plan_key=plan_key, units_key=units_key,
                          reused=reused, context=run_context(run), end_census=plan.end_census())
