"""The report's chart of RDS's own initialization progress against our coverage over time (pure).

"RDS: volume initialized %" (``storage_initialization.rds_initialized_pct``) and "Cutover Prep:
database blocks read %" (``blocks_read_pct``), both against the time since the first of their
points. Drawn only when RDS reported progress; otherwise the chart's ``why`` says so and every
rendering carries the "RDS initialization progress: not reported" line instead.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import pygal
from markupsafe import Markup

from cutover_prep.dal.records.findings_storage import PctPoint, StorageInitialization
from cutover_prep.report.charts import (
    HEADROOM,
    WIDTH,
    Chart,
    _chart,
    _linear_ticks,
    _render,
    _tick_formatter,
    num,
)

CHART_ID = "chart-storage-init"
CAPTION = "RDS: volume initialized % against Cutover Prep: database blocks read %"
RDS_SERIES, OURS_SERIES = "RDS: volume initialized %", "Cutover Prep: database blocks read %"
RDS_COLOR, OURS_COLOR = "#6a3d9a", "#2a8a5a"
PCT_TICKS = [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
WIDE = 1280


def _twins(draw: Callable[[int], Markup]) -> Markup:
    """A wide drawing for a page and a 640-wide one for a phone (the page's CSS shows one): the wide one scaled
    down to a phone's 400 px drew its text at 5 px. ``draw(width)`` puts the narrow one's legend in one column."""
    return Markup('<div class="wide-only">{}</div><div class="narrow-only">{}</div>').format(draw(WIDE), draw(WIDTH))


def _points(series: list[PctPoint]) -> list[tuple[datetime, float]]:
    points = []
    for p in series:
        try:
            at = datetime.fromisoformat(str(p.at))
        except ValueError:
            continue
        pct = num(p.pct)
        if pct is not None:
            points.append((at, max(0.0, min(100.0, pct))))
    return sorted(points)


def storage_init_chart(section: StorageInitialization | None) -> Chart:
    """Both series over time, or the reason there is no chart."""
    section = section or StorageInitialization()
    rds, ours = _points(section.rds_initialized_pct), _points(section.blocks_read_pct)
    if not rds:
        return Chart(CHART_ID, CAPTION, why="RDS reported no initialization progress for this run")
    start = min(p[0] for p in rds + ours)
    end = max((p[0] - start).total_seconds() for p in rds + ours)
    unit, per, word = ("h", 3600.0, "hours") if end > 3 * 3600 else (("min", 60.0, "minutes") if end > 300
                                                                      else ("s", 1.0, "seconds"))
    ticks = _linear_ticks(end / per or 1, 8)  # pygal's own x labels ran together on a phone

    def draw(width: int) -> Markup:
        chart = _chart(pygal.XY, (RDS_COLOR, OURS_COLOR), width=width, xrange=(0, ticks[-1]), x_labels=ticks,
                       show_dots=len(rds) + len(ours) <= 60, x_title=f"{word} since the first sample",
                       y_title="% of the volume / of the planned blocks",
                       x_value_formatter=_tick_formatter(ticks, unit), value_formatter=lambda v: f"{v:,.0f} %",
                       y_labels=PCT_TICKS, range=(0, 100 * HEADROOM), include_x_axis=True)
        for name, points in ((RDS_SERIES, rds), (OURS_SERIES, ours)):
            # RDS's answers are few (one a minute at most): each one a dot, whatever the other series holds
            chart.add(name, [((at - start).total_seconds() / per, pct) for at, pct in points],
                      show_dots=(name == RDS_SERIES and len(rds) <= 60) or len(rds) + len(ours) <= 60)
        return _render(chart, 3 if width > WIDTH else 1)

    return Chart(CHART_ID, CAPTION, _twins(draw))


VOLUMES_CHART_ID = "chart-volumes-init"
VOLUMES_CAPTION = "RDS: initialized % of each storage volume (the primary and each additional volume)"
VOLUME_COLORS = ("#6a3d9a", "#1f78b4", "#e66101", "#33a02c")


def volumes_init_chart(section: StorageInitialization | None) -> Chart:
    """One line per storage volume of an instance with RDS additional storage volumes: the primary's
    "RDS: volume initialized %" and each additional volume's own (``storage_initialization.volumes``)."""
    section = section or StorageInitialization()
    series = [("primary", _points(section.rds_initialized_pct))]
    series += [(str(v.volume), _points(v.rds_initialized_pct)) for v in section.volumes]
    if len(series) < 2:
        return Chart(VOLUMES_CHART_ID, VOLUMES_CAPTION, why="the instance has no additional storage volume")
    points = [p for _, pts in series for p in pts]
    if not points:
        return Chart(VOLUMES_CHART_ID, VOLUMES_CAPTION,
                     why="RDS reported no initialization progress for any volume in this run")
    start = min(p[0] for p in points)
    end = max((p[0] - start).total_seconds() for p in points)
    unit, per, word = ("h", 3600.0, "hours") if end > 3 * 3600 else (("min", 60.0, "minutes") if end > 300
                                                                      else ("s", 1.0, "seconds"))
    ticks = _linear_ticks(end / per or 1, 8)  # pygal's own x labels ran together on a phone

    def draw(width: int) -> Markup:
        chart = _chart(pygal.XY, VOLUME_COLORS[:len(series)], width=width, xrange=(0, ticks[-1]), x_labels=ticks,
                       show_dots=len(points) <= 60, x_title=f"{word} since the first sample",
                       y_title="% of the volume initialized (RDS)",
                       x_value_formatter=_tick_formatter(ticks, unit), value_formatter=lambda v: f"{v:,.0f} %",
                       y_labels=PCT_TICKS, range=(0, 100 * HEADROOM), include_x_axis=True)
        for name, pts in series:
            chart.add(f"RDS: {name} initialized %", [((at - start).total_seconds() / per, pct) for at, pct in pts])
        return _render(chart, 3 if width > WIDTH else 1)

    return Chart(VOLUMES_CHART_ID, VOLUMES_CAPTION, _twins(draw))
