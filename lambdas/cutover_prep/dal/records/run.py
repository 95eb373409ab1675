"""The run's records in the table besides its units: the run item, its sweep points and probes, the write
test's scratch objects, RDS storage progress samples, the warm-up's concurrency control item.

Each record is the item as the code stores it today (names, types, which attributes are left out), so a run
of an older deployment still reads and its item written back is the same: ``stored()`` gives exactly the
attributes the record was read with or created with (``exclude_unset``: an attribute stored as NULL, such
as a run item's ``restore`` without one, stays NULL; one never written stays absent). Attributes a record
does not name are kept (``extra="allow"``): a newer writer's additions survive a read and a write.

``schema_version``: written on every item this code writes whole (the run item when it is created, a
point, a scratch object, a storage sample, the control item); an item without one is version 1 (every item
before versions were kept), which is this version too: no upgrade yet. Only Python reads these items (the
ASL reads none of them), so the added attribute changes no reader.

Keys (``dal.store``): run ``RUN#<id>``/``RUN``; point ``POINT#<id>``; scratch ``SCRATCH#<name>``; sample
``RDSINIT#<at>#<step>``; control ``WARMUP#CONTROL``; sample claim ``RDSINIT-CLAIM``.
"""

from __future__ import annotations

from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from cutover_prep.dal.records.base import Record
from cutover_prep.dal.records.plan import PlanSummary
from cutover_prep.dal.records.run_estimate import RunEstimate
from cutover_prep.dal.records.run_input import InputSections, RecordedRestore, RecordedTarget
from cutover_prep.models.benchmark import Benchmark
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.models.warmup import Warmup

Number = int | float  # a number keeps its JSON type (DynamoDB gives back an int for 100.0)


class TableItem(Record):
    """An item of the run table: its keys and when it was last written."""

    pk: str | None = None
    sk: str | None = None
    updated_at: str | None = None

    def stored(self) -> dict[str, Any]:
        """The attributes the record was read or created with (see the module), in JSON types."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)

    def without_keys(self) -> dict[str, Any]:
        """``stored()`` without ``pk``, ``sk`` and ``updated_at``: the attributes a rewrite carries on."""
        return {k: v for k, v in self.stored().items() if k not in ("pk", "sk", "updated_at")}


class RunPreflight(BaseModel):
    """The run item's ``preflight`` (``steps.preflight.summary_of``): ``{"enabled": false}`` when the input turned it
    off, else whether it passed, the checks that failed, its time, each status's count, what a failure does and
    its evidence."""

    model_config = ConfigDict(extra="allow")

    enabled: bool = True
    ok: bool | None = None
    failed: list[str] | None = None
    seconds: Number | None = None
    checks: dict[str, int] | None = None
    on_failure: str | None = None
    evidence_key: str | None = None


# -- the run item ---------------------------------------------------------------------------------------
INPUT_SECTIONS = ("warmup", "benchmark", "verdict")  # the run input's sections the run item keeps under "input"
# decision 52: a run recorded before kept them as top-level attributes under other names
NAMES_BEFORE_52 = {"warmup": "options", "benchmark": "benchmark_options", "verdict": "verdict_options"}


class RunItem(TableItem):
    """The run item (``pk=RUN#<run_id>``, ``sk=RUN``): written by ``Store.start_run``, then attribute by
    attribute by ``Store.update_run`` (each step's own) and ``Store.commit_progress`` (the counters)."""

    run_id: str
    status: str | None = None  # RunStatus
    step: str | None = None
    gsi1pk: str | None = None
    gsi1sk: str | None = None
    target: RecordedTarget | None = None  # the run input's target section (as the input gave it)
    restore: RecordedRestore | None = None  # the run input's restore section (NULL without one)
    input: InputSections | None = None  # the run input's warmup, benchmark and verdict sections (``recorded_input``)
    started_at: str | None = None
    started_by: str | None = None
    finished_at: str | None = None
    restarts: int | None = None
    error: str | None = None
    cause: str | None = None
    # progress (commit_progress, fail_unit)
    units_done: int | None = None
    units_failed: int | None = None
    units_total: int | None = None
    bytes_read: int | None = None
    blocks_read: int | None = None
    chunks_read: int | None = None
    bytes_gone: int | None = None
    # Discover
    engine: str | None = None
    plan_reused: bool | None = None
    selection: str | None = None  # the line said before the warm-up reads
    hot_set_units: list[str] | None = None
    bytes_planned: int | None = None
    plan: PlanSummary | None = None  # the plan's summary
    plan_key: str | None = None
    instance: dict[str, Any] | None = None  # DescribeInstance's facts (``rds.instances``), as RDS said them
    estimate: RunEstimate | None = None  # ``estimate.run``'s estimate, read by ``estimate.run.estimate_section``
    server_started_at: str | None = None  # when the server last started, as it said at Discover (``findings.server``)
    # EndCensus, Preflight, benchmark
    end_census_error: str | None = None
    end_census_cause: str | None = None
    server_started_at_end: str | None = None  # ... and as it said at the end census
    preflight: RunPreflight | None = None
    benchmark_status: str | None = None
    benchmark_points: int | None = None
    benchmark_conclusions: int | None = None
    benchmark_error: str | None = None
    benchmark_cause: str | None = None
    # Finalize
    coverage_pct: Number | None = None
    findings_key: str | None = None
    verdict: str | None = None  # the verdict Finalize reached (its thresholds: ``input.verdict``)
    verdict_reasons: list[str] | None = None

    @property
    def db_instance_identifier(self) -> str | None:
        return self.target.db_instance_identifier if self.target is not None else None

    def recorded_input(self) -> RecordedInput:
        """The run input this item records (see ``RecordedInput``)."""
        return RecordedInput.of(self)


class RecordedInput(BaseModel):
    """The run input's ``target``, ``restore``, ``warmup``, ``benchmark`` and ``verdict`` as a run item records
    them (its last attempt's; ``target`` or ``restore`` None when it holds none; a field missing from the
    other three has its model's default).

    The one place that reads a run item written before decision 52 (``options``, ``benchmark_options``,
    ``verdict_options``), so that a restart or the Finalize of such a run reads what it was started with."""

    target: RecordedTarget | None = None
    restore: RecordedRestore | None = None
    warmup: Warmup
    benchmark: Benchmark
    verdict: Thresholds

    @classmethod
    def of(cls, run_item: RunItem | None) -> Self:
        """What ``run_item`` records (None: no run item, every section its model's defaults)."""
        item = run_item if run_item is not None else RunItem(run_id="")
        kept = item.input or InputSections()
        before_52 = item.model_extra or {}  # the names a run item of before decision 52 kept them by
        return cls(target=item.target, restore=item.restore,
                   warmup=kept.warmup or Warmup.model_validate(before_52.get(NAMES_BEFORE_52["warmup"]) or {}),
                   benchmark=kept.benchmark or Benchmark.model_validate(
                       before_52.get(NAMES_BEFORE_52["benchmark"]) or {}),
                   verdict=kept.verdict or Thresholds.model_validate(before_52.get(NAMES_BEFORE_52["verdict"]) or {}))

    def thresholds(self) -> Thresholds:
        """The verdict's thresholds (what Finalize judges by)."""
        return self.verdict

    def warmup_options(self) -> Warmup:
        return self.warmup

    def benchmark_options(self) -> Benchmark:
        return self.benchmark


# -- children of the run ---------------------------------------------------------------------------------
class PointItem(TableItem):
    """A benchmark point or probe (``sk=POINT#<point_id>``; probes ``probe-cold``, ``probe-warm``): its status,
    window, rates and latency summary as the benchmark step measured them (``benchmark.steps``)."""

    point_id: str
    status: str | None = None  # DONE, FAILED, SKIPPED
    kind: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    seconds: Number | None = None
    retries: int | None = None
    error: str | None = None
    cause: str | None = None
    sessions: int | None = None
    io_size_kb: Number | None = None
    iops: Number | None = None
    throughput_kbps: Number | None = None
    blocks_read: int | None = None


class ScratchItem(TableItem):
    """A scratch object of the opt-in write test (``sk=SCRATCH#<name>``): registered CREATING before it is
    created, then REMOVED, LEFT or NOT_CREATED (``benchmark.scratch.ScratchStatus``)."""

    name: str
    status: str | None = None
    engine: str | None = None
    database: str | None = None
    point_id: str | None = None  # the write point that created it
    max_bytes: int | None = None
    created_at: str | None = None
    settled_at: str | None = None
    note: str | None = None

    def carried(self) -> dict[str, Any]:
        """The attributes a rewrite of the item carries on: all but ``pk``, ``sk`` and the name (its
        ``updated_at`` too: a settled object keeps the time it was registered, as it always has)."""
        return {k: v for k, v in self.stored().items() if k not in ("pk", "sk", "name")}


class VolumeSample(BaseModel):
    """One additional storage volume's answer in a storage sample: its name, ``StorageOperationStatus`` and
    ``StorageOperationPercentProgress`` (None when RDS reported none)."""

    model_config = ConfigDict(extra="allow")

    volume: str | None = None
    status: str | None = None
    percent: Number | None = None


class StorageSample(TableItem):
    """One RDS storage progress sample (``sk=RDSINIT#<at>#<step>``): StorageOperationStatus and
    StorageOperationPercentProgress (None when RDS reported none), or ``gap`` (the error code) when they could
    not be read; ``volumes``: each additional storage volume's ``{volume, status, percent}``."""

    at: str
    step: str
    status: str | None = None
    percent: Number | None = None
    gap: str | None = None
    volumes: list[VolumeSample] | None = None

    def summary(self) -> dict[str, Any]:
        """``{at, step, status, percent, gap}`` (absent ones None) and ``volumes`` when it has any (what
        ``Store.storage_samples`` returned before the records)."""
        return {"at": self.at, "step": self.step, "status": self.status, "percent": self.percent, "gap": self.gap,
                **({"volumes": self.volumes} if self.volumes else {})}


class StorageClaim(TableItem):
    """``sk=RDSINIT-CLAIM``: when the last storage sample was claimed (one per interval across all units)."""

    claimed_at: str | None = None


class ControlRate(BaseModel):
    """The rate the first chunks are sized from, as stored (the control item's ``rate``, the findings'
    ``warmup.sizing_rate``; ``warmup.concurrency.SizingRate`` writes it): the cold probe's or the assumed one
    (``source``)."""

    model_config = ConfigDict(extra="allow")

    mib_per_s: Number | None = None
    source: str | None = None


class AfterHotSet(BaseModel):
    """The control item's ``after_hot_set``, from the acquire that found the hot set warm: the level then in
    force, when (s after the first acquire), how many held slots then, how many were admitted after and the most
    that held slots at one."""

    model_config = ConfigDict(extra="allow")

    max_concurrency: int
    t_s: Number
    holders_then: int
    admitted: int = 0
    most_holders: int | None = None


class ControlState(BaseModel):
    """The control item's ``control``: what the concurrency controller remembers between windows
    (``warmup.concurrency.Control``'s ``model_dump``): the level, the best level and its rate, the strikes, why it
    settled (a word; ``false`` in an item of before), and the samples ``[t_s, level, MiB/s, slots wanted]``."""

    model_config = ConfigDict(extra="allow")

    level: int | None = None
    best_level: int | None = None
    best_mib_per_s: Number | None = None
    strikes: int | None = None
    settled: str | bool | None = None
    samples: list[list[Number]] | None = None


class WarmupControl(TableItem):
    """The warm-up's concurrency control item (``sk=WARMUP#CONTROL``, ``warmup.slots``): the level, the units
    holding a slot, the windows' samples and the sizing rate; written whole under a version check."""

    version: int | None = None
    attempt: int | None = None
    holders: list[str] | None = None
    control: ControlState | None = None
    t0: Number | None = None
    window_started: Number | None = None
    window_bytes: int | None = None
    window_chunks: int | None = None
    rate: ControlRate | None = None
    adaptive: bool | None = None
    maximum: int | None = None
    hot_left: list[str] | None = None
    after_hot_set: AfterHotSet | None = None

    def state(self) -> dict[str, Any]:
        """The control's state: the stored attributes without the keys and the version (what a writer changes)."""
        return {k: v for k, v in self.without_keys().items() if k != "version"}
