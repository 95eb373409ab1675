"""Findings: aggregation of unit items (pure) and the run failure record (moto Store)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cutover_prep.dal.store import Store, evidence_key
from cutover_prep.findings.failures import record_failure
from tests.unit.stored_sections import build_findings

RUN = {"run_id": "r1", "target": {"db_instance_identifier": "db1"}, "started_at": "2024-01-01T00:00:00+00:00",
       "instance": {"class": "db.t3.medium"}}


def unit(uid: str, nbytes: int, segments: list[str]) -> dict[str, Any]:
    return {"unit_id": uid, "bytes": nbytes, "blocks": nbytes // 8192,
            "ranges": [{"segment": s, "extents": [], "block_size": 8192} for s in segments]}


def segment(key: str, units: list[str]) -> dict[str, Any]:
    schema, rest = key.split(".", 1)
    return {"key": key, "database": None, "schema": schema, "name": rest.split("#")[0], "kind": "table",
            "bytes": 8192, "blocks": 1, "units": units}


@pytest.fixture
def doc() -> dict[str, Any]:
    units = [unit("u1", 8192 * 100, ["a.t1#table", "a.t2#table"]),
             unit("u2", 8192 * 100, ["a.t2#table"]),       # t2 split over u1 + u2
             unit("u3", 8192 * 200, ["a.t3#table"]),
             unit("u4", 8192 * 100, ["a.t4#table"]),
             unit("u5", 8192 * 100, ["a.t5#table"])]
    plan = {"engine": "postgres", "summary": {"units": 5, "read_methods": {"db": "pg_prewarm"}},
            "segments": [segment("a.t1#table", ["u1"]), segment("a.t2#table", ["u1", "u2"]),
                         segment("a.t3#table", ["u3"]), segment("a.t4#table", ["u4"]),
                         segment("a.t5#table", ["u5"]), segment("a.t6#table", [])]}
    items = {
        "u1": {"status": "DONE", "bytes_read": 8192 * 100, "blocks_read": 100, "seconds": 2.0,
               "method": "pg_prewarm",
               "started_at": "2024-01-01T00:01:00+00:00", "finished_at": "2024-01-01T00:01:10+00:00"},
        "u2": {"status": "FAILED", "error": "PermanentReadError", "cause": "dropped", "bytes_read": 0,
               "blocks_read": 0, "started_at": "2024-01-01T00:01:05+00:00",
               "finished_at": "2024-01-01T00:01:06+00:00"},
        "u3": {"status": "DONE", "bytes_read": 8192 * 220, "blocks_read": 220, "seconds": 3.0,
               "method": "direct",
               "started_at": "2024-01-01T00:01:02+00:00", "finished_at": "2024-01-01T00:01:40+00:00"},
        "u4": {"status": "RUNNING", "bytes_read": 8192 * 30, "blocks_read": 30, "seconds": 1.0,
               "started_at": "2024-01-01T00:01:20+00:00"},
        # u5 has no item: PENDING
    }
    return build_findings(RUN, plan, units, items)


def test_counts_per_status(doc: dict[str, Any]) -> None:
    assert doc["units"] == {"total": 5, "done": 2, "failed": 1, "in_progress": 1, "not_started": 1}
    assert doc["status"] == "INCOMPLETE"
    assert doc["failed_units"] == [{"unit_id": "u2", "error": "PermanentReadError", "cause": "dropped"}]


def test_bytes_coverage_and_amplification(doc: dict[str, Any]) -> None:
    assert doc["bytes"] == {"planned": 8192 * 600, "read": 8192 * 350, "covered": 8192 * 300, "gone": 0}
    assert doc["blocks"] == {"planned": 600, "read": 350}
    assert doc["coverage_pct"] == 50.0
    assert doc["read_amplification"] == round(350 / 600, 4)


def test_segment_status(doc: dict[str, Any]) -> None:
    status = {s["key"]: s["status"] for s in doc["segments"]}
    assert status == {"a.t1#table": "READ", "a.t2#table": "FAILED", "a.t3#table": "READ",
                      "a.t4#table": "NOT_READ", "a.t5#table": "NOT_READ", "a.t6#table": "NOT_READ"}
    assert doc["segments"][1]["units"] == ["u1", "u2"]


def test_timings_and_methods(doc: dict[str, Any]) -> None:
    t = doc["timings"]
    assert t["warmup_started_at"] == "2024-01-01T00:01:00+00:00"
    assert t["warmup_finished_at"] == "2024-01-01T00:01:40+00:00"
    assert t["warmup_wall_seconds"] == 40.0
    assert t["unit_busy_seconds"] == 6.0
    assert doc["read_methods"] == ["direct", "pg_prewarm"]
    assert doc["read_methods_by_database"] == {"db": "pg_prewarm"}
    assert doc["read_rate"]["mib_per_s_per_worker"] == round(8192 * 350 / 6.0 / 2**20, 3)
    assert doc["engine"] == "postgres" and doc["run_id"] == "r1" and doc["schema_version"] == 1


def test_all_done_is_succeeded_full_coverage() -> None:
    units = [unit("u1", 8192 * 10, ["a.t#table"])]
    plan = {"engine": "oracle", "summary": {}, "segments": [segment("a.t#table", ["u1"])]}
    doc = build_findings(RUN, plan, units, {"u1": {"status": "DONE", "bytes_read": 81920, "blocks_read": 10}})
    assert doc["status"] == "SUCCEEDED"
    assert doc["coverage_pct"] == 100.0
    assert doc["read_amplification"] == 1.0
    assert doc["segments"][0]["status"] == "READ"


def test_the_outages_ridden_out_are_counted_with_the_longest(doc: dict[str, Any]) -> None:
    """Issue 32 §4: each unit's reconnects and longest outage (warmup.unit) summed and maxed."""
    assert doc["reconnects"] == {"count": 0, "units": 0, "longest_outage_seconds": None}
    units = [unit("u1", 8192 * 10, ["a.t#table"]), unit("u2", 8192 * 10, ["a.t#table"]),
             unit("u3", 8192 * 10, ["a.t#table"])]
    plan = {"engine": "postgres", "summary": {}, "segments": [segment("a.t#table", ["u1", "u2", "u3"])]}
    items = {"u1": {"status": "DONE", "reconnects": 2, "longest_outage_seconds": 21.46},
             "u2": {"status": "DONE", "reconnects": 1, "longest_outage_seconds": 0.8},
             "u3": {"status": "DONE"}}
    assert build_findings(RUN, plan, units, items)["reconnects"] == {
        "count": 3, "units": 2, "longest_outage_seconds": 21.5}


def test_empty_plan() -> None:
    doc = build_findings(RUN, {"engine": "postgres", "summary": {}, "segments": []}, [], {})
    assert doc["status"] == "SUCCEEDED"
    assert doc["coverage_pct"] == 100.0
    assert doc["read_amplification"] is None
    assert doc["timings"]["warmup_wall_seconds"] is None


def start(store: Store, run_id: str = "r1") -> None:
    store.start_run({"run_id": run_id, "target": {"db_instance_identifier": "db1"},
                     "started_at": "2024-01-01T00:00:00+00:00", "warmup": {}})


def test_record_failure_unknown_error_mapped(store: Store) -> None:
    start(store)
    out = record_failure("r1", {"Error": "Lambda.Unknown", "Cause": "something broke"}, store=store)
    assert out == {"Error": "CutoverPrepFailed", "Cause": "something broke"}
    run = store.get_run("r1").stored()
    assert run is not None
    assert run["status"] == "FAILED" and run["error"] == "CutoverPrepFailed"
    assert run["cause"] == "something broke"
    assert store.get_json(evidence_key("r1", "failure.json")) == {
        "run_id": "r1", "error": "CutoverPrepFailed", "cause": "something broke"}


def test_record_failure_known_error_and_json_cause(store: Store) -> None:
    start(store)
    cause = json.dumps({"errorMessage": "could not connect to db1:5432", "errorType": "DatabaseUnreachable",
                        "stackTrace": ["..."]})
    out = record_failure("r1", {"Error": "DatabaseUnreachable", "Cause": cause}, store=store)
    assert out == {"Error": "DatabaseUnreachable", "Cause": "could not connect to db1:5432"}
    assert store.get_run("r1").cause == "could not connect to db1:5432"


def test_record_failure_timeout_and_missing_fields(store: Store) -> None:
    assert record_failure(None, {"Error": "States.Timeout"}, store=store) == {
        "Error": "StepTimedOut", "Cause": "StepTimedOut"}
    assert record_failure(None, {}, store=store) == {
        "Error": "CutoverPrepFailed", "Cause": "CutoverPrepFailed"}
    # a run id with no record: nothing written, still returns the named error
    assert record_failure("nope", {"Error": "InvalidInput", "Cause": "target: is required"}, store=store) == {
        "Error": "InvalidInput", "Cause": "target: is required"}
    assert store.get_run("nope") is None
    assert not store.exists(evidence_key("nope", "failure.json"))


def test_record_failure_json_cause_without_message_kept(store: Store) -> None:
    out = record_failure(None, {"Error": "X", "Cause": "[1, 2]"}, store=store)
    assert out == {"Error": "CutoverPrepFailed", "Cause": "[1, 2]"}


def test_a_unit_cut_off_after_a_truncated_range_counts_what_existed_as_read() -> None:
    """Issue 32: a unit cut off (RUNNING) after its first range, half of which was gone (truncated while the run
    ran), read half of it; its second range nothing. The gone half is neither read nor unread."""
    from tests.unit.stored_sections import segment_reads, unread_units

    ranges = [{"segment": "app.t#table", "extents": [[0, 0, 128]], "block_size": 8192},
              {"segment": "app.u#table", "extents": [[0, 0, 128]], "block_size": 8192}]
    units = [{"unit_id": "u1", "bytes": 2**21, "blocks": 256, "ranges": ranges}]
    items = {"u1": {"status": "RUNNING", "cursor": {"range": 1, "extent": 0, "offset": 0},
                    "gone": [["app.t#table", 0, 64, 2**19, "truncated while the run ran"]], "gone_bytes": 2**19}}
    assert unread_units(units, items)[0]["bytes_read"] == 2**19
    reads = segment_reads(units, items)
    assert (reads["app.t#table"]["read"], reads["app.t#table"]["gone"]) == (2**19, 2**19)
    assert reads["app.u#table"]["read"] == 0 and reads["app.u#table"]["gone"] == 0
