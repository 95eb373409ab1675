"""What a cutover engineer reads in the report: coverage per database and schema, the largest
relations with their status, the priority order, the units not read and why, the time to warm,
figures labelled with their source, checks passed through an exception, and a local run without
CloudWatch, S3 or IO-size noise. Findings are built by ``build_findings`` from plan, units and unit
items shaped as Discover and the warm-up store them."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from cutover_prep.report import render_report, summary_markdown
from cutover_prep.report.terminal import terminal_lines
from cutover_prep.report.view import build_view
from tests.unit.stored_sections import build_findings
from tests.unit.test_report import sample_findings, section

BS = 8192
RUN = {"run_id": "r1", "target": {"db_instance_identifier": "db1"}, "started_at": "2024-01-01T00:00:00+00:00"}


def rng(segment: str, blocks: int, *, pieces: int = 1) -> dict[str, Any]:
    per = blocks // pieces
    return {"segment": segment, "locator": {}, "extents": [[1, i * per, per] for i in range(pieces)],
            "block_size": BS, "splittable": True}


def unit(uid: str, priority: int, *ranges: dict[str, Any]) -> dict[str, Any]:
    blocks = sum(e[2] for r in ranges for e in r["extents"])
    return {"unit_id": uid, "priority": priority, "bytes": blocks * BS, "blocks": blocks, "ranges": list(ranges)}


def seg(db: str, schema: str, name: str, kind: str, blocks: int, units: list[str]) -> dict[str, Any]:
    return {"key": f"{db}/{schema}.{name}#{kind}", "database": db, "schema": schema, "name": name, "kind": kind,
            "bytes": blocks * BS, "blocks": blocks, "units": units}


def at(second: int) -> str:
    return f"2024-01-01T00:{second // 60:02d}:{second % 60:02d}+00:00"


def done(start: int, end: int, blocks: int) -> dict[str, Any]:
    return {"status": "DONE", "bytes_read": blocks * BS, "blocks_read": blocks, "seconds": float(end - start),
            "started_at": at(start), "finished_at": at(end)}


@pytest.fixture
def findings() -> dict[str, Any]:
    return engineer_findings()


def engineer_findings() -> dict[str, Any]:
    """sales.orders (priority 0) read; sales.big split over a done, a cut-off and a never-started unit;
    app.logs failed half-way; app.small read; other.t in a second database never started."""
    k = {name: f"{db}/{schema}.{name}#table.main" for db, schema, name in
         (("shop", "sales", "orders"), ("shop", "sales", "big"), ("shop", "app", "logs"), ("shop", "app", "small"),
          ("hr", "other", "t"))}
    big = rng(k["big"], 300, pieces=3)
    big_parts = [{**big, "extents": [e]} for e in big["extents"]]
    units = [unit("u1", 0, rng(k["orders"], 100)),
             unit("u2", 1, big_parts[0]), unit("u3", 1, big_parts[1]), unit("u4", 1, big_parts[2]),
             unit("u5", 1, rng(k["logs"], 80, pieces=2)), unit("u6", 1, rng(k["small"], 10)),
             unit("u7", 1, rng(k["t"], 40))]
    plan = {"engine": "postgres", "summary": {"units": 7, "read_methods": {}},
            "options": {"priority": ["sales.orders"], "production_size_gb": 2},
            "segments": [seg("shop", "sales", "orders", "table.main", 100, ["u1"]),
                         seg("shop", "sales", "big", "table.main", 300, ["u2", "u3", "u4"]),
                         seg("shop", "app", "logs", "table.main", 80, ["u5"]),
                         seg("shop", "app", "small", "table.main", 10, ["u6"]),
                         seg("hr", "other", "t", "table.main", 40, ["u7"])]}
    items = {"u1": done(0, 10, 100), "u2": done(2, 20, 100),
             "u3": {"status": "RUNNING", "bytes_read": 30 * BS, "blocks_read": 30, "started_at": at(5),
                    "cursor": {"range": 0, "extent": 0, "offset": 30}},
             "u5": {"status": "FAILED", "error": "PermanentReadError", "cause": "relation dropped",
                    "bytes_read": 40 * BS, "blocks_read": 40, "started_at": at(6), "finished_at": at(9),
                    "cursor": {"range": 0, "extent": 1, "offset": 0}},
             "u6": done(3, 4, 10)}
    f = build_findings(RUN, plan, units, items)
    f["verdict"] = {"verdict": "NOT_READY", "reasons": [], "thresholds": {}}
    return f


def test_segments_carry_read_partly_failed_and_not_read(findings: dict[str, Any]) -> None:
    by_name = {s["name"]: (s["status"], s["bytes_read"] // BS) for s in findings["segments"]}
    assert by_name == {"orders": ("READ", 100), "big": ("PARTLY", 130), "logs": ("FAILED", 40),
                       "small": ("READ", 10), "t": ("NOT_READ", 0)}


def test_coverage_per_database_and_schema(findings: dict[str, Any]) -> None:
    cov = findings["coverage"]
    assert [(g["database"], g["bytes_planned"] // BS, g["bytes_read"] // BS) for g in cov["by_database"]] == [
        ("shop", 490, 280), ("hr", 40, 0)]
    schemas = {(g["database"], g["schema"]): (g["segments_read"], g["segments"], g["pct"]) for g in cov["by_schema"]}
    assert schemas == {("shop", "sales"): (1, 2, round(100 * 230 / 400, 3)), ("shop", "app"): (1, 2, 55.556),
                       ("hr", "other"): (0, 1, 0.0)}
    assert [(r["name"], r["status"]) for r in cov["largest"]] == [
        ("big", "PARTLY"), ("orders", "READ"), ("logs", "FAILED"), ("t", "NOT_READ"), ("small", "READ")]


def test_largest_relations_are_twenty_with_indexes_summed() -> None:
    from tests.unit.stored_sections import coverage_section

    segments = [{"database": "d", "schema": "s", "name": f"t{i:02d}", "kind": kind, "bytes": (i + 1) * size,
                 "bytes_read": (i + 1) * size, "status": "READ"} for i in range(30)
                for kind, size in (("table.main", 100), ("index.main", 10))]
    largest = coverage_section(segments)["largest"]
    assert len(largest) == 20
    assert largest[0]["name"] == "t29" and largest[0]["bytes"] == 30 * 110 and largest[0]["segments"] == 2


def test_priority_finish_times_and_order(findings: dict[str, Any]) -> None:
    pri = findings["priority"]
    assert pri["followed"] is True
    first, rest = pri["groups"]
    assert (first["pattern"], first["units"], first["finished_after_s"]) == ("sales.orders", 1, 10.0)
    assert rest["pattern"] is None and rest["finished_after_s"] is None  # the rest did not finish
    view = build_view(findings)
    part = section(render_report(findings), "warmup")
    assert "Priority order followed" in part and '<td class="n">10.0 s</td>' in part
    assert "- `sales.orders`: 1 / 1 units, 10.0 s after the warm-up began" in summary_markdown(findings)
    assert "everything else" in part and "not finished" in part
    assert view["priority"]["followed"]


def test_priority_not_followed_when_a_lower_priority_finished_first(findings: dict[str, Any]) -> None:
    from tests.unit.stored_sections import priority_section

    units = [{"unit_id": "a", "priority": 0, "bytes": 1}, {"unit_id": "b", "priority": 1, "bytes": 1},
             {"unit_id": "c", "priority": 1, "bytes": 1}]
    assert priority_section(["x.*"], units, {"a": done(1, 9, 1), "b": done(2, 3, 1), "c": done(3, 12, 1)})[
        "followed"] is True  # b finished early, but the rest (b and c) finished after x.*
    assert priority_section(["x.*"], units, {"a": done(1, 9, 1), "b": done(2, 3, 1), "c": done(3, 5, 1)})[
        "followed"] is False
    unfinished = {"a": {"status": "RUNNING", "started_at": at(1)}, "b": done(2, 3, 1), "c": done(3, 5, 1)}
    assert priority_section(["x.*"], units, unfinished)["followed"] is False
    assert priority_section([], units, unfinished) is None


def test_units_not_read_with_their_cause(findings: dict[str, Any]) -> None:
    unread = {u["unit_id"]: u for u in findings["unread_units"]}
    assert set(unread) == {"u3", "u4", "u5", "u7"}
    assert unread["u3"]["bytes_read"] == 30 * BS and "cut off" in unread["u3"]["cause"]
    assert "never started" in unread["u4"]["cause"] and unread["u4"]["bytes_read"] == 0
    assert unread["u5"]["cause"] == "PermanentReadError: relation dropped" and unread["u5"]["bytes_read"] == 40 * BS
    html = render_report(findings)
    table = html[html.index('id="units-not-read"'):]
    table = table[:table.index("</table>")]
    assert "u3" in table and "u4" in table and "u7" in table and "u5" not in table  # u5 is in failed units
    assert "cut off while being read" in table
    assert "`u4` (PENDING" in summary_markdown(findings)
    assert any(line.startswith("  unit u3 not read (RUNNING") for line in terminal_lines(findings))


def test_coverage_tables_on_the_page_and_in_the_summary(findings: dict[str, Any]) -> None:
    html = render_report(findings)
    rows = re.findall(r'<tr class="(\w+)"><td class="wrap">([^<]+)</td>', html[html.index('id="largest-relations"'):])
    assert rows[:5] == [("PARTLY", "sales.big"), ("READ", "sales.orders"), ("FAILED", "app.logs"),
                        ("NOT_READ", "other.t"), ("READ", "app.small")]
    cov = html[html.index('id="coverage-schemas"'):]
    assert "shop.sales" in cov and "hr.other" in cov and "57.5 %" in cov
    md = summary_markdown(findings)
    assert "| `shop` | 3.83 MiB | 2.19 MiB | 57.1 % |" in md
    assert "- `sales.big` (`shop`, 2.34 MiB): partly read, 43.3 %" in md


def test_time_to_warm_and_the_production_projection(findings: dict[str, Any]) -> None:
    ttw = findings["time_to_warm"]
    rate = findings["read_rate"]["mib_per_s_wall"]
    assert ttw["planned_seconds"] == round(530 * BS / (rate * 2**20), 3)
    assert ttw["production_seconds"] == round(2 * 2**30 / (rate * 2**20), 1)
    rows = dict(build_view(findings)["warmup"]["rows"])
    assert "projection, not a measurement" in rows["projected to the production size"]
    assert "- projected to the production size: " in summary_markdown(findings)
    assert any(line.startswith("  projected to the production size: ") for line in terminal_lines(findings))
    del findings["time_to_warm"]["production_seconds"]
    assert "projected to the production size" not in dict(build_view(findings)["warmup"]["rows"])


def test_every_headline_figure_names_its_source_and_a_cached_point_is_not_one() -> None:
    f = sample_findings()
    seq = f["benchmark"]["points"][6]  # seq-1024k: the best throughput, now a re-read of one file
    seq.update(notes=["the target (117.0 MiB) was read 106 times"], passes=106, cached=True)  # as the engine says
    seq["throughput_kbps"] = 9_000_000.0
    view = build_view(f)
    assert all(fig["source"] for fig in view["figures"])
    figures = {fig["label"]: fig for fig in view["figures"]}
    best = figures["best read throughput"]
    assert best["value"] != "8,789 MiB/s" and "seq-0064k" in best["source"]
    assert "RDS CloudWatch" in best["source"] and "the RDS instance's storage" in best["source"]
    html = render_report(f)
    assert "8,789 MiB/s" not in section(html, "reasons")
    assert "seq-1024k read its target 106 times" in section(html, "benchmark")
    rows = dict(view["warmup"]["rows"])
    assert "the speed of one reader, not of the warm-up" in rows["rate of one reader"]
    assert "rate per worker" not in html


def test_oracle_re_reads_are_direct_path_storage_reads_not_cache() -> None:
    f = sample_findings()
    f["engine"] = "oracle-ee"
    seq = f["benchmark"]["points"][6]
    seq.update(notes=["the target was read 3 times (direct path: each pass from storage)"], passes=3, cached=False)
    seq["throughput_kbps"] = 9_000_000.0
    view = build_view(f)
    assert "seq-1024k" in {fig["label"]: fig for fig in view["figures"]}["best read throughput"]["source"]
    assert view["bench"]["cached"] == []


def test_a_local_runs_figures_say_where_they_were_read_from() -> None:
    f = sample_findings()
    f["storage_emulation"] = {"emulated": False, "reason": "--no-storage-emulation"}
    assert "local disk or OS page cache" in build_view(f)["figures"][1]["source"]
    f["storage_emulation"] = {"emulated": True, "profile": {}}
    assert "emulated restored volume" in build_view(f)["figures"][1]["source"]


def _fast_enough(findings: dict[str, Any]) -> dict[str, Any]:
    """Cold 1.5 ms, warm 0.9 ms: passes because warm is under fast_read_ms, though only 1.67× faster."""
    from tests.unit.verdict_of_documents import decide

    f = copy.deepcopy(findings)
    f["benchmark"]["probes"]["cold"]["latency_us"]["p50"] = 1500.0
    f["benchmark"]["probes"]["warm"]["latency_us"]["p50"] = 900.0
    f["verdict"] = decide(f)
    return f


def test_a_check_passed_on_an_allowance_of_its_rule_says_how_in_words() -> None:
    """Issue 33 §4: 'WARM_VS_COLD ✓*' and 'passed by an exception of its rule' beside READY told a DBA nothing;
    the page, summary.md and the terminal say in the same words how it passed (cold 1.5 ms, warm 0.9 ms: 1.67×)."""
    f = _fast_enough(sample_findings())
    passing = {r["code"]: r for r in build_view(f)["verdict"]["passing"]}
    said = ("passed because warm reads are fast: warm 0.90 ms is at most the 1 ms that counts as fast "
            "(verdict.fast_read_ms), though cold/warm 1.67× is under the 2× (verdict.min_warm_speedup) that slower "
            "warm reads would need")
    assert passing["WARM_VS_COLD"]["exception"] == said
    assert passing["BENCHMARK"]["exception"] is None
    html = section(render_report(f), "reasons")
    assert '<li class="exception"><span class="mark">✓</span><code>WARM_VS_COLD</code>' in html
    assert "✓*" not in html and "exception of" not in html and said in html
    assert f"**{said}**" in summary_markdown(f)
    assert f"    - WARM_VS_COLD {said}" in terminal_lines(f)
    assert not [line for line in terminal_lines(f) if "exception" in line]


def test_cold_warm_conclusion_comes_from_the_verdicts_rule() -> None:
    from tests.unit.verdict_of_documents import decide

    f = sample_findings()
    f["benchmark"]["probes"]["cold"]["latency_us"]["p50"] = 50.0  # the demo: warm 11× slower, both fast
    f["benchmark"]["probes"]["warm"]["latency_us"]["p50"] = 580.0
    f["benchmark"]["conclusions"].append("Cold and warm reads ran at about the same speed (5,228 vs 431 IOPS)")
    f["verdict"] = decide(f)
    conclusions = build_view(f)["bench"]["conclusions"]
    assert not any("about the same speed" in c for c in conclusions)
    assert not any(c.startswith("The first read of a restored block") for c in conclusions)
    assert any(c.startswith("Cold vs warm (the verdict's rule): warm reads are slower than cold") for c in conclusions)


def test_local_run_has_no_cloudwatch_noise_no_s3_links_and_no_io_size_charts_without_a_knob() -> None:
    f = sample_findings()
    f["storage_emulation"] = {"emulated": False, "reason": "--no-storage-emulation"}
    f["benchmark"]["metrics"] = {"complete": False, "missing": [f"p{i}/ReadIOPS" for i in range(42)]}
    f["benchmark"]["capabilities"]["knobs"] = {"io_combine_limit": False}
    html = render_report(f)
    part = section(html, "benchmark")
    assert part.count("CloudWatch") == 1 and "CloudWatch: none locally" in part
    assert "CW ReadIOPS" not in part and ">missing<" not in part
    for cid in ("chart-throughput", "chart-iops"):
        fig = html[html.index(f'id="{cid}"'):]
        fig = fig[:fig.index("</figure>")]
        assert "<svg" not in fig and "the engine offers no IO-size knob (knobs: io_combine_limit)" in fig
    md = summary_markdown(f, findings_uri="s3://cutover-prep-evidence-local/runs/x/findings.json",
                          report_uri="s3://cutover-prep-evidence-local/runs/x/report.html")
    assert "s3://" not in md and "`report.html`" in md and "`findings.json`" in md
    # in AWS the links and the CloudWatch columns stay
    del f["storage_emulation"]
    assert "s3://" in summary_markdown(f, findings_uri="s3://b/runs/x/findings.json")
    assert "CW ReadIOPS" in render_report(f)


def test_terminal_never_cuts_a_point_id_short() -> None:
    f = sample_findings()
    f["benchmark"]["points"][0]["point_id"] = "seq-pg-read-binary-file-and-more"
    assert any("seq-pg-read-binary-file-and-more " in line for line in terminal_lines(f))


def test_production_size_comes_from_the_input_through_the_plan(findings: dict[str, Any]) -> None:
    from cutover_prep.models.run_input import parse_run_input

    run = parse_run_input({"target": {"db_instance_identifier": "db1",
                                      "secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbCdEf"},
                           "warmup": {"production_size_gb": 500}})
    assert run["warmup"]["production_size_gb"] == 500  # Discover stores the warmup options as plan.options
    from tests.unit.stored_sections import time_to_warm

    assert time_to_warm(2**30, 1.0, run["warmup"]["production_size_gb"])["production_seconds"] == 500 * 1024
    assert "production_seconds" not in time_to_warm(2**30, 1.0, None)


def test_an_emulated_run_s_report_does_not_say_rds_or_an_unknown_storage() -> None:
    """Issue 23 §5: under the emulated db.t3.medium / gp3 100 GiB the report said "No limits compared … the
    instance class or storage is unknown" and headed the emulated volume's section "What RDS says about the
    volume"."""
    f = sample_findings()
    f["storage_emulation"] = {"emulated": True, "profile": {"storage_type": "gp3", "allocated_gb": 100,
                                                            "instance_class": "db.t3.medium", "time_scale": 8}}
    f["benchmark"].pop("limits", None)
    html = render_report(f)
    assert "What RDS says about the volume" not in html and "The storage: a local run (no RDS here)" in html
    assert "instance class or storage\n    is unknown" not in html and "slowed down by its time scale" in html
    del f["storage_emulation"]
    assert "What RDS says about the volume" in render_report(f)


def test_the_probes_figure_names_who_timed_them_and_gives_the_one_cold_warm_figure() -> None:
    """Issue 33 §4: summary.md and the report's card said "client timing" for probes the database server timed
    (``timed_by: "server"``), and the cold/warm of the verdict (median latency) stood beside another (reads/s).
    Cold 1.5 ms over warm 0.6 ms is 2.50× (by hand)."""
    f = sample_findings()
    for phase, p50 in (("cold", 1500.0), ("warm", 600.0)):
        f["benchmark"]["probes"][phase].update(timed_by="server", latency_us={"p50": p50, "p99": p50 * 2})
    card = next(x for x in build_view(f)["figures"] if x["label"] == "median single-block read, cold → warm")
    assert card["value"] == "1.5 → 0.6 ms (cold/warm 2.50×)"
    assert "timed by the database server" in card["source"] and "client" not in card["source"]
    summary = summary_markdown(f)
    assert "client timing" not in summary.split("## Benchmark")[0]
    assert "| latency p50 | 1.5 ms | 0.6 ms | 2.50× |" in summary
    assert any("(cold/warm 2.50×, by the median)" in line for line in terminal_lines(f))
    for phase in ("cold", "warm"):
        f["benchmark"]["probes"][phase]["timed_by"] = "client"
    card = next(x for x in build_view(f)["figures"] if x["label"] == "median single-block read, cold → warm")
    assert "timed by the client" in card["source"]


def test_a_local_run_labels_its_wall_rate_as_the_tools_and_gives_the_databases_apart() -> None:
    """Issue 33 §3: the report labelled a local run's wall rate "what the cutover gets" (nc_pg: 2.52 MiB/s over
    47.9 s, its readers busy 7.5 s). The database's rate stands apart, labelled, on the card, in the warm-up rows,
    summary.md and the terminal."""
    f = sample_findings()
    f["storage_emulation"] = {"emulated": False, "reason": "--dsn"}
    f["read_rate"] = {"mib_per_s_wall": 2.52, "mib_per_s_per_worker": 1.0, "mib_per_s_database": 16.1,
                      "database_reading_seconds": 7.5}
    f["timings"]["warmup_wall_seconds"] = 47.9
    view = build_view(f)
    rows = dict(view["warmup"]["rows"])
    assert "what the cutover gets" not in rows["rate, all readers (wall)"]
    assert "local harness" in rows["rate, all readers (wall)"]
    assert rows["database read rate"].startswith("16.1 MiB/s: bytes read / the 7.5 s during which a reader")
    card = {x["label"]: x for x in view["figures"]}
    assert card["database read rate"]["value"] == "16.1 MiB/s"
    line = ("warm-up read rates: database 16.1 MiB/s (bytes over the 7.5 s a reader was reading); wall 2.52 MiB/s "
            "(over the warm-up's 47.9 s; the local harness's overhead in it)")
    assert f"- {line}" in summary_markdown(f).splitlines()
    assert f"  {line}" in terminal_lines(f)
    f.pop("storage_emulation")  # a deployed run: its wall rate is what the cutover gets
    assert "what the cutover gets" in dict(build_view(f)["warmup"]["rows"])["rate, all readers (wall)"]
