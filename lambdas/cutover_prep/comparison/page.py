"""``comparison.html``: the configurations side by side (pure, self-contained, no script).

For each configuration: what it measured (read IOPS, MiB/s, warm p99, warm-up rate) against what
its instance class and storage allow (peak and sustained, ``result.limits_of``), its price per
hour, whether it meets the targets and why; then the recommendation and why, the prices' source,
what the comparison cost and what its cleanup deleted or left. Every text goes through jinja2
with autoescape on. Wide tables scroll inside their own box; the page never scrolls sideways.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, Undefined, select_autoescape


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


def _gauge(label: str, value: float | None, limits: dict[str, Any], key: str, digits: int) -> dict[str, Any]:
    peak, sustained = limits.get(f"peak_{key}"), limits.get(f"sustained_{key}")
    top = max([v for v in (peak, sustained, value) if v] or [0]) or None
    return {"label": label, "value": _num(value, digits), "peak": _num(peak, digits),
            "sustained": _num(sustained, digits), "has_burst": bool(limits.get("has_burst")) and peak != sustained,
            "bar": _pct(value, top), "peak_at": _pct(peak, top), "sustained_at": _pct(sustained, top),
            "of_peak": None if value is None or not peak else round(100 * float(value) / float(peak)),
            "peak_by": limits.get(f"peak_{key}_by"), "sustained_by": limits.get(f"sustained_{key}_by")}


def view(document: dict[str, Any]) -> dict[str, Any]:
    rows = []
    recommended = (document.get("recommendation") or {}).get("name")
    for c in document.get("configurations") or []:
        limits = c.get("limits") or {}
        storage = f"{c.get('storage_type')} {_num(c.get('allocated_gb'))} GiB"
        if c.get("iops"):
            storage += f", {_num(c.get('iops'))} IOPS"
        if c.get("storage_throughput"):
            storage += f", {_num(c.get('storage_throughput'))} MiB/s"
        rows.append({
            **c, "storage": storage, "recommended": c.get("name") == recommended,
            "price": "unknown" if c.get("price_per_hour_usd") is None else f"${c['price_per_hour_usd']:,.4f}",
            "gauges": [_gauge("read IOPS", c.get("read_iops"), limits, "iops", 0),
                       _gauge("read MiB/s", c.get("read_mib_per_s"), limits, "mib_per_s", 1)],
            "p99": _num(c.get("warm_p99_ms"), 2), "warmup": _num(c.get("warmup_mib_per_s"), 1),
            "sustained_iops": _num(c.get("sustained_read_iops")),
            "meets": {True: "yes", False: "no", None: "cannot tell"}[c.get("meets_targets")],
            "meets_css": {True: "ok", False: "bad", None: "unknown"}[c.get("meets_targets")],
            "price_parts": [{"name": k, **v} for k, v in (c.get("price_detail") or {}).items()],
        })
    cost = document.get("comparison_cost") or {}
    return {"doc": document, "rows": rows, "recommendation": document.get("recommendation") or {},
            "targets": document.get("targets") or {}, "cleanup": document.get("cleanup") or {},
            "prices": document.get("prices") or {}, "cost": cost, "num": _num,
            "time_scale": next((r.get("time_scale") for r in rows if r.get("time_scale")), None)}


def render_page(document: dict[str, Any]) -> str:
    return _environment().get_template("comparison.html.j2").render(**view(document))


def write_page(document: dict[str, Any], path: Path) -> Path:
    path.write_text(render_page(document))
    return path
