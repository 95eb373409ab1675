"""The shape of the view model (``view.build_view``): every figure formatted once, as text, for the renderers.

The view model stays made of plain dicts and lists (jinja2's templates and the Markdown and terminal renderers
read it by key), typed here, part by part, so that what each renderer may read is written down.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from cutover_prep.report.charts import Chart

Rows = list[tuple[str, str]]  # label, formatted value


class ReasonView(TypedDict):
    code: str
    message: str
    exception: str | None  # how a passed check passed on an allowance of its rule (``engineer.exception_of``)


class VerdictView(TypedDict):
    name: str
    css: str
    failing: list[ReasonView]
    passing: list[ReasonView]
    not_judged: list[ReasonView]
    thresholds: Rows


class Figure(TypedDict):
    label: str
    value: str
    source: str


class PreflightView(TypedDict):
    line: str
    css: str
    rows: list[dict[str, str]]  # status, kind, name, detail


class WarmupView(TypedDict):
    rows: Rows
    failed: list[dict[str, str]]  # unit_id, error, cause
    segments: int
    not_read: list[dict[str, str]]  # key, kind, size, units, status
    not_read_more: int
    not_read_where: str


class StorageInitView(TypedDict):
    line: str
    notes: list[str]
    samples: int
    green: bool


class LimitsView(TypedDict):
    effective: list[dict[str, str]]  # level, iops, iops_by, mib_s, tp_by, crossover
    tables: list[tuple[str, Rows]]
    notes: list[str]
    sources: list[str]


class CrossoverView(TypedDict):
    measured: str
    peak: str
    sustained: str | None


class PointRow(TypedDict):
    id: str
    kind: str
    sessions: str
    iops: str
    mib_s: str
    kb: str
    p50: str
    p99: str
    bound: str
    source: str
    cw_iops: str
    cw_mib_s: str
    status: str
    ok: bool
    detail: list[str]


class ProbeRow(TypedDict):
    label: str
    cold: str
    warm: str
    ratio: str


class BenchView(TypedDict):
    status: str
    absent: str | None
    error: str
    probe_rows: list[ProbeRow]
    probe_notes: list[str]
    probe_timing: str | None
    points: list[PointRow]
    done: int
    capabilities: Rows
    conclusions: list[str]
    notes: list[str]
    metrics: str | None
    cached: NotRequired[list[str]]  # set by ``build_view`` (``engineer.cached_points``)
    cloudwatch: NotRequired[bool]  # a CloudWatch column: not for a local run


class CoverageRow(TypedDict):
    name: str
    segments: str
    planned: str
    read: str
    pct: str
    full: bool


class RelationRow(TypedDict):
    name: str
    database: str
    size: str
    read: str
    pct: str
    status: str
    css: str


class CoverageView(TypedDict):
    databases: list[CoverageRow]
    schemas: list[CoverageRow]
    largest: list[RelationRow]
    relations: str


class PriorityGroup(TypedDict):
    pattern: str
    units: str
    size: str
    finished: str
    finished_text: str


class PriorityView(TypedDict):
    line: str
    followed: bool
    groups: list[PriorityGroup]
    matched_nothing: list[str]


class UnreadView(TypedDict):
    rows: list[dict[str, str]]  # unit_id, status, read, segments, cause
    more: int


class CensusRow(TypedDict):
    name: str
    database: str
    kind: str
    size: str
    reason: str
    waived: bool


class CensusDatabaseRow(TypedDict):
    name: str
    objects: int
    size: str
    unread: str
    waived: str


class CensusView(TypedDict):
    line: str
    databases: list[CensusDatabaseRow]
    rows: list[CensusRow]
    more: int
    more_size: str
    where: str
    dropped: list[str]
    truncated: list[str]
    truncated_more: int
    dropped_more: int


class View(TypedDict):
    """``view.build_view``: the run's findings for every renderer."""

    verdict: VerdictView
    target: str
    engine: str
    run_id: str
    status: str
    started: str
    finished: str
    figures: list[Figure]
    instance: Rows
    safety: Rows
    limits: LimitsView | None
    crossover: CrossoverView | None
    warmup: WarmupView
    storage_init: StorageInitView
    storage_emulation: str | None
    estimate: str | None
    rates: str | None
    eta: str | None
    bench: BenchView
    charts: dict[str, Chart]
    io_size_absent: str | None
    local: bool
    coverage: CoverageView | None
    priority: PriorityView | None
    hot_set: str | None
    unread: UnreadView
    census: CensusView | None
    preflight: PreflightView | None
    schema_version: str
    version: str
    generated: str


class NextSteps(TypedDict):
    """``first_screen.next_steps``: what to do next."""

    css: str
    lead: str
    reasons: list[dict[str, str]]  # code, message, fix
    more: int
    more_codes: NotRequired[list[str]]
    notes: NotRequired[list[str]]


class FirstScreen(TypedDict):
    figures: list[Figure]
    next: NextSteps
