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

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from statistics import median
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator

from cutover_prep.analysis.limits import Level, Limits
from cutover_prep.analysis.probes import warm_vs_cold
from cutover_prep.models.thresholds import Thresholds

BOUND_AT = 0.85
ABOVE_CAP = 1.2
PLATEAU = 0.12
GROWS = 1.3
BURST_EMPTY_PCT = 1.0
DRAIN_PER_MIN = -0.01
PENALTY_SHOWN_AT = 1.2
LATENCY_KEYS = ("p50", "p95", "p99", "mean")


def _num(value: Any) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a number: {value!r}")
    number = float(value)
    if math.isnan(number):
        return None
    return number


Number = Annotated[float | None, BeforeValidator(_num)]  # empty and NaN are None, a boolean is refused


class Measured(BaseModel):
    """What a point or a probe measured, as the analysis reads it: its rates and latencies."""

    iops: Number = None
    throughput_kbps: Number = None
    latency_us: dict[str, Number] | None = None
    latency_p50_us: Number = None
    latency_p95_us: Number = None
    latency_p99_us: Number = None

    def latency(self) -> dict[str, float] | None:
        """The latency percentiles and mean (µs): ``latency_us``'s, each overridden by its own column."""
        lat = {k: v for k, v in (self.latency_us or {}).items() if k in LATENCY_KEYS}
        for key, value in (("p50", self.latency_p50_us), ("p95", self.latency_p95_us), ("p99", self.latency_p99_us)):
            if value is not None:
                lat[key] = value
        found = {k: v for k, v in lat.items() if v is not None}
        return found or None


class PointIn(Measured):
    """One benchmark point (a ``cutover-prep analyze`` CSV row, or the sweep's row of it)."""

    point_id: str | None = None
    kind: str | None = None
    sessions: Number = None
    io_size_kb: Number = None
    burst_balance: Number = None
    seconds: Number = None


class Probes(BaseModel):
    """The cold and warm probes (each as the benchmark stored it)."""

    cold: Measured | None = None
    warm: Measured | None = None


@dataclass(frozen=True)
class Row:
    """A point as the analysis judges it (``points`` of the result)."""

    point_id: str
    kind: str | None
    sessions: int | None
    io_size_kb: float | None
    effective_io_kb: float | None
    iops: float | None
    throughput_kbps: float | None
    bound: str | None = None
    bound_basis: str | None = None
    limit_level: str | None = None
    pct_iops_limit: float | None = None
    pct_throughput_limit: float | None = None
    iops_above_limit: bool = False
    burst_balance: float | None = None
    seconds: float | None = None
    latency_us: dict[str, float] | None = None

    def document(self) -> dict[str, Any]:
        doc = asdict(self)
        if self.latency_us is None:
            del doc["latency_us"]
        return doc


def _fmt_kb(kb: float | None) -> str:
    if kb is None:
        return "?"
    return f"{kb:,.0f}" if kb >= 10 or float(kb).is_integer() else f"{kb:,.1f}"


def _fmt_mb(kbps: float) -> str:
    mb = kbps / 1024
    return f"{mb:,.0f} MiB/s" if mb >= 10 else f"{mb:,.1f} MiB/s"


def _pct(value: float | None, cap: float | None) -> float | None:
    return round(100 * value / cap, 1) if value is not None and cap else None


def _at(latency: dict[str, float] | None, key: str) -> float | None:
    """One figure of a latency summary (``p50``, ``p99``), None when it has none."""
    return (latency or {}).get(key)


def _row(p: PointIn, index: int) -> Row:
    iops, tp = p.iops, p.throughput_kbps
    effective = round(tp / iops, 1) if iops and tp is not None and iops > 0 else None
    return Row(point_id=p.point_id or f"point-{index + 1}", kind=p.kind or None,
               sessions=int(p.sessions) if p.sessions is not None else None, io_size_kb=p.io_size_kb,
               effective_io_kb=effective, iops=iops, throughput_kbps=tp, burst_balance=p.burst_balance,
               seconds=p.seconds, latency_us=p.latency())


def _size(row: Row) -> float | None:
    return row.effective_io_kb if row.effective_io_kb is not None else row.io_size_kb


def _valid(row: Row) -> bool:
    return bool(row.iops and row.throughput_kbps and row.iops > 0 and row.throughput_kbps > 0)


def _is_sequential(row: Row) -> bool:
    return row.kind in (None, "sequential")


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
    if not levels or not _valid(row):
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
    pts = sorted(((i, r) for i, r in group if _valid(r) and _size(r) is not None), key=lambda ir: _size(ir[1]))
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
    for group in ([(i, r) for i, r in enumerate(rows) if _is_sequential(r)],
                  [(i, r) for i, r in enumerate(rows) if r.kind == "random"]):
        for index, bound in _shape_bounds(group).items():
            if out[index].bound is None:
                out[index] = replace(out[index], bound=bound, bound_basis="shape")
    return out


# ---- crossover, measured ----------------------------------------------------------------------

@dataclass(frozen=True)
class Crossover:
    """The crossover measured (the first throughput-bound IO size above an IOPS-bound one) and predicted."""

    measured_kb: float | None
    last_iops_bound_kb: float | None
    first_throughput_bound_kb: float | None
    clean: bool
    theoretical_kb: float | None
    theoretical_level: str | None
    theoretical_peak_kb: float | None
    theoretical_sustained_kb: float | None


def _crossover(rows: list[Row], limits: Limits | None) -> Crossover:
    seq = [r for r in rows if _is_sequential(r) and r.bound and _size(r) is not None]
    iops_sizes = sorted(_size(r) for r in seq if r.bound == "iops")
    tp_sizes = sorted(_size(r) for r in seq if r.bound == "throughput")
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


def _measured(rows: list[Row]) -> dict[str, Any]:
    valid = [r for r in rows if _valid(r)]
    if not valid:
        return {"points": len(rows), "max_iops": None, "max_iops_at_kb": None, "max_throughput_kbps": None,
                "max_throughput_mb_s": None, "max_throughput_at_kb": None}
    by_iops = max(valid, key=lambda r: (r.iops, -(_size(r) or 0)))
    by_tp = max(valid, key=lambda r: (r.throughput_kbps, -(_size(r) or 0)))
    return {"points": len(rows), "max_iops": by_iops.iops, "max_iops_at_kb": _size(by_iops),
            "max_iops_point": by_iops.point_id, "max_throughput_kbps": by_tp.throughput_kbps,
            "max_throughput_mb_s": round(by_tp.throughput_kbps / 1024, 1), "max_throughput_at_kb": _size(by_tp),
            "max_throughput_point": by_tp.point_id}


# ---- burst balance --------------------------------------------------------------------------

@dataclass(frozen=True)
class Burst:
    """How the gp2 burst balance went during the sweep, and when it runs empty."""

    source: str
    samples: int
    first_pct: float
    last_pct: float
    min_pct: float
    minutes: float
    rate_pct_per_min: float
    draining: bool
    empty: bool
    minutes_to_empty: float | None
    baseline_iops: float | None
    baseline_label: str | None


def _burst_samples(rows: list[Row], series: list[float] | None) -> tuple[list[tuple[float, float]], str]:
    if series:
        values = [v for v in (_num(x) for x in series) if v is not None]
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

@dataclass(frozen=True)
class ColdWarm:
    """The probes of the same blocks before and after the warm-up, side by side."""

    cold_iops: float
    warm_iops: float
    ratio: float
    penalty_pct: float
    cold_throughput_kbps: float | None
    warm_throughput_kbps: float | None
    cold_latency_us: dict[str, float] | None
    warm_latency_us: dict[str, float] | None
    latency_p50_ratio: float | None


def _cold_warm(probes: Probes) -> ColdWarm | None:
    cold, warm = probes.cold or Measured(), probes.warm or Measured()
    c_iops, w_iops = cold.iops, warm.iops
    if not c_iops or not w_iops or c_iops <= 0 or w_iops <= 0:
        return None
    c_lat, w_lat = cold.latency(), warm.latency()
    c50, w50 = _at(c_lat, "p50"), _at(w_lat, "p50")
    return ColdWarm(cold_iops=c_iops, warm_iops=w_iops, ratio=round(w_iops / c_iops, 2),
                    penalty_pct=round(100 * (1 - c_iops / w_iops), 1),
                    cold_throughput_kbps=cold.throughput_kbps, warm_throughput_kbps=warm.throughput_kbps,
                    cold_latency_us=c_lat, warm_latency_us=w_lat,
                    latency_p50_ratio=round(c50 / w50, 2) if c50 and w50 else None)


# ---- conclusions ----------------------------------------------------------------------------

def _level_of(row: Row, limits: Limits) -> Level:
    return limits.sustained if row.limit_level == "sustained" else limits.peak


def _throughput_sentence(rows: list[Row], cross: Crossover, limits: Limits | None) -> str | None:
    tp_rows = [r for r in rows if _is_sequential(r) and r.bound == "throughput"]
    if not tp_rows:
        return None
    start = cross.first_throughput_bound_kb or min(_size(r) for r in tp_rows)
    tp_rows = [r for r in tp_rows if _size(r) >= start]
    tp = median(r.throughput_kbps for r in tp_rows)
    if limits and any(r.bound_basis == "limit" for r in tp_rows):
        row = next(r for r in tp_rows if r.bound_basis == "limit")
        level = _level_of(row, limits)
        text = f"Reads of {_fmt_kb(start)} KiB and larger are capped by {level.throughput_label}"
        text += f", not by {level.iops_label}" if level.iops_label else ""
        return text + f"; measured {_fmt_mb(tp)}, {_pct(tp, level.throughput_kbps):.0f} % of that cap."
    return (f"Reads of {_fmt_kb(start)} KiB and larger are throughput-bound: throughput levels off at about "
            f"{_fmt_mb(tp)} while IO/s fall (judged from the shape of the series"
            + ("" if limits else ", no limits compared") + ").")


def _iops_sentence(rows: list[Row], cross: Crossover, limits: Limits | None) -> str | None:
    io_rows = [r for r in rows if _is_sequential(r) and r.bound == "iops"]
    if not io_rows:
        return None
    top = cross.last_iops_bound_kb or max(_size(r) for r in io_rows)
    io_rows = [r for r in io_rows if _size(r) <= top]
    iops = median(r.iops for r in io_rows)
    text = f"Reads up to {_fmt_kb(top)} KiB are IOPS-bound at about {iops:,.0f} IO/s"
    if limits and any(r.bound_basis == "limit" for r in io_rows):
        level = _level_of(next(r for r in io_rows if r.bound_basis == "limit"), limits)
        return text + f", {_pct(iops, level.iops):.0f} % of {level.iops_label}."
    return text + " while throughput grows with the IO size (judged from the shape of the series)."


def _above_cap_sentence(rows: list[Row], cross: Crossover, limits: Limits | None) -> str | None:
    above = [r for r in rows if r.iops_above_limit and r.bound == "throughput"]
    if not limits or not above:
        return None
    level = _level_of(above[0], limits)
    start = min(_size(r) for r in above)
    most = max(r.iops for r in above)
    text = (f"From {_fmt_kb(start)} KiB the reads ran at up to {most:,.0f} IO/s, more than {level.iops_label}: "
            "the IOPS limit did not apply to these larger IOs, only the throughput limit did")
    theory = level.crossover_kb
    if cross.measured_kb and theory and cross.measured_kb < 0.5 * theory:
        text += (f", so the crossover came at {_fmt_kb(cross.measured_kb)} KiB instead of the "
                 f"{_fmt_kb(theory)} KiB that throughput limit / IOPS limit suggests")
    return text + "."


def _burst_clause(burst: Burst | None) -> str | None:
    if not burst:
        return None
    after = f", after which the baseline is {burst.baseline_iops:,} IOPS" if burst.baseline_iops else (
        ", after which reads fall back to the storage baseline")
    if burst.empty:
        return f"the burst balance is empty ({burst.last_pct:g} %): these are baseline figures" + (
            f" ({burst.baseline_iops:,} IOPS)" if burst.baseline_iops else "")
    if burst.draining:
        return (f"the burst balance fell from {burst.first_pct:.0f} % to {burst.last_pct:.0f} % in "
                f"{burst.minutes:g} minutes and will be empty in about {burst.minutes_to_empty:.0f} minutes"
                + after)
    return None


def _random_sentence(rows: list[Row], limits: Limits | None, burst_clause: str | None) -> str | None:
    rnd = [r for r in rows if r.kind == "random" and _valid(r)]
    if not rnd:
        return None
    best = max(rnd, key=lambda r: r.iops)
    text = f"Single-block reads reach {best.iops:,.0f} IOPS"
    if limits and best.limit_level:
        level = _level_of(best, limits)
        if level.iops:
            text += f", {_pct(best.iops, level.iops):.0f} % of {level.iops_label}"
    else:
        if best.sessions:
            text += f" with {best.sessions} sessions"
        p99 = _at(best.latency_us, "p99")
        text += f" (p99 {p99 / 1000:,.2f} ms)" if p99 else ""
    return text + (f"; {burst_clause}." if burst_clause else ".")


def _cold_warm_sentence(cw: ColdWarm | None, thresholds: Thresholds | None) -> str | None:
    """With both medians, the verdict's own WARM_VS_COLD rule and thresholds say it (one rule, never two
    that could disagree); with IOPS alone (an offline CSV), the IOPS ratio."""
    if not cw:
        return None
    cold, warm = cw.cold_iops, cw.warm_iops
    c50, w50 = _at(cw.cold_latency_us, "p50"), _at(cw.warm_latency_us, "p50")
    if c50 and w50 is not None:
        reason = warm_vs_cold(c50 / 1000, w50 / 1000, thresholds or Thresholds(), overlap=None)
        return f"Cold vs warm ({cold:,.0f} vs {warm:,.0f} IOPS): {reason.message}."
    if cw.ratio < PENALTY_SHOWN_AT:
        return (f"Cold and warm reads ran at about the same speed ({cold:,.0f} vs {warm:,.0f} IOPS): no "
                "first-touch penalty was measured (the blocks were already read once, or the storage was not "
                "restored from a snapshot).")
    return (f"The first read of a restored block was {cw.ratio:.1f}x slower than a warm read "
            f"({cold:,.0f} vs {warm:,.0f} IOPS, {cw.penalty_pct:.0f} % fewer IOPS): every block the "
            "cutover touches must be read once before it.")


def _limit_notes(rows: list[Row], limits: Limits | None) -> list[str]:
    if not limits:
        return ["No instance or storage limits to compare with (none given, or not an RDS instance): the bounds "
                "are judged from the shape of the series only."]
    out = []
    inst, peak = limits.instance, limits.peak
    if not inst.ebs_optimized:
        out.append(f"{inst.instance_class} is not EBS-optimized: AWS publishes no EBS limit for it, "
                   "only the storage limits were compared.")
    if inst.burstable:
        out.append(f"{inst.instance_class} holds its maximum EBS bandwidth ({inst.max_mbps:,} Mbps, "
                   f"{inst.max_iops:,} IOPS) for 30 minutes at least once a day, then {inst.baseline_mbps:,} "
                   f"Mbps ({inst.baseline_mb_s:,.0f} MiB/s) and {inst.baseline_iops:,} IOPS: a short sweep "
                   "overstates what a long cutover gets.")
    if limits.storage.rough:
        out.append("The magnetic storage limits are rough (AWS publishes no throughput for it).")
    valid = [r for r in rows if _valid(r)]
    if valid and not any(r.bound_basis == "limit" for r in valid):
        best_tp = max(r.throughput_kbps for r in valid)
        best_iops = max(r.iops for r in valid)
        parts = []
        if peak.throughput_kbps:
            parts.append(f"{_fmt_mb(best_tp)} ({_pct(best_tp, peak.throughput_kbps):.0f} % of "
                         f"{peak.throughput_label})")
        if peak.iops:
            parts.append(f"{best_iops:,.0f} IO/s ({_pct(best_iops, peak.iops):.0f} % of {peak.iops_label})")
        if parts:
            out.append(f"No point came within {BOUND_AT:.0%} of a limit; the best were " + " and ".join(parts)
                       + ": the reads were held back elsewhere (too few sessions, latency, or cache hits).")
    return out


def _conclusions(rows: list[Row], cross: Crossover, limits: Limits | None, burst: Burst | None,
                 cw: ColdWarm | None, thresholds: Thresholds | None) -> list[str]:
    clause = _burst_clause(burst)
    random_sentence = _random_sentence(rows, limits, clause)
    sentences = [_throughput_sentence(rows, cross, limits), _iops_sentence(rows, cross, limits),
                 _above_cap_sentence(rows, cross, limits), random_sentence]
    if clause and not random_sentence:
        sentences.append(clause[0].upper() + clause[1:] + ".")
    sentences.append(_cold_warm_sentence(cw, thresholds))
    sentences += _limit_notes(rows, limits)
    return [s for s in sentences if s]


def analyze(points: Iterable[dict[str, Any]], *, limits: dict[str, Any] | None = None,
            probes: dict[str, Any] | None = None, burst_balance: list[float] | None = None,
            thresholds: Thresholds | None = None) -> dict[str, Any]:
    """Analyse benchmark points (see the module docstring for the rules) against ``limits`` (an
    ``expected_limits`` document, repeated in the result), with the cold and warm ``probes``."""
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
        "conclusions": _conclusions(rows, cross, known, burst, cw, thresholds),
        "rules": {"bound_at_pct": round(100 * BOUND_AT), "above_cap_pct": round(100 * ABOVE_CAP),
                  "plateau_pct": round(100 * PLATEAU), "grows_pct": round(100 * (GROWS - 1))},
    }
