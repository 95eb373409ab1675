"""``findings.estimate`` (``estimate.run.estimate_section``): the run's estimate beside what happened.

``estimate`` repeats the run item's estimate (``records.run_estimate.RunEstimate``), every figure written (``null``
where the estimate has none), its ``counted`` as stored; ``actual`` the findings' bytes, warm-up time and rate;
``ratios`` actual / estimate of each. Unknown fields are kept (an older or newer writer's).
"""

from __future__ import annotations

from cutover_prep.dal.records.run_estimate import RecordedCounted
from cutover_prep.dal.records.section import Num, OpenSection

NOTE = "actual / estimate; the verdict does not use the estimate"


class EstimateFigures(OpenSection):
    """What ``findings.estimate`` repeats of the run's estimate (``Estimate``'s fields, as the run item holds them:
    an estimate of an older version may lack some)."""

    bytes_to_read: Num | None = None
    counted: RecordedCounted | None = None  # ``Counted``, as stored
    assumed_mib_per_s: Num | None = None
    source: str | None = None
    source_detail: str | None = None
    estimated_seconds: Num | None = None
    seconds_bytes: Num | None = None
    seconds_ranges: Num | None = None
    range_seconds: Num | None = None
    concurrency: int | None = None
    units: int | None = None
    ranges: int | None = None
    cost_usd: Num | None = None


class EstimateActual(OpenSection):
    """What happened: the bytes read, the warm-up's wall time and its rate."""

    bytes_read: Num | None = None
    warmup_seconds: Num | None = None
    mib_per_s: Num | None = None


class EstimateRatios(OpenSection):
    """Actual / estimate of the bytes, the seconds and the rate (None: no estimate of it, or nothing happened)."""

    bytes: Num | None = None
    seconds: Num | None = None
    mib_per_s: Num | None = None


class EstimateFindings(OpenSection):
    """``findings.estimate``."""

    estimate: EstimateFigures | None = None
    actual: EstimateActual | None = None
    ratios: EstimateRatios | None = None
    note: str | None = None
