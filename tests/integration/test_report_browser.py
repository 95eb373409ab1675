"""report.html in a real browser (headless Debian chromium through playwright): the page opens from
file:// with no console error or warning and no script error, fetches nothing, draws every chart
it has data for (an SVG of non-zero size holding series, once its fold is opened), says "not measured:"
for the others and shows the verdict first; at a phone's 420 px and a desktop's 1,400 px the page does not
overflow sideways, no table scrolls sideways at all (a phone shows the wide ones as cards), the charts fit
their boxes with text still readable, and the first screen (900 px) holds the verdict, the figures that
decide it, the warm-up chart and what to do next, with every other part folded below it (issue 33 §5).

Chromium is found on PATH (chromium, chromium-browser, google-chrome), then at /usr/bin/chromium.
Skipped when playwright is not installed or no chromium is found (``make browser``).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> Path | None:
    """Chromium on PATH under any of its usual names, else Debian's /usr/bin/chromium."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return Path(found)
    fallback = Path("/usr/bin/chromium")
    return fallback if fallback.exists() else None


CHROMIUM = find_chromium()
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=f"no {', '.join(BROWSERS)} on PATH nor /usr/bin/chromium: "
                                "run `make browser` (apt-get install chromium)")

from cutover_prep.report import render_report  # noqa: E402
from tests.unit.test_report import CHART_IDS, not_ready_findings, sample_findings  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 900}
SERIES = "path.line.reactive, rect.rect.reactive, circle.dot"  # pygal's drawn values (not axes or guides)
MIN_DRAWN = 2
OPEN_ALL = "() => document.querySelectorAll('details').forEach(d => d.open = true)"
CLOSE_ALL = "() => document.querySelectorAll('details').forEach(d => d.open = false)"


def _no_benchmark() -> dict[str, Any]:
    f = sample_findings()
    f["benchmark"] = None
    return f


VARIANTS: dict[str, tuple[Callable[[], dict[str, Any]], int]] = {  # findings, charts drawn
    "ready": (sample_findings, len(CHART_IDS)),
    "not-ready": (not_ready_findings, 0),  # benchmark FAILED, no warm-up samples
    "no-benchmark": (_no_benchmark, 1),  # the warm-up chart only
}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Opened:
    variant: str
    page: Any
    console: list[str]
    errors: list[str]
    requests: list[str]


@pytest.fixture(scope="module", params=list(VARIANTS))
def opened(request: pytest.FixtureRequest, browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Opened]:
    build, _ = VARIANTS[request.param]
    path = tmp_path_factory.mktemp(request.param) / "report.html"
    path.write_text(render_report(build()), encoding="utf-8")
    context = browser.new_context(viewport=VIEWPORT, java_script_enabled=True)
    page = context.new_page()
    console: list[str] = []
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri(), wait_until="load")
    page.wait_for_load_state("networkidle")
    try:
        yield Opened(request.param, page, console, errors, requests)
    finally:
        context.close()


def test_no_console_error_warning_or_script_error(opened: Opened) -> None:
    assert opened.console == []
    assert opened.errors == []


def test_nothing_is_fetched_but_the_page_itself(opened: Opened) -> None:
    assert opened.requests, "the page request itself was not recorded"
    outside = [u for u in opened.requests if not u.startswith(("file://", "data:"))]
    assert outside == []


def test_charts_with_data_are_drawn(opened: Opened) -> None:
    opened.page.evaluate(OPEN_ALL)
    figures = opened.page.locator("figure.chart:not(.absent)")
    expected = VARIANTS[opened.variant][1]
    assert figures.count() == expected
    for i in range(figures.count()):
        fig = figures.nth(i)
        chart_id = fig.get_attribute("id")
        svgs = fig.locator("svg.pygal-chart:visible")  # the warm-up chart has a narrow twin for phones
        assert svgs.count() >= 1, chart_id
        for j in range(svgs.count()):
            svg = svgs.nth(j)
            box = svg.bounding_box()
            assert box and box["width"] > 100 and box["height"] > 100, (chart_id, box)
            drawn = svg.locator(SERIES)
            assert drawn.count() >= MIN_DRAWN, chart_id
            lines = svg.locator("path.line.reactive")
            for d in lines.evaluate_all("els => els.map(e => e.getAttribute('d') || '')"):
                assert len(d.strip()) > 2, (chart_id, d)
            sizes = drawn.evaluate_all("els => els.map(e => { const b = e.getBBox(); return b.width + b.height; })")
            assert any(s > 0 for s in sizes), (chart_id, "every series element has an empty box")


def test_absent_charts_say_why(opened: Opened) -> None:
    opened.page.evaluate(OPEN_ALL)
    absent = opened.page.locator("figure.chart.absent")
    assert absent.count() == len(CHART_IDS) - opened.page.locator("figure.chart:not(.absent)").count()
    for i in range(absent.count()):
        fig = absent.nth(i)
        assert fig.locator("svg").count() == 0
        why = fig.locator("p.why")
        assert why.is_visible() and why.inner_text().startswith("not measured:"), fig.get_attribute("id")


def test_verdict_is_visible_and_first(opened: Opened) -> None:
    header = opened.page.locator("header#verdict")
    assert header.is_visible()
    assert opened.page.evaluate("document.body.firstElementChild.id") == "verdict"
    top = header.bounding_box()["y"]
    assert top < 200
    for box in opened.page.locator("figure.chart").evaluate_all(
            "els => els.map(e => e.getBoundingClientRect().top + window.scrollY)"):
        assert top < box


def test_no_horizontal_overflow(opened: Opened) -> None:
    assert opened.page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]


TOPS = """svg => {
  const mid = e => { const r = e.getBoundingClientRect(); return r.top + r.height / 2; };
  const labels = [...svg.querySelectorAll('.axis.y .guides text')].map(mid);
  const values = [...svg.querySelectorAll('circle.dot')].map(mid)
    .concat([...svg.querySelectorAll('rect.rect.reactive')].map(e => e.getBoundingClientRect().top));
  return [Math.min(...labels), Math.min(...values)];
}"""


def test_the_y_axis_is_labelled_above_the_highest_value(opened: Opened) -> None:
    """pygal drops a label on the plot's top edge: without headroom the top of a log axis had no number."""
    opened.page.evaluate(OPEN_ALL)
    for svg in opened.page.locator("figure.chart svg.pygal-chart").all():
        top_label, top_value = svg.evaluate(TOPS)
        assert top_label <= top_value + 1, (svg.evaluate("s => s.closest('figure').id"), top_label, top_value)


def test_series_lines_are_drawn_at_their_width(opened: Opened) -> None:
    """pygal's `.reactive{stroke-width:1}` would otherwise thin every line and limit to 1 px."""
    widths = opened.page.locator("figure.chart svg .series path.line.reactive").evaluate_all(
        "els => els.map(e => parseFloat(getComputedStyle(e).strokeWidth))")
    assert all(w >= 2 for w in widths), widths


# ---- every screen: a phone's 420 px and a desktop's 1,400 px ------------------------------------------

WIDTHS = (420, 1400)
SCREEN_HEIGHT = 900
MIN_TEXT_PX = 9  # a chart's smallest label as drawn on the screen
LAYOUT = """() => {
  const W = document.documentElement.clientWidth;
  const out = {page: document.documentElement.scrollWidth, tables: [], charts: [], text: []};
  for (const t of document.querySelectorAll('table')) {
    const box = t.closest('.scroll');
    const r = (box || t).getBoundingClientRect();
    const name = t.id || t.className;
    if (!box && t.getBoundingClientRect().right > W + 0.5) out.tables.push(`${name}: not in a scroll box`);
    if (r.right > W + 0.5 || r.left < -0.5) out.tables.push(`${name}: box ${r.left}-${r.right}`);
  }
  for (const f of document.querySelectorAll('figure.chart')) {
    const r = f.getBoundingClientRect();
    if (r.right > W + 0.5) out.charts.push(`${f.id}: figure right ${r.right}`);
    if (f.scrollWidth > f.clientWidth + 1) out.charts.push(`${f.id}: ${f.scrollWidth} px wide in ${f.clientWidth}`);
    for (const svg of f.querySelectorAll('svg.pygal-chart')) {
      const s = svg.getBoundingClientRect();
      if (!s.width) continue;  // the twin for the other screen size
      if (s.right > r.right + 0.5) out.charts.push(`${f.id}: svg right ${s.right} > ${r.right}`);
      const scale = s.width / svg.viewBox.baseVal.width;
      const sizes = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim())
        .map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
      out.text.push([f.id, Math.min(...sizes)]);
    }
  }
  return out;
}"""


# report.html only (the comparison page shares LAYOUT, whose wide tables still scroll in their box): no table
# scrolls sideways at all; a phone shows the wide ones as cards
SCROLLING_TABLES = """() => [...document.querySelectorAll('.scroll')]
  .filter(box => box.scrollWidth > box.clientWidth + 1)
  .map(box => `${(box.querySelector('table') || box).id}: ${box.scrollWidth} px in ${box.clientWidth}`)"""


def _engineer() -> dict[str, Any]:
    from tests.unit.test_report_engineer import engineer_findings

    f = sample_findings()
    built = engineer_findings()
    for key in ("segments", "coverage", "priority", "unread_units", "time_to_warm", "units", "failed_units"):
        f[key] = built[key]
    f["benchmark"]["points"][0]["point_id"] = "seq-pg-read-binary-file-with-a-long-id"
    f["benchmark"]["points"][0].update(notes=["the target (117.0 MiB) was read 106 times"], passes=106, cached=True)
    return f


def _rds_storage() -> dict[str, Any]:
    """A run whose charts are the hard ones to lay out: RDS's initialization over half an hour (a chart 1,280 wide
    that drew 5 px text on a phone), a histogram over 13 buckets with 98 % of the warm reads in one (labels that
    ran together, a share axis up to 120 %), and a p99 that falls as sessions rise."""
    f = sample_findings()
    probes = f["benchmark"]["probes"]
    probes["cold"]["latency_hist_us"] = {str(2**e): n for e, n in zip(range(4, 17), (0, 2, 3, 5, 10, 20, 40, 60, 150,
                                                                                   160, 40, 8, 2), strict=True)}
    probes["warm"]["latency_hist_us"] = {"16": 3, "32": 490, "64": 4, "128": 2, "256": 1}
    randoms = [p for p in f["benchmark"]["points"] if p["kind"] == "random"]
    for p, p99 in zip(randoms, (9800.0, 6100.0, 3900.0, 1500.0), strict=True):
        p["latency_us"]["p99"] = p99
    f["storage_initialization"] = {
        "reported": True,
        "rds_initialized_pct": [{"at": f"2026-11-22T20:{m:02d}:00+00:00", "pct": min(100, m * 4)} for m in range(30)],
        "blocks_read_pct": [{"at": f"2026-11-22T20:{m:02d}:30+00:00", "pct": min(100, m * 9)} for m in range(14)]}
    return f


def _many_reasons() -> dict[str, Any]:
    """NOT_READY for five reasons, one of them a long census message as a real MariaDB run printed it."""
    f = not_ready_findings()
    long = ("69 objects on the volume not read: 20.03 MiB (limit verdict.max_unread_bytes 0): (innodb).innodb_system"
            "#system_tablespace 12.00 MiB (not readable by SQL), app.string_pk#free space 4.00 MiB (not readable by "
            "SQL), mysql.help_topic#table 2.38 MiB (not in the plan) and 66 more; read them, or exclude them by "
            "warmup.databases / include_schemas / exclude_schemas (a waiver), or raise the limit")
    f["verdict"]["reasons"][:0] = [
        {"code": "UNREAD_OBJECTS", "ok": False, "message": long},
        {"code": "COVERAGE", "ok": False, "message": "warm-up coverage 93.9 % (threshold 100 %)"},
        {"code": "END_CENSUS", "ok": False, "message": "the end census did not run"}]
    return f


SCREENS = {"ready": sample_findings, "not-ready": not_ready_findings, "engineer": _engineer,
           "rds-storage": _rds_storage, "many-reasons": _many_reasons}


@pytest.fixture(scope="module", params=[(v, w) for v in SCREENS for w in WIDTHS], ids=lambda p: f"{p[0]}-{p[1]}px")
def screen(request: pytest.FixtureRequest, browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    variant, width = request.param
    path = tmp_path_factory.mktemp(f"{variant}-{width}") / "report.html"
    path.write_text(render_report(SCREENS[variant]()), encoding="utf-8")
    context = browser.new_context(viewport={"width": width, "height": SCREEN_HEIGHT})
    page = context.new_page()
    page.goto(path.as_uri(), wait_until="load")
    try:
        yield page
    finally:
        context.close()


def test_no_sideways_overflow_of_page_tables_or_charts(screen: Any) -> None:
    screen.evaluate(OPEN_ALL)
    layout = screen.evaluate(LAYOUT)
    width = screen.viewport_size["width"]
    assert layout["page"] <= width, f"the page is {layout['page']} px wide at {width} px"
    assert layout["tables"] == []
    assert layout["charts"] == []
    assert screen.evaluate(SCROLLING_TABLES) == []


def test_chart_text_stays_readable(screen: Any) -> None:
    screen.evaluate(OPEN_ALL)
    small = [(chart, round(px, 1)) for chart, px in screen.evaluate(LAYOUT)["text"] if px < MIN_TEXT_PX]
    assert small == []


def test_verdict_is_on_the_first_screen(screen: Any) -> None:
    box = screen.locator("header#verdict").bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= SCREEN_HEIGHT



FIRST_SCREEN = """() => {
  window.scrollTo(0, 0);
  const box = s => { const e = document.querySelector(s); if (!e) return null;
                     const r = e.getBoundingClientRect(); return [r.top, r.bottom, r.width]; };
  const visible = e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  return {verdict: box('header#verdict'), next: box('#next-step'), figures: box('#deciding-figures'),
          chart: box('#chart-warmup'),
          figure_count: [...document.querySelectorAll('#deciding-figures > div')].filter(visible).length,
          figures_recorded: document.querySelectorAll('#figures .figures > div').length,
          fixes: [...document.querySelectorAll('#next-step ol.fixes li')].map(li => {
            const fix = li.querySelector('.fix').getBoundingClientRect();
            return [li.querySelector('code').textContent, fix.top, fix.bottom]; }),
          unfolded: [...document.querySelectorAll('body > section, body > div > section, table, figure.chart')]
            .filter(e => !e.closest('details') && !e.closest('#first-screen')).map(e => e.id || e.tagName),
          height: document.documentElement.scrollHeight};
}"""


def test_first_screen_holds_the_verdict_the_deciding_figures_the_warm_up_chart_and_the_next_step(screen: Any) -> None:
    """Issue 33 §5: before any scrolling, at 420 and 1,400 px. Measured by the browser with every fold closed (as
    the page opens); each failing reason shown (at most two) has its fix within the screen too."""
    screen.evaluate(CLOSE_ALL)
    first = screen.evaluate(FIRST_SCREEN)
    for part in ("verdict", "next", "figures", "chart"):
        assert first[part] is not None, f"no {part} on the page"
        top, bottom, width = first[part]
        assert width > 0 and top >= 0 and bottom <= SCREEN_HEIGHT, (part, top, bottom)
    assert first["figure_count"] == min(4, first["figures_recorded"]) and first["figure_count"] >= 3
    for code, top, bottom in first["fixes"]:
        assert 0 <= top and bottom <= SCREEN_HEIGHT, (code, top, bottom)


def test_every_other_part_of_the_page_folds_below_the_first_screen(screen: Any) -> None:
    screen.evaluate(CLOSE_ALL)
    first = screen.evaluate(FIRST_SCREEN)
    assert first["unfolded"] == []
    assert first["height"] <= 2 * SCREEN_HEIGHT, "the folded page is more than two screens tall"


def test_not_ready_names_each_failing_reason_with_its_fix_on_the_first_screen(screen: Any) -> None:
    """The fixes are those of cutover_prep.models.verdict_reasons (the one table); beyond two, the rest are counted."""
    from cutover_prep.models.verdict_reasons import what_to_do

    screen.evaluate(CLOSE_ALL)
    failing = [li.inner_text() for li in screen.locator("#next-step ol.fixes li").all()]
    codes = [c.inner_text() for c in screen.locator("#next-step ol.fixes li code").all()]
    if screen.locator("header#verdict.ready").count():
        assert failing == [] and "every check passed" in screen.locator("#next-step").inner_text()
        return
    assert codes and len(codes) <= 2
    for code, text in zip(codes, failing, strict=True):
        assert " ".join(what_to_do(code).split()) in " ".join(text.split()), code
    more = screen.locator("#next-step p.more")
    assert (more.count() == 1) == (screen.locator("ul.reasons.failing li").count() > 2)


def test_printing_prints_every_fold(browser: Any, tmp_path: Path) -> None:
    """Paper has no folds: the READY sample's A4 PDF was one page (the first screen) with the folds closed."""
    path = tmp_path / "report.html"
    path.write_text(render_report(sample_findings()), encoding="utf-8")
    page = browser.new_page()
    try:
        page.goto(path.as_uri(), wait_until="load")
        page.evaluate(CLOSE_ALL)
        pdf = page.pdf(format="A4")
    finally:
        page.close()
    assert len(re.findall(rb"/Type\s*/Page[^s]", pdf)) >= 5
