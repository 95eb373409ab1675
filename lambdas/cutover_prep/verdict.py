"""READY / NOT_READY from the findings, with every reason (pure).

Each rule yields a reason ``{"code", "ok", "message"}``; the verdict is READY only when
every rule is ok. A reason that is ok but could not be judged on this run's evidence
also carries ``"judged": False`` (the report lists it apart from the checks passed).
Rules never give READY on missing evidence: a unit that failed, was not started or was
cut off, a probe or benchmark that was asked for and is absent, a baseline that cannot
be read, all give NOT_READY with the reason saying what is missing.
"""

from __future__ import annotations

from cutover_prep.analysis.probes import warm_vs_cold
from cutover_prep.dal.records.findings import Findings, Reason, Scratch, VerdictSection
from cutover_prep.dal.records.findings_benchmark import BenchmarkSection, Probe, SweepPoint
from cutover_prep.dal.records.findings_census import CensusSection
from cutover_prep.dal.records.findings_storage import StorageInitialization, VolumeLast
from cutover_prep.models.status import READ_KINDS, BenchmarkStatus, PointKind, PointStatus, Verdict, is_cached
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.rds.progress import progress_sentence

READY, NOT_READY = Verdict.READY, Verdict.NOT_READY


def _reason(code: str, ok: bool, message: str, *, judged: bool | None = None) -> Reason:
    """One rule's answer; ``judged=False``: ok, but not judged on this run's evidence."""
    return Reason(code=code, ok=ok, message=message, **({"judged": judged} if judged is not None else {}))


def _warmup_reasons(f: Findings, t: Thresholds) -> list[Reason]:
    units = f.units
    total, done = units.total, units.done
    failed, running, pending = units.failed, units.in_progress, units.not_started
    out = [_reason("UNITS_FAILED", failed == 0,
                   f"{failed} of {total} work units failed" if failed else f"no work unit failed ({total} units)")]
    planned = f.bytes.planned if f.bytes is not None else None
    if total == 0 or planned == 0:
        out.append(_reason("NOTHING_PLANNED", False,
                           "the plan holds nothing to read (0 work units): the database is empty or "
                           "warmup.databases / include_schemas / exclude_schemas matched nothing"))
    # counted both ways: findings without the in-progress/not-started counts still cannot pass
    unfinished = max(running + pending, total - done - failed)
    out.append(_reason("UNITS_NOT_FINISHED", unfinished == 0,
                       f"{unfinished} work units were cut off or never started ({running} in progress, "
                       f"{pending} not started)" if unfinished else f"all {done} work units finished"))
    coverage = f.coverage_pct
    if coverage is None:
        out.append(_reason("COVERAGE", False, "the findings have no coverage: evidence is missing"))
    else:
        out.append(_reason("COVERAGE", coverage >= t.min_coverage_pct,
                           f"warm-up coverage {coverage:g} % (threshold {t.min_coverage_pct:g} %)"))
    return out


def _benchmark_reason(bench: BenchmarkSection) -> Reason:
    """Complete means every planned point measured: PARTIAL, RUNNING or NOT_RUN is missing evidence."""
    status = bench.status or BenchmarkStatus.NOT_RUN
    failed = bench.failed_points
    if status == BenchmarkStatus.DONE and not failed:
        return _reason("BENCHMARK", True, "benchmark complete")
    if failed:
        named = "; ".join(f"{p.get('point_id')}: {p.get('error') or 'failed'}" for p in failed[:5])
        more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
        return _reason("BENCHMARK", False, f"benchmark {status}: {len(failed)} points not measured ({named}{more}); "
                       "set verdict.require_benchmark false to waive the benchmark")
    error = bench.error
    return _reason("BENCHMARK", False, f"benchmark {status}"
                   + (f": {error.error}: {error.cause}" if error else "")
                   + "; set verdict.require_benchmark false to waive the benchmark")


def _scratch_reasons(scratch: Scratch) -> list[Reason]:
    """Anything the write test left in the customer database fails the verdict, by name."""
    if not scratch.created and not scratch.left:
        return []
    left = scratch.left
    return [_reason("SCRATCH_LEFT", not left,
                    f"the write test left {', '.join(left)} in the database (drop it after checking it holds "
                    "only the run's scratch data)" if left
                    else f"the write test's scratch objects were removed ({', '.join(scratch.removed)})")]


def _latency(probe: Probe, figure: str) -> float | None:
    """A figure of the probe's ``latency_us`` (``p50``, ``p99``, ``max``), None when it has none."""
    latencies = probe.latency_us if isinstance(probe.latency_us, dict) else {}
    value = latencies.get(figure)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _probe_reasons(bench: BenchmarkSection, t: Thresholds) -> list[Reason]:
    """WARM_VS_COLD, read as a DBA reads the two probes' median single-block read latency.

    ``c`` and ``w`` are the cold and warm medians. The warm probe reads a fresh sample
    that the cold probe did not touch (``overlap_blocks`` in its findings), so a block
    the warm-up missed reads at cold speed there. In this order:

    1. Warm slower than cold beyond noise fails, whatever the absolute figures:
       ``w > c × max_warm_to_cold_latency`` and ``w - c > latency_noise_ms``. Reads that
       got slower after a warm-up (missed blocks, eviction, a busy instance) are
       something to look at before a cutover, not a pass.
    2. Cold already fast (``c <= fast_read_ms``): no first-touch penalty was measured, so
       there is nothing the warm-up could be shown to have removed. Not a failure, and
       not a passed check either: the reason is ``ok`` with ``judged: False`` and says
       "no first-touch penalty measured" (a volume not restored from a snapshot, or one
       already initialized).
    3. Cold slow (``c > fast_read_ms``): a penalty was measured. It passes, with the
       ratio, when warm is fast (``w <= fast_read_ms``) or at least ``min_warm_speedup``
       times faster than cold; otherwise the fresh sample still reads at first-touch
       speed and it fails: the warm-up did not reach those blocks.
    """
    cold, warm = bench.probe("cold"), bench.probe("warm")
    if cold.status != PointStatus.DONE or warm.status != PointStatus.DONE:
        missing = [p for p, d in (("cold", cold), ("warm", warm)) if d.status != PointStatus.DONE]
        return [_reason("PROBES_MISSING", False, f"the {' and '.join(missing)} probe is missing "
                        f"({'; '.join(str(d.cause or d.status or 'not run') for d in (cold, warm) if d.status != PointStatus.DONE)})")]  # noqa: E501
    c50, w50 = _latency(cold, "p50"), _latency(warm, "p50")
    if not c50 or w50 is None:
        return [_reason("PROBES_MISSING", False, "the probes have no latency figures")]
    return [warm_vs_cold(c50 / 1000, w50 / 1000, t, overlap=warm.overlap_blocks)]


WARM_TAIL_RATIO = 2.0  # a warm probe's slowest read this many times the cold one's is said (not judged)


def _tail_reasons(bench: BenchmarkSection, t: Thresholds) -> list[Reason]:
    """WARM_TAIL: a warm probe whose slowest read is at least ``WARM_TAIL_RATIO`` times the cold probe's
    slowest (and more than ``latency_noise_ms`` above it) is said, never passed silently; one read is too few
    to fail a run on (``max_warm_p99_ms`` judges the tail when the user sets it), so it is not judged."""
    cold, warm = bench.probe("cold"), bench.probe("warm")
    if cold.status != PointStatus.DONE or warm.status != PointStatus.DONE:
        return []
    c, w = _latency(cold, "max"), _latency(warm, "max")
    if not c or w is None or w < c * WARM_TAIL_RATIO or (w - c) / 1000 <= t.latency_noise_ms:
        return []
    judged = "" if t.max_warm_p99_ms is None else "; the p99 is judged by verdict.max_warm_p99_ms"
    return [_reason("WARM_TAIL", True,
                    f"the warm probe's slowest read took {w / 1000:,.1f} ms, {w / c:.1f}× the cold probe's "
                    f"slowest ({c / 1000:,.1f} ms): one stall, eviction or a block the warm-up missed; look at "
                    f"the warm probe's histogram{judged or ' (set verdict.max_warm_p99_ms to judge the tail)'}",
                    judged=False)]


def _p99_reasons(bench: BenchmarkSection, t: Thresholds) -> list[Reason]:
    """A p99 limit the user set is judged whatever else is required: no warm probe, no READY."""
    if t.max_warm_p99_ms is None:
        return []
    warm = bench.probe("warm")
    p99 = _latency(warm, "p99") if warm.status == PointStatus.DONE else None
    return [_reason("WARM_P99", p99 is not None and p99 / 1000 <= t.max_warm_p99_ms,
                    f"warm p99 read {p99 / 1000:.2f} ms (limit {t.max_warm_p99_ms:g} ms)" if p99 is not None
                    else f"no warm probe p99 to hold to the limit of {t.max_warm_p99_ms:g} ms "
                    "(verdict.max_warm_p99_ms)")]


def _cached(point: SweepPoint) -> bool:
    return is_cached(point.model_extra or {})  # ``cached``: set by the engine's scan, kept as the point wrote it


def best_rates(bench: BenchmarkSection) -> tuple[float | None, float | None]:
    """Best random-read IOPS and best read MiB/s over the measured points; a point whose rate includes
    re-reads a cache served (``measure.model.is_cached``) is not storage evidence."""
    points = [p for p in bench.points if p.status == PointStatus.DONE and not _cached(p)]
    iops = [p.iops for p in points if p.kind == PointKind.RANDOM and p.iops is not None]
    mibps = [p.throughput_kbps / 1024 for p in points if p.kind in READ_KINDS and p.throughput_kbps is not None]
    return (max(iops) if iops else None), (max(mibps) if mibps else None)


def _expected_reasons(bench: BenchmarkSection, t: Thresholds) -> list[Reason]:
    out = []
    iops, mibps = best_rates(bench)
    slack = 1 - t.tolerance_pct / 100
    if t.expected_read_iops is not None:
        out.append(_reason("EXPECTED_IOPS", iops is not None and iops >= t.expected_read_iops * slack,
                           f"best random-read rate {iops:,.0f} IOPS vs expected {t.expected_read_iops:,.0f}"
                           if iops is not None else "no random-read point was measured: IOPS evidence is missing"))
    if t.expected_read_mibps is not None:
        out.append(_reason("EXPECTED_THROUGHPUT", mibps is not None and mibps >= t.expected_read_mibps * slack,
                           f"best read throughput {mibps:,.1f} MiB/s vs expected {t.expected_read_mibps:,.1f}"
                           if mibps is not None else "no read point was measured: throughput evidence is missing"))
    return out


def _baseline_reasons(bench: BenchmarkSection, baseline: Findings | None, t: Thresholds) -> list[Reason]:
    if not t.baseline_run_id:
        return []
    if not baseline:
        return [_reason("BASELINE", False, f"baseline run {t.baseline_run_id} has no findings to compare with")]
    iops, mibps = best_rates(bench)
    b_iops, b_mibps = best_rates(baseline.benchmark or BenchmarkSection())
    slack = 1 - t.tolerance_pct / 100
    out = []
    for code, now, then, unit in (("BASELINE_IOPS", iops, b_iops, "IOPS"), ("BASELINE_THROUGHPUT", mibps, b_mibps,
                                                                           "MiB/s")):
        if then is None:
            continue
        out.append(_reason(code, now is not None and now >= then * slack,
                           f"{now:,.1f} {unit} vs {then:,.1f} in baseline run {t.baseline_run_id}" if now is not None
                           else f"no {unit} measured to compare with baseline run {t.baseline_run_id}"))
    return out or [_reason("BASELINE", False, f"baseline run {t.baseline_run_id} has no benchmark points")]


def _storage_reasons(f: Findings, t: Thresholds) -> list[Reason]:
    """RDS's storage operation at the end of the run, judged only with require_storage_initialized
    (``judge`` states how far RDS says it is either way)."""
    if not t.require_storage_initialized:
        return []
    section = f.storage_initialization or StorageInitialization()
    return [*_primary_storage_reasons(section), *_volume_storage_reasons(section)]


def _said(section: StorageInitialization | None) -> str:
    """How far RDS says it is (``rds.progress.progress_sentence`` of the section)."""
    return progress_sentence(section)


def _primary_storage_reasons(section: StorageInitialization) -> list[Reason]:
    said = _said(section)
    done = section.initialized_at_end
    if done is None:  # no answer from RDS at all: missing evidence
        return [_reason("STORAGE_INITIALIZING", False, f"{said}: whether RDS still initializes the volume is not "
                        "known (verdict.require_storage_initialized)")]
    if done:
        return [_reason("STORAGE_INITIALIZING", True, said if section.reported
                        else f"{said}: no StorageOperationStatus at the end of the run")]
    return [_reason("STORAGE_INITIALIZING", False, f"{said}: RDS still reports StorageOperationStatus "
                    f"{section.last.status if section.last else None} (verdict.require_storage_initialized); wait and "
                    "run again, or set it false")]


def _volume_storage_reasons(section: StorageInitialization) -> list[Reason]:
    """Each RDS additional storage volume (``storage_initialization.volumes``) still in a storage operation at
    the end of the run fails as the primary would; one that is done or never reported one adds nothing."""
    out = []
    for v in section.volumes:
        if v.initialized_at_end is not False:
            continue
        last = v.last or VolumeLast()
        figure = f" {last.percent} %" if last.percent is not None else ""
        out.append(_reason("STORAGE_INITIALIZING", False, f"RDS initialization progress of additional storage volume "
                           f"{v.volume}: {last.status or 'operation'}{figure} at the end of the run "
                           "(verdict.require_storage_initialized); wait and run again, or set it false"))
    return out


def _oversized_reasons(f: Findings) -> list[Reason]:
    """Segments too big for one work unit (``warmup.modes``): were they read, and by what?"""
    big = f.oversized_segments
    if not big:
        return []
    unread = [s for s in big if s.status != "READ"]
    by_pass = sum(1 for s in big if s.read_by == "datafile_pass")
    how = (f"{by_pass} by the datafile pass, {len(big) - by_pass} by their own unit" if by_pass
           else "by their own unit; where the engine offers it, warmup.mode both reads them with the datafile pass")
    if unread:
        names = ", ".join(str(s.key) for s in unread[:3])
        names += f" and {len(unread) - 3} more" if len(unread) > 3 else ""
        return [_reason("OVERSIZED_SEGMENTS", False, f"{len(unread)} of {len(big)} segments too big for one work unit "
                        f"were not read: {names} ({how})")]
    return [_reason("OVERSIZED_SEGMENTS", True, f"all {len(big)} segments too big for one work unit were read ({how})")]


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB"


def _or(count: int | None, listed: int) -> int:
    """A count the census gives, or (a census of before issue 32, which listed them all) the list's length."""
    return int(count) if count is not None else listed


def _unread_reasons(f: Findings, t: Thresholds) -> list[Reason]:
    """UNREAD_OBJECTS: the census's un-waived unread bytes at most ``max_unread_bytes``, none of unknown size."""
    census = f.census or CensusSection()
    if not census.taken:
        return [_reason("UNREAD_OBJECTS", True, "no census of the volume on this run (the engine takes none): "
                        "coverage is judged against the plan only", judged=False)]
    counted = [u for u in census.unread if not u.waived and not u.engine_internal]
    how_many = _or(census.unread_objects, len(counted))  # all of them (a census before issue 32: the list)
    unread, unknown = census.unread_bytes, census.unknown_size
    unknown_count = _or(census.unknown_size_objects, len(unknown))
    waived = census.waived_bytes
    waiver = f"; {_mib(waived)} excluded by input (waived)" if waived else ""
    internal = census.engine_internal_bytes
    waiver += f"; {_mib(internal)} engine-internal, judged apart (ENGINE_INTERNAL)" if internal else ""
    if unread <= t.max_unread_bytes and not unknown_count:
        every = "every object the application's queries read" if internal else "every object on the volume"
        return [_reason("UNREAD_OBJECTS", True, f"{every} was read ({census.objects} "
                        f"objects, {_mib(census.bytes)} on the volume){waiver}" if not how_many else
                        f"{_mib(unread)} unread, within verdict.max_unread_bytes {t.max_unread_bytes}{waiver}")]
    named = ", ".join(f"{u.key} {_mib(u.unread_bytes) if u.size_known is not False else 'size unknown'} "
                      f"({u.reason})" for u in counted[:3])
    more = f" and {how_many - 3} more" if how_many > 3 else ""
    return [_reason("UNREAD_OBJECTS", False, f"{how_many} objects on the volume not read: {_mib(unread)}"
                    f"{f' and {unknown_count} of unknown size' if unknown_count else ''} (limit "
                    f"verdict.max_unread_bytes {t.max_unread_bytes}): {named}{more}{waiver}; read them, or exclude "
                    "them by warmup.databases / include_schemas / exclude_schemas (a waiver), or raise the limit")]


INTERNAL_KINDS = {"system_tablespace": "InnoDB system tablespace", "undo_tablespace": "undo tablespaces",
                  "temporary_tablespace": "temporary tablespace", "data_dictionary": "data dictionary (mysql.ibd)",
                  "free space": "free extents", "redo_log": "redo log"}


def _engine_internal_reasons(f: Findings, t: Thresholds) -> list[Reason]:
    """ENGINE_INTERNAL (issue 33): the census's engine-internal bytes (``findings.census``), which no SQL reads and
    no application query touches, are covered when RDS says the whole volume is initialized (it reported a storage
    operation during the run, and none at its end). Otherwise they are named and, unless ``verdict.engine_internal``
    is strict, do not fail the verdict (``judged`` False: a local run has no RDS to say it)."""
    census = f.census or CensusSection()
    internal = census.engine_internal_bytes
    if not census.taken or not internal:
        return []
    kinds = census.engine_internal_by_kind
    named = ", ".join(f"{INTERNAL_KINDS.get(k, k)} {_mib(int(v))}" for k, v in kinds.items())
    what = (f"{_mib(internal)} engine-internal on the volume ({named}): files no SQL reads and no application query "
            "touches, judged apart from the application's tables and indexes (UNREAD_OBJECTS)")
    section = f.storage_initialization or StorageInitialization()
    said = _said(section)
    if section.reported and section.initialized_at_end:
        return [_reason("ENGINE_INTERNAL", True, f"{what}: covered, RDS initialized the whole volume ({said})")]
    rule = (f"{what}; not covered, {said} (covered once RDS has reported a StorageOperationStatus during the run "
            "and none at its end)")
    if t.engine_internal == "strict":
        return [_reason("ENGINE_INTERNAL", False, f"{rule}, and verdict.engine_internal: strict fails the verdict on "
                        "it; wait for RDS to finish initializing the volume and run again, or set "
                        "verdict.engine_internal: named")]
    return [_reason("ENGINE_INTERNAL", True, f"{rule}; named, not failing the verdict (verdict.engine_internal: "
                    "strict makes it fail)", judged=False)]


def _server_reasons(f: Findings) -> list[Reason]:
    """FAILED_OVER: the instance's availability zone at Finalize is not the one before Discover (``findings.server``):
    a Multi-AZ failover, and the database is served from the standby's volume, which the run did not read: not READY.
    SERVER_RESTARTED otherwise, when the server's start time moved between Discover and the end census. Never a
    failure: the run rides a restart out (issue 32 §4) and the volume it read stays read; said so that a DBA knows the
    buffer cache is cold again and checks the events for a failover RDS does not show yet."""
    server = f.server
    if server is None:
        return []
    out = []
    if server.failed_over:
        out.append(_reason("FAILED_OVER", False, server.note or "the instance failed over during the run"))
    elif server.restarted:
        out.append(_reason("SERVER_RESTARTED", True, server.note or "the database server restarted during the run"))
    return out


def _end_census_reasons(f: Findings) -> list[Reason]:
    """END_CENSUS: the census taken again after the warm-up (``warmup.end_census``) is the run's only view of
    what was created or grew while it ran; a run whose start census was taken and whose end census is missing,
    failed (``census.end_census_failure``: the step's error, recorded by its Catch) or for any other reason, is
    not READY: a step that did not run never reads as success. An engine that takes no census adds nothing
    (UNREAD_OBJECTS says it is not judged)."""
    census = f.census or CensusSection()
    if not census.taken:
        return []
    if census.end_census:
        return [_reason("END_CENSUS", True, "the census was taken again after the warm-up: what was created, grew "
                        "or was dropped while the run ran is judged")]
    failure = census.end_census_failure
    why = (f"{failure.error or 'an error'}: {' '.join(str(failure.cause or 'no cause given').split())}"
           if failure else "no record of it in the run's evidence (the step was not reached, or was cut off "
           "before it could record why)")
    return [_reason("END_CENSUS", False, f"the end census did not run: {why}; what was created or grew during the "
                    "warm-up is not known, so the volume is judged on the start census only; run again")]


def _warmup_off(findings: Findings) -> list[Reason]:
    """warmup.enabled false: nothing was to be read, so coverage and units are not judged; the run
    measured the storage as restored and can never say READY."""
    units = findings.units.total
    return [_reason("WARMUP_OFF", False, f"the warm-up was turned off (warmup.enabled: false): none of the "
                    f"{units} planned work units was read, so the first touch of every block is still ahead; "
                    "the figures measure the storage as restored"),
            _reason("PROBES_COLD", True, "warm vs cold not judged: there was no warm-up between the probes",
                    judged=False)]


def judge(findings: Findings, thresholds: Thresholds | None = None, baseline: Findings | None = None, *,
          benchmark_requested: bool = True, probes_requested: bool = True,
          warmup_requested: bool = True) -> VerdictSection:
    """The verdict and its reasons (failing reasons first), as findings.json's ``verdict`` holds it (``stored()``)."""
    t = thresholds or Thresholds()
    reasons = (_warmup_reasons(findings, t) + _unread_reasons(findings, t) + _engine_internal_reasons(findings, t)
               + _end_census_reasons(findings) + _server_reasons(findings) if warmup_requested
               else _warmup_off(findings))
    bench = findings.benchmark or BenchmarkSection()
    if benchmark_requested and t.require_benchmark:
        reasons.append(_benchmark_reason(bench))
        if probes_requested and warmup_requested:
            reasons += _probe_reasons(bench, t)
        else:
            reasons.append(_reason("PROBES_OFF", True, "warm vs cold not judged: the probes were turned off "
                                   "(benchmark.probe_blocks: 0)"))
    reasons += _scratch_reasons(findings.scratch or Scratch())
    reasons += _p99_reasons(bench, t)
    reasons += _tail_reasons(bench, t)
    reasons += _expected_reasons(bench, t)
    reasons += _baseline_reasons(bench, baseline, t)
    reasons += _storage_reasons(findings, t)
    reasons += _oversized_reasons(findings)
    verdict = READY if all(r.ok for r in reasons) else NOT_READY
    reasons.sort(key=lambda r: r.ok)
    return VerdictSection(verdict=verdict, reasons=reasons, thresholds=t.model_dump(),
                          storage_initialization=_said(findings.storage_initialization))
