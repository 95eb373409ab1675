"""IO analysis of measured points (pure: no AWS calls, no I/O, deterministic).

Per point: effective IO size = throughput / IOPS, and whether it is IOPS-bound or
throughput-bound. The rule, with expected limits (``iolimits.expected_limits``): the point
is bound by whichever limit it is closer to, as a fraction of that limit — IOPS against
the storage/instance IOPS (gp2: the burst limit when the point ran above the baseline),
throughput against the effective bandwidth. Without limits, the series itself is the
yardstick: IOPS as a fraction of the best IOPS seen, throughput as a fraction of the best
throughput seen; the larger fraction names the bound (a point at the IOPS plateau whose
throughput still grows with IO size is IOPS-bound; a point at the throughput plateau
whose IOPS fall as IOs grow is throughput-bound).

Overall: the crossover IO size (the smallest sweep IO size from which every larger point
is throughput-bound), the measured bests, measured vs expected limits, gp2 burst balance
draining, the cold/warm penalty of first reads, and conclusions in plain sentences.
Seed 000 (RDS Oracle, io1 1,000 PIOPS on db.m4.4xlarge) is the reference shape: IOPS-
bound up to 32 KB, throughput-bound (the instance's 256,000 KB/s) from 64 KB.
"""

from __future__ import annotations

from typing import Any

NEAR = 0.85  # a point within 15 % of a limit is "at" it


def _num(value: Any) -> float | None:
    return None if value in (None, "") else float(value)


def _effective_kb(p: dict[str, Any]) -> float | None:
    iops, tput = _num(p.get("iops")), _num(p.get("throughput_kbps"))
    return round(tput / iops, 2) if iops and tput is not None else None


def _limits_of(limits: dict[str, Any] | None) -> tuple[float | None, float | None, float | None]:
    """(IOPS limit, gp2 baseline IOPS if bursting applies, throughput limit KiB/s)."""
    if not limits:
        return None, None, None
    eff = limits.get("effective") or {}
    storage = limits.get("storage") or {}
    baseline = storage.get("iops") if storage.get("burst_iops") else None
    return eff.get("iops"), baseline, eff.get("throughput_kib_s")


def _bound(i_frac: float, t_frac: float) -> str:
    """At the throughput limit wins (large IOs can run above a nominal IOPS limit: seed 000);
    else at the IOPS limit; else the closer one."""
    if t_frac >= NEAR:
        return "throughput"
    if i_frac >= NEAR:
        return "iops"
    return "throughput" if t_frac > i_frac else "iops"


def classify(points: list[dict[str, Any]], limits: dict[str, Any] | None) -> list[dict[str, Any]]:
    iops_cap, baseline, tput_cap = _limits_of(limits)
    best_iops = max((_num(p["iops"]) or 0 for p in points), default=0) or None
    best_tput = max((_num(p["throughput_kbps"]) or 0 for p in points), default=0) or None
    out = []
    for p in points:
        iops, tput = _num(p["iops"]) or 0.0, _num(p["throughput_kbps"]) or 0.0
        i_cap = iops_cap
        if baseline and iops <= baseline * 1.15:
            i_cap = baseline  # gp2 after the burst: the baseline is the limit in force
        i_ref, t_ref = i_cap or best_iops, tput_cap or best_tput
        i_frac = iops / i_ref if i_ref else 0.0
        t_frac = tput / t_ref if t_ref else 0.0
        row = {"point_id": p.get("point_id"), "kind": p.get("kind"), "sessions": _num(p.get("sessions")),
               "io_size_kb": _num(p.get("io_size_kb")), "effective_io_kb": _effective_kb(p), "iops": iops,
               "throughput_kbps": tput, "bound": _bound(i_frac, t_frac),
               "at_limit": max(i_frac, t_frac) >= NEAR}
        if i_cap:
            row["pct_of_iops_limit"] = round(100 * iops / i_cap, 1)
        if tput_cap:
            row["pct_of_throughput_limit"] = round(100 * tput / tput_cap, 1)
        for key in ("latency_p50_us", "latency_p99_us", "burst_balance"):
            if _num(p.get(key)) is not None:
                row[key] = _num(p.get(key))
        out.append(row)
    return out


def _sweep(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The IO-size sweep: sequential points (or every point when kinds are not given), by size."""
    seq = [r for r in rows if r.get("kind") in (None, "", "sequential") and r.get("io_size_kb")]
    return sorted(seq, key=lambda r: r["io_size_kb"])


def crossover(rows: list[dict[str, Any]]) -> float | None:
    sweep = _sweep(rows)
    for i, r in enumerate(sweep):
        if i > 0 and all(x["bound"] == "throughput" for x in sweep[i:]) and sweep[i - 1]["bound"] == "iops":
            return r["io_size_kb"]
    return None


def burst(series: list[float] | None) -> dict[str, Any] | None:
    """BurstBalance % at 1-minute steps: first, last, min, fall per minute, minutes to empty."""
    if not series:
        return None
    first, last = series[0], series[-1]
    minutes = len(series) - 1
    rate = (first - last) / minutes if minutes else 0.0
    return {"first": first, "last": last, "min": min(series), "minutes": minutes,
            "drain_pct_per_min": round(rate, 2), "minutes_to_empty": round(last / rate, 1) if rate > 0 else None}


def cold_warm(probes: dict[str, Any] | None) -> dict[str, Any] | None:
    if not probes or not probes.get("cold") or not probes.get("warm"):
        return None
    cold, warm = probes["cold"], probes["warm"]
    c_iops, w_iops = _num(cold.get("iops")), _num(warm.get("iops"))
    c50 = _num((cold.get("latency_us") or {}).get("p50"))
    w50 = _num((warm.get("latency_us") or {}).get("p50"))
    out: dict[str, Any] = {"cold_iops": c_iops, "warm_iops": w_iops, "cold_p50_us": c50, "warm_p50_us": w50}
    if c_iops and w_iops:
        out["ratio"] = round(w_iops / c_iops, 2)
    if c50 and w50:
        out["latency_ratio"] = round(c50 / w50, 2)
    return out


def _mb(kib_s: float) -> str:
    return f"{kib_s / 1024:,.0f} MB/s"


def conclusions(rows: list[dict[str, Any]], limits: dict[str, Any] | None, cross: float | None,
                burst_info: dict[str, Any] | None, cw: dict[str, Any] | None) -> list[str]:
    out: list[str] = []
    iops_cap, baseline, tput_cap = _limits_of(limits)
    eff = (limits or {}).get("effective") or {}
    inst = (limits or {}).get("instance") or {}
    storage = (limits or {}).get("storage") or {}
    sweep = _sweep(rows)
    if cross is not None:
        capped = [r for r in sweep if r["io_size_kb"] >= cross]
        best = max(r["throughput_kbps"] for r in capped)
        who = ""
        if tput_cap:
            side = eff.get("throughput_bound_by")
            who = (f" — the instance's {_mb(tput_cap)} ({inst.get('class')})" if side == "instance"
                   else f" — the {storage.get('type')} storage's {_mb(tput_cap)}")
        iops_text = f"the {iops_cap:,.0f} IOPS of the storage" if iops_cap else "the IOPS limit"
        out.append(f"Reads of {cross:g} KB and larger are capped by throughput (up to {_mb(best)} measured{who}), "
                   f"not by {iops_text}; smaller reads are IOPS-bound.")
        if eff.get("crossover_kb") and abs(eff["crossover_kb"] - cross) / cross > 0.5:
            out.append(f"By the published limits alone, reads would switch to throughput-bound at "
                       f"{eff['crossover_kb']:g} KB; measured, they switch at {cross:g} KB: plan with the measurement.")
    elif sweep and all(r["bound"] == "iops" for r in sweep):
        out.append(f"Every IO size up to {sweep[-1]['io_size_kb']:g} KB stayed IOPS-bound "
                   f"(at most {max(r['iops'] for r in sweep):,.0f} IOPS): larger IOs buy throughput.")
    elif sweep and all(r["bound"] == "throughput" for r in sweep):
        out.append(f"Every IO size from {sweep[0]['io_size_kb']:g} KB was throughput-bound "
                   f"(up to {_mb(max(r['throughput_kbps'] for r in sweep))}): IOPS are not the constraint.")
    if rows:
        best_t = max(rows, key=lambda r: r["throughput_kbps"])
        best_i = max(rows, key=lambda r: r["iops"])
        if tput_cap:
            pct = 100 * best_t["throughput_kbps"] / tput_cap
            verdict = "at" if pct >= 100 * NEAR else "below"
            out.append(f"Best throughput {_mb(best_t['throughput_kbps'])} is {pct:.0f} % of the expected "
                       f"{_mb(tput_cap)} ({eff.get('throughput_bound_by')} limit): {verdict} the limit.")
        iops_bound = [r for r in rows if r["bound"] == "iops"]
        if iops_cap and iops_bound:
            best_ib = max(iops_bound, key=lambda r: r["iops"])
            pct = 100 * best_ib["iops"] / iops_cap
            out.append(f"Best IOPS-bound rate {best_ib['iops']:,.0f} IOPS is {pct:.0f} % of the expected "
                       f"{iops_cap:,.0f} IOPS ({eff.get('iops_bound_by')} limit{', gp2 burst' if baseline else ''}).")
        above = [r for r in rows if r["bound"] == "throughput" and iops_cap and r["iops"] > iops_cap * 1.15]
        if above:
            top = max(above, key=lambda r: r["iops"])
            out.append(f"IOs of {min(r['io_size_kb'] or 0 for r in above):g} KB and larger ran at up to "
                       f"{top['iops']:,.0f} IOPS, above the {iops_cap:,.0f}-IOPS limit: large IOs are not counted "
                       "one-for-one against it, throughput is what caps them (as seed 000 measured).")
        if inst.get("note"):
            out.append(f"No instance limit compared: {inst['note']}.")
    randoms = sorted((r for r in rows if r.get("kind") == "random" and r.get("sessions")), key=lambda r: r["sessions"])
    if len(randoms) > 1 and randoms[0]["iops"]:
        first, top = randoms[0], max(randoms, key=lambda r: r["iops"])
        out.append(f"Random single-block reads: {first['iops']:,.0f} IOPS with {first['sessions']:g} session(s), "
                   f"{top['iops']:,.0f} with {top['sessions']:g} ({top['iops'] / first['iops']:.1f}×).")
    if burst_info and burst_info["drain_pct_per_min"] > 0:
        text = (f"The gp2 burst balance fell from {burst_info['first']:g} % to {burst_info['last']:g} % in "
                f"{burst_info['minutes']} minutes")
        if burst_info["minutes_to_empty"] is not None:
            text += f"; at this rate it is empty in about {burst_info['minutes_to_empty']:g} minutes"
        if baseline:
            text += f", after which reads fall to the baseline of {baseline:,.0f} IOPS"
        out.append(text + ".")
    if cw:
        ratio = cw.get("ratio")
        if ratio and ratio >= 1.2:
            lat = ""
            if cw.get("cold_p50_us") and cw.get("warm_p50_us"):
                lat = f"; median {cw['cold_p50_us'] / 1000:.1f} ms vs {cw['warm_p50_us'] / 1000:.1f} ms"
            out.append(f"The first read of a restored block was {ratio:.1f}× slower than a warm read "
                       f"({cw['cold_iops']:,.0f} vs {cw['warm_iops']:,.0f} reads/s{lat}).")
        elif ratio:
            out.append(f"Cold and warm probe reads were about as fast ({cw['cold_iops']:,.0f} vs "
                       f"{cw['warm_iops']:,.0f} reads/s): no first-touch penalty shows in the sample.")
    return out


def analyze(points: list[dict[str, Any]], *, limits: dict[str, Any] | None = None,
            probes: dict[str, Any] | None = None, burst_balance: list[float] | None = None) -> dict[str, Any]:
    rows = classify(points, limits)
    cross = crossover(rows)
    burst_info = burst(burst_balance or [r["burst_balance"] for r in rows if r.get("burst_balance") is not None])
    cw = cold_warm(probes)
    measured = {}
    if rows:
        best_i = max(rows, key=lambda r: r["iops"])
        best_t = max(rows, key=lambda r: r["throughput_kbps"])
        measured = {"max_iops": best_i["iops"], "max_iops_at_kb": best_i["io_size_kb"],
                    "max_throughput_kbps": best_t["throughput_kbps"], "max_throughput_at_kb": best_t["io_size_kb"]}
    return {"points": rows, "crossover_kb": cross,
            "expected_crossover_kb": ((limits or {}).get("effective") or {}).get("crossover_kb"),
            "limits": limits, "measured": measured, "burst": burst_info, "cold_warm": cw,
            "conclusions": conclusions(rows, limits, cross, burst_info, cw)}
