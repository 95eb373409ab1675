"""report.html read in one minute (issue 33 §5): what the first screen holds, the folds below it, and charts
whose axes say what they measure (a share never above 100 %, labels in ms that do not run together, a p99
that falls as sessions rise said in words). The page in a browser: tests/integration/test_report_browser.py."""

from __future__ import annotations

import re
from typing import Any

from cutover_prep.report import render_report
from cutover_prep.report.chart_set import build_charts
from cutover_prep.report.charts import falling_p99_note, latency_histogram_chart
from cutover_prep.report.first_screen import deciding_figures, next_steps
from cutover_prep.report.parts import ReportBenchmark, ReportStorageInitialization
from cutover_prep.report.reading import findings_of
from cutover_prep.report.storage_chart import storage_init_chart
from tests.unit.test_report import axis_labels, not_ready_findings, sample_findings


def _record(bench: dict[str, Any]) -> ReportBenchmark | None:
    """The benchmark section as the report reads it: through the findings record."""
    return findings_of({**sample_findings(), "benchmark": bench}).benchmark


def _wide_histogram(warm_share_pct: int = 98) -> ReportBenchmark | None:
    """13 power-of-two buckets, 16 µs to 65,536 µs; ``warm_share_pct`` of the 500 warm reads in one bucket."""
    bench = sample_findings()["benchmark"]
    bench["probes"]["cold"]["latency_hist_us"] = {str(2**e): n for e, n in zip(
        range(4, 17), (0, 2, 3, 5, 10, 20, 40, 60, 150, 160, 40, 8, 2), strict=True)}
    rest = 500 - 5 * warm_share_pct
    bench["probes"]["warm"]["latency_hist_us"] = {"16": rest, "32": 5 * warm_share_pct}
    return _record(bench)


def _y_top(svg: str) -> float:
    return max(float(t.rstrip(" %").replace(",", "")) for t in axis_labels(svg, "y"))


def test_a_share_axis_stops_at_100_percent() -> None:
    """98 % of the warm reads in one bucket drew a y-axis up to 120 % (98 × 1.05 rounded up to a 20 % step)."""
    svg = str(latency_histogram_chart(_wide_histogram(98)).svg)
    assert _y_top(svg) == 100
    assert axis_labels(svg, "y")[-1] == "100 %"
    assert _y_top(str(latency_histogram_chart(_wide_histogram(60)).svg)) < 100  # a lower share keeps its scale


def test_thirteen_buckets_are_labelled_every_second_one_in_ms() -> None:
    """13 labels "≤ 16,384 µs" rotated at 640 px ran together; now at most 7, numbers in ms, the unit on the axis."""
    svg = str(latency_histogram_chart(_wide_histogram()).svg)
    assert axis_labels(svg, "x") == ["0.016", "0.064", "0.26", "1", "4.1", "16", "66"]
    assert ">read latency, ms (bucket upper bound)<" in svg and "µs" not in svg
    assert len(re.findall(r'class="rect reactive', svg)) == 26  # every bucket still drawn, cold and warm


def test_a_p99_falling_as_sessions_rise_is_said_under_its_chart() -> None:
    bench = sample_findings()["benchmark"]
    assert falling_p99_note(_record(bench)) is None  # the sample's p99 rises with sessions: nothing to say
    randoms = [p for p in bench["points"] if p["kind"] == "random"]
    for p, p99 in zip(randoms, (9800.0, 6100.0, 3900.0, 1500.0), strict=True):
        p["latency_us"]["p99"] = p99
    note = falling_p99_note(_record(bench))
    assert note is not None
    assert note.startswith("The p99 fell as sessions rose (8 KiB reads: 9.8 ms at 1 session → 1.5 ms at 8).")
    assert "rests on 100 reads" in note and "not the lowest" in note
    chart = build_charts({"benchmark": bench})["chart-random-latency"]
    assert chart.note == note
    html = render_report({**sample_findings(), "benchmark": bench})
    assert f'<p class="chart-note">{note}</p>' in html.replace("&#39;", "'")


def test_a_small_dip_in_p99_is_not_called_falling() -> None:
    bench = sample_findings()["benchmark"]
    randoms = [p for p in bench["points"] if p["kind"] == "random"]
    for p, p99 in zip(randoms, (2000.0, 2100.0, 1900.0, 1700.0), strict=True):  # 1.7 is 85 % of 2.0
        p["latency_us"]["p99"] = p99
    assert falling_p99_note(_record(bench)) is None


def test_the_rds_storage_chart_has_a_drawing_for_a_phone() -> None:
    """Drawn 1,280 wide only, it was scaled to a phone's 400 px with its text at about 5 px."""
    section = {"rds_initialized_pct": [{"at": f"2026-11-22T20:{m:02d}:00+00:00", "pct": m * 4} for m in range(26)],
               "blocks_read_pct": [{"at": f"2026-11-22T20:{m:02d}:30+00:00", "pct": m * 9} for m in range(12)]}
    svg = str(storage_init_chart(ReportStorageInitialization.model_validate(section)).svg)
    wide, narrow = svg.split('<div class="narrow-only">')
    assert '<div class="wide-only">' in wide and 'viewBox="0 0 1280 ' in wide and 'viewBox="0 0 640 ' in narrow
    assert axis_labels(narrow, "x") == ["0 min", "5 min", "10 min", "15 min", "20 min", "25 min"]


def _figure(label: str) -> dict[str, str]:
    return {"label": label, "value": "1", "source": "s"}


def test_the_deciding_figures_come_first_and_four_at_most() -> None:
    labels = ["coverage", "warm-up rate, all readers", "warm-up time", "best random-read IOPS",
              "best read throughput", "median single-block read, cold → warm"]
    chosen = [f["label"] for f in deciding_figures([_figure(x) for x in labels])]
    assert chosen == ["coverage", "median single-block read, cold → warm", "warm-up time", "best random-read IOPS"]
    # a run without a benchmark: the others fill the places in their order
    chosen = [f["label"] for f in deciding_figures([_figure(x) for x in labels[:3]])]
    assert chosen == ["coverage", "warm-up time", "warm-up rate, all readers"]


def test_the_next_step_of_each_verdict() -> None:
    failing = [{"code": c, "ok": False, "message": f"m{c}"} for c in ("COVERAGE", "END_CENSUS", "SCRATCH_LEFT")]
    steps = next_steps({"name": "NOT_READY", "failing": failing, "passing": [], "not_judged": []}, "SUCCEEDED")
    assert steps["lead"] == "Fix these 3 and run again:" and steps["more"] == 1 and steps["more_codes"] == [
        "SCRATCH_LEFT"]
    assert [r["code"] for r in steps["reasons"]] == ["COVERAGE", "END_CENSUS"]
    ready = next_steps({"name": "READY", "failing": [], "not_judged": [{"code": "WARM_VS_COLD", "exception": None}],
                        "passing": [{"code": "COVERAGE", "exception": "passed under a threshold below 100 %"}]},
                       "SUCCEEDED")
    assert ready["lead"].startswith("Ready to cut over") and len(ready["notes"]) == 2
    assert "1 check could not be judged" in ready["notes"][0]
    assert ready["notes"][1] == "COVERAGE passed under a threshold below 100 %"
    none = next_steps({"name": "NO VERDICT", "failing": [], "passing": [], "not_judged": []}, "FAILED")
    assert none["lead"].startswith("No verdict: the run ended FAILED") and none["reasons"] == []


def test_everything_below_the_first_screen_folds_and_starts_closed() -> None:
    for findings in (sample_findings(), not_ready_findings()):
        html = render_report(findings)
        body = html[html.index("<body>"):]
        first = body[:body.index('<details class="fold"')]
        for part in ('id="verdict"', 'id="next-step"', 'id="deciding-figures"', 'id="chart-warmup"'):
            assert part in first, part
        assert "<table" not in first and first.count("<figure") == 1
        folds = re.findall(r'<details class="fold" id="fold-([\w-]+)"( open)?>', body)
        assert [name for name, _ in folds][:3] == ["checks", "figures", "instance"]
        assert all(not opened for _, opened in folds)
        # after the folds, only the footer
        last = body.rindex("</details>")
        assert re.fullmatch(r"\s*<footer>.*</footer>\s*</body>\s*</html>\s*", body[last + len("</details>"):], re.S)
