"""The analysis' conclusions: one sentence per finding, in the words of ``analysis.io``'s rules."""

from __future__ import annotations

from statistics import median

from cutover_prep.analysis.limits import Level, Limits
from cutover_prep.analysis.points import (
    BOUND_AT,
    Burst,
    ColdWarm,
    Crossover,
    Row,
    is_sequential,
    latency_at,
    size_of,
    valid,
)
from cutover_prep.analysis.probes import warm_vs_cold
from cutover_prep.models.thresholds import Thresholds

PENALTY_SHOWN_AT = 1.2


def _fmt_kb(kb: float | None) -> str:
    if kb is None:
        return "?"
    return f"{kb:,.0f}" if kb >= 10 or float(kb).is_integer() else f"{kb:,.1f}"


def _fmt_mb(kbps: float) -> str:
    mb = kbps / 1024
    return f"{mb:,.0f} MiB/s" if mb >= 10 else f"{mb:,.1f} MiB/s"


def _pct(value: float | None, cap: float | None) -> float | None:
    return round(100 * value / cap, 1) if value is not None and cap else None


def _level_of(row: Row, limits: Limits) -> Level:
    return limits.sustained if row.limit_level == "sustained" else limits.peak


def _throughput_sentence(rows: list[Row], cross: Crossover, limits: Limits | None) -> str | None:
    tp_rows = [r for r in rows if is_sequential(r) and r.bound == "throughput"]
    if not tp_rows:
        return None
    start = cross.first_throughput_bound_kb or min(size_of(r) for r in tp_rows)
    tp_rows = [r for r in tp_rows if size_of(r) >= start]
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
    io_rows = [r for r in rows if is_sequential(r) and r.bound == "iops"]
    if not io_rows:
        return None
    top = cross.last_iops_bound_kb or max(size_of(r) for r in io_rows)
    io_rows = [r for r in io_rows if size_of(r) <= top]
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
    start = min(size_of(r) for r in above)
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
    rnd = [r for r in rows if r.kind == "random" and valid(r)]
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
        p99 = latency_at(best.latency_us, "p99")
        text += f" (p99 {p99 / 1000:,.2f} ms)" if p99 else ""
    return text + (f"; {burst_clause}." if burst_clause else ".")


def _cold_warm_sentence(cw: ColdWarm | None, thresholds: Thresholds | None) -> str | None:
    """With both medians, the verdict's own WARM_VS_COLD rule and thresholds say it (one rule, never two
    that could disagree); with IOPS alone (an offline CSV), the IOPS ratio."""
    if not cw:
        return None
    cold, warm = cw.cold_iops, cw.warm_iops
    c50, w50 = latency_at(cw.cold_latency_us, "p50"), latency_at(cw.warm_latency_us, "p50")
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
    usable = [r for r in rows if valid(r)]
    if usable and not any(r.bound_basis == "limit" for r in usable):
        best_tp = max(r.throughput_kbps for r in usable)
        best_iops = max(r.iops for r in usable)
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


def conclusions(rows: list[Row], cross: Crossover, limits: Limits | None, burst: Burst | None,
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
