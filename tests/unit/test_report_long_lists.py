"""Issue 32 §8 left this: findings.json lists at most 1,000 truncated segments and 1,000 segments (the rest
counted in ``truncated_segments`` and ``segment_counts``; every segment in segments.jsonl). The report and
summary.md say how many more there are and where every one is, instead of ending the list silently or pointing
to findings.json, which no longer holds them. The counts below are worked by hand from the findings given."""

from __future__ import annotations

from cutover_prep.report import render_report
from cutover_prep.report.markdown import summary_markdown
from tests.unit.test_report import not_ready_findings


def _long_run() -> dict:
    f = not_ready_findings()
    f["census"] = {"taken": True, "objects": 10, "bytes": 10 * 2**20, "unread_objects": 0, "unread_bytes": 0,
                   "waived_bytes": 0, "unread": [], "by_database": []}
    f["truncated"] = [{"database": "db", "schema": "public", "name": f"t{i}", "kind": "table",
                       "key": f"db/public.t{i}#main", "bytes_gone": 2**20, "reason": "truncated while the run ran"}
                      for i in range(2)]
    f["truncated_segments"] = 5  # 2 listed, 3 more
    f["segment_counts"] = {"total": 4000, "not_read": 1500}  # 1 listed in the findings, at most 50 shown
    f["segments_evidence"] = "runs/r1/segments.jsonl"
    return f


def test_the_truncated_list_says_how_many_more_and_where_every_one_is() -> None:
    f = _long_run()
    summary = summary_markdown(f)
    assert "- ... and 3 more (every segment: segments.jsonl)" in summary
    html = render_report(f)
    assert "and 3 more (every segment: segments.jsonl)" in html


def test_the_segments_not_read_point_to_segments_jsonl_not_findings_json() -> None:
    html = render_report(_long_run())
    assert "… and 1499 more: see segments.jsonl (every segment)." in html  # 1,500 not read, 1 listed here
    before = not_ready_findings()  # a run of before issue 32: every segment was in findings.json
    before["segment_counts"] = {"total": 4000, "not_read": 60}
    assert "more: see findings.json." in render_report(before)
