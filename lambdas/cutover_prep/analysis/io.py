"""Pure analysis of IO benchmark points: what bound each read, where the crossover is, how the
measured figures compare with the expected limits, how the gp2 burst balance drains, and what
the first touch of a restored block costs. No AWS calls, no I/O, deterministic.

Per point
    ``effective_io_kb`` = throughput / IOPS: the physical IO size the storage saw (seeds 000
    and 004: RDS issues 8/16/32/64/128 KB physical IOs whatever the database asked for). The
    IO size used for ordering and for the crossover is ``effective_io_kb``, or ``io_size_kb``
    when the IOPS are zero.

Bound, with limits (``expected_limits``)
    Caps are taken at two levels: ``peak`` (gp2 burst, the maximum of an "up to" instance
    class) and ``sustained`` (the baselines). A point whose ``burst_balance`` is below 1 %
    is judged at the sustained level only. A point is *IOPS-bound* when its IOPS are within
    85-120 % of the IOPS cap, *throughput-bound* when its throughput is within 85-120 % of
    the throughput cap; if both hold, the ratio nearer 100 % wins. The peak level is tried
    first. IOPS above 120 % of the IOPS cap mark ``iops_above_limit``: the IOPS cap did not
    apply to that IO size (seed 000: on io1 the IOPS limit applied to IOs up to 32 KB only,
    on gp2 up to 16 KB; larger IOs were limited by throughput alone).
    With limits, a point near no cap stays ``None`` (held back elsewhere: too few sessions,
    latency, cache hits); the shape rule below is not used then.
Bound, without limits, from the shape of the series
    Sequential and random points are judged as two separate series, ordered by IO size. The
    *throughput plateau* is the points within 12 % of the highest throughput: they are
    throughput-bound when there are at least two of them and the IOPS fall by more than 12 %
    across them. Among the other points, those within 12 % of their highest IOPS are
    IOPS-bound when there are at least two of them and their throughput grows by 30 % or more
    with the IO size. Anything else stays ``None``.
Crossover
    ``crossover_kb`` is the first throughput-bound IO size above an IOPS-bound one (sequential
    points, or points without a kind); ``None`` when the series never switches. The theoretical
    crossover is throughput cap / IOPS cap at the peak level.
Burst balance
    ``burst_balance`` is one gp2 BurstBalance value (%) per minute (CloudWatch's period); without
    it the points' own ``burst_balance`` values are used, placed by their ``seconds`` (one
    minute apart when a duration is missing). The rate is the least-squares slope in % per
    minute; draining when below -0.01 %/min, and then the time to empty is last / -rate.
Cold/warm (probes of the same blocks before and after the warm-up)
    ``ratio`` = warm IOPS / cold IOPS; ``penalty_pct`` = the share of IOPS lost on first touch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, replace
from typing import Any

from cutover_prep.analysis.conclusions import conclusions
from cutover_prep.analysis.limits import Level, Limits
from cutover_prep.analysis.points import (
    BOUND_AT,
    Burst,
    ColdWarm,
    Crossover,
    Measured,
    MeasuredMax,
    PointIn,
    PointRow,
    Probes,
    Row,
    is_sequential,
    latency_at,
    num,
    size_of,
    valid,
)
from cutover_prep.models.thresholds import Thresholds

ABOVE_CAP = 1.2
PLATEAU = 0.12
GROWS = 1.3
BURST_EMPTY_PCT = 1.0
DRAIN_PER_MIN = -0.01


def _row(p: PointIn, index: int) -> Row:
    iops, tp = p.iops, p.throughput_kbps
    effective = round(tp / iops, 1) if iops and tp is not None and iops > 0 else None
    return Row(point_id=p.point_id or f"point-{index + 1}", kind=p.kind or None,
               sessions=int(p.sessions) if p.sessions is not None else None, io_size_kb=p.io_size_kb,
               effective_io_kb=effective, iops=iops, throughput_kbps=tp, burst_balance=p.burst_balance,
               seconds=p.seconds, latency_us=p.latency())


# ---- bound with limits -------------------------------------------------------------------------

def _levels(limits: Limits | None) -> list[tuple[str, Level]]:
    if not limits:
        return []
    return [("peak", limits.peak)] + ([("sustained", limits.sustained)] if limits.has_burst else [])


def _judge(row: Row, level: Level) -> tuple[str | None, float | None, float | None]:
    r_iops = row.iops / level.iops if level.iops and row.iops is not None else None
    r_tp = row.throughput_kbps / level.throughput_kbps if level.throughput_kbps and row.throughput_kbps else None
    candidates = [(abs(1 - r), name) for name, r in (("throughput", r_tp), ("iops", r_iops))
                  if r is not None and BOUND_AT <= r <= ABOVE_CAP]
    return (min(candidates)[1] if candidates else None), r_iops, r_tp


def _bound_by_limits(row: Row, levels: list[tuple[str, Level]]) -> Row:
    if not levels or not valid(row):
        return row
    usable = levels
    if row.burst_balance is not None and row.burst_balance < BURST_EMPTY_PCT and len(levels) > 1:
        usable = [levels[-1]]
    chosen = None
    for name, level in usable:
        bound, r_iops, r_tp = _judge(row, level)
        if bound:
            chosen = (name, bound, r_iops, r_tp)
            break
    if chosen is None:
        name, level = usable[0]
        _, r_iops, r_tp = _judge(row, level)
        chosen = (name, None, r_iops, r_tp)
    name, bound, r_iops, r_tp = chosen
    return replace(row, limit_level=name, bound=bound, bound_basis="limit" if bound else None,
                   pct_iops_limit=round(100 * r_iops, 1) if r_iops is not None else None,
                   pct_throughput_limit=round(100 * r_tp, 1) if r_tp is not None else None,
                   iops_above_limit=bool(r_iops is not None and r_iops > ABOVE_CAP))


# ---- bound from the shape of the series ----------------------------------------------------------

def _shape_bounds(group: list[tuple[int, Row]]) -> dict[int, str]:
    """Index in the rows -> the bound the shape of ``group`` (one series) gives it."""
    pts = sorted(((i, r) for i, r in group if valid(r) and size_of(r) is not None), key=lambda ir: size_of(ir[1]))
    if len(pts) < 2:
        return {}
    out: dict[int, str] = {}
    top = max(r.throughput_kbps for _, r in pts)
    plateau = [(i, r) for i, r in pts if r.throughput_kbps >= (1 - PLATEAU) * top]
    if len(plateau) >= 2 and plateau[-1][1].iops < (1 - PLATEAU) * plateau[0][1].iops:
        out.update({i: "throughput" for i, _ in plateau})
    rest = [(i, r) for i, r in pts if i not in out]
    if len(rest) >= 2:
        best = max(r.iops for _, r in rest)
        flat = [(i, r) for i, r in rest if r.iops >= (1 - PLATEAU) * best]
        tps = [r.throughput_kbps for _, r in flat]
        if len(flat) >= 2 and max(tps) >= GROWS * min(tps):
            out.update({i: "iops" for i, _ in flat})
    return out


def _apply_shape(rows: list[Row]) -> list[Row]:
    out = list(rows)
    for group in ([(i, r) for i, r in enumerate(rows) if is_sequential(r)],
                  [(i, r) for i, r in enumerate(rows) if r.kind == "random"]):
        for index, bound in _shape_bounds(group).items():
            if out[index].bound is None:
                out[index] = replace(out[index], bound=bound, bound_basis="shape")
    return out


# ---- crossover, measured ----------------------------------------------------------------------


def _crossover(rows: list[Row], limits: Limits | None) -> Crossover:
    seq = [r for r in rows if is_sequential(r) and r.bound and size_of(r) is not None]
    iops_sizes = sorted(size_of(r) for r in seq if r.bound == "iops")
    tp_sizes = sorted(size_of(r) for r in seq if r.bound == "throughput")
    first_tp = next((s for s in tp_sizes if iops_sizes and s > iops_sizes[0]), None)
    last_iops = max((s for s in iops_sizes if first_tp is not None and s < first_tp), default=None)
    levels = [r.limit_level for r in rows if r.bound_basis == "limit"]
    sustained = bool(limits and limits.has_burst and levels.count("sustained") > levels.count("peak"))
    level = "sustained" if sustained else "peak"
    theory = (limits.sustained if sustained else limits.peak) if limits else None
    return Crossover(measured_kb=first_tp, last_iops_bound_kb=last_iops, first_throughput_bound_kb=first_tp,
                     clean=bool(first_tp is not None and max(iops_sizes) < min(tp_sizes)),
                     theoretical_kb=theory.crossover_kb if theory else None,
                     theoretical_level=level if limits else None,
                     theoretical_peak_kb=limits.peak.crossover_kb if limits else None,
                     theoretical_sustained_kb=limits.sustained.crossover_kb if limits else None)


def _measured(rows: list[Row]) -> MeasuredMax:
    usable = [r for r in rows if valid(r)]
    if not usable:
        return MeasuredMax(points=len(rows), max_iops=None, max_iops_at_kb=None, max_throughput_kbps=None,
                           max_throughput_mb_s=None, max_throughput_at_kb=None)
    by_iops = max(usable, key=lambda r: (r.iops, -(size_of(r) or 0)))
    by_tp = max(usable, key=lambda r: (r.throughput_kbps, -(size_of(r) or 0)))
    return MeasuredMax(points=len(rows), max_iops=by_iops.iops, max_iops_at_kb=size_of(by_iops),
                       max_iops_point=by_iops.point_id, max_throughput_kbps=by_tp.throughput_kbps,
                       max_throughput_mb_s=round(by_tp.throughput_kbps / 1024, 1),
                       max_throughput_at_kb=size_of(by_tp), max_throughput_point=by_tp.point_id)


# ---- burst balance --------------------------------------------------------------------------


def _burst_samples(rows: list[Row], series: list[float] | None) -> tuple[list[tuple[float, float]], str]:
    if series:
        values = [v for v in (num(x) for x in series) if v is not None]
        return [(float(i), v) for i, v in enumerate(values)], "series"
    samples, clock = [], 0.0
    for row in rows:
        seconds = row.seconds if row.seconds and row.seconds > 0 else 60.0
        if row.burst_balance is not None:
            samples.append(((clock + seconds / 2) / 60, row.burst_balance))
        clock += seconds
    return samples, "points"


def _slope(samples: list[tuple[float, float]]) -> float:
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_v = sum(v for _, v in samples) / n
    var = sum((t - mean_t) ** 2 for t, _ in samples)
    return sum((t - mean_t) * (v - mean_v) for t, v in samples) / var if var else 0.0


def _burst(rows: list[Row], series: list[float] | None, limits: Limits | None) -> Burst | None:
    samples, source = _burst_samples(rows, series)
    if not samples:
        return None
    values = [v for _, v in samples]
    minutes = samples[-1][0] - samples[0][0]
    rate = _slope(samples) if len(samples) >= 2 else 0.0
    draining = rate < DRAIN_PER_MIN
    last = values[-1]
    return Burst(source=source, samples=len(samples), first_pct=values[0], last_pct=last, min_pct=min(values),
                 minutes=round(minutes, 1), rate_pct_per_min=round(rate, 2), draining=draining,
                 empty=last < BURST_EMPTY_PCT,
                 minutes_to_empty=round(last / -rate, 1) if draining and last >= BURST_EMPTY_PCT else None,
                 baseline_iops=limits.sustained.iops if limits else None,
                 baseline_label=limits.sustained.iops_label if limits else None)


# ---- cold / warm ----------------------------------------------------------------------------


def _cold_warm(probes: Probes) -> ColdWarm | None:
    cold, warm = probes.cold or Measured(), probes.warm or Measured()
    c_iops, w_iops = cold.iops, warm.iops
    if not c_iops or not w_iops or c_iops <= 0 or w_iops <= 0:
        return None
    c_lat, w_lat = cold.latency(), warm.latency()
    c50, w50 = latency_at(c_lat, "p50"), latency_at(w_lat, "p50")
    return ColdWarm(cold_iops=c_iops, warm_iops=w_iops, ratio=round(w_iops / c_iops, 2),
                    penalty_pct=round(100 * (1 - c_iops / w_iops), 1),
                    cold_throughput_kbps=cold.throughput_kbps, warm_throughput_kbps=warm.throughput_kbps,
                    cold_latency_us=c_lat, warm_latency_us=w_lat,
                    latency_p50_ratio=round(c50 / w50, 2) if c50 and w50 else None)


# ---- conclusions ----------------------------------------------------------------------------


def analyze(points: Iterable[PointRow], *, burst_balance: list[float] | None = None,
            limits: dict[str, Any] | None = None, probes: dict[str, Any] | None = None,
            thresholds: Thresholds | None = None) -> dict[str, Any]:
    """Analyse benchmark points (see the module docstring for the rules) against ``limits`` (an
    ``expected_limits`` document, repeated in the result), with the cold and warm ``probes`` (each point as the
    benchmark stored it)."""
    known = Limits.from_document(limits) if limits else None
    levels = _levels(known)
    rows = [_bound_by_limits(_row(PointIn.model_validate(p), i), levels) for i, p in enumerate(points)]
    rows = _apply_shape(rows)  # points near no published cap are judged by the shape of the series
    cross = _crossover(rows, known)
    burst = _burst(rows, burst_balance, known)
    cw = _cold_warm(Probes.model_validate(probes or {}))
    return {
        "points": [r.document() for r in rows],
        "crossover_kb": cross.measured_kb,
        "crossover_theoretical_kb": cross.theoretical_kb,
        "crossover": asdict(cross),
        "limits": limits,
        "measured": _measured(rows),
        "burst": asdict(burst) if burst else None,
        "cold_warm": asdict(cw) if cw else None,
        "conclusions": conclusions(rows, cross, known, burst, cw, thresholds),
        "rules": {"bound_at_pct": round(100 * BOUND_AT), "above_cap_pct": round(100 * ABOVE_CAP),
                  "plateau_pct": round(100 * PLATEAU), "grows_pct": round(100 * (GROWS - 1))},
    }
