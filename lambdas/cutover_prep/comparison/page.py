"""``comparison.html``: the configurations side by side (pure, self-contained, no script).

For each configuration: what it measured (read IOPS, MiB/s, warm p99, warm-up rate) against what
its instance class and storage allow (peak and sustained, ``result.limits_of``), its price per
hour, whether it meets the targets and why; then the recommendation and why, the prices' source,
what the comparison cost and what its cleanup deleted or left. Every text goes through jinja2
with autoescape on. Wide tables scroll inside their own box; the page never scrolls sideways.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, Undefined, select_autoescape

from cutover_prep.comparison.model import (
    Cleanup,
    ComparisonCost,
    ComparisonResult,
    ConfigurationResult,
    Limits,
    Prices,
    Recommendation,
)

MEETS = {True: ("yes", "ok"), False: ("no", "bad"), None: ("cannot tell", "unknown")}  # (text, css)


@cache
def _environment() -> Environment:
    return Environment(loader=PackageLoader("cutover_prep.comparison", "templates"),
                       autoescape=select_autoescape(default=True, default_for_string=True),
                       trim_blocks=True, lstrip_blocks=True)


def _num(value: Any, digits: int = 0) -> str:
    if value is None or isinstance(value, Undefined):  # not measured, or a limit not known
        return "–"
    return f"{float(value):,.{digits}f}"


def _pct(value: float | None, limit: float | None) -> float | None:
    if value is None or not limit:
        return None
    return max(0.0, min(100.0, 100.0 * float(value) / float(limit)))


@dataclass(frozen=True)
class Gauge:
    """A measured figure on a bar against its peak and sustained limits."""

    label: str
    value: str
    peak: str
    sustained: str
    has_burst: bool
    bar: float | None
    peak_at: float | None
    sustained_at: float | None
    of_peak: int | None
    peak_by: str | None
    sustained_by: str | None


def _gauge(label: str, value: float | None, peak: float | None, sustained: float | None, digits: int, *,
           limits: Limits, peak_by: str | None, sustained_by: str | None) -> Gauge:
    top = max([v for v in (peak, sustained, value) if v] or [0]) or None
    return Gauge(label=label, value=_num(value, digits), peak=_num(peak, digits), sustained=_num(sustained, digits),
                 has_burst=bool(limits.has_burst) and peak != sustained,
                 bar=_pct(value, top), peak_at=_pct(peak, top), sustained_at=_pct(sustained, top),
                 of_peak=None if value is None or not peak else round(100 * float(value) / float(peak)),
                 peak_by=peak_by, sustained_by=sustained_by)


@dataclass(frozen=True)
class PriceLine:
    """A row of the prices table: one part of a configuration's price."""

    name: str
    quantity: float | None
    unit: str | None
    usd_per_unit: float | None
    usd_per_hour: float | None
    source: str | None
    unknown: str  # why the part's price is not known ("" when it is)


@dataclass(frozen=True)
class Card:
    """One configuration as the page shows it."""

    name: str
    status: str
    db_instance_class: str | None
    storage_type: str | None
    why: str
    read_iops: float | None
    read_mib_per_s: float | None
    limits: Limits
    storage: str
    recommended: bool
    price: str
    gauges: list[Gauge]
    p99: str
    warmup: str
    sustained_iops: str
    meets: str
    meets_css: str
    price_parts: list[PriceLine]


def _card(c: ConfigurationResult, recommended: str | None) -> Card:
    lim = c.limits
    storage = f"{c.storage_type} {_num(c.allocated_gb)} GiB"
    if c.iops:
        storage += f", {_num(c.iops)} IOPS"
    if c.storage_throughput:
        storage += f", {_num(c.storage_throughput)} MiB/s"
    meets, meets_css = MEETS[c.meets_targets]
    return Card(
        name=c.name, status=c.status, db_instance_class=c.db_instance_class, storage_type=c.storage_type, why=c.why,
        read_iops=c.read_iops, read_mib_per_s=c.read_mib_per_s, limits=lim,
        storage=storage, recommended=c.name == recommended,
        price="unknown" if c.price_per_hour_usd is None else f"${c.price_per_hour_usd:,.4f}",
        gauges=[_gauge("read IOPS", c.read_iops, lim.peak_iops, lim.sustained_iops, 0, limits=lim,
                       peak_by=lim.peak_iops_by, sustained_by=lim.sustained_iops_by),
                _gauge("read MiB/s", c.read_mib_per_s, lim.peak_mib_per_s, lim.sustained_mib_per_s, 1, limits=lim,
                       peak_by=lim.peak_mib_per_s_by, sustained_by=lim.sustained_mib_per_s_by)],
        p99=_num(c.warm_p99_ms, 2), warmup=_num(c.warmup_mib_per_s, 1), sustained_iops=_num(c.sustained_read_iops),
        meets=meets, meets_css=meets_css,
        price_parts=[PriceLine(name=k, quantity=p.quantity, unit=p.unit, usd_per_unit=p.usd_per_unit,
                               usd_per_hour=p.usd_per_hour, source=p.source, unknown=p.unknown or "")
                     for k, p in c.price_detail.items()])


@dataclass(frozen=True)
class PageView:
    """What the template shows: the document and its cards (a comparison that did not finish has no prices and no
    cost: None, which the template shows as empty)."""

    doc: ComparisonResult
    rows: list[Card]
    recommendation: Recommendation
    targets: dict[str, float]
    cleanup: Cleanup
    prices: Prices | None
    cost: ComparisonCost | None
    time_scale: float | None


def view(result: ComparisonResult) -> PageView:
    rows = [_card(c, result.recommendation.name) for c in result.configurations]
    return PageView(doc=result, rows=rows, recommendation=result.recommendation, targets=result.targets,
                    cleanup=result.cleanup, prices=result.prices, cost=result.comparison_cost,
                    time_scale=next((c.time_scale for c in result.configurations if c.time_scale), None))


def render_page(result: ComparisonResult) -> str:
    """The page of a comparison."""
    return _environment().get_template("comparison.html.j2").render(**vars(view(result)), num=_num)


def write_page(document: ComparisonResult | dict[str, Any], path: Path) -> Path:
    """Write the page of a comparison (``document``: its result, or comparison.json as written)."""
    result = document if isinstance(document, ComparisonResult) else ComparisonResult.model_validate(document)
    path.write_text(render_page(result))
    return path
