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
from statistics import median
from typing import Any

from cutover_prep.analysis.probes import warm_vs_cold
from cutover_prep.models.thresholds import Thresholds

BOUND_AT = 0.85
ABOVE_CAP = 1.2
PLATEAU = 0.12
GROWS = 1.3
BURST_EMPTY_PCT = 1.0
DRAIN_PER_MIN = -0.01
PENALTY_SHOWN_AT = 1.2


def _num(value: Any) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a number: {value!r}")
    number = float(value)
    if math.isnan(number):
        return None
    return number


def _fmt_kb(kb: float | None) -> str:
    if kb is None:
        return "?"
    return f"{kb:,.0f}" if kb >= 10 or float(kb).is_integer() else f"{kb:,.1f}"


def _fmt_mb(kbps: float) -> str:
    mb = kbps / 1024
    return f"{mb:,.0f} MiB/s" if mb >= 10 else f"{mb:,.1f} MiB/s"


def _pct(value: float | None, cap: float | None) -> float | None:
    return round(100 * value / cap, 1) if value is not None and cap else None


def _latency(p: dict[str, Any]) -> dict[str, float] | None:
    lat = {k: _num(v) for k, v in (p.get("latency_us") or {}).items() if k in ("p50", "p95", "p99", "mean")}
    for key in ("p50", "p95", "p99"):
        if p.get(f"latency_{key}_us") not in (None, ""):
            lat[key] = _num(p[f"latency_{key}_us"])
    lat = {k: v for k, v in lat.items() if v is not None}
    return lat or None


def _row(p: dict[str, Any], index: int) -> dict[str, Any]:
    iops, tp, size = _num(p.get("iops")), _num(p.get("throughput_kbps")), _num(p.get("io_size_kb"))
    effective = round(tp / iops, 1) if iops and tp is not None and iops > 0 else None
    sessions = _num(p.get("sessions"))
    row = {"point_id": p.get("point_id") or f"point-{index + 1}", "kind": p.get("kind") or None,
           "sessions": int(sessions) if sessions is not None else None,
           "io_size_kb": size, "effective_io_kb": effective,
           "iops": iops, "throughput_kbps": tp, "bound": None, "bound_basis": None, "limit_level": None,
           "pct_iops_limit": None, "pct_throughput_limit": None, "iops_above_limit": False}
    for key in ("burst_balance", "seconds"):
        row[key] = _num(p.get(key))
    lat = _latency(p)
    if lat:
        row["latency_us"] = lat
    return row


def _size(row: dict[str, Any]) -> float | None:
    return row["effective_io_kb"] if row["effective_io_kb"] is not None else row["io_size_kb"]


def _valid(row: dict[str, Any]) -> bool:
    return bool(row["iops"] and row["throughput_kbps"] and row["iops"] > 0 and row["throughput_kbps"] > 0)


def _is_sequential(row: dict[str, Any]) -> bool:
    return row["kind"] in (None, "sequential")


# ---- bound with limits -------------------------------------------------------------------------

def _levels(limits: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    if not limits:
        return []
    eff = limits["effective"]
    return [("peak", eff["peak"])] + ([("sustained", eff["sustained"])] if eff.get("has_burst") else [])


def _judge(row: dict[str, Any], level: dict[str, Any]) -> tuple[str | None, float | None, float | None]:
    r_iops = row["iops"] / level["iops"] if level.get("iops") else None
    r_tp = row["throughput_kbps"] / level["throughput_kbps"] if level.get("throughput_kbps") else None
    candidates = [(abs(1 - r), name) for name, r in (("throughput", r_tp), ("iops", r_iops))
                  if r is not None and BOUND_AT <= r <= ABOVE_CAP]
    return (min(candidates)[1] if candidates else None), r_iops, r_tp


def _bound_by_limits(row: dict[str, Any], levels: list[tuple[str, dict[str, Any]]]) -> None:
    if not levels or not _valid(row):
        return
    usable = levels
    if row["burst_balance"] is not None and row["burst_balance"] < BURST_EMPTY_PCT and len(levels) > 1:
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
    row.update(limit_level=name, bound=bound, bound_basis="limit" if bound else None,
               pct_iops_limit=round(100 * r_iops, 1) if r_iops is not None else None,
               pct_throughput_limit=round(100 * r_tp, 1) if r_tp is not None else None,
               iops_above_limit=bool(r_iops is not None and r_iops > ABOVE_CAP))


# ---- bound from the shape of the series ----------------------------------------------------------

def _shape_bounds(rows: list[dict[str, Any]]) -> dict[int, str]:
    pts = sorted((r for r in rows if _valid(r) and _size(r) is not None), key=_size)
    if len(pts) < 2:
        return {}
    out: dict[int, str] = {}
    top = max(r["throughput_kbps"] for r in pts)
    plateau = [r for r in pts if r["throughput_kbps"] >= (1 - PLATEAU) * top]
    if len(plateau) >= 2 and plateau[-1]["iops"] < (1 - PLATEAU) * plateau[0]["iops"]:
        out.update({id(r): "throughput" for r in plateau})
    rest = [r for r in pts if id(r) not in out]
    if len(rest) >= 2:
        best = max(r["iops"] for r in rest)
        flat = [r for r in rest if r["iops"] >= (1 - PLATEAU) * best]
        tps = [r["throughput_kbps"] for r in flat]
        if len(flat) >= 2 and max(tps) >= GROWS * min(tps):
            out.update({id(r): "iops" for r in flat})
    return out


def _apply_shape(rows: list[dict[str, Any]]) -> None:
    for group in ([r for r in rows if _is_sequential(r)], [r for r in rows if r["kind"] == "random"]):
        for row_id, bound in _shape_bounds(group).items():
            row = next(r for r in group if id(r) == row_id)
            if row["bound"] is None:
                row.update(bound=bound, bound_basis="shape")


# ---- crossover, measured ----------------------------------------------------------------------

def _crossover(rows: list[dict[str, Any]], limits: dict[str, Any] | None) -> dict[str, Any]:
    seq = [r for r in rows if _is_sequential(r) and r["bound"] and _size(r) is not None]
    iops_sizes = sorted(_size(r) for r in seq if r["bound"] == "iops")
    tp_sizes = sorted(_size(r) for r in seq if r["bound"] == "throughput")
    first_tp = next((s for s in tp_sizes if iops_sizes and s > iops_sizes[0]), None)
    last_iops = max((s for s in iops_sizes if first_tp is not None and s < first_tp), default=None)
    eff = (limits or {}).get("effective") or {}
    levels = [r["limit_level"] for r in rows if r["bound_basis"] == "limit"]
    level = "sustained" if eff.get("has_burst") and levels.count("sustained") > levels.count("peak") else "peak"
    return {"measured_kb": first_tp, "last_iops_bound_kb": last_iops, "first_throughput_bound_kb": first_tp,
            "clean": bool(first_tp is not None and max(iops_sizes) < min(tp_sizes)),
            "theoretical_kb": (eff.get(level) or {}).get("crossover_kb"), "theoretical_level": level if eff else None,
            "theoretical_peak_kb": (eff.get("peak") or {}).get("crossover_kb"),
            "theoretical_sustained_kb": (eff.get("sustained") or {}).get("crossover_kb")}


def _measured(rows: list[dict[str, Any]]) -> dict[str, Any]:
    valid = [r for r in rows if _valid(r)]
    if not valid:
        return {"points": len(rows), "max_iops": None, "max_iops_at_kb": None, "max_throughput_kbps": None,
                "max_throughput_mb_s": None, "max_throughput_at_kb": None}
    by_iops = max(valid, key=lambda r: (r["iops"], -(_size(r) or 0)))
    by_tp = max(valid, key=lambda r: (r["throughput_kbps"], -(_size(r) or 0)))
    return {"points": len(rows), "max_iops": by_iops["iops"], "max_iops_at_kb": _size(by_iops),
            "max_iops_point": by_iops["point_id"], "max_throughput_kbps": by_tp["throughput_kbps"],
            "max_throughput_mb_s": round(by_tp["throughput_kbps"] / 1024, 1), "max_throughput_at_kb": _size(by_tp),
            "max_throughput_point": by_tp["point_id"]}


# ---- burst balance --------------------------------------------------------------------------

def _burst_samples(rows: list[dict[str, Any]], series: list[float] | None) -> tuple[list[tuple[float, float]], str]:
    if series:
        values = [v for v in (_num(x) for x in series) if v is not None]
        return [(float(i), v) for i, v in enumerate(values)], "series"
    samples, clock = [], 0.0
    for row in rows:
        seconds = row["seconds"] if row["seconds"] and row["seconds"] > 0 else 60.0
        if row["burst_balance"] is not None:
            samples.append(((clock + seconds / 2) / 60, row["burst_balance"]))
        clock += seconds
    return samples, "points"


def _slope(samples: list[tuple[float, float]]) -> float:
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_v = sum(v for _, v in samples) / n
    var = sum((t - mean_t) ** 2 for t, _ in samples)
    return sum((t - mean_t) * (v - mean_v) for t, v in samples) / var if var else 0.0


def _burst(rows: list[dict[str, Any]], series: list[float] | None, limits: dict[str, Any] | None) -> dict | None:
    samples, source = _burst_samples(rows, series)
    if not samples:
        return None
    values = [v for _, v in samples]
    minutes = samples[-1][0] - samples[0][0]
    rate = _slope(samples) if len(samples) >= 2 else 0.0
    draining = rate < DRAIN_PER_MIN
    last = values[-1]
    sustained = (((limits or {}).get("effective") or {}).get("sustained") or {}) if limits else {}
    return {"source": source, "samples": len(samples), "first_pct": values[0], "last_pct": last,
            "min_pct": min(values), "minutes": round(minutes, 1), "rate_pct_per_min": round(rate, 2),
            "draining": draining, "empty": last < BURST_EMPTY_PCT,
            "minutes_to_empty": round(last / -rate, 1) if draining and last >= BURST_EMPTY_PCT else None,
            "baseline_iops": sustained.get("iops"), "baseline_label": sustained.get("iops_label")}


# ---- cold / warm ----------------------------------------------------------------------------

def _cold_warm(probes: dict[str, Any] | None) -> dict[str, Any] | None:
    cold, warm = (probes or {}).get("cold") or {}, (probes or {}).get("warm") or {}
    c_iops, w_iops = _num(cold.get("iops")), _num(warm.get("iops"))
    if not c_iops or not w_iops or c_iops <= 0 or w_iops <= 0:
        return None
    c_lat, w_lat = _latency(cold) or {}, _latency(warm) or {}
    c_tp, w_tp = _num(cold.get("throughput_kbps")), _num(warm.get("throughput_kbps"))
    return {"cold_iops": c_iops, "warm_iops": w_iops, "ratio": round(w_iops / c_iops, 2),
            "penalty_pct": round(100 * (1 - c_iops / w_iops), 1),
            "cold_throughput_kbps": c_tp, "warm_throughput_kbps": w_tp,
            "cold_latency_us": c_lat or None, "warm_latency_us": w_lat or None,
            "latency_p50_ratio": round(c_lat["p50"] / w_lat["p50"], 2) if c_lat.get("p50") and w_lat.get("p50")
            else None}


# ---- conclusions ----------------------------------------------------------------------------

def _level_of(row: dict[str, Any], limits: dict[str, Any]) -> dict[str, Any]:
    eff = limits["effective"]
    return eff.get(row["limit_level"] or "peak") or eff["peak"]


def _throughput_sentence(rows: list[dict], cross: dict, limits: dict | None) -> str | None:
    tp_rows = [r for r in rows if _is_sequential(r) and r["bound"] == "throughput"]
    if not tp_rows:
        return None
    start = cross["first_throughput_bound_kb"] or min(_size(r) for r in tp_rows)
    tp_rows = [r for r in tp_rows if _size(r) >= start]
    tp = median(r["throughput_kbps"] for r in tp_rows)
    if limits and any(r["bound_basis"] == "limit" for r in tp_rows):
        row = next(r for r in tp_rows if r["bound_basis"] == "limit")
        level = _level_of(row, limits)
        text = f"Reads of {_fmt_kb(start)} KiB and larger are capped by {level['throughput_label']}"
        text += f", not by {level['iops_label']}" if level.get("iops_label") else ""
        return text + f"; measured {_fmt_mb(tp)}, {_pct(tp, level['throughput_kbps']):.0f} % of that cap."
    return (f"Reads of {_fmt_kb(start)} KiB and larger are throughput-bound: throughput levels off at about "
            f"{_fmt_mb(tp)} while IO/s fall (judged from the shape of the series"
            + ("" if limits else ", no limits compared") + ").")


def _iops_sentence(rows: list[dict], cross: dict, limits: dict | None) -> str | None:
    io_rows = [r for r in rows if _is_sequential(r) and r["bound"] == "iops"]
    if not io_rows:
        return None
    top = cross["last_iops_bound_kb"] or max(_size(r) for r in io_rows)
    io_rows = [r for r in io_rows if _size(r) <= top]
    iops = median(r["iops"] for r in io_rows)
    text = f"Reads up to {_fmt_kb(top)} KiB are IOPS-bound at about {iops:,.0f} IO/s"
    if limits and any(r["bound_basis"] == "limit" for r in io_rows):
        level = _level_of(next(r for r in io_rows if r["bound_basis"] == "limit"), limits)
        return text + f", {_pct(iops, level['iops']):.0f} % of {level['iops_label']}."
    return text + " while throughput grows with the IO size (judged from the shape of the series)."


def _above_cap_sentence(rows: list[dict], cross: dict, limits: dict | None) -> str | None:
    above = [r for r in rows if r["iops_above_limit"] and r["bound"] == "throughput"]
    if not limits or not above:
        return None
    level = _level_of(above[0], limits)
    start = min(_size(r) for r in above)
    most = max(r["iops"] for r in above)
    text = (f"From {_fmt_kb(start)} KiB the reads ran at up to {most:,.0f} IO/s, more than {level['iops_label']}: "
            "the IOPS limit did not apply to these larger IOs, only the throughput limit did")
    theory = level.get("crossover_kb")
    if cross["measured_kb"] and theory and cross["measured_kb"] < 0.5 * theory:
        text += (f", so the crossover came at {_fmt_kb(cross['measured_kb'])} KiB instead of the "
                 f"{_fmt_kb(theory)} KiB that throughput limit / IOPS limit suggests")
    return text + "."


def _burst_clause(burst: dict[str, Any] | None) -> str | None:
    if not burst:
        return None
    after = f", after which the baseline is {burst['baseline_iops']:,} IOPS" if burst["baseline_iops"] else (
        ", after which reads fall back to the storage baseline")
    if burst["empty"]:
        return f"the burst balance is empty ({burst['last_pct']:g} %): these are baseline figures" + (
            f" ({burst['baseline_iops']:,} IOPS)" if burst["baseline_iops"] else "")
    if burst["draining"]:
        return (f"the burst balance fell from {burst['first_pct']:.0f} % to {burst['last_pct']:.0f} % in "
                f"{burst['minutes']:g} minutes and will be empty in about {burst['minutes_to_empty']:.0f} minutes"
                + after)
    return None


def _random_sentence(rows: list[dict], limits: dict | None, burst_clause: str | None) -> str | None:
    rnd = [r for r in rows if r["kind"] == "random" and _valid(r)]
    if not rnd:
        return None
    best = max(rnd, key=lambda r: r["iops"])
    text = f"Single-block reads reach {best['iops']:,.0f} IOPS"
    if limits and best["limit_level"]:
        level = _level_of(best, limits)
        if level.get("iops"):
            text += f", {_pct(best['iops'], level['iops']):.0f} % of {level['iops_label']}"
    else:
        if best["sessions"]:
            text += f" with {best['sessions']} sessions"
        p99 = (best.get("latency_us") or {}).get("p99")
        text += f" (p99 {p99 / 1000:,.2f} ms)" if p99 else ""
    return text + (f"; {burst_clause}." if burst_clause else ".")


def _cold_warm_sentence(cw: dict[str, Any] | None, thresholds: Thresholds | None) -> str | None:
    """With both medians, the verdict's own WARM_VS_COLD rule and thresholds say it (one rule, never two
    that could disagree); with IOPS alone (an offline CSV), the IOPS ratio."""
    if not cw:
        return None
    cold, warm = cw["cold_iops"], cw["warm_iops"]
    c50, w50 = (cw.get("cold_latency_us") or {}).get("p50"), (cw.get("warm_latency_us") or {}).get("p50")
    if c50 and w50 is not None:
        reason = warm_vs_cold(c50 / 1000, w50 / 1000, thresholds or Thresholds(), overlap=None)
        return f"Cold vs warm ({cold:,.0f} vs {warm:,.0f} IOPS): {reason.message}."
    if cw["ratio"] < PENALTY_SHOWN_AT:
        return (f"Cold and warm reads ran at about the same speed ({cold:,.0f} vs {warm:,.0f} IOPS): no "
                "first-touch penalty was measured (the blocks were already read once, or the storage was not "
                "restored from a snapshot).")
    return (f"The first read of a restored block was {cw['ratio']:.1f}x slower than a warm read "
            f"({cold:,.0f} vs {warm:,.0f} IOPS, {cw['penalty_pct']:.0f} % fewer IOPS): every block the "
            "cutover touches must be read once before it.")


def _limit_notes(rows: list[dict], limits: dict | None) -> list[str]:
    if not limits:
        return ["No instance or storage limits to compare with (none given, or not an RDS instance): the bounds "
                "are judged from the shape of the series only."]
    out = []
    inst, storage, peak = limits["instance"], limits["storage"], limits["effective"]["peak"]
    if not inst["ebs_optimized"]:
        out.append(f"{inst['instance_class']} is not EBS-optimized: AWS publishes no EBS limit for it, "
                   "only the storage limits were compared.")
    if inst.get("burstable"):
        out.append(f"{inst['instance_class']} holds its maximum EBS bandwidth ({inst['max_mbps']:,} Mbps, "
                   f"{inst['max_iops']:,} IOPS) for 30 minutes at least once a day, then {inst['baseline_mbps']:,} "
                   f"Mbps ({inst['baseline_mb_s']:,.0f} MiB/s) and {inst['baseline_iops']:,} IOPS: a short sweep "
                   "overstates what a long cutover gets.")
    if storage.get("rough"):
        out.append("The magnetic storage limits are rough (AWS publishes no throughput for it).")
    valid = [r for r in rows if _valid(r)]
    if valid and not any(r["bound_basis"] == "limit" for r in valid):
        best_tp = max(r["throughput_kbps"] for r in valid)
        best_iops = max(r["iops"] for r in valid)
        parts = []
        if peak.get("throughput_kbps"):
            parts.append(f"{_fmt_mb(best_tp)} ({_pct(best_tp, peak['throughput_kbps']):.0f} % of "
                         f"{peak['throughput_label']})")
        if peak.get("iops"):
            parts.append(f"{best_iops:,.0f} IO/s ({_pct(best_iops, peak['iops']):.0f} % of {peak['iops_label']})")
        if parts:
            out.append(f"No point came within {BOUND_AT:.0%} of a limit; the best were " + " and ".join(parts)
                       + ": the reads were held back elsewhere (too few sessions, latency, or cache hits).")
    return out


def _conclusions(rows: list[dict], cross: dict, limits: dict | None, burst: dict | None,
                 cw: dict | None, thresholds: Thresholds | None) -> list[str]:
    clause = _burst_clause(burst)
    random_sentence = _random_sentence(rows, limits, clause)
    sentences = [_throughput_sentence(rows, cross, limits), _iops_sentence(rows, cross, limits),
                 _above_cap_sentence(rows, cross, limits), random_sentence]
    if clause and not random_sentence:
        sentences.append(clause[0].upper() + clause[1:] + ".")
    sentences.append(_cold_warm_sentence(cw, thresholds))
    sentences += _limit_notes(rows, limits)
    return [s for s in sentences if s]


def analyze(points: list[dict], *, limits: dict | None = None, probes: dict | None = None,
            burst_balance: list[float] | None = None, thresholds: Thresholds | None = None) -> dict:
    """Analyse benchmark points (see the module docstring for the rules)."""
    rows = [_row(p, i) for i, p in enumerate(points)]
    levels = _levels(limits)
    for row in rows:
        _bound_by_limits(row, levels)
    _apply_shape(rows)  # points near no published cap are judged by the shape of the series
    cross = _crossover(rows, limits)
    burst = _burst(rows, burst_balance, limits)
    cw = _cold_warm(probes)
    return {
        "points": rows,
        "crossover_kb": cross["measured_kb"],
        "crossover_theoretical_kb": cross["theoretical_kb"],
        "crossover": cross,
        "limits": limits,
        "measured": _measured(rows),
        "burst": burst,
        "cold_warm": cw,
        "conclusions": _conclusions(rows, cross, limits, burst, cw, thresholds),
        "rules": {"bound_at_pct": round(100 * BOUND_AT), "above_cap_pct": round(100 * ABOVE_CAP),
                  "plateau_pct": round(100 * PLATEAU), "grows_pct": round(100 * (GROWS - 1))},
    }
