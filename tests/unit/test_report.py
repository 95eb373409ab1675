"""report.html (pure): verdict first, escaped names, no external resource, a chart per figure, and
every missing section said instead of drawn. The findings are modelled on a local demo run's
findings.json (PostgreSQL 16, pg_read_binary_file), completed with an RDS instance, its gp2 limits,
an IO-size sweep and a warm-up timeline."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from markupsafe import escape

from cutover_prep.models.verdict_reasons import what_to_do
from cutover_prep.report import html as report
from cutover_prep.report import render_report
from cutover_prep.report.chart_set import build_charts
from cutover_prep.report.charts import bucket_label

HOSTILE = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
CHART_IDS = ("chart-warmup", "chart-throughput", "chart-iops", "chart-random-iops", "chart-random-latency",
             "chart-latency-hist", "chart-cold-warm")
BENCH_CHART_IDS = CHART_IDS[1:]
MIB = 2**20


def point(pid: str, kind: str, sessions: int, kb: float, iops: float, *, p50: float | None = None,
          p99: float | None = None, bound: str | None = None, cw_iops: float | None = None) -> dict[str, Any]:
    status = "complete" if cw_iops else "missing"
    p: dict[str, Any] = {"point_id": pid, "status": "DONE", "kind": kind, "sessions": sessions, "io_size_kb": kb,
                         "effective_io_kb": kb, "iops": iops, "throughput_kbps": round(iops * kb, 2),
                         "source": "engine", "bound": bound,
                         "cloudwatch": {"ReadIOPS": {"mean": cw_iops, "max": cw_iops, "status": status},
                                        "ReadThroughput": {"mean": cw_iops * kb * 1024 if cw_iops else None,
                                                           "max": None, "status": status}}}
    if p50 is not None:
        p["latency_us"] = {"p50": p50, "p90": p99 * 0.7, "p95": p99 * 0.8, "p99": p99, "mean": p50 * 1.1,
                           "max": p99 * 3}
        p["latency_hist_us"] = {"512": 10, "1024": 80, "2048": 10}
    return p


def probe(iops: float, p50: float, p99: float, hist: dict[str, int]) -> dict[str, Any]:
    return {"status": "DONE", "blocks_read": 500, "iops": iops, "throughput_kbps": iops * 8,
            "latency_us": {"p50": p50, "p90": p99 * 0.65, "p95": p99 * 0.7, "p99": p99, "mean": p50 * 1.15,
                           "max": p99 * 3}, "latency_hist_us": hist, "cut_short": False}


LEVEL = {"peak": {"iops": 3000, "iops_label": "the gp2 burst limit of 3,000 IOPS", "throughput_kbps": 131072.0,
                  "throughput_label": "the gp2 burst throughput of 128 MB/s (100 GiB)", "crossover_kb": 43.7},
         "sustained": {"iops": 300, "iops_label": "the gp2 baseline of 300 IOPS (3 IOPS/GiB x 100 GiB)",
                       "throughput_kbps": 76800.0, "throughput_label": "the gp2 throughput of 75 MB/s",
                       "crossover_kb": 256.0}}


def sample_findings() -> dict[str, Any]:
    """A READY run: every section present (numbers from the demo run, the sweep shaped like seed 000's gp2)."""
    seq = [point(f"seq-{kb:04d}k", "sequential", 1, kb, iops, bound=b, cw_iops=iops)
           for kb, iops, b in ((8, 2990, "iops"), (16, 2985, "iops"), (32, 2950, "iops"), (64, 2040, "throughput"),
                               (128, 1020, "throughput"), (256, 510, "throughput"), (1024, 127, "throughput"))]
    rnd = [point(f"random-{s:02d}s", "random", s, 8, iops, p50=p50, p99=p99)
           for s, iops, p50, p99 in ((1, 1269.91, 735.1, 1405.9), (2, 1370.86, 1339.5, 3814.6),
                                     (4, 1852.63, 1708.8, 6190.0), (8, 2936.1, 2266.0, 8930.9))]
    return {
        "schema_version": 1, "run_id": "local-20261122T205738", "status": "SUCCEEDED",
        "target": {"db_instance_identifier": "restored-db", "engine": "postgres", "database": "cutover_demo"},
        "instance": {"engine": "postgres", "engine_version": "16.2", "db_instance_class": "db.m5.large",
                     "storage_type": "gp2", "allocated_storage_gb": 100, "iops": None, "storage_throughput": None},
        "engine": "postgres", "read_methods": ["pg_read_binary_file"],
        "timings": {"started_at": "2026-11-22T20:57:41.679761+00:00",
                    "warmup_started_at": "2026-11-22T20:57:44.208537+00:00",
                    "warmup_finished_at": "2026-11-22T20:57:46.784806+00:00",
                    "finished_at": "2026-11-22T20:58:15.157880+00:00", "warmup_wall_seconds": 2.576269,
                    "unit_busy_seconds": 0.617},
        "units": {"total": 33, "done": 33, "failed": 0, "in_progress": 0, "not_started": 0},
        "bytes": {"planned": 336576512, "read": 336576512, "covered": 336576512},
        "coverage_pct": 100.0, "read_amplification": 1.0,
        "read_rate": {"mib_per_s_wall": 124.593, "mib_per_s_per_worker": 520.234},
        "failed_units": [],
        "warmup_timeline": {"bucket_seconds": 0.25, "started_at": "2026-11-22T20:57:44.208537+00:00",
                            "series": [{"t_s": i * 0.25, "mib_per_s": v} for i, v in
                                       enumerate((40.0, 96.5, 131.2, 140.8, 138.0, 135.4, 142.9, 120.3, 88.1, 30.2))]},
        "benchmark": {
            "status": "DONE",
            "probes": {"cold": probe(1135.69, 756.3, 1894.1, {"256": 1, "512": 8, "1024": 385, "2048": 101,
                                                              "4096": 4, "16384": 1}),
                       "warm": probe(1414.4, 690.8, 1371.8, {"256": 2, "512": 177, "1024": 280, "2048": 37,
                                                             "4096": 2, "8192": 2})},
            "points": seq + rnd,
            "capabilities": {"server_version": "16.2", "read_method": "pg_read_binary_file",
                             "notes": ["track_io_timing is off: pg_stat_io has no read times"]},
            "crossover_kb": 64.0,
            "limits": {"instance_class": "db.m5.large", "storage_type": "gp2", "allocated_gb": 100,
                       "instance": {"instance_class": "db.m5.large", "burstable": True, "baseline_mbps": 650,
                                    "max_iops": 18750, "notes": ["db.m5.large holds its maximum 30 minutes a day"]},
                       "storage": {"baseline_iops": 300, "burst_iops": 3000, "burst_throughput_mib_s": 128,
                                   "sources": [{"title": "Amazon RDS DB instance storage",
                                                "url": "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/"
                                                       "CHAP_Storage.html"}]},
                       "effective": {**LEVEL["peak"], **LEVEL, "has_burst": True},
                       "notes": ["gp2 volumes below 1,000 GiB burst to 3,000 IOPS"]},
            "measured": {"max_iops": 2990, "max_throughput_kbps": 130560.0},
            "cold_warm": {"cold_latency_us": {"p50": 756.3}, "warm_latency_us": {"p50": 690.8}, "ratio": 1.25},
            "conclusions": ["Single-block reads reach 2,936 IOPS with 8 sessions (p99 8,931 us).",
                            "The first read of a restored block was 1.2x slower than a warm read."],
            "notes": ["track_io_timing is off: pg_stat_io has no read times"],
            "metrics": {"complete": True, "missing": []}, "failed_points": []},
        "segments": [{"key": "cutover_demo/docs.documents#table.main", "kind": "table.main", "bytes": 1540096,
                      "status": "READ", "units": ["u000001"]}],
        "verdict": {"verdict": "READY",
                    "reasons": [{"code": "COVERAGE", "ok": True, "message": "warm-up coverage 100 % (threshold 100 %)"},
                                {"code": "BENCHMARK", "ok": True, "message": "benchmark complete"}],
                    "thresholds": {"min_coverage_pct": 100.0, "max_warm_p99_ms": None}},
    }


def not_ready_findings() -> dict[str, Any]:
    """A NOT_READY run: two failed units, a segment not read, a FAILED benchmark, no timeline samples."""
    f = sample_findings()
    f.update(status="INCOMPLETE", coverage_pct=93.9, warmup_timeline={"bucket_seconds": None, "series": []},
             units={"total": 33, "done": 31, "failed": 2, "in_progress": 0, "not_started": 0},
             failed_units=[{"unit_id": "u000007", "error": "QueryCanceled",
                            "cause": "canceling statement due to statement timeout"},
                           {"unit_id": "u000009", "error": "OperationalError",
                            "cause": "server closed the connection"}])
    f["segments"].append({"key": "cutover_demo/docs.documents(toast)#toast.main", "kind": "toast.main",
                          "bytes": 122716160, "status": "NOT_READ", "units": ["u000007", "u000009"]})
    f["benchmark"] = {"status": "FAILED", "points": [], "probes": {},
                      "error": {"error": "SweepError", "cause": "pg_read_binary_file: permission denied"}}
    f["verdict"] = {"verdict": "NOT_READY", "reasons": [
        {"code": "UNITS_FAILED", "ok": False, "message": "2 of 33 work units failed"},
        {"code": "BENCHMARK", "ok": False, "message": "benchmark FAILED: SweepError: permission denied"},
        {"code": "UNITS_NOT_FINISHED", "ok": True, "message": "no work unit left unfinished"}]}
    return f


def figure(html: str, chart_id: str) -> str:
    match = re.search(rf'<figure class="chart[^"]*" id="{chart_id}">(.*?)</figure>', html, re.S)
    assert match, f"no figure {chart_id}"
    return match.group(1)


def axis_labels(svg: str, axis: str) -> list[str]:
    """The texts pygal drew on one axis ("x" or "y"), in order."""
    part = svg.split(f'<g class="axis {axis}')[1]
    part = re.split(r'<g class="(?:axis |series|plot overlay|titles)', part)[0]
    return re.findall(r"<text[^>]*>([^<]+)</text>", part)


def drawn(svg: str) -> int:
    """pygal's data marks: dots, bars and series lines."""
    return len(re.findall(r'class="(?:dot|rect|line) reactive', svg))


def section(html: str, name: str, tag: str = "section") -> str:
    match = re.search(rf'<{tag} id="{name}">(.*?)</section>', html, re.S)
    assert match, f"no section {name}"
    return match.group(1)


@pytest.fixture(scope="module")
def ready_html() -> str:
    return render_report(sample_findings())


@pytest.fixture(scope="module")
def not_ready_html() -> str:
    return render_report(not_ready_findings())


# ---- top of the page -------------------------------------------------------------------------

def test_verdict_comes_first_with_target_run_and_finish_time(ready_html: str) -> None:
    header = re.search(r'<header class="verdict ready" id="verdict">(.*?)</header>', ready_html, re.S)
    assert header, "READY is the green header"
    assert '<h1 class="name">READY</h1>' in header.group(1)
    for text in ("restored-db", "postgres", "local-20261122T205738", "2026-11-22 20:58:15 UTC"):
        assert text in header.group(1)
    # the first screen (issue 33 §5): the verdict, what to do next, the deciding figures, the warm-up chart; then
    # the checks and everything else, folded
    order = [ready_html.index(s) for s in ('id="verdict"', 'id="next-step"', 'id="deciding-figures"',
                                           'id="chart-warmup"', '<details class="fold" id="fold-checks">',
                                           "Checks passed", 'id="chart-throughput"')]
    assert order == sorted(order)
    assert "Ready to cut over: every check passed." in section(ready_html, "next-step", 'section class="next ready"')
    assert "Why not ready" not in ready_html
    assert "<title>Cutover Prep: READY — restored-db (local-20261122T205738)</title>" in ready_html


def test_failing_reasons_come_before_passed_checks_and_charts(not_ready_html: str) -> None:
    assert '<header class="verdict not-ready" id="verdict">' in not_ready_html
    order = [not_ready_html.index(s) for s in ('<h1 class="name">NOT_READY</h1>', 'id="next-step"',
                                               "2 of 33 work units failed", "benchmark FAILED: SweepError",
                                               'id="chart-warmup"', "Why not ready", "Checks passed",
                                               "no work unit left unfinished", 'id="chart-throughput"')]
    assert order == sorted(order)
    failing = re.search(r'<ul class="reasons failing">(.*?)</ul>', not_ready_html, re.S).group(1)
    assert failing.count("<li>") == 2 and "UNITS_FAILED" in failing and "no work unit left" not in failing
    # each failing reason with its fix, from the one table of fixes: on the first screen and in the checks
    nxt = section(not_ready_html, "next-step", 'section class="next not-ready"')
    assert "Fix these 2 and run again:" in nxt
    for code in ("UNITS_FAILED", "BENCHMARK"):
        fix = str(escape(what_to_do(code)))
        assert f"<code>{code}</code>" in nxt and fix in nxt and fix in failing, code


def test_thresholds_are_listed_without_the_unset_ones(ready_html: str) -> None:
    assert "min coverage (%) 100" in ready_html
    assert "max warm p99 ms" not in ready_html


# ---- safety ----------------------------------------------------------------------------------

def test_hostile_names_are_escaped_everywhere() -> None:
    f = sample_findings()
    f["target"]["db_instance_identifier"] = HOSTILE
    f["run_id"] = HOSTILE
    f["verdict"]["reasons"].insert(0, {"code": HOSTILE, "ok": False, "message": f"segment {HOSTILE} & \"x\" 'y'"})
    f["benchmark"]["points"][0]["point_id"] = HOSTILE
    f["benchmark"]["points"][0]["kind"] = HOSTILE  # becomes a chart series name (pygal legend)
    f["benchmark"]["conclusions"].append(HOSTILE)
    f["failed_units"] = [{"unit_id": HOSTILE, "error": HOSTILE, "cause": HOSTILE}]
    f["segments"].append({"key": HOSTILE, "kind": "table.main", "bytes": 8192, "status": "NOT_READ", "units": []})
    html = render_report(f)
    assert "<script" not in html.lower()
    assert html.count(ESCAPED) >= 9
    assert "segment &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;x&#34; &#39;y&#39;" in html
    assert ESCAPED in figure(html, "chart-throughput")  # pygal escaped the series name itself


def test_no_external_resource_and_no_script(ready_html: str, not_ready_html: str) -> None:
    for html in (ready_html, not_ready_html):
        assert not re.search(r"""(?:src|href|action|poster|srcset)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
        assert not re.search(r"<script|<link|<iframe|<img|<object|<embed|@import|url\(", html, re.I)
        assert "window.pygal" not in html and "kozea" not in html.lower()
        # the only URLs: the SVG namespace and the limits' sources, written as text
        assert set(re.findall(r"https?://[^\s\"'<;]+", html)) <= {
            "http://www.w3.org/2000/svg", "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html"}


# ---- charts ------------------------------------------------------------------------------------

def test_every_chart_is_drawn_from_data(ready_html: str) -> None:
    for chart_id in CHART_IDS:
        body = figure(ready_html, chart_id)
        assert "<figcaption>" in body and "<svg" in body and "not measured" not in body, chart_id
        assert drawn(body) > 0, chart_id
    assert ready_html.index('id="chart-warmup"') < ready_html.index('id="chart-throughput"')


def test_io_size_charts_have_one_series_per_kind_and_the_limits() -> None:
    charts = build_charts(sample_findings())
    throughput = str(charts["chart-throughput"].svg)
    assert ">sequential<" in throughput and ">random<" in throughput
    assert ">peak limit 128<" in throughput and ">sustained limit 75<" in throughput
    assert ">8 KiB<" in throughput and ">1,024 KiB<" in throughput
    iops = str(charts["chart-iops"].svg)
    assert ">peak limit 3,000<" in iops and ">sustained limit 300<" in iops
    assert len(re.findall(r'class="dot reactive', throughput)) == 11  # 7 sequential + 4 random points


def test_latency_histogram_labels_power_of_two_ranges_and_fills_gaps() -> None:
    """Buckets in ms (issue 33 §5: "units in ms"), two significant figures: 256 µs is 0.26 ms, 4,096 µs 4.1 ms."""
    assert bucket_label(512) == "0.51" and bucket_label(16384.0) == "16" and bucket_label(1024) == "1"
    assert bucket_label(16) == "0.016" and bucket_label(65536) == "66"
    svg = str(build_charts(sample_findings())["chart-latency-hist"].svg)
    assert axis_labels(svg, "x") == ["0.26", "0.51", "1", "2", "4.1", "8.2", "16"]  # 256 .. 16384 µs, 8192 only in warm
    assert ">read latency, ms (bucket upper bound)<" in svg
    assert ">cold (500 reads)<" in svg and ">warm (500 reads)<" in svg
    assert len(re.findall(r'class="rect reactive', svg)) == 14


def test_cold_warm_chart_and_table(ready_html: str) -> None:
    body = figure(ready_html, "chart-cold-warm")
    assert body.count("<svg") == 2 and ">p50<" in body and ">p99<" in body and ">reads/s<" in body
    table = re.search(r'<table id="probes">(.*?)</table>', ready_html, re.S).group(1)
    # one cold/warm figure (issue 33 §4): the median latency's cold / warm (756.3 / 690.8 µs = 1.09×, the verdict's
    # definition), on that row only; reads per second has none of its own (1,414 / 1,136 = 1.25× would be a second)
    assert re.search(r"reads per second</th><td class=\"n\">1,136</td><td class=\"n\">1,414</td>"
                     r"\s*<td class=\"n\"></td>", table)
    assert re.search(r"latency p50</th><td class=\"n\">0.76 ms</td><td class=\"n\">0.69 ms</td>"
                     r"\s*<td class=\"n\">1.09×</td>", table)
    assert "1.25×" not in table
    assert re.search(r"latency p99</th><td class=\"n\">1.89 ms</td><td class=\"n\">1.37 ms</td>", table)


# ---- tables --------------------------------------------------------------------------------

def test_points_table_has_rates_latency_bound_and_cloudwatch(ready_html: str) -> None:
    table = re.search(r'<table id="points">(.*?)</table>', ready_html, re.S).group(1)
    row = re.search(r"<tr class=\"\"><td>random-08s</td>(.*?)</tr>", table, re.S).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells == ["random", "8", "2,936", "22.9", "8", "2.27", "8.93", "—", "engine", "missing", "missing", "DONE"]
    row = re.search(r"<td>seq-0064k</td>(.*?)</tr>", table, re.S).group(1)
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
    assert cells[2:5] == ["2,040", "128", "64"] and cells[7] == "throughput" and cells[9:11] == ["2,040", "128"]


def test_failed_points_show_their_cause() -> None:
    f = sample_findings()
    f["benchmark"]["status"] = "PARTIAL"
    f["benchmark"]["points"].append({"point_id": "seq-2048k", "status": "FAILED", "kind": "sequential",
                                     "error": "QueryCanceled", "cause": "statement timeout"})
    f["benchmark"]["failed_points"] = [{"point_id": "write-01s", "error": "InsufficientPrivilege",
                                        "cause": "permission denied for table t"}]
    html = render_report(f)
    assert '<span class="badge PARTIAL">PARTIAL</span>' in html
    assert re.search(r'<tr class="failed"><td>seq-2048k</td>.*?<td>FAILED</td></tr>\s*'
                     r'<tr class="detail failed"><td colspan="13" class="wrap">QueryCanceled: statement timeout', html,
                     re.S)
    assert "InsufficientPrivilege: permission denied for table t" in html
    assert "Sweep points (11 of 13 done)" in html


def test_instance_limits_and_crossover(ready_html: str) -> None:
    part = section(ready_html, "instance")
    for text in ("db.m5.large", "gp2", "100 GiB", "postgres 16.2", "the gp2 burst limit of 3,000 IOPS",
                 "the gp2 baseline of 300 IOPS (3 IOPS/GiB x 100 GiB)", "baseline (Mbps)", "burst throughput (MiB/s)",
                 "db.m5.large holds its maximum 30 minutes a day", "Amazon RDS DB instance storage"):
        assert text in part, text
    effective = re.search(r'<table id="limits-effective">(.*?)</table>', part, re.S).group(1)
    assert re.search(r"<td>peak</td><td class=\"n\">3,000</td>.*?<td class=\"n\">128</td>.*?43.7 KiB", effective, re.S)
    assert re.search(r"<td>sustained</td><td class=\"n\">300</td>.*?<td class=\"n\">75</td>.*?256 KiB", effective,
                     re.S)
    assert re.search(r"measured</th><td>64 KiB</td>.*predicted from the limits \(peak\)</th><td>43.7 KiB</td>"
                     r".*predicted, sustained</th><td>256 KiB</td>", part, re.S)


def test_warmup_numbers(ready_html: str) -> None:
    part = section(ready_html, "warmup")
    for label, value in (("units done / total", "33 / 33"), ("read / planned", "321 / 321 MiB"),
                         ("coverage", "100 %"), ("read amplification (blocks read / planned)", "1 ×"),
                         ("wall time", "2.6 s"),
                         ("rate, all readers (wall)",
                          "125 MiB/s: bytes read / warm-up wall time; what the cutover gets")):
        assert f'<th scope="row">{label}</th><td>{value}</td>' in part, label
    assert "Failed units" not in part and "Segments not read" not in part


def test_conclusions_and_notes_are_sentences_without_duplicates(ready_html: str) -> None:
    part = section(ready_html, "conclusions")
    assert "<li>Single-block reads reach 2,936 IOPS with 8 sessions (p99 8,931 us).</li>" in part
    assert part.count("track_io_timing is off") == 1  # in notes and in capabilities.notes: shown once


def test_footer_points_to_the_evidence(ready_html: str) -> None:
    footer = re.search(r"<footer>(.*?)</footer>", ready_html, re.S).group(1)
    assert "findings.json" in footer and "runs/local-20261122T205738/" in footer
    assert "schema version 1" in footer and "cutover-prep" in footer


# ---- missing and failed sections -----------------------------------------------------------

def test_not_ready_run_lists_failed_units_and_says_why_charts_are_absent(not_ready_html: str) -> None:
    table = re.search(r'<table id="failed-units">(.*?)</table>', not_ready_html, re.S).group(1)
    assert "<td>u000007</td><td>QueryCanceled</td><td class=\"wrap\">canceling statement due to statement timeout" \
        in table and "u000009" in table
    assert "Segments not read (1 of 2)" in not_ready_html and "docs.documents(toast)#toast.main" in not_ready_html
    assert '<p class="error">SweepError: pg_read_binary_file: permission denied</p>' in not_ready_html
    assert "not measured: no progress samples recorded for this run" in figure(not_ready_html, "chart-warmup")
    for chart_id in BENCH_CHART_IDS:
        body = figure(not_ready_html, chart_id)
        assert "<svg" not in body, chart_id
        assert "not measured: benchmark failed (SweepError: pg_read_binary_file: permission denied)" in body
    assert "No sweep point recorded" in not_ready_html


@pytest.mark.parametrize(("bench", "why"), [
    (None, "no benchmark section in the findings"),
    ({"status": "DISABLED", "points": []}, "benchmark disabled for this run"),
    ({"status": "NOT_RUN"}, "benchmark not run"),
])
def test_benchmark_absent(bench: dict[str, Any] | None, why: str) -> None:
    f = sample_findings()
    f["benchmark"] = bench
    html = render_report(f)
    for chart_id in BENCH_CHART_IDS:
        assert f"not measured: {why}" in figure(html, chart_id), chart_id
    assert drawn(figure(html, "chart-warmup")) > 0
    assert "No conclusions" in html and "No limits compared" in html


def test_missing_timeline_and_instance() -> None:
    f = sample_findings()
    del f["warmup_timeline"]
    f["instance"] = None
    html = render_report(f)
    assert "not measured: no progress samples recorded" in figure(html, "chart-warmup")
    assert "Instance facts not recorded" in section(html, "instance")
    assert drawn(figure(html, "chart-throughput")) > 0


def test_probes_without_histogram_or_unfinished() -> None:
    f = sample_findings()
    f["benchmark"]["probes"] = {"cold": {"status": "FAILED", "cause": "no table blocks to sample"}}
    html = render_report(f)
    assert "not measured: no probe recorded a latency histogram" in figure(html, "chart-latency-hist")
    assert "not measured: no probe finished (cold FAILED, warm missing)" in figure(html, "chart-cold-warm")
    assert "cold probe: no table blocks to sample" in html


@pytest.mark.parametrize("findings", [
    {}, {"verdict": None, "benchmark": None, "units": None, "bytes": None, "timings": None, "target": None},
    {k: None for k in sample_findings()},
], ids=["empty", "none-sections", "all-none"])
def test_empty_findings_render_a_page_saying_what_is_missing(findings: dict[str, Any]) -> None:
    html = render_report(findings)
    assert '<h1 class="name">NO VERDICT</h1>' in html
    assert "No checks were recorded for this run" in html
    assert html.count("not measured:") == len(CHART_IDS)
    assert "could not be laid out" not in html


def test_odd_values_do_not_break_the_page() -> None:
    f = sample_findings()
    bench = f["benchmark"]
    bench["points"][0].update(iops="fast", throughput_kbps=float("nan"), sessions=None, latency_us=[1, 2])
    bench["points"][1]["cloudwatch"] = None
    bench["probes"]["cold"]["latency_hist_us"] = {"abc": 3, "-1": 2, "1024": "x", "2048": 5}
    bench["limits"] = {"effective": "n/a", "weird": [1, {"a": 2}], "nested": {"deep": {"deeper_kb": 3}}}
    f["warmup_timeline"] = {"series": [{"t_s": "x"}, None, {"t_s": 1, "mib_per_s": 3.5}]}
    f["failed_units"] = [None, {"unit_id": 7}]
    f["verdict"]["reasons"].append("not a dict")
    html = render_report(f)
    assert "could not be laid out" not in html
    # a value the findings record does not read is left out (issue 34: the report reads the record), the rest shown
    assert ">fast</td>" not in html and "<td>seq-0008k</td>" in html
    assert '<th scope="row">effective</th><td>n/a</td>' in html
    assert '<h3>nested</h3>' in html and '<th scope="row">deep · deeper (KiB)</th><td>3</td>' in html
    assert drawn(figure(html, "chart-warmup")) > 0 and drawn(figure(html, "chart-latency-hist")) > 0


def test_a_chart_that_raises_is_said_not_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    import cutover_prep.report.charts as charts

    def boom(*_: Any) -> None:
        raise ValueError("bad <data>")

    monkeypatch.setattr(charts, "iops_chart", boom)
    html = render_report(sample_findings())
    assert "not measured: chart not drawn (ValueError: bad &lt;data&gt;)" in figure(html, "chart-iops")
    assert drawn(figure(html, "chart-throughput")) > 0


def test_a_layout_error_still_gives_an_escaped_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report, "build_view", lambda f: 1 / 0)
    f = sample_findings()
    f["verdict"]["verdict"] = HOSTILE
    html = render_report(f)
    assert "could not be laid out (ZeroDivisionError" in html and "<script" not in html and ESCAPED in html


def test_fifty_points_all_get_a_row() -> None:
    f = sample_findings()
    base = f["benchmark"]["points"]
    f["benchmark"]["points"] = [{**copy.deepcopy(base[i % len(base)]), "point_id": f"p{i:02d}"} for i in range(50)]
    f["warmup_timeline"]["series"] = [{"t_s": i, "mib_per_s": 100 + i % 7} for i in range(120)]
    html = render_report(f)
    assert len(re.findall(r"<td>p\d\d</td>", html)) == 50


def test_page_summary_and_terminal_say_the_same_figures() -> None:
    """One view model: the page, summary.md and the terminal cannot disagree about a point or a reason."""
    from cutover_prep.report import summary_markdown
    from cutover_prep.report.terminal import terminal_lines
    from cutover_prep.report.view import build_view

    for findings in (sample_findings(), not_ready_findings()):
        view = build_view(findings)
        html, markdown, terminal = render_report(findings), summary_markdown(findings), "\n".join(
            terminal_lines(findings))
        for p in (p for p in view["bench"]["points"] if p["ok"]):
            assert p["iops"] in html and f"| {p['iops']} |" in markdown and f" {p['iops']} IO/s" in terminal
        for reason in view["verdict"]["failing"]:
            assert reason["message"] in markdown and reason["message"] in terminal
        assert f"verdict: {view['verdict']['name']}" in terminal
