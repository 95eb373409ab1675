"""The report's charts: pygal SVG rendered inline, without JavaScript or any external resource (pure).

Each builder takes parts of ``findings.json`` and returns a ``Chart``: the SVG when there is
something to draw, else ``why`` it is absent ("not measured: ..."). A builder never raises on
missing or odd input; ``build_charts`` (``chart_set.py``) turns an unexpected error into a ``why`` as well.

pygal escapes every text it writes (titles, series names, labels) through ElementTree. Its
``js`` option is emptied and the inline config ``<script>`` it always writes, and its comments
that name its web site, are removed by an XML filter, so the SVG holds no script and no URL but
its namespaces.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pygal
from markupsafe import Markup
from pygal.style import Style

from cutover_prep.dal.records.findings import WarmupTimeline
from cutover_prep.report.parts import (
    EffectiveLimits,
    LimitLevel,
    ReportBenchmark,
    ReportPoint,
    ReportProbe,
    limits_of,
    present,
)

KIND_COLORS = {"sequential": "#1f5fa8", "random": "#d9771c", "write_direct": "#6a3d9a", "write_random": "#b5367a"}
OTHER_COLORS = ("#2a8a5a", "#8c6d1f", "#4d6b7a", "#a83232")
COLD, WARM = "#4a6fa5", "#d9771c"
# The limits: dark enough and coloured not to pass for the grey dashed guide lines of the axis.
LIMIT_COLORS = ("#c62828", "#4a4a4a")  # peak (or expected), sustained
WIDTH, HEIGHT, MARGIN = 640, 380, 12
FIRST_SCREEN_HEIGHT = 300  # the warm-up chart: lower, so that it fits the first screen of a phone
# Text 1.25× pygal's sizes: a 640-wide chart scaled down to the 360 px of a phone (the page's CSS keeps it
# at least that wide) still draws its labels at 9 px and more.
FONT_SCALE = 1.25
# pygal skips an axis label that falls exactly on the top edge of the plot (its y is 0, falsy):
# the range goes this little above the top label so that the label is drawn.
HEADROOM = 1.03
# pygal's own `#chart-id .reactive{stroke-width:1}` beats the width its `stroke_style` gives each series' group:
# without this the lines (2.5) and the dashed limits (2) are drawn 1 px wide and faint.
SERIES_CSS = "inline:.pygal-chart .series .line.reactive{stroke-width:inherit !important;stroke-opacity:.95}"


@dataclass(frozen=True)
class Chart:
    chart_id: str
    caption: str
    svg: Markup | None = None
    why: str | None = None
    note: str | None = None  # what the chart shows that a reader should not take at face value


def num(value: Any) -> float | None:
    """A finite float, or None for None, bools, strings that are not numbers, NaN and infinities."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def fmt_duration(value: Any) -> str:
    """Seconds as "12.3 s", "4 min 05 s" or "2 h 03 min"; "—" when not a number."""
    seconds = num(value)
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {sec:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _strip_script_and_comments(root: Any) -> Any:
    """pygal always writes its config as an inline <script> and two comments with its URLs: drop them."""
    for parent in [root, *root.iter()]:
        for child in list(parent):
            if callable(child.tag) or child.tag in ("script", "{http://www.w3.org/2000/svg}script"):
                parent.remove(child)
    return root


def _style(colors: tuple[str, ...], scale: float = 1.0, opacity: str = ".85") -> Style:
    size = {name: round(base * scale) for name, base in (("label_font_size", 13), ("major_label_font_size", 13),
                                                        ("legend_font_size", 14), ("title_font_size", 15),
                                                        ("value_font_size", 13))}
    return Style(background="transparent", plot_background="#ffffff", foreground="#333333",
                 foreground_strong="#111111", foreground_subtle="#888888", opacity=opacity, opacity_hover=".95",
                 font_family="system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif",
                 guide_stroke_color="#dddddd", major_guide_stroke_color="#bbbbbb", colors=colors or ("#1f5fa8",),
                 **size)


def _chart(cls: type, colors: tuple[str, ...], *, font_scale: float = FONT_SCALE, opacity: str = ".85",
           **options: Any) -> Any:
    config: dict[str, Any] = {
        "js": [], "disable_xml_declaration": True,
        "style": _style(colors, font_scale, opacity), "width": WIDTH, "height": HEIGHT, "legend_at_bottom": True,
        "truncate_legend": -1, "truncate_label": -1, "margin": MARGIN, "dots_size": 4, "stroke_style": {"width": 2.5},
        "css": (*pygal.Config().css, SERIES_CSS),
    }
    config.update(options)
    chart = cls(**config)
    chart.add_xml_filter(_strip_script_and_comments)
    return chart


def _render(chart: Any, most_columns: int = 3) -> Markup:
    # pygal reserves only count // columns legend rows under the plot: add the row it forgets, if any
    count = max(1, len(chart.raw_series))
    columns = min(count, most_columns)
    chart.legend_at_bottom_columns = columns
    chart.margin_bottom = MARGIN + (26 if count % columns else 0)
    return Markup(chart.render(is_unicode=True))  # pygal escaped every text (module docstring)


def fmt_number(value: float) -> str:
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:,.2f}".rstrip("0").rstrip(".")


def fmt_kb(value: float) -> str:
    return f"{fmt_number(value)} KiB"


def _log_ticks(low: float, high: float) -> list[float]:
    """Powers of two from below ``low`` to above ``high``: IO sizes read naturally as 8, 16, 32 ... KiB."""
    lo = 2 ** math.floor(math.log2(max(low, 1e-3)))
    hi = 2 ** math.ceil(math.log2(max(high, lo * 2)))
    ticks, tick = [], lo
    while tick <= hi:
        ticks.append(tick)
        tick *= 2
    return ticks


def _value_ticks(low: float, high: float) -> list[float]:
    """1-2-5 steps on a log axis."""
    if high <= 0:
        return []
    low = max(low, high / 1e6)
    start = math.floor(math.log10(low))
    ticks = [m * 10**e for e in range(start, math.ceil(math.log10(high)) + 1) for m in (1, 2, 5)]
    lower = max([t for t in ticks if t <= low], default=ticks[0])
    upper = min([t for t in ticks if t >= high], default=ticks[-1])
    return [t for t in ticks if lower <= t <= upper]


def _linear_ticks(top: float, most: int = 8) -> list[float]:
    """0 to at least ``top`` in at most ``most`` 1-2-2.5-5 steps: 0, 500, 1,000 ... rather than pygal's 0, 400, 800."""
    top = top if top > 0 else 1.0
    raw = top / most
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    return [round(i * step, 9) for i in range(math.ceil(top / step - 1e-9) + 1)]


def _tick_formatter(ticks: list[float], unit: str = "") -> Callable[[float], str]:
    """Every label with the decimals the step needs (0.8, 1.0, 1.2 ms; not 0.8, 1, 1.2)."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    decimals = next((d for d in range(7) if abs(round(step, d) - step) < 1e-9 * max(1.0, step)), 6)
    suffix = f" {unit}" if unit else ""
    return lambda v: f"{v:,.{decimals}f}{suffix}"


# ---- absence -------------------------------------------------------------------------------

def benchmark_absence(bench: ReportBenchmark | None) -> str | None:
    """Why the benchmark has nothing to show at all, or None when it ran (even partly)."""
    if bench is None:
        return "no benchmark section in the findings (the run ended before the benchmark)"
    status = bench.status
    if status == "DISABLED":
        return "benchmark disabled for this run"
    if status in (None, "NOT_RUN"):
        return "benchmark not run"
    if status == "FAILED" and not bench.points:
        error = bench.error
        detail = ": ".join(str(x) for x in ((error.error, error.cause) if error else ()) if x)
        return "benchmark failed" + (f" ({detail})" if detail else "")
    return None


# ---- warm-up -------------------------------------------------------------------------------

def warmup_chart(timeline: WarmupTimeline | None) -> Chart:
    caption = "Warm-up progress: MiB/s over time"
    samples = [(num(s.t_s), num(s.mib_per_s)) for s in (timeline.series if timeline else [])]
    samples = [(t, v) for t, v in samples if t is not None and v is not None]
    if not samples or timeline is None:
        return Chart("chart-warmup", caption, why="no progress samples recorded for this run")
    bucket = num(timeline.bucket_seconds)
    end = max(t for t, _ in samples) + (bucket or 0)
    # A warm-up of hours reads in minutes or hours, not in "14,400 s".
    unit, per, word = ("h", 3600.0, "hours") if end > 3 * 3600 else (("min", 60.0, "minutes") if end > 300
                                                                      else ("s", 1.0, "seconds"))
    y_ticks = _linear_ticks(max(v for _, v in samples) * 1.05)
    x_ticks = _linear_ticks(end / per or 1, 6)  # pygal's own x labels ran together ("0.2 s0.4 s0.6 s")
    # Each sample is the rate over its bucket: draw it at the bucket's middle.
    half = (bucket or 0) / 2
    values = [((t + half) / per, v) for t, v in sorted(samples)]

    # one chart for every screen: it sits on the first screen beside "what to do next" (a page) or under it (a
    # phone), half a page wide at most, so the 640-wide drawing keeps its text at 9 px and more on both
    chart = _chart(pygal.XY, ("#2a8a5a",), width=WIDTH, height=FIRST_SCREEN_HEIGHT, fill=True, opacity=".45",
                   xrange=(0, x_ticks[-1]), show_dots=len(samples) <= 40, show_legend=False,
                   x_title=f"{word} since the warm-up began", y_title="MiB/s",
                   x_labels=x_ticks, x_value_formatter=_tick_formatter(x_ticks, unit),
                   value_formatter=_tick_formatter(y_ticks), y_labels=y_ticks,
                   range=(0, y_ticks[-1] * HEADROOM), include_x_axis=True)
    chart.add("MiB/s", values)
    return Chart("chart-warmup", caption, _render(chart))


# ---- sweep points -----------------------------------------------------------------------------

def point_size_kb(point: ReportPoint) -> float | None:
    size = num(point.effective_io_kb)
    return size if size and size > 0 else num(point.io_size_kb)


def done_points(bench: ReportBenchmark | None) -> list[ReportPoint]:
    return [p for p in (bench.points if bench else []) if p.status == "DONE"]


def _kind(point: ReportPoint) -> str:
    return str(point.kind or "sequential")


def _colors_for(kinds: list[str]) -> tuple[str, ...]:
    others = iter(OTHER_COLORS * 4)
    return tuple(KIND_COLORS.get(k) or next(others) for k in kinds)


def _limit_levels(limits: Any) -> list[tuple[str, LimitLevel]]:
    """The analysis' limits (``benchmark.limits``, its own mapping): peak and sustained, or one expected level."""
    eff = limits_of(limits).effective or EffectiveLimits()
    levels: list[tuple[str, LimitLevel]] = [(name, lv) for name, lv in eff.named() if lv is not None and present(lv)]
    if not levels and present(eff):
        levels = [("expected", eff)]
    bursts = eff.has_burst if "has_burst" in eff.model_fields_set else True
    if len(levels) == 2 and not bursts:
        levels = [("expected", levels[0][1])]
    return levels


def _by_size_chart(bench: ReportBenchmark | None, limits: Any, *, chart_id: str, caption: str,
                   metric: Callable[[ReportPoint], float | None],
                   y_title: str, cap: Callable[[LimitLevel], Any], cap_scale: float) -> Chart:
    why = benchmark_absence(bench)
    if why:
        return Chart(chart_id, caption, why=why)
    series: dict[str, list[tuple[float, float]]] = {}
    for p in done_points(bench):
        x, y = point_size_kb(p), metric(p)
        if x and x > 0 and y and y > 0:
            series.setdefault(_kind(p), []).append((x, y))
    if not series:
        return Chart(chart_id, caption, why="no sweep point finished with a measured rate")
    xs = [x for pts in series.values() for x, _ in pts]
    ys = [y for pts in series.values() for _, y in pts]
    caps = [(name, num(cap(level))) for name, level in _limit_levels(limits)]
    caps = [(name, value * cap_scale) for name, value in caps if value]
    ys += [value for _, value in caps]
    x_ticks, y_ticks = _log_ticks(min(xs), max(xs)), _value_ticks(min(ys) / 1.2, max(ys) * 1.2)
    kinds = sorted(series)
    chart = _chart(pygal.XY, _colors_for(kinds) + LIMIT_COLORS, logarithmic=True,
                   x_labels=x_ticks, xrange=(x_ticks[0] / 1.25, x_ticks[-1] * 1.25), y_labels=y_ticks,
                   range=(y_ticks[0], y_ticks[-1] * HEADROOM), x_title="KiB per IO (log scale)", y_title=y_title,
                   x_value_formatter=fmt_kb, value_formatter=fmt_number,
                   x_label_rotation=330 if len(x_ticks) > 6 else 0)
    for kind in kinds:
        points = sorted(series[kind])
        chart.add(kind, points, stroke=len({x for x, _ in points}) > 1)
    for name, value in caps:
        chart.add(f"{name} limit {fmt_number(value)}", [(x_ticks[0], value), (x_ticks[-1], value)], show_dots=False,
                  stroke_style={"width": 2, "dasharray": "8,5"})
    return Chart(chart_id, caption, _render(chart))


def _mib_s(point: ReportPoint) -> float | None:
    kbps = num(point.throughput_kbps)
    return kbps / 1024 if kbps is not None else None


def throughput_chart(bench: ReportBenchmark | None, limits: Any) -> Chart:
    return _by_size_chart(bench, limits, chart_id="chart-throughput", caption="Throughput (MiB/s) per IO size",
                          metric=_mib_s, y_title="MiB/s (log scale)", cap=lambda lv: lv.throughput_kbps,
                          cap_scale=1 / 1024)


def iops_chart(bench: ReportBenchmark | None, limits: Any) -> Chart:
    return _by_size_chart(bench, limits, chart_id="chart-iops", caption="IOPS per IO size",
                          metric=lambda p: num(p.iops), y_title="IOPS (log scale)", cap=lambda lv: lv.iops,
                          cap_scale=1.0)


def _random_series(bench: ReportBenchmark | None,
                   metric: Callable[[ReportPoint], float | None]) -> dict[str, list[tuple[float, float]]]:
    series: dict[str, list[tuple[float, float]]] = {}
    for p in done_points(bench):
        if "random" not in _kind(p):
            continue
        sessions, value, size = num(p.sessions), metric(p), point_size_kb(p)
        if sessions and value is not None and value > 0:
            name = _kind(p) + (f" {fmt_kb(round(size))}" if size else "")
            series.setdefault(name, []).append((sessions, value))
    return series


def _sessions_chart(bench: ReportBenchmark | None, *, chart_id: str, caption: str,
                    metric: Callable[[ReportPoint], float | None],
                    y_title: str, missing: str) -> Chart:
    why = benchmark_absence(bench)
    if why:
        return Chart(chart_id, caption, why=why)
    series = _random_series(bench, metric)
    if not series:
        return Chart(chart_id, caption, why=missing)
    names = sorted(series)
    sessions = sorted({s for pts in series.values() for s, _ in pts})
    y_ticks = _linear_ticks(max(v for pts in series.values() for _, v in pts) * 1.05)
    chart = _chart(pygal.XY, _colors_for([n.split(" ")[0] for n in names]), x_labels=sessions,
                   x_title="concurrent sessions", y_title=y_title, y_labels=y_ticks,
                   range=(0, y_ticks[-1] * HEADROOM), include_x_axis=True,
                   x_value_formatter=lambda v: fmt_number(v), value_formatter=_tick_formatter(y_ticks))
    for name in names:
        chart.add(name, sorted(series[name]))
    return Chart(chart_id, caption, _render(chart))


def _p99_ms(point: ReportPoint) -> float | None:
    p99 = num(point.latency_us.p99 if point.latency_us else None)
    return p99 / 1000 if p99 is not None else None


def random_iops_chart(bench: ReportBenchmark | None) -> Chart:
    return _sessions_chart(bench, chart_id="chart-random-iops", caption="Random reads: IOPS by sessions",
                           metric=lambda p: num(p.iops), y_title="IOPS",
                           missing="no random point finished with measured IOPS")


def random_latency_chart(bench: ReportBenchmark | None) -> Chart:
    chart = _sessions_chart(bench, chart_id="chart-random-latency",
                            caption="Random reads: p99 latency (ms) by sessions", metric=_p99_ms,
                            y_title="p99 latency, ms", missing="no random point recorded latency percentiles")
    return Chart(chart.chart_id, chart.caption, chart.svg, chart.why, falling_p99_note(bench)) if chart.svg else chart


FALLING = 0.8  # the p99 at the most sessions below this share of the p99 at the fewest: said under the chart


def _reads(point: ReportPoint) -> float | None:
    counts = [num(v) for v in (point.latency_hist_us or {}).values()]
    return sum(c for c in counts if c is not None) or None


def falling_p99_note(bench: ReportBenchmark | None) -> str | None:
    """The p99 of random reads falling as sessions rise, said: more load with a shorter tail is not the storage
    queueing, and a reader would otherwise take the lowest p99 for the storage's own."""
    by_size: dict[str, list[ReportPoint]] = {}
    for p in done_points(bench):
        if _kind(p) == "random" and num(p.sessions) and _p99_ms(p) is not None:
            by_size.setdefault(fmt_kb(round(point_size_kb(p) or 0)), []).append(p)
    for size, points in sorted(by_size.items()):
        points.sort(key=lambda p: num(p.sessions) or 0)
        few, most = points[0], points[-1]
        p99_few, p99_most = _p99_ms(few), _p99_ms(most)
        if len(points) < 2 or not p99_few or p99_most is None or p99_most >= p99_few * FALLING:
            continue
        reads = (_reads(few), _reads(most))
        counted = (f"; the {fmt_number(num(few.sessions) or 0)}-session p99 rests on {fmt_number(reads[0])} reads, "
                   f"the {fmt_number(num(most.sessions) or 0)}-session one on {fmt_number(reads[1])}"
                   if None not in reads else "")
        return (f"The p99 fell as sessions rose ({size} reads: {fmt_number(p99_few)} ms at "
                f"{fmt_number(num(few.sessions) or 0)} session{'s' if num(few.sessions) != 1 else ''} → "
                f"{fmt_number(p99_most)} ms at {fmt_number(num(most.sessions) or 0)}). More load with a shorter "
                "tail is not the storage queueing: the points run one after another (fewest sessions first by "
                "default), so the later ones usually find more of their blocks in a cache the earlier ones "
                f"filled{counted}. Take the p99 of the fewest sessions, not the lowest, as the storage's.")
    return None


# ---- probes ------------------------------------------------------------------------------------

def bucket_label(upper_us: float) -> str:
    """A bucket's upper bound in ms, two significant figures: 0.016, 0.26, 1, 4.1, 16, 66 (the axis says "ms")."""
    ms = upper_us / 1000
    if ms >= 10:
        return f"{ms:,.0f}"
    return f"{ms:.2g}" if ms < 1 else f"{ms:.1f}".rstrip("0").rstrip(".")


MAX_BUCKET_LABELS = 7  # more buckets than this: every second (third ...) one is labelled, or the labels run together


def _histogram(probe: ReportProbe | None) -> dict[float, float]:
    hist: dict[float, float] = {}
    for key, count in ((probe.latency_hist_us if probe else None) or {}).items():
        upper, n = num(key), num(count)
        if upper is not None and upper > 0 and n is not None and n >= 0:
            hist[upper] = hist.get(upper, 0.0) + n
    return hist


def latency_histogram_chart(bench: ReportBenchmark | None) -> Chart:
    chart_id = "chart-latency-hist"
    caption = "Single-block read latency: cold vs warm probe (share of reads per bucket)"
    why = benchmark_absence(bench)
    if why:
        return Chart(chart_id, caption, why=why)
    probes = bench.probes if bench else None
    hists = {phase: _histogram(getattr(probes, phase, None)) for phase in ("cold", "warm")}
    hists = {phase: h for phase, h in hists.items() if sum(h.values()) > 0}
    if not hists:
        return Chart(chart_id, caption, why="no probe recorded a latency histogram")
    bounds = sorted({b for h in hists.values() for b in h})
    if all(math.log2(b).is_integer() for b in bounds):  # fill the power-of-two gaps for an even axis
        bounds = [2.0**e for e in range(int(math.log2(bounds[0])), int(math.log2(bounds[-1])) + 1)]
    shares = {phase: [round(100 * hist.get(b, 0) / sum(hist.values()), 2) for b in bounds]
              for phase, hist in hists.items()}
    # a share never passes 100 %: the axis stops there (it went to 120 % for a bucket of 98 %)
    y_ticks = _linear_ticks(min(100.0, max(max(v) for v in shares.values()) * 1.05))
    every = math.ceil(len(bounds) / MAX_BUCKET_LABELS)
    chart = _chart(pygal.Bar, tuple(COLD if p == "cold" else WARM for p in hists),
                   x_labels=[bucket_label(b) for b in bounds], x_labels_major_every=every,
                   show_minor_x_labels=every == 1, x_title="read latency, ms (bucket upper bound)",
                   y_title="% of reads", y_labels=y_ticks, range=(0, y_ticks[-1] * HEADROOM),
                   value_formatter=_tick_formatter(y_ticks, "%"))
    for phase, hist in hists.items():
        chart.add(f"{phase} ({sum(hist.values()):,.0f} reads)", shares[phase])
    return Chart(chart_id, caption, _render(chart))


PERCENTILES = ("p50", "p90", "p99")


def cold_warm_charts(bench: ReportBenchmark | None) -> Chart:
    """Two small charts in one figure: reads/s and latency percentiles, cold vs warm."""
    chart_id, caption = "chart-cold-warm", "Cold vs warm probe: reads per second and latency percentiles"
    why = benchmark_absence(bench)
    if why:
        return Chart(chart_id, caption, why=why)
    probe = {phase: getattr(bench.probes if bench else None, phase, None) or ReportProbe()
             for phase in ("cold", "warm")}
    phases = [p for p in ("cold", "warm") if probe[p].status == "DONE"]
    if not phases:
        states = ", ".join(f"{p} {probe[p].status or 'missing'}" for p in ("cold", "warm"))
        return Chart(chart_id, caption, why=f"no probe finished ({states})")
    colors = tuple(COLD if p == "cold" else WARM for p in phases)
    rates = {p: [num(probe[p].iops)] for p in phases}
    latencies = {p: [(v / 1000 if v is not None else None) for v in
                     (num(getattr(probe[p].latency_us, k, None)) for k in PERCENTILES)]
                 for p in phases}

    def small(values: dict[str, list[float | None]], **options: Any) -> Markup:
        # a few round labels and room above the tallest bar: the half-width charts' fonts are large
        ticks = _linear_ticks(max((v for vs in values.values() for v in vs if v is not None), default=1) * 1.05, 6)
        chart = _chart(pygal.Bar, colors, width=WIDTH // 2, height=HEIGHT, font_scale=1.4, y_labels=ticks,
                       range=(0, ticks[-1] * HEADROOM), value_formatter=_tick_formatter(ticks), **options)
        for phase in phases:
            chart.add(phase, values[phase])
        return _render(chart)

    rate = small(rates, x_labels=["reads/s"], y_title="reads per second", print_values=True)
    latency = small(latencies, x_labels=list(PERCENTILES), y_title="latency, ms")
    return Chart(chart_id, caption, Markup('<div class="pair">{}{}</div>').format(rate, latency))
