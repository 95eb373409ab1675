"""Every chart of the report, by id: the builders of ``charts.py`` and of ``storage_chart.py`` (which builds on
``charts.py``'s helpers), each turned into a ``Chart`` with a ``why`` should it fail unexpectedly (pure). The
builders are looked up in their modules at call time."""

from __future__ import annotations

from collections.abc import Callable

from cutover_prep.report import charts, storage_chart, yield_chart
from cutover_prep.report.charts import Chart
from cutover_prep.report.reading import Readable, findings_of


def build_charts(findings: Readable) -> dict[str, Chart]:
    """Every chart of the report by id; a builder's unexpected error becomes the chart's ``why``."""
    findings = findings_of(findings)
    bench = findings.benchmark
    limits = bench.limits if bench else None
    builders: list[tuple[str, str, Callable[[], Chart]]] = [
        ("chart-warmup", "Warm-up progress: MiB/s over time",
         lambda: charts.warmup_chart(findings.warmup_timeline)),
        ("chart-throughput", "Throughput (MiB/s) per IO size", lambda: charts.throughput_chart(bench, limits)),
        ("chart-iops", "IOPS per IO size", lambda: charts.iops_chart(bench, limits)),
        ("chart-random-iops", "Random reads: IOPS by sessions", lambda: charts.random_iops_chart(bench)),
        ("chart-random-latency", "Random reads: p99 latency (ms) by sessions",
         lambda: charts.random_latency_chart(bench)),
        ("chart-latency-hist", "Single-block read latency: cold vs warm probe",
         lambda: charts.latency_histogram_chart(bench)),
        ("chart-cold-warm", "Cold vs warm probe", lambda: charts.cold_warm_charts(bench)),
        ("chart-storage-init", "RDS: volume initialized % against Cutover Prep: database blocks read %",
         lambda: storage_chart.storage_init_chart(findings.storage_initialization)),
        (yield_chart.CHART_ID, yield_chart.CAPTION, lambda: yield_chart.yield_chart(findings)),
    ]

    built = {}
    for chart_id, caption, build in builders:
        try:
            built[chart_id] = build()
        except Exception as exc:  # a chart must never take the report down
            built[chart_id] = Chart(chart_id, caption, why=f"chart not drawn ({type(exc).__name__}: {exc})")
    return built
