"""What a cutover engineer looks for, for the view model (pure): where each headline figure came
from, coverage per database and schema, the largest relations, the priority order, the units not
read and why, the time to warm, and the checks that passed only through an exception of their rule.

Every figure is labelled with its source; a figure that was read from the page cache (a sequential
point that read the same file again and again) is never a headline. Conclusions about cold vs warm
come from the verdict's own rule and thresholds, not from a second rule that could disagree.
Reads the ``Findings`` record (``reading.findings_of``).
"""

from __future__ import annotations

import re
from typing import Any

from cutover_prep.dal.records.findings import CoverageGroup, Reason, TruncatedSegment
from cutover_prep.dal.records.findings_census import CensusObjectRow, EndCensusFailure
from cutover_prep.engines import keys
from cutover_prep.models.status import is_cached
from cutover_prep.report import clocks
from cutover_prep.report.charts import fmt_duration, fmt_number, num
from cutover_prep.report.parts import (
    Capabilities,
    JudgedThresholds,
    Probes,
    ReadIOPS,
    ReadThroughput,
    ReportBenchmark,
    ReportFindings,
    ReportPoint,
)
from cutover_prep.report.reading import Readable, findings_of, present
from cutover_prep.report.view_model import (
    CensusDatabaseRow,
    CensusView,
    CoverageRow,
    CoverageView,
    Figure,
    PriorityView,
    UnreadView,
)

DASH = "—"
MIB = 2**20
# the analysis' cold-vs-warm sentence (analysis.io): replaced by the verdict's WARM_VS_COLD reason
COLD_WARM_PREFIXES = ("Cold vs warm (", "Cold and warm reads ran", "The first read of a restored block")
STATUS_WORDS = {"READ": "read", "PARTLY": "partly read", "FAILED": "failed", "NOT_READ": "not read"}


def _fmt(value: Any, unit: str = "", scale: float = 1.0) -> str:
    number = num(value)
    return DASH if number is None else f"{fmt_number(number * scale)} {unit}".strip()


def _mib(value: Any) -> str:
    return _fmt(value, "MiB", 1 / MIB)


# ---- where the figures came from ----------------------------------------------------------------

def is_local(findings: ReportFindings) -> bool:
    """A local run (``cutover-prep local``) records its storage emulation, emulated or not."""
    return findings.storage_emulation is not None


def storage_source(findings: ReportFindings) -> str:
    """Where the database's reads were served from, in a few words."""
    section = findings.storage_emulation
    if section is not None:
        if section.emulated:
            return "emulated restored volume (local)"
        return "local disk or OS page cache (no emulated volume)"
    return "the RDS instance's storage"


def _counter(point: ReportPoint) -> str:
    return {"engine": "engine counters", "client": "client timing"}.get(str(point.source), "client timing")


def _best(points: list[ReportPoint], figure: str) -> ReportPoint | None:
    rated = [p for p in points if num(getattr(p, figure)) is not None]
    return max(rated, key=lambda p: num(getattr(p, figure)) or 0.0) if rated else None


def _cw_mean(point: ReportPoint, metric: str) -> float | None:
    entry = point.cloudwatch.get(metric)
    return num(entry.mean) if entry is not None else None


def _done(bench: ReportBenchmark | None) -> list[ReportPoint]:
    return [p for p in (bench.points if bench else []) if p.status == "DONE"]


def headline_figures(findings: ReportFindings) -> list[Figure]:
    """The key figures, each with its source; cached sequential re-reads are left out and said so."""
    rate, timings = findings.read_rate, findings.timings
    where = storage_source(findings)
    scale = clocks.time_scale(findings)
    emulated_rate, emulated_time = (clocks.rate(rate.mib_per_s_wall, scale, 1),
                                    clocks.duration(timings.warmup_wall_seconds, scale))
    database = ([{"label": "database read rate", "value": _fmt(rate.mib_per_s_database, "MiB/s"),
                  "source": f"bytes read / the {fmt_duration(num(rate.database_reading_seconds))} during which "
                  f"a reader was reading; {where}"}]
                if is_local(findings) and num(rate.mib_per_s_database) is not None else [])
    figures = [{"label": "coverage", "value": _fmt(findings.coverage_pct, "%"),
                "source": "warm-up unit records (planned bytes of finished units)"}, *database,
               {"label": "warm-up rate, all readers", "value": _fmt(rate.mib_per_s_wall, "MiB/s"),
                "source": f"bytes read / warm-up wall time; {where}"
                + ("; the local harness's own time between reads is in it" if is_local(findings) else "")
                + (f"; {emulated_rate} MiB/s on the emulated clock (×{fmt_number(scale)} slowed)"
                   if emulated_rate else "")},
               {"label": "warm-up time", "value": fmt_duration(num(timings.warmup_wall_seconds)),
                "source": "first unit start to last unit end"
                + (f"; {emulated_time} on the emulated clock" if emulated_time else "")}]
    done = _done(findings.benchmark)
    best = _best([p for p in done if "random" in str(p.kind or "")], "iops")
    if best is not None:
        cw = _cw_mean(best, ReadIOPS)
        figures.append({"label": "best random-read IOPS", "value": _fmt(best.iops),
                        "source": f"point {best.point_id}, {_counter(best)}; {where}"
                        + (f"; RDS CloudWatch ReadIOPS {_fmt(cw)}" if cw is not None else "")})
    reads = [p for p in done if str(p.kind or "sequential") in ("sequential", "random")]
    storage = [p for p in reads if not is_cached(p.stored())]  # the verdict's rule (verdict.best_rates)
    best = _best(storage, "throughput_kbps")
    if best is not None:
        cw = _cw_mean(best, ReadThroughput)
        figures.append({"label": "best read throughput", "value": _fmt(best.throughput_kbps, "MiB/s", 1 / 1024),
                        "source": f"point {best.point_id}, {_counter(best)}; {where}"
                        + (f"; RDS CloudWatch ReadThroughput {_fmt(cw, 'MiB/s', 1 / MIB)}" if cw is not None else "")})
    probes = findings.benchmark.probes if findings.benchmark else Probes()
    c50, w50 = (num(p.latency_us.p50 if p and p.latency_us else None) for p in (probes.cold, probes.warm))
    if c50 is not None and w50 is not None:
        speedup = cold_warm_text(findings)
        figures.append({"label": "median single-block read, cold → warm",
                        "value": f"{_fmt(c50, scale=1e-3)} → {_fmt(w50, 'ms', 1e-3)}"
                        + (f" ({speedup})" if speedup else ""),
                        "source": f"cold and warm probes, {probe_timer(probes)}; {where}"
                        + (f"; {clocks.ms(c50 / 1000, scale)} → {clocks.ms(w50 / 1000, scale)} on the emulated clock"
                           if scale else "")})
    return figures


def probe_timer(probes: Probes) -> str:
    """Who timed the probes' reads, in the words every rendering uses (``measure.runner.run_probe``'s ``timed_by``)."""
    timers = {str((p.timed_by if p else None) or "client") for p in (probes.cold, probes.warm)}
    if timers == {"server"}:
        return "timed by the database server"
    return "timed by the client" if timers == {"client"} else "cold and warm timed differently (server and client)"


def cold_warm_speedup(findings: Readable) -> float | None:
    """The cold/warm figure, one definition everywhere: the cold probe's median single-block read latency over
    the warm probe's, as the verdict's WARM_VS_COLD rule computes it (``analysis.probes.warm_vs_cold``)."""
    c, w = _probe_medians(findings_of(findings))
    if c is None or w is None or w <= 0:
        return None
    return c / w


def cold_warm_text(findings: Readable) -> str | None:
    """``cold/warm 3.32×``, rounded as the verdict's message rounds it."""
    ratio = cold_warm_speedup(findings)
    return None if ratio is None else f"cold/warm {ratio:.2f}×"


def cached_points(findings: ReportFindings) -> list[str]:
    """Sentences for the points whose rate is not a storage figure: they re-read their target."""
    return [f"point {p.point_id} read its target {getattr(p, 'passes', None)} times: after the first pass the "
            "reads came from a cache (the OS page cache or the engine's buffers), so its "
            f"{_fmt(p.throughput_kbps, 'MiB/s', 1 / 1024)} is not a storage figure and is not a headline"
            for p in _done(findings.benchmark) if is_cached(p.stored())]


LOCAL_WALL = ("this run's warm-up time on this machine, the local harness's own time between reads in it (moto, "
              "the handlers in one process): it measures the tool as much as the database")


def rates_line(findings: ReportFindings) -> str | None:
    """The warm-up's rates in one line, each labelled: the database's (bytes over the time a reader was reading),
    the emulated volume's (bytes over the time it had reads in hand), and the wall rate; None before any."""
    rate = findings.read_rate
    emulation = findings.storage_emulation
    served = emulation.warmup_served if emulation else None
    wall = num(findings.timings.warmup_wall_seconds)
    parts = []
    if num(rate.mib_per_s_database) is not None:
        parts.append(f"database {_fmt(rate.mib_per_s_database, 'MiB/s')} (bytes over the "
                     f"{fmt_duration(num(rate.database_reading_seconds))} a reader was reading)")
    if served is not None and num(served.mib_per_s) is not None:
        parts.append(f"volume {_fmt(served.mib_per_s, 'MiB/s')} (bytes over the "
                     f"{fmt_duration(num(served.busy_seconds))} it had reads in hand)")
    if num(rate.mib_per_s_wall) is not None:
        parts.append(f"wall {_fmt(rate.mib_per_s_wall, 'MiB/s')} (over the warm-up's {fmt_duration(wall)}"
                     + ("; the local harness's overhead in it)" if is_local(findings) else ")"))
    return "warm-up read rates: " + "; ".join(parts) if parts else None


def rate_rows(findings: ReportFindings) -> list[tuple[str, str]]:
    """The database's rate, the wall rate and the per-worker rate, each saying what it is."""
    rate, timings = findings.read_rate, findings.timings
    rows = []
    if num(rate.mib_per_s_database) is not None:
        rows.append(("database read rate", f"{_fmt(rate.mib_per_s_database, 'MiB/s')}: bytes read / the "
                     f"{fmt_duration(num(rate.database_reading_seconds))} during which a reader was reading; "
                     "the database's own rate"))
    rows.append(("rate, all readers (wall)", f"{_fmt(rate.mib_per_s_wall, 'MiB/s')}: bytes read / warm-up wall "
                 "time; " + (LOCAL_WALL if is_local(findings) else "what the cutover gets")))
    if num(rate.mib_per_s_per_worker) is not None:
        rows.append(("rate of one reader", f"{_fmt(rate.mib_per_s_per_worker, 'MiB/s')}: bytes read / the "
                     f"units' summed busy time ({fmt_duration(num(timings.unit_busy_seconds))}); the speed of "
                     "one reader, not of the warm-up"))
    return rows


# ---- coverage, priority, unread units, time to warm -------------------------------------------------

def _name(*parts: Any) -> str:
    return ".".join(str(p) for p in parts if p not in (None, "")) or DASH


def coverage(findings: Readable) -> CoverageView | None:
    section = findings_of(findings).coverage
    if not present(section):
        return None
    assert section is not None

    def row(g: CoverageGroup, name: str) -> CoverageRow:
        return {"name": name, "segments": f"{_fmt(g.segments_read)} / {_fmt(g.segments)}",
                "planned": _mib(g.bytes_planned), "read": _mib(g.bytes_read),
                "pct": _fmt(g.pct, "%"), "full": num(g.pct) == 100}

    largest = [{"name": str(r.label or _name(r.schema_, r.name)), "database": str(r.database or DASH),
                "size": _mib(r.bytes), "read": _mib(r.bytes_read), "pct": _fmt(r.pct, "%"),
                "status": STATUS_WORDS.get(str(r.status), str(r.status)), "css": str(r.status or "")}
               for r in section.largest]
    return {"databases": [row(g, str(g.database or DASH)) for g in section.by_database],
            "schemas": [row(g, str(g.label or _name(g.database, g.schema_))) for g in section.by_schema],
            "largest": largest, "relations": _fmt(section.relations)}


def priority(findings: ReportFindings) -> PriorityView | None:
    section = findings.priority
    if not present(section):
        return None
    assert section is not None
    groups = []
    for g in section.groups:
        if not g.units:
            continue
        finished = num(g.finished_after_s)
        label = "the hot set (warmup.hot_set)" if g.hot_set else "everything else"
        groups.append({"pattern": str(g.pattern) if g.pattern is not None else label,
                       "units": f"{_fmt(g.units_done)} / {_fmt(g.units)}", "size": _mib(g.bytes),
                       "finished": fmt_duration(finished) if finished is not None else "not finished",
                       "finished_text": (f"{fmt_duration(finished)} after the warm-up began" if finished is not None
                                         else "not finished")})
    nothing = [str(p) for p in section.matched_nothing]
    line = ("followed: each priority's units finished no later than those of a lower priority"
            if section.followed else
            "NOT followed: a priority's units finished after those of a lower priority (or never finished)")
    return {"line": line, "followed": bool(section.followed), "groups": groups, "matched_nothing": nothing}


def hot_set_line(findings: Readable) -> str | None:
    """``findings.hot_set`` in one line: when the hot set was warm, against the whole warm-up, and where it came
    from; None without a hot set."""
    findings = findings_of(findings)
    section = findings.hot_set
    if not present(section):
        return None
    assert section is not None
    sources = "; ".join(f"{s.order}. {s.source} ({s.detail})" for s in section.sources)
    what = (f"{_fmt(section.relations)} relations, {_fmt(section.units)} units, "
            f"{_mib(section.bytes)}; sources {sources}")
    after, pct = num(section.warm_after_s), num(section.pct_of_warmup)
    if section.warm_at is None or after is None:
        return f"hot set NOT warm: {_fmt(section.units_done)} of {_fmt(section.units)} of its units read ({what})"
    at = str(section.warm_at)
    clock = at[11:19] + " UTC" if len(at) >= 19 and at[10] == "T" else at
    share = f", {pct:g} % of the warm-up's time" if pct is not None else ""
    order = "order followed" if section.followed else "order NOT followed"
    return (f"hot set warm at {clock} ({fmt_duration(after)} after the warm-up started{share}): {what}; {order}"
            + _after_hot_set(findings))


def _after_hot_set(findings: ReportFindings) -> str:
    """``warmup.after_hot_set`` when it took effect (``findings.warmup.concurrency.after_hot_set``): the volume given
    back to the application once the hot set was warm."""
    concurrency = findings.warmup.concurrency if findings.warmup else None
    mark = concurrency.after_hot_set if concurrency else None
    if not present(mark):
        return ""
    assert mark is not None
    return (f"; then at most {_fmt(mark.max_concurrency)} units read at once (warmup.after_hot_set, "
            f"{fmt_duration(num(mark.t_s))} after the first slot; {_fmt(mark.holders_then)} were "
            f"reading, {_fmt(mark.admitted)} started after, at most {_fmt(mark.most_holders)} at a time)")


def unread(findings: ReportFindings) -> UnreadView:
    rows = []
    for u in findings.unread_units:
        segments = ", ".join(str(s) for s in u.segments)
        if u.more_segments:
            segments += f" and {u.more_segments} more"
        rows.append({"unit_id": str(u.unit_id), "status": str(u.status),
                     "read": f"{_mib(u.bytes_read)} of {_mib(u.bytes)}", "segments": segments or DASH,
                     "cause": str(u.cause or DASH)})
    return {"rows": rows[:50], "more": max(0, len(rows) - 50)}


def _end_failure(failure: EndCensusFailure | None) -> str:
    """Why the end census is missing, when its step recorded it (the verdict's END_CENSUS says it too): the end
    census step's error, as that step recorded it (``CensusSection.end_census_failure``)."""
    if failure is None:
        return ""
    return f": the end census did not run, {failure.error or 'an error'}"


def census(findings: Readable, limit: int = 50) -> CensusView | None:
    """The volume census (findings ``census``): one line, per database, and every unread object named with
    its size and reason (waived ones last)."""
    findings = findings_of(findings)
    section = findings.census
    if section is None or not section.taken:
        return None
    waived = num(section.waived_bytes) or 0
    unknown = int(num(section.unknown_size_objects) or len(section.unknown_size))
    line = (f"{fmt_number(num(section.objects) or 0)} objects, {_mib(section.bytes)} on the volume; "
            f"not read: {_mib(section.unread_bytes)}"
            + (f" and {unknown} of unknown size" if section.unknown_size else "")
            + (f"; excluded by input (waived): {_mib(waived)}" if waived else "")
            + (f"; engine-internal, no SQL reads it (ENGINE_INTERNAL): {_mib(section.engine_internal_bytes)}"
               if num(section.engine_internal_bytes) else "")
            + ("" if section.end_census else " (census taken at the start only"
               + _end_failure(section.end_census_failure) + ")"))
    rows = [{"name": _object_name(u), "database": str(u.database or DASH), "kind": str(u.kind),
             "size": _mib(u.unread_bytes) if u.size_known is not False else "size unknown",
             "reason": str(u.reason), "waived": bool(u.waived)} for u in section.unread]
    databases = [CensusDatabaseRow(name=str(d.database or DASH), objects=d.objects, size=_mib(d.bytes),
                                   unread=_mib(d.unread_bytes), waived=_mib(d.waived_bytes))
                 for d in section.by_database]
    dropped = [f"{d.database}/{_object_name(d)} ({d.kind})" for d in section.dropped]
    # blocks planned that no longer existed when read (findings ``truncated``): out of the denominator, not read
    truncated = [f"{t.database}/{_object_name(t)} ({t.kind}): {_mib(t.bytes_gone)} {t.reason}"
                 for t in findings.truncated]
    # findings.json lists the largest unread objects (findings.census.LISTED); the rest are counted, and every one
    # is in the evidence object census-unread.jsonl (a census of before issue 32 listed them all in findings.json)
    unlisted = section.unread_more
    more_bytes = sum(num(u.unread_bytes) or 0 for u in section.unread[limit:])
    more_bytes += num(unlisted.bytes if unlisted else None) or 0
    evidence = section.unread_evidence
    where = (f"every unread object is in {str(evidence).rsplit('/', 1)[-1]}" if evidence
             else "see findings.json (census.unread)")
    return {"line": line, "databases": databases, "rows": rows[:limit],
            "more": max(0, len(rows) - limit) + int(num(unlisted.objects if unlisted else None) or 0),
            "more_size": _mib(more_bytes), "where": where, "dropped": dropped, "truncated": truncated,
            # findings.json lists at most census.LISTED truncated segments; ``truncated_segments`` counts them all
            "truncated_more": max(0, int(num(findings.truncated_segments) or len(truncated)) - len(truncated)),
            "dropped_more": max(0, int(num(section.dropped_objects) or len(dropped)) - len(dropped))}


def _object_name(obj: CensusObjectRow | TruncatedSegment) -> str:
    """A census object's names as its key writes them (each quoted where needed, ``engines.keys``): ``"b"."c.t"``
    and ``"b.c"."t"`` are two rows apart, not ``b.c.t`` twice (issue 32); else schema.name as they are."""
    return keys.display(str(obj.key or "")) or (f"{obj.schema_}.{obj.name}" if obj.schema_ else str(obj.name))


def time_to_warm(findings: ReportFindings) -> list[tuple[str, str]]:
    section = findings.time_to_warm
    if section is None:
        return []
    rate = _fmt(section.mib_per_s_wall, "MiB/s")
    emulated = clocks.warmup_text(section.planned_seconds, section.mib_per_s_wall, clocks.time_scale(findings))
    rows = [("time to warm the planned bytes",
             f"{fmt_duration(num(section.planned_seconds))} for {_mib(section.planned_bytes)} at {rate} "
             f"(the measured wall rate){emulated}")]
    if section.production_seconds is not None:
        rows.append(("projected to the production size",
                     f"{fmt_duration(num(section.production_seconds))} for "
                     f"{_fmt(section.production_bytes, 'GiB', 1 / 2**30)} (warmup.production_size_gb) "
                     f"at {rate}, with the same readers: a projection, not a measurement"))
    return rows


# ---- checks and conclusions from the verdict's rules ----------------------------------------------

def _probe_medians(findings: ReportFindings) -> tuple[float | None, float | None]:
    probes = findings.benchmark.probes if findings.benchmark else Probes()
    c, w = (num(p.latency_us.p50 if p and p.latency_us else None) for p in (probes.cold, probes.warm))
    return (c / 1000 if c is not None else None), (w / 1000 if w is not None else None)


def exception_of(reason: Reason, findings: ReportFindings) -> str | None:
    """How a passed check passed when it passed on one of its rule's allowances rather than outright (same
    thresholds), in words that start with "passed"; None when it passed outright."""
    # models.run_input.Thresholds, as judged by
    t = JudgedThresholds.model_validate(findings.verdict.thresholds if findings.verdict else {})
    code = reason.code
    if code == "WARM_VS_COLD":
        c, w = _probe_medians(findings)
        fast, speedup = num(t.fast_read_ms), num(t.min_warm_speedup)
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
        cov, least = num(findings.coverage_pct), num(t.min_coverage_pct)
        if cov is not None and least is not None and cov < 100:
            return (f"passed under a threshold below 100 %: {fmt_number(100 - cov)} % of the planned bytes were not "
                    f"read (verdict.min_coverage_pct {least:g} %)")
        return None
    if code in ("EXPECTED_IOPS", "EXPECTED_THROUGHPUT", "BASELINE_IOPS", "BASELINE_THROUGHPUT"):
        numbers = [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*\.?\d*", str(reason.message))]
        if len(numbers) >= 2 and numbers[0] < numbers[1]:
            return (f"passed within the tolerance: {fmt_number(numbers[0])} is below {fmt_number(numbers[1])} by "
                    f"{fmt_number(100 * (1 - numbers[0] / numbers[1]))} % (verdict.tolerance_pct "
                    f"{_fmt(t.tolerance_pct)} %)")
    return None


def conclusions(findings: ReportFindings, sentences: list[str]) -> list[str]:
    """The analysis' sentences, with its cold-vs-warm one replaced by the verdict's WARM_VS_COLD reason:
    the page cannot say "about the same speed" of medians the verdict found 11× apart."""
    reasons = [r for r in (findings.verdict.reasons if findings.verdict else [])
               if r.code in ("WARM_VS_COLD", "PROBES_MISSING", "PROBES_OFF")]
    if not reasons:
        return sentences
    kept = [s for s in sentences if not str(s).startswith(COLD_WARM_PREFIXES)]
    said = reasons[0].message
    return [*kept, f"Cold vs warm (the verdict's rule): {said}"] if said else kept


# ---- local mode ------------------------------------------------------------------------------------

def io_size_absent(bench: ReportBenchmark | None) -> str | None:
    """Why the IO-size charts are not drawn: the engine offers no knob to change the IO size."""
    # the engine's capabilities, as its benchmark wrote them (``BenchmarkSection.capabilities``)
    caps = bench.capabilities if bench is not None and isinstance(bench.capabilities, dict) else {}
    knobs = Capabilities.model_validate(caps).knobs
    if not isinstance(knobs, dict):
        return None
    if any(knobs.values()):
        return None
    named = ", ".join(str(k) for k in knobs) or "none"
    return (f"the engine offers no IO-size knob (knobs: {named}), so the sweep has one sequential IO "
            "size; there is no curve over IO sizes to draw")
