"""From each configuration's findings to ``comparison.json``: what it measured, against its limits
and the targets, what it costs, and which configuration to cut over to.

- ``read_iops``: the best random single-block read point of the sweep (IOPS);
  ``read_mib_per_s``: the best point of the sweep (MiB/s); ``warm_p99_ms``: the warm probe's
  p99 latency; ``warmup_mib_per_s``: the warm-up's wall rate.
- A local run measures an emulated volume whose clock is slowed by its ``time_scale``; its
  figures are given in the volume's own terms (rates x time_scale, latencies / time_scale, the
  wall-clock figures kept in ``wall_clock``), so they compare with AWS limits and targets.
- A volume with a burst (gp2 below 1 TiB, an "up to" instance class) measures its burst on a short
  benchmark: a fresh volume's credit bucket is full. The targets are judged on the *sustained*
  figure, ``min(measured, sustained limit)``, and the ``why`` says both.
- Recommendation: the cheapest configuration meeting every target (tie: more read IOPS); none,
  with the reason, when none does.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NamedTuple

from cutover_prep.analysis.limits import LimitsError, expected_limits
from cutover_prep.comparison.model import (
    Cleanup,
    ComparisonCost,
    ComparisonInput,
    ComparisonResult,
    Configuration,
    ConfigurationResult,
    Limits,
    PricePart,
    Prices,
    Recommendation,
    RunCost,
    Targets,
    child_run_id,
)
from cutover_prep.dal.records.findings import Findings
from cutover_prep.dal.records.findings_benchmark import BenchmarkSection
from cutover_prep.engines.registry import DEFAULT_ENGINE
from cutover_prep.pricing.book import PRICING_REGION, Price, PriceBook, file_label, price_file
from cutover_prep.settings import aws_region

KIB_PER_MIB = 1024


class Measures(NamedTuple):
    """The four figures a configuration is judged on (None where its run has none)."""

    read_iops: float | None
    read_mib_per_s: float | None
    warm_p99_ms: float | None
    warmup_mib_per_s: float | None


# -- what a run measured ---------------------------------------------------------------------------
def measures(findings: Findings) -> Measures:
    """The four figures of one run's findings, wall clock."""
    bench = findings.benchmark or BenchmarkSection()
    points = [p for p in bench.points if p.kind in ("random", "sequential")]
    random_iops = [float(p.iops) for p in points if p.kind == "random" and p.iops]
    mib = [float(p.throughput_kbps) / KIB_PER_MIB for p in points if p.throughput_kbps]
    latency = bench.probe("warm").latency_us  # the probe's percentiles, as the benchmark wrote them
    p99 = latency.get("p99") if isinstance(latency, dict) else None
    return Measures(read_iops=max(random_iops) if random_iops else None,
                    read_mib_per_s=max(mib) if mib else None,
                    warm_p99_ms=None if p99 is None else float(p99) / 1000,
                    warmup_mib_per_s=findings.read_rate.mib_per_s_wall)


def time_scale(findings: Findings) -> float | None:
    emulation = findings.storage_emulation or {}  # the local run's emulated volume, as its evidence says
    if not emulation.get("emulated"):
        return None
    scale = (emulation.get("profile") or {}).get("time_scale")
    return float(scale) if scale else None


def in_volume_terms(wall: Measures, scale: float | None) -> Measures:
    if not scale:
        return wall
    def times(v: float | None, f: float) -> float | None:
        return None if v is None else v * f
    return Measures(read_iops=times(wall.read_iops, scale), read_mib_per_s=times(wall.read_mib_per_s, scale),
                    warm_p99_ms=times(wall.warm_p99_ms, 1 / scale),
                    warmup_mib_per_s=times(wall.warmup_mib_per_s, scale))


def limits_of(configuration: Configuration, engine: str | None) -> Limits:
    """Peak and sustained IOPS and MiB/s the class and storage allow (analysis/limits.py)."""
    try:
        caps = expected_limits(configuration.db_instance_class, configuration.storage_type,
                               float(configuration.allocated_gb), iops=configuration.iops,
                               throughput_mbps=configuration.storage_throughput, engine=engine or DEFAULT_ENGINE)
    except LimitsError as exc:
        return Limits(known=False, why=str(exc))
    eff = caps["effective"]
    peak, steady = eff["peak"], eff["sustained"]
    return Limits(known=True,
                  peak_iops=peak["iops"], peak_mib_per_s=peak["throughput_mb_s"],
                  peak_iops_by=peak["iops_label"], peak_mib_per_s_by=peak["throughput_label"],
                  sustained_iops=steady["iops"], sustained_mib_per_s=steady["throughput_mb_s"],
                  sustained_iops_by=steady["iops_label"], sustained_mib_per_s_by=steady["throughput_label"],
                  has_burst=bool(eff["has_burst"]),
                  burst_minutes_from_full=caps["storage"].get("burst_minutes_from_full"))


# -- judging ---------------------------------------------------------------------------------------
def _n(value: float | None, digits: int = 0) -> str:
    return "?" if value is None else f"{value:,.{digits}f}"


def sustained(measured: float | None, limit: float | None, has_burst: bool) -> float | None:
    if measured is None or not has_burst or limit is None:
        return measured
    return min(measured, float(limit))


def judge(row: ConfigurationResult, targets: Targets) -> tuple[bool | None, str]:
    """Does the configuration meet every target? (None: cannot tell) and one line why."""
    lim = row.limits
    burst = bool(lim.has_burst)
    iops = sustained(row.read_iops, lim.sustained_iops, burst)
    mib = sustained(row.read_mib_per_s, lim.sustained_mib_per_s, burst)
    misses, unknown, met = [], [], []

    def check(label: str, value: float | None, bound: float | None, *, at_least: bool, unit: str, digits: int,
              burst_note: str = "") -> None:
        if bound is None:
            return
        if value is None:
            unknown.append(f"{label} not measured")
            return
        ok = value >= bound if at_least else value <= bound
        text = f"{label} {_n(value, digits)}{unit}{burst_note} {'≥' if at_least else '≤'} {_n(bound, digits)}"
        if ok:
            met.append(text)
        else:
            misses.append(text.replace(" ≥ ", " < ").replace(" ≤ ", " > "))

    def note(measured: float | None, value: float | None) -> str:
        if burst and measured is not None and value is not None and value < measured:
            return f" sustained (measured {_n(measured)} on the burst)"
        return ""

    check("read IOPS", iops, targets.min_read_iops, at_least=True, unit="", digits=0,
          burst_note=note(row.read_iops, iops))
    check("read MiB/s", mib, targets.min_read_mib_per_s, at_least=True, unit="", digits=1,
          burst_note=note(row.read_mib_per_s, mib))
    check("warm p99", row.warm_p99_ms, targets.max_warm_p99_ms, at_least=False, unit=" ms", digits=2)
    if targets.max_price_per_hour_usd is not None:
        if row.price_per_hour_usd is None:
            unknown.append("price per hour unknown")
        else:
            check("price $", row.price_per_hour_usd, targets.max_price_per_hour_usd, at_least=False, unit="/h",
                  digits=3)
    if misses:
        return False, "misses " + "; ".join(misses)
    if unknown:
        return None, "cannot tell: " + "; ".join(unknown)
    return True, "meets every target: " + "; ".join(met)


def recommend(rows: list[ConfigurationResult]) -> Recommendation:
    meeting = [r for r in rows if r.meets_targets]
    if not meeting:
        failed = [r.name for r in rows if r.status != "MEASURED"]
        unknown = [r.name for r in rows if r.status == "MEASURED" and r.meets_targets is None]
        reasons = ["no configuration meets every target"]
        if unknown:
            reasons.append(f"cannot tell for {', '.join(unknown)}")
        if failed:
            reasons.append(f"not measured: {', '.join(failed)}")
        return Recommendation(name=None, why="; ".join(reasons))
    priced = [r for r in meeting if r.price_per_hour_usd is not None]
    if not priced:
        best = max(meeting, key=lambda r: r.read_iops or 0)
        return Recommendation(name=best.name, why=(
            f"meets every target with the most read IOPS ({_n(best.read_iops)}); no price is known for "
            f"{', '.join(r.name for r in meeting)}, so the cheapest cannot be told"))
    best = min(priced, key=lambda r: (r.price_per_hour_usd, -(r.read_iops or 0)))
    others = [r for r in meeting if r is not best]
    why = f"the cheapest configuration meeting every target (${best.price_per_hour_usd:,.4f}/h"
    if others:
        why += "; also meeting them: " + ", ".join(
            f"{r.name} ${r.price_per_hour_usd:,.4f}/h" if r.price_per_hour_usd is not None
            else f"{r.name} price unknown" for r in others)
    missing = [r.name for r in rows if r.meets_targets is False]
    if missing:
        why += "; missing a target: " + ", ".join(missing)
    return Recommendation(name=best.name, why=why + ")")


# -- one configuration -----------------------------------------------------------------------------
def configuration_result(comparison: ComparisonInput, configuration: Configuration, findings: Findings | None,
                         failure: str | None, price: Price, engine: str | None) -> ConfigurationResult:
    run_id = child_run_id(comparison.comparison_id, configuration.name)
    row = ConfigurationResult(
        name=configuration.name, status="NOT_RUN", run_id=run_id,
        db_instance_class=configuration.db_instance_class, storage_type=configuration.storage_type,
        allocated_gb=configuration.allocated_gb, iops=configuration.iops,
        storage_throughput=configuration.storage_throughput, limits=limits_of(configuration, engine),
        price_per_hour_usd=price.per_hour_usd,
        price_detail={name: PricePart(**part) for name, part in price.detail().items()}, price_source=price.source)
    if findings is None:
        row.status = "FAILED" if failure else "NOT_RUN"
        row.why = failure or "not run"
        return row
    wall = measures(findings)
    scale = time_scale(findings)
    figures = in_volume_terms(wall, scale)
    row.status = "MEASURED"
    row.read_iops, row.read_mib_per_s = _round(figures.read_iops, 1), _round(figures.read_mib_per_s, 2)
    row.warm_p99_ms, row.warmup_mib_per_s = _round(figures.warm_p99_ms, 3), _round(figures.warmup_mib_per_s, 2)
    if scale:
        row.time_scale = scale
        row.wall_clock = {k: _round(v, 3) for k, v in wall._asdict().items()}
    lim = row.limits
    if lim.has_burst:
        row.sustained_read_iops = _round(sustained(row.read_iops, lim.sustained_iops, True), 1)
        row.sustained_read_mib_per_s = _round(sustained(row.read_mib_per_s, lim.sustained_mib_per_s, True), 2)
    row.meets_targets, row.why = judge(row, comparison.targets)
    row.hours = _hours(findings)
    row.run_cost = _run_cost(findings)
    return row


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _hours(findings: Findings) -> float | None:
    started, finished = findings.timings.started_at, findings.timings.finished_at
    try:
        start = datetime.fromisoformat(str(started))
        end = datetime.fromisoformat(str(finished))
    except ValueError:  # not written (None), or not a time
        return None
    return max(0.0, (end - start).total_seconds() / 3600)


def _run_cost(findings: Findings) -> RunCost:
    """Lambda and Step Functions of one run, at the published per-unit prices (estimate.cost_of)."""
    from cutover_prep.pricing.costs import cost_of

    busy = float(findings.timings.unit_busy_seconds or 0)
    cost = cost_of(seconds=busy, readers=1, units=int(findings.units.total or 0))
    return RunCost(lambda_usd=cost.lambda_usd, sfn_usd=cost.sfn_usd)


# -- the document ----------------------------------------------------------------------------------
def price_book(pricing: Any, store: Any, *, local: bool) -> PriceBook:
    """``pricing``: a PriceBook, or the Price List API's client (``deps.pricing_client``: the handler injects
    it); None (and the local run, which does not call AWS: moto plays it, and a laptop may have no
    credentials) prices from the shipped file alone."""
    if isinstance(pricing, PriceBook):
        return pricing
    if local or pricing is None:
        return PriceBook(client=None, region=PRICING_REGION)
    return PriceBook(client=pricing, store=store, region=aws_region() or PRICING_REGION)


def comparison_result(comparison: ComparisonInput, findings: dict[str, Findings], failures: dict[str, str], *,
                      store: Any = None, pricing: Any = None, local: bool = False,
                      cleanup: Cleanup | None = None) -> ComparisonResult:
    """comparison.json from each configuration's findings and each failure's cause."""
    book = price_book(pricing, store, local=local)
    rows = []
    for configuration in comparison.configurations:
        doc = findings.get(configuration.name)
        engine = comparison_engine(comparison, doc)
        price = book.configuration(configuration, engine)
        rows.append(configuration_result(comparison, configuration, doc, failures.get(configuration.name),
                                         price, engine))
    return ComparisonResult(
        comparison_id=comparison.comparison_id, local=local,
        targets=comparison.targets.model_dump(mode="json", exclude_none=True),
        configurations=rows, recommendation=recommend(rows),
        cleanup=cleanup or Cleanup(), prices=prices_used(rows, book),
        comparison_cost=comparison_cost(rows, local=local))


def comparison_document(comparison: ComparisonInput, findings: dict[str, Findings], failures: dict[str, str], *,
                        store: Any = None, pricing: Any = None, local: bool = False,
                        cleanup: Cleanup | None = None) -> dict[str, Any]:
    """``comparison.json`` as written (``comparison_result``'s document)."""
    return comparison_result(comparison, findings, failures, store=store, pricing=pricing, local=local,
                             cleanup=cleanup).stored()


def comparison_engine(comparison: ComparisonInput, findings: Findings | None) -> str | None:
    """The engine the input names (a local comparison names no target), else the one the run found."""
    engine = comparison.target.engine if comparison.target is not None else None
    return engine or (findings.engine if findings is not None else None)


def prices_used(rows: list[ConfigurationResult], book: PriceBook) -> Prices:
    sources = sorted({part.source for r in rows for part in r.price_detail.values() if part.source})
    api = [s for s in sources if s.startswith("AWS Price List API")]
    used_file = file_label() in sources
    text = "; ".join(sources) or "no price known"
    if used_file and book.api_failed:
        text += f" (the Price List API could not be asked: {book.api_failed})"
    elif used_file and book.client is None:
        text += " (the local run does not call the Price List API)"
    dated = price_file()["dated"] if used_file else (datetime.now(UTC).date().isoformat() if api else None)
    return Prices(source=text, dated=dated)


def comparison_cost(rows: list[ConfigurationResult], *, local: bool) -> ComparisonCost:
    hours = [r.hours for r in rows if r.hours is not None]
    instance_hours = round(sum(hours), 4)
    priced = [(r.hours, r.price_per_hour_usd) for r in rows if r.hours is not None]
    instance_usd = None if any(p is None for _, p in priced) else round(sum(h * p for h, p in priced), 6)
    lambda_usd = round(sum(r.run_cost.lambda_usd or 0.0 for r in rows), 6)
    sfn_usd = round(sum(r.run_cost.sfn_usd or 0.0 for r in rows), 6)
    usd = None if instance_usd is None else round(instance_usd + lambda_usd + sfn_usd, 6)
    basis = ("instance-hours: each configuration's run from its start to its findings, at its price per hour; "
             "Lambda GB-seconds of the warm-up units and Step Functions transitions of each run at the published "
             "per-unit prices (cutover_prep/pricing/costs.py); the benchmark's own invocations are not counted")
    if local:
        basis = ("local run: nothing was charged; this is what the same runs would cost in AWS. " + basis)
    if instance_usd is None and priced:
        basis += "; a configuration's price is unknown, so usd leaves the instances out"
    return ComparisonCost(instance_hours=instance_hours, usd=usd, instance_usd=instance_usd,
                          lambda_usd=lambda_usd, sfn_usd=sfn_usd, basis=basis)
