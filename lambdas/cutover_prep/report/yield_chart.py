"""The report's chart of the warm-up yielding to the application (issue 36 §1, pure).

The yield controller's cap on the units reading at once (``warmup.concurrency.yielding.samples``, one a
decision) and, on the second axis, the application's milliseconds per read in each window, against the
seconds since the first slot. Drawn only when the run yielded (the controller made a decision).
"""

from __future__ import annotations

import pygal

from cutover_prep.report.charts import WIDTH, Chart, _chart, _linear_ticks, _render, _tick_formatter, num
from cutover_prep.report.parts import YieldSample
from cutover_prep.report.reading import Readable, findings_of

CHART_ID = "chart-yielding"
CAPTION = "Yielding to the application: the warm-up's concurrency and the application's read latency"
LEVEL_SERIES, LATENCY_SERIES = "units reading at once (cap)", "application: ms per read"


def samples(findings: Readable) -> list[YieldSample]:
    """``warmup.concurrency.yielding.samples`` of the findings (``parts.YieldingSection``), or none."""
    warmup = findings_of(findings).warmup
    concurrency = warmup.concurrency if warmup is not None else None
    section = concurrency.yielding if concurrency is not None else None
    return section.samples if section is not None else []


def yield_chart(findings: Readable) -> Chart:
    points = [(num(s.t_s), num(s.level), num(s.app_ms_per_read)) for s in samples(findings)]
    points = [(t, lv, ms) for t, lv, ms in points if t is not None and lv is not None]
    if not points:
        return Chart(CHART_ID, CAPTION, why="the warm-up made no yield decision in this run (yielding off, no hot "
                     "set read yet, or no signal from the engine)")
    end = max(t for t, _, _ in points)
    unit, per, word = ("h", 3600.0, "hours") if end > 3 * 3600 else (("min", 60.0, "minutes") if end > 300
                                                                      else ("s", 1.0, "seconds"))
    x_ticks = _linear_ticks(end / per or 1, 8)
    y_ticks = _linear_ticks(max(lv for _, lv, _ in points) * 1.05)
    chart = _chart(pygal.XY, ("#2a8a5a", "#e66101"), width=WIDTH, xrange=(0, x_ticks[-1]),
                   show_dots=len(points) <= 60, x_title=f"{word} since the first slot",
                   y_title="units reading at once", x_labels=x_ticks, x_value_formatter=_tick_formatter(x_ticks, unit),
                   y_labels=y_ticks, range=(0, y_ticks[-1]), include_x_axis=True)
    chart.add(LEVEL_SERIES, [(t / per, lv) for t, lv, _ in points])
    chart.add(LATENCY_SERIES, [(t / per, ms) for t, _, ms in points if ms is not None], secondary=True)
    return Chart(CHART_ID, CAPTION, _render(chart, 1))
