"""What a cutover engineer looks for, for the view model (pure): where each headline figure came
from, coverage per database and schema, the largest relations, the priority order, the units not
read and why, the time to warm, and the checks that passed only through an exception of their rule.

Every figure is labelled with its source; a figure that was read from the page cache (a sequential
point that read the same file again and again) is never a headline. Conclusions about cold vs warm
come from the verdict's own rule and thresholds, not from a second rule that could disagree.
"""

from __future__ import annotations

import re
from typing import Any

from cutover_prep.engines import keys
from cutover_prep.models.status import is_cached
from cutover_prep.report import clocks
from cutover_prep.report.charts import fmt_duration, fmt_number, num

DASH = "—"
MIB = 2**20
# the analysis' cold-vs-warm sentence (analysis.io): replaced by the verdict's WARM_VS_COLD reason
COLD_WARM_PREFIXES = ("Cold vs warm (", "Cold and warm reads ran", "The first read of a restored block")
STATUS_WORDS = {"READ": "read", "PARTLY": "partly read", "FAILED": "failed", "NOT_READ": "not read"}


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _fmt(value: Any, unit: str = "", scale: float = 1.0) -> str:
    number = num(value)
    return DASH if number is None else f"{fmt_number(number * scale)} {unit}".strip()


def _mib(value: Any) -> str:
    return _fmt(value, "MiB", 1 / MIB)


# ---- where the figures came from ----------------------------------------------------------------

def is_local(findings: dict[str, Any]) -> bool:
    """A local run (``cutover-prep local``) records its storage emulation, emulated or not."""
    return isinstance(findings.get("storage_emulation"), dict)


def storage_source(findings: dict[str, Any]) -> str:
    """Where the database's reads were served from, in a few words."""
    section = findings.get("storage_emulation")
    if isinstance(section, dict):
        if section.get("emulated"):
            return "emulated restored volume (local)"
        return "local disk or OS page cache (no emulated volume)"
    return "the RDS instance's storage"


def _counter(point: dict[str, Any]) -> str:
    return {"engine": "engine counters", "client": "client timing"}.get(str(point.get("source")), "client timing")


def _best(points: list[dict[str, Any]], key: str) -> dict[str, Any] | None:
    rated = [p for p in points if num(p.get(key)) is not None]
    return max(rated, key=lambda p: num(p.get(key)) or 0.0) if rated else None


def headline_figures(findings: dict[str, Any]) -> list[dict[str, str]]:
    """The key figures, each with its source; cached sequential re-reads are left out and said so."""
    bench = _d(findings.get("benchmark"))
    rate, timings = _d(findings.get("read_rate")), _d(findings.get("timings"))
    where = storage_source(findings)
    scale = clocks.time_scale(findings)
    emulated_rate, emulated_time = (clocks.rate(rate.get("mib_per_s_wall"), scale, 1),
                                    clocks.duration(timings.get("warmup_wall_seconds"), scale))
    database = ([{"label": "database read rate", "value": _fmt(rate.get("mib_per_s_database"), "MiB/s"),
                  "source": f"bytes read / the {fmt_duration(num(rate.get('database_reading_seconds')))} during which "
                  f"a reader was reading; {where}"}]
                if is_local(findings) and num(rate.get("mib_per_s_database")) is not None else [])
    figures = [{"label": "coverage", "value": _fmt(findings.get("coverage_pct"), "%"),
                "source": "warm-up unit records (planned bytes of finished units)"}, *database,
               {"label": "warm-up rate, all readers", "value": _fmt(rate.get("mib_per_s_wall"), "MiB/s"),
                "source": f"bytes read / warm-up wall time; {where}"
                + ("; the local harness's own time between reads is in it" if is_local(findings) else "")
                + (f"; {emulated_rate} MiB/s on the emulated clock (×{fmt_number(scale)} slowed)"
                   if emulated_rate else "")},
               {"label": "warm-up time", "value": fmt_duration(num(timings.get("warmup_wall_seconds"))),
                "source": "first unit start to last unit end"
                + (f"; {emulated_time} on the emulated clock" if emulated_time else "")}]
    done = [p for p in _l(bench.get("points")) if isinstance(p, dict) and p.get("status") == "DONE"]
    randoms = [p for p in done if "random" in str(p.get("kind") or "")]
    best = _best(randoms, "iops")
    if best is not None:
        cw = num(_d(_d(best.get("cloudwatch")).get("ReadIOPS")).get("mean"))
        figures.append({"label": "best random-read IOPS", "value": _fmt(best.get("iops")),
                        "source": f"point {best.get('point_id')}, {_counter(best)}; {where}"
                        + (f"; RDS CloudWatch ReadIOPS {_fmt(cw)}" if cw is not None else "")})
    reads = [p for p in done if str(p.get("kind") or "sequential") in ("sequential", "random")]
    storage = [p for p in reads if not is_cached(p)]  # the verdict's rule (verdict.best_rates)
    best = _best(storage, "throughput_kbps")
    if best is not None:
        cw = num(_d(_d(best.get("cloudwatch")).get("ReadThroughput")).get("mean"))
        figures.append({"label": "best read throughput", "value": _fmt(best.get("throughput_kbps"), "MiB/s", 1 / 1024),
                        "source": f"point {best.get('point_id')}, {_counter(best)}; {where}"
                        + (f"; RDS CloudWatch ReadThroughput {_fmt(cw, 'MiB/s', 1 / MIB)}" if cw is not None else "")})
    probes = _d(bench.get("probes"))
    cold, warm = _d(probes.get("cold")), _d(probes.get("warm"))
    c50, w50 = num(_d(cold.get("latency_us")).get("p50")), num(_d(warm.get("latency_us")).get("p50"))
    if c50 is not None and w50 is not None:
        speedup = cold_warm_text(findings)
        figures.append({"label": "median single-block read, cold → warm",
                        "value": f"{_fmt(c50, scale=1e-3)} → {_fmt(w50, 'ms', 1e-3)}"
                        + (f" ({speedup})" if speedup else ""),
                        "source": f"cold and warm probes, {probe_timer(probes)}; {where}"
                        + (f"; {clocks.ms(c50 / 1000, scale)} → {clocks.ms(w50 / 1000, scale)} on the emulated clock"
                           if scale else "")})
    return figures


def probe_timer(probes: dict[str, Any]) -> str:
    """Who timed the probes' reads, in the words every rendering uses (``measure.runner.run_probe``'s ``timed_by``)."""
    timers = {str(_d(probes.get(p)).get("timed_by") or "client") for p in ("cold", "warm")}
    if timers == {"server"}:
        return "timed by the database server"
    return "timed by the client" if timers == {"client"} else "cold and warm timed differently (server and client)"


def cold_warm_speedup(findings: dict[str, Any]) -> float | None:
    """The cold/warm figure, one definition everywhere: the cold probe's median single-block read latency over
    the warm probe's, as the verdict's WARM_VS_COLD rule computes it (``verdict.warm_vs_cold``)."""
    c, w = _probe_medians(findings)
    if c is None or w is None or w <= 0:
        return None
    return c / w


def cold_warm_text(findings: dict[str, Any]) -> str | None:
    """``cold/warm 3.32×``, rounded as the verdict's message rounds it."""
    ratio = cold_warm_speedup(findings)
    return None if ratio is None else f"cold/warm {ratio:.2f}×"


def cached_points(findings: dict[str, Any]) -> list[str]:
    """Sentences for the points whose rate is not a storage figure: they re-read their target."""
    bench = _d(findings.get("benchmark"))
    out: list[str] = []
    for p in _l(bench.get("points")):
        if isinstance(p, dict) and p.get("status") == "DONE" and is_cached(p):
            out.append(f"point {p.get('point_id')} read its target {p.get('passes')} times: after the first pass the "
                       "reads came from a cache (the OS page cache or the engine's buffers), so its "
                       f"{_fmt(p.get('throughput_kbps'), 'MiB/s', 1 / 1024)} is "
                       "not a storage figure and is not a headline")
    return out


LOCAL_WALL = ("this run's warm-up time on this machine, the local harness's own time between reads in it (moto, "
              "the handlers in one process): it measures the tool as much as the database")


def rates_line(findings: dict[str, Any]) -> str | None:
    """The warm-up's rates in one line, each labelled: the database's (bytes over the time a reader was reading),
    the emulated volume's (bytes over the time it had reads in hand), and the wall rate; None before any."""
    rate, timings = _d(findings.get("read_rate")), _d(findings.get("timings"))
    served = _d(_d(findings.get("storage_emulation")).get("warmup_served"))
    wall = num(timings.get("warmup_wall_seconds"))
    parts = []
    if num(rate.get("mib_per_s_database")) is not None:
        parts.append(f"database {_fmt(rate.get('mib_per_s_database'), 'MiB/s')} (bytes over the "
                     f"{fmt_duration(num(rate.get('database_reading_seconds')))} a reader was reading)")
    if num(served.get("mib_per_s")) is not None:
        parts.append(f"volume {_fmt(served.get('mib_per_s'), 'MiB/s')} (bytes over the "
                     f"{fmt_duration(num(served.get('busy_seconds')))} it had reads in hand)")
    if num(rate.get("mib_per_s_wall")) is not None:
        parts.append(f"wall {_fmt(rate.get('mib_per_s_wall'), 'MiB/s')} (over the warm-up's {fmt_duration(wall)}"
                     + ("; the local harness's overhead in it)" if is_local(findings) else ")"))
    return "warm-up read rates: " + "; ".join(parts) if parts else None


def rate_rows(findings: dict[str, Any]) -> list[tuple[str, str]]:
    """The database's rate, the wall rate and the per-worker rate, each saying what it is."""
    rate, timings = _d(findings.get("read_rate")), _d(findings.get("timings"))
    rows = []
    if num(rate.get("mib_per_s_database")) is not None:
        rows.append(("database read rate", f"{_fmt(rate.get('mib_per_s_database'), 'MiB/s')}: bytes read / the "
                     f"{fmt_duration(num(rate.get('database_reading_seconds')))} during which a reader was reading; "
                     "the database's own rate"))
    rows.append(("rate, all readers (wall)", f"{_fmt(rate.get('mib_per_s_wall'), 'MiB/s')}: bytes read / warm-up wall "
                 "time; " + (LOCAL_WALL if is_local(findings) else "what the cutover gets")))
    if num(rate.get("mib_per_s_per_worker")) is not None:
        rows.append(("rate of one reader", f"{_fmt(rate.get('mib_per_s_per_worker'), 'MiB/s')}: bytes read / the "
                     f"units' summed busy time ({fmt_duration(num(timings.get('unit_busy_seconds')))}); the speed of "
                     "one reader, not of the warm-up"))
    return rows


# ---- coverage, priority, unread units, time to warm -------------------------------------------------

def _name(*parts: Any) -> str:
    return ".".join(str(p) for p in parts if p not in (None, "")) or DASH


def coverage(findings: dict[str, Any]) -> dict[str, Any] | None:
    section = _d(findings.get("coverage"))
    if not section:
        return None

    def row(g: dict[str, Any], name: str) -> dict[str, str]:
        return {"name": name, "segments": f"{_fmt(g.get('segments_read'))} / {_fmt(g.get('segments'))}",
                "planned": _mib(g.get("bytes_planned")), "read": _mib(g.get("bytes_read")),
                "pct": _fmt(g.get("pct"), "%"), "full": num(g.get("pct")) == 100}

    largest = [{"name": str(r.get("label") or _name(r.get("schema"), r.get("name"))),
                "database": str(r.get("database") or DASH),
                "size": _mib(r.get("bytes")), "read": _mib(r.get("bytes_read")), "pct": _fmt(r.get("pct"), "%"),
                "status": STATUS_WORDS.get(str(r.get("status")), str(r.get("status"))),
                "css": str(r.get("status") or "")}
               for r in _l(section.get("largest")) if isinstance(r, dict)]
    return {"databases": [row(g, str(g.get("database") or DASH)) for g in _l(section.get("by_database"))],
            "schemas": [row(g, str(g.get("label") or _name(g.get("database"), g.get("schema"))))
                        for g in _l(section.get("by_schema"))],
            "largest": largest, "relations": _fmt(section.get("relations"))}


def priority(findings: dict[str, Any]) -> dict[str, Any] | None:
    section = _d(findings.get("priority"))
    if not section:
        return None
    groups = []
    for g in _l(section.get("groups")):
        if not isinstance(g, dict) or not g.get("units"):
            continue
        finished = num(g.get("finished_after_s"))
        label = "the hot set (warmup.hot_set)" if g.get("hot_set") else "everything else"
        groups.append({"pattern": str(g["pattern"]) if g.get("pattern") is not None else label,
                       "units": f"{_fmt(g.get('units_done'))} / {_fmt(g.get('units'))}", "size": _mib(g.get("bytes")),
                       "finished": fmt_duration(finished) if finished is not None else "not finished",
                       "finished_text": (f"{fmt_duration(finished)} after the warm-up began" if finished is not None
                                         else "not finished")})
    nothing = [str(p) for p in _l(section.get("matched_nothing"))]
    line = ("followed: each priority's units finished no later than those of a lower priority"
            if section.get("followed") else
            "NOT followed: a priority's units finished after those of a lower priority (or never finished)")
    return {"line": line, "followed": bool(section.get("followed")), "groups": groups,
            "matched_nothing": nothing}


def hot_set_line(findings: dict[str, Any]) -> str | None:
    """``findings.hot_set`` in one line: when the hot set was warm, against the whole warm-up, and where it came
    from; None without a hot set."""
    section = _d(findings.get("hot_set"))
    if not section:
        return None
    sources = "; ".join(f"{s.get('order')}. {s.get('source')} ({s.get('detail')})"
                        for s in _l(section.get("sources")) if isinstance(s, dict))
    what = (f"{_fmt(section.get('relations'))} relations, {_fmt(section.get('units'))} units, "
            f"{_mib(section.get('bytes'))}; sources {sources}")
    after, pct = num(section.get("warm_after_s")), num(section.get("pct_of_warmup"))
    if section.get("warm_at") is None or after is None:
        return (f"hot set NOT warm: {_fmt(section.get('units_done'))} of {_fmt(section.get('units'))} of its units "
                f"read ({what})")
    at = str(section["warm_at"])
    clock = at[11:19] + " UTC" if len(at) >= 19 and at[10] == "T" else at
    share = f", {pct:g} % of the warm-up's time" if pct is not None else ""
    order = "order followed" if section.get("followed") else "order NOT followed"
    return (f"hot set warm at {clock} ({fmt_duration(after)} after the warm-up started{share}): {what}; {order}"
            + _after_hot_set(findings))


def _after_hot_set(findings: dict[str, Any]) -> str:
    """``warmup.after_hot_set`` when it took effect (``findings.warmup.concurrency.after_hot_set``): the volume given
    back to the application once the hot set was warm."""
    mark = _d(_d(_d(findings.get("warmup")).get("concurrency")).get("after_hot_set"))
    if not mark:
        return ""
    return (f"; then at most {_fmt(mark.get('max_concurrency'))} units read at once (warmup.after_hot_set, "
            f"{fmt_duration(num(mark.get('t_s')))} after the first slot; {_fmt(mark.get('holders_then'))} were "
            f"reading, {_fmt(mark.get('admitted'))} started after, at most {_fmt(mark.get('most_holders'))} at a time)")


def unread(findings: dict[str, Any]) -> dict[str, Any]:
    rows = []
    for u in _l(findings.get("unread_units")):
        if not isinstance(u, dict):
            continue
        segments = ", ".join(str(s) for s in _l(u.get("segments")))
        if u.get("more_segments"):
            segments += f" and {u['more_segments']} more"
        rows.append({"unit_id": str(u.get("unit_id")), "status": str(u.get("status")),
                     "read": f"{_mib(u.get('bytes_read'))} of {_mib(u.get('bytes'))}", "segments": segments or DASH,
                     "cause": str(u.get("cause") or DASH)})
    return {"rows": rows[:50], "more": max(0, len(rows) - 50)}


def _end_failure(section: dict[str, Any]) -> str:
    """Why the end census is missing, when its step recorded it (the verdict's END_CENSUS says it too)."""
    failure = _d(section.get("end_census_failure"))
    return f": the end census did not run, {failure.get('error') or 'an error'}" if failure else ""


def census(findings: dict[str, Any], limit: int = 50) -> dict[str, Any] | None:
    """The volume census (findings ``census``): one line, per database, and every unread object named with
    its size and reason (waived ones last)."""
    section = _d(findings.get("census"))
    if not section.get("taken"):
        return None
    waived = num(section.get("waived_bytes")) or 0
    unknown = int(num(section.get("unknown_size_objects")) or len(_l(section.get("unknown_size"))))
    line = (f"{fmt_number(num(section.get('objects')) or 0)} objects, {_mib(section.get('bytes'))} on the volume; "
            f"not read: {_mib(section.get('unread_bytes'))}"
            + (f" and {unknown} of unknown size" if section.get("unknown_size") else "")
            + (f"; excluded by input (waived): {_mib(waived)}" if waived else "")
            + (f"; engine-internal, no SQL reads it (ENGINE_INTERNAL): {_mib(section.get('engine_internal_bytes'))}"
               if num(section.get("engine_internal_bytes")) else "")
            + ("" if section.get("end_census") else " (census taken at the start only" + _end_failure(section) + ")"))
    rows = []
    for u in _l(section.get("unread")):
        if not isinstance(u, dict):
            continue
        name = _object_name(u)
        size = _mib(u.get("unread_bytes")) if u.get("size_known", True) else "size unknown"
        rows.append({"name": name, "database": str(u.get("database") or DASH), "kind": str(u.get("kind")),
                     "size": size, "reason": str(u.get("reason")), "waived": bool(u.get("waived"))})
    databases = [{"name": str(d.get("database") or DASH), "objects": d.get("objects"), "size": _mib(d.get("bytes")),
                  "unread": _mib(d.get("unread_bytes")), "waived": _mib(d.get("waived_bytes"))}
                 for d in _l(section.get("by_database")) if isinstance(d, dict)]
    dropped = [f"{d.get('database')}/{_object_name(d)} ({d.get('kind')})"
               for d in _l(section.get("dropped")) if isinstance(d, dict)]
    # blocks planned that no longer existed when read (findings ``truncated``): out of the denominator, not read
    truncated = [f"{t.get('database')}/{_object_name(t)} ({t.get('kind')}): "
                 f"{_mib(t.get('bytes_gone'))} {t.get('reason')}"
                 for t in _l(findings.get("truncated")) if isinstance(t, dict)]
    # findings.json lists the largest unread objects (findings.census.LISTED); the rest are counted, and every one
    # is in the evidence object census-unread.jsonl (a census of before issue 32 listed them all in findings.json)
    unlisted = _d(section.get("unread_more"))
    more_bytes = sum(num(u.get("unread_bytes")) or 0 for u in _l(section.get("unread"))[limit:] if isinstance(u, dict))
    more_bytes += num(unlisted.get("bytes")) or 0
    evidence = section.get("unread_evidence")
    where = (f"every unread object is in {str(evidence).rsplit('/', 1)[-1]}" if evidence
             else "see findings.json (census.unread)")
    return {"line": line, "databases": databases, "rows": rows[:limit],
            "more": max(0, len(rows) - limit) + int(num(unlisted.get("objects")) or 0), "more_size": _mib(more_bytes),
            "where": where, "dropped": dropped, "truncated": truncated,
            # findings.json lists at most census.LISTED truncated segments; ``truncated_segments`` counts them all
            "truncated_more": max(0, int(num(findings.get("truncated_segments")) or len(truncated)) - len(truncated)),
            "dropped_more": max(0, int(num(section.get("dropped_objects")) or len(dropped)) - len(dropped))}


def _object_name(obj: dict[str, Any]) -> str:
    """A census object's names as its key writes them (each quoted where needed, ``engines.keys``): ``"b"."c.t"``
    and ``"b.c"."t"`` are two rows apart, not ``b.c.t`` twice (issue 32); else schema.name as they are."""
    return keys.display(str(obj.get("key") or "")) or (
        f"{obj.get('schema')}.{obj.get('name')}" if obj.get("schema") else str(obj.get("name")))


def time_to_warm(findings: dict[str, Any]) -> list[tuple[str, str]]:
    section = _d(findings.get("time_to_warm"))
    if not section:
        return []
    rate = _fmt(section.get("mib_per_s_wall"), "MiB/s")
    emulated = clocks.warmup_text(section.get("planned_seconds"), section.get("mib_per_s_wall"),
                                  clocks.time_scale(findings))
    rows = [("time to warm the planned bytes",
             f"{fmt_duration(num(section.get('planned_seconds')))} for {_mib(section.get('planned_bytes'))} at {rate} "
             f"(the measured wall rate){emulated}")]
    if section.get("production_seconds") is not None:
        rows.append(("projected to the production size",
                     f"{fmt_duration(num(section.get('production_seconds')))} for "
                     f"{_fmt(section.get('production_bytes'), 'GiB', 1 / 2**30)} (warmup.production_size_gb) "
                     f"at {rate}, with the same readers: a projection, not a measurement"))
    return rows


# ---- checks and conclusions from the verdict's rules ----------------------------------------------

def _probe_medians(findings: dict[str, Any]) -> tuple[float | None, float | None]:
    probes = _d(_d(findings.get("benchmark")).get("probes"))
    c = num(_d(_d(probes.get("cold")).get("latency_us")).get("p50"))
    w = num(_d(_d(probes.get("warm")).get("latency_us")).get("p50"))
    return (c / 1000 if c is not None else None), (w / 1000 if w is not None else None)


def exception_of(reason: dict[str, Any], findings: dict[str, Any]) -> str | None:
    """How a passed check passed when it passed on one of its rule's allowances rather than outright (same
    thresholds), in words that start with "passed"; None when it passed outright."""
    t = _d(_d(findings.get("verdict")).get("thresholds"))
    code = reason.get("code")
    if code == "WARM_VS_COLD":
        c, w = _probe_medians(findings)
        fast, speedup = num(t.get("fast_read_ms")), num(t.get("min_warm_speedup"))
        if c is None or w is None or fast is None or speedup is None or c <= fast:
            return None
        ratio = c / w if w > 0 else float("inf")
        if w <= fast and ratio < speedup:
            return (f"passed because warm reads are fast: warm {w:.2f} ms is at most the {fast:g} ms that counts as "
                    f"fast (verdict.fast_read_ms), though cold/warm {ratio:.2f}× is under the {speedup:g}× "
                    "(verdict.min_warm_speedup) that slower warm reads would need")
        if w > fast and ratio >= speedup:
            return (f"passed on the speed-up, not on speed: warm {w:.2f} ms is slower than the {fast:g} ms that counts "
                    f"as fast (verdict.fast_read_ms), but cold/warm {ratio:.2f}× reaches the {speedup:g}× asked "
                    "(verdict.min_warm_speedup)")
        return None
    if code == "COVERAGE":
        cov, least = num(findings.get("coverage_pct")), num(t.get("min_coverage_pct"))
        if cov is not None and least is not None and cov < 100:
            return (f"passed under a threshold below 100 %: {fmt_number(100 - cov)} % of the planned bytes were not "
                    f"read (verdict.min_coverage_pct {least:g} %)")
        return None
    if code in ("EXPECTED_IOPS", "EXPECTED_THROUGHPUT", "BASELINE_IOPS", "BASELINE_THROUGHPUT"):
        numbers = [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*\.?\d*", str(reason.get("message")))]
        if len(numbers) >= 2 and numbers[0] < numbers[1]:
            return (f"passed within the tolerance: {fmt_number(numbers[0])} is below {fmt_number(numbers[1])} by "
                    f"{fmt_number(100 * (1 - numbers[0] / numbers[1]))} % (verdict.tolerance_pct "
                    f"{_fmt(t.get('tolerance_pct'))} %)")
    return None


def conclusions(findings: dict[str, Any], sentences: list[str]) -> list[str]:
    """The analysis' sentences, with its cold-vs-warm one replaced by the verdict's WARM_VS_COLD reason:
    the page cannot say "about the same speed" of medians the verdict found 11× apart."""
    reasons = [r for r in _l(_d(findings.get("verdict")).get("reasons"))
               if isinstance(r, dict) and r.get("code") in ("WARM_VS_COLD", "PROBES_MISSING", "PROBES_OFF")]
    if not reasons:
        return sentences
    kept = [s for s in sentences if not str(s).startswith(COLD_WARM_PREFIXES)]
    said = reasons[0].get("message")
    return [*kept, f"Cold vs warm (the verdict's rule): {said}"] if said else kept


# ---- local mode ------------------------------------------------------------------------------------

def io_size_absent(bench: dict[str, Any]) -> str | None:
    """Why the IO-size charts are not drawn: the engine offers no knob to change the IO size."""
    caps = _d(bench.get("capabilities"))
    if "knobs" not in caps or not isinstance(caps.get("knobs"), dict):
        return None
    knobs = caps["knobs"]
    if any(knobs.values()):
        return None
    named = ", ".join(str(k) for k in knobs) or "none"
    return (f"the engine offers no IO-size knob (knobs: {named}), so the sweep has one sequential IO "
            "size; there is no curve over IO sizes to draw")
