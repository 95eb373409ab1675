"""Issue 32 §8: the plan's segments and units streamed. Discover writes the segments as their own JSON Lines object
(plan-segments.jsonl) and units.json as a JSON array one unit a line; Finalize reads both as streams, writes what it
found of every segment to segments.jsonl and lists at most 1,000 in findings.json. Judges: S3's own copy of an object
(moto: the body parsed whole by ``json``, as the Distributed Map's ItemReader does), the run's construction (which
unit failed, so which segments are FAILED), and a run whose evidence is rewritten in the format of before."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cutover_prep.dal.plan_evidence import PLAN_SEGMENTS, SEGMENT_FINDINGS
from cutover_prep.dal.store import Store, evidence_key
from cutover_prep.findings import document
from cutover_prep.steps.finalize import finalize
from tests.unit.test_census_streaming import run_to_the_end

MIB = 2**20


def _body(store: Store, key: str) -> bytes:
    return store._s3.get_object(Bucket=store.bucket, Key=key)["Body"].read()


def test_a_json_array_in_parts_is_json_for_the_map_and_a_stream_for_finalize(store: Store) -> None:
    rows = [{"unit_id": f"u{i:05d}", "ranges": [{"segment": f"s.t{i}", "text": "x\ny" * 1500}]} for i in range(3000)]
    key = "runs/r/units.json"
    with store.json_array_writer(key) as writer:
        for row in rows:
            writer.write(row)
    body = _body(store, key)
    assert len(body) > 8 * MIB  # sent in two parts at least (8 MiB each)
    head = store._s3.head_object(Bucket=store.bucket, Key=key)
    parts = -(-len(body) // (8 * MIB))
    assert head["ETag"].strip('"').endswith(f"-{parts}")  # S3's word: a multipart object of that many parts
    assert json.loads(body) == rows  # what a reader of the whole sees (the Map's ItemReader)
    assert list(store.json_array(key)) == rows
    with store.json_array_writer("runs/r/empty.json"):
        pass
    assert json.loads(_body(store, "runs/r/empty.json")) == [] and list(store.json_array("runs/r/empty.json")) == []
    store.put_json("runs/r/old.json", rows[:3])  # indented, as units.json was written before
    assert list(store.json_array("runs/r/old.json")) == rows[:3]


def as_before(store: Store, run_id: str) -> None:
    """Rewrite the run's plan as Discover wrote it before: the segments' list inside plan.json, units.json indented."""
    plan_key, units_key = evidence_key(run_id, "plan.json"), evidence_key(run_id, "units.json")
    plan = store.get_json(plan_key)
    assert plan["segments"]["key"] == evidence_key(run_id, PLAN_SEGMENTS)
    store.put_json(plan_key, {**plan, "segments": list(store.json_lines(plan["segments"]["key"]))})
    store._s3.delete_object(Bucket=store.bucket, Key=plan["segments"]["key"])
    store.put_json(units_key, json.loads(_body(store, units_key)))
    assert _body(store, units_key).startswith(b"[\n")


def _comparable(findings: dict[str, Any]) -> dict[str, Any]:
    # what names the run, and what its clock measured (each run reads at its own pace)
    drop = ("run_id", "timings", "segments_evidence", "census", "verdict", "warmup", "target", "estimate",
            "read_rate", "storage_initialization", "time_to_warm", "warmup_timeline")
    return {k: v for k, v in findings.items() if k not in drop}


def test_finalize_lists_at_most_listed_segments_and_keeps_every_one_in_its_evidence(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(document, "LISTED", 3, raising=False)
    units, failed = run_to_the_end(store, "r-list")
    finalize("r-list", store=store)
    findings = store.get_json(evidence_key("r-list", "findings.json"))
    every = list(store.json_lines(evidence_key("r-list", SEGMENT_FINDINGS)))
    planned = list(store.json_lines(evidence_key("r-list", PLAN_SEGMENTS)))
    # every planned segment, in plan order; the failed unit's segments FAILED, the others READ (by construction)
    assert [s["key"] for s in every] == [s["key"] for s in planned]
    assert {s["key"]: s["status"] for s in every} == {s["key"]: "FAILED" if s["key"] in failed else "READ"
                                                      for s in planned}
    assert findings["segments_evidence"] == evidence_key("r-list", SEGMENT_FINDINGS)
    assert findings["segment_counts"] == {"total": len(planned), "read": len(planned) - len(failed),
                                          "not_read": len(failed), "listed": 3, "listed_at_most": 3}
    # the failed ones first (there are 2 or 3), then the first READ ones, in plan order
    listed = findings["segments"]
    assert len(listed) == 3 and {s["key"] for s in listed if s["status"] == "FAILED"} == failed
    positions = [[s["key"] for s in every].index(s["key"]) for s in listed]
    assert positions == sorted(positions)
    assert findings["coverage"]["relations"] == len(planned)  # one segment a relation here


def test_a_run_planned_before_finalizes_to_the_same_findings(store: Store) -> None:
    got = {}
    for run_id, old in (("r-new", False), ("r-old", True)):
        run_to_the_end(store, run_id)
        if old:
            as_before(store, run_id)
        finalize(run_id, store=store)
        findings = store.get_json(evidence_key(run_id, "findings.json"))
        got[run_id] = (_comparable(findings), list(store.json_lines(evidence_key(run_id, SEGMENT_FINDINGS))))
    assert got["r-new"] == got["r-old"]
    assert got["r-new"][0]["segment_counts"]["total"] == len(got["r-new"][1]) > 0


def test_the_streamed_pass_says_what_the_list_functions_say() -> None:
    """A generated plan (several segments a relation, ties in size, partial cursors, gone blocks, units of every
    status): the coverage, segments, truncated and unread units that build_findings reaches through the pass (SQLite)
    are those of ``coverage.segment_reads`` / ``coverage_section`` / ``unread_units`` on the lists, the code before
    issue 32 §8."""
    import random

    from cutover_prep.findings.coverage import segment_status
    from tests.unit.stored_sections import (
        build_findings,
        coverage_section,
        segment_reads,
        truncated_section,
        unread_units,
    )
    from tests.unit.test_findings import RUN

    rnd = random.Random(32)
    segments, ranges = [], []
    for i in range(300):
        db, schema, name = f"db{i % 3}", f"s{i % 4}", f"t{rnd.randrange(60)}"
        kind = rnd.choice(("table.main", "index.main", "toast.main"))
        blocks = rnd.choice((1, 2, 4, 8))
        key = f"{db}/{schema}.{name}.{i}#{kind}"  # unique keys, many segments a relation
        segments.append({"key": key, "database": db, "schema": schema, "name": name, "kind": kind,
                         "bytes": blocks * 8192, "blocks": blocks, "units": []})
        ranges.append({"segment": key, "extents": [[0, 0, blocks]], "block_size": 8192,
                       "splittable": rnd.random() < 0.8})
    rnd.shuffle(ranges)
    units, items = [], {}
    for u in range(30):
        mine = ranges[u * 10:(u + 1) * 10]
        uid = f"u{u:02d}"
        units.append({"unit_id": uid, "bytes": sum(r["extents"][0][2] * 8192 for r in mine),
                      "blocks": sum(r["extents"][0][2] for r in mine), "priority": 0, "ranges": mine})
        status = rnd.choice(("DONE", "DONE", "FAILED", "RUNNING", None))
        if status is None:
            continue
        item: dict[str, Any] = {"status": status, "bytes_read": 0, "blocks_read": 0}
        if status != "DONE":
            item["cursor"] = {"range": rnd.randrange(10), "extent": 0, "offset": rnd.randrange(2)}
        if rnd.random() < 0.3:
            item["gone"] = [[mine[1]["segment"], 1, 1, 8192, "truncated while the run ran"]]
            item["gone_bytes"] = 8192
        items[uid] = item
    plan = {"engine": "postgres", "summary": {}, "segments": segments}
    doc = build_findings(RUN, plan, units, items)

    reads = segment_reads(units, items)
    judged = [{**{k: s[k] for k in ("key", "database", "schema", "name", "kind", "bytes", "blocks")},
               "status": segment_status(reads.get(s["key"])),
               "bytes_read": min(s["bytes"], (reads.get(s["key"]) or {}).get("read", 0)),
               **({"bytes_gone": g, "gone_reason": reads[s["key"]].get("gone_reason")}
                  if (g := (reads.get(s["key"]) or {}).get("gone", 0)) else {}),
               "units": s["units"]} for s in segments]
    assert doc["segments"] == judged  # 300 segments: all listed
    assert doc["coverage"] == coverage_section(judged)
    assert doc["truncated"] == truncated_section(judged) and doc["truncated"]
    assert doc["unread_units"] == unread_units(units, items)
    assert {s["status"] for s in judged} >= {"READ", "FAILED", "NOT_READ", "PARTLY"}
