"""Benchmark: the cost of report.html vs the cost of the evidence file itself.

One run, one machine, no database: findings shaped like the unit tests' READY run
(``tests.unit.test_report.sample_findings``) grown to 50 sweep points and a 120-bucket warm-up
timeline. Times ``render_report(findings)`` (jinja2 + seven pygal charts) and
``json.dumps(findings, indent=1)`` (what writing findings.json costs before the upload), each the
best of N repeats in the same process after one warm-up call (templates compiled, imports done).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.unit.test_report, run from anywhere

from tests.unit.test_report import sample_findings  # noqa: E402

from cutover_prep.report import render_report  # noqa: E402

POINTS, BUCKETS = 50, 120


def findings_for_bench() -> dict[str, Any]:
    f = sample_findings()
    base = f["benchmark"]["points"]
    points = []
    for i in range(POINTS):
        p = copy.deepcopy(base[i % len(base)])
        p["point_id"] = f"{p['point_id']}-{i:02d}"
        if p["kind"] == "random":
            p["sessions"] = 1 + i % 16  # a spread of sessions, not the same four points again
        else:
            kb = p["io_size_kb"] = p["effective_io_kb"] = 8 * 2 ** (i % 8)
            p["throughput_kbps"] = round(min(p["iops"], 131072 / kb) * kb, 2)
        points.append(p)
    f["benchmark"]["points"] = points
    f["warmup_timeline"] = {"bucket_seconds": 5.0, "started_at": f["timings"]["warmup_started_at"],
                            "series": [{"t_s": 5.0 * i, "mib_per_s": 100 + (i * 37) % 60} for i in range(BUCKETS)]}
    return f


def best_of(repeats: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    result = fn()  # warm-up
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    findings = findings_for_bench()
    render_s, html = best_of(args.repeats, lambda: render_report(findings))
    json_s, text = best_of(args.repeats, lambda: json.dumps(findings, indent=1))
    assert "could not be laid out" not in html and html.count("<svg") >= 8
    print(f"findings: {len(findings['benchmark']['points'])} sweep points, "
          f"{len(findings['warmup_timeline']['series'])} warm-up buckets; best of {args.repeats}")
    print(f"render_report: {render_s * 1e3:8.2f} ms  -> report.html {len(html) / 1024:,.0f} KiB")
    print(f"json.dumps:    {json_s * 1e3:8.2f} ms  -> findings.json {len(text) / 1024:,.0f} KiB")
    print(f"ratio render/json: {render_s / json_s:.1f}x")


if __name__ == "__main__":
    main()
