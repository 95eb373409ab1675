"""The yield controller's decisions in the findings and the report (issue 36 §1): the chart is drawn from
``warmup.concurrency.yielding`` and only when the run yielded."""

from __future__ import annotations

import copy
import re

from cutover_prep.dal.records.run import WarmupControl
from cutover_prep.report import render_report
from cutover_prep.report.chart_set import build_charts
from cutover_prep.warmup.concurrency import YieldSettings, yield_observe, yield_start
from cutover_prep.warmup.slots import concurrency_findings
from tests.unit.test_report import sample_findings


def yielded_findings() -> dict:
    """Findings whose control item holds the decisions of a recorded series, made by the controller itself."""
    settings = YieldSettings(maximum=8)
    state = yield_start(settings)
    for k, (per_s, ms) in enumerate([(0, None), (150, 20.0), (150, 18.0), (150, 19.0), (150, 45.0), (0, None)]):
        state = yield_observe(state, settings, t_s=2.0 * (k + 1), reads_per_s=per_s, ms_per_read=ms)
    doc = WarmupControl.read({"control": {"level": 8, "settled": "fixed"}, "adaptive": False, "maximum": 8,
                              "yielding": {"state": state.model_dump(mode="json"), "since": 1.5,
                                           "source": "pg_stat_database", "last": None}})
    f = sample_findings()
    f["warmup"] = {**(f.get("warmup") or {}), **concurrency_findings(doc)}
    return f


def test_the_findings_hold_every_decision_and_the_report_charts_them() -> None:
    f = yielded_findings()
    section = f["warmup"]["concurrency"]["yielding"]
    assert [s["decision"] for s in section["samples"]] == ["idle", "noticed", "probe", "increase", "decrease",
                                                            "idle"]
    assert [s["level"] for s in section["samples"]] == [8, 8, 1, 2, 1, 8]
    assert section["source"] == "pg_stat_database" and section["base_ms_per_read"] == 19.0
    html = render_report(f)
    figure = re.search(r'<figure class="chart" id="chart-yielding">(.*?)</figure>', html, re.S)
    assert figure, "no yielding chart"
    assert len(re.findall(r'class="dot reactive', figure.group(1))) == 6 + 4  # every cap, every timed window


def test_a_run_that_did_not_yield_has_no_chart_and_says_why() -> None:
    f = copy.deepcopy(sample_findings())
    chart = build_charts(f)["chart-yielding"]
    assert chart.svg is None and "no yield decision" in chart.why
    assert 'id="chart-yielding"' not in render_report(f)
