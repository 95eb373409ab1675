"""Issue 32: the census streamed. Finalize reads each census as a stream from its own JSON Lines object (written in
parts) and keeps in findings.json the totals and a bounded list of the unread objects; every unread object goes to the
evidence object census-unread.jsonl. Judges: the census section of the code before (b9e5140, kept verbatim below) on
the same generated input, the arithmetic of hand-made cases, and S3's own account of an object (moto: its body, the
part count in its ETag, the open multipart uploads)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from cutover_prep import verdict
from cutover_prep.dal.records.census import CENSUS_END, CENSUS_START, CENSUS_UNREAD
from cutover_prep.dal.records.findings import Findings
from cutover_prep.dal.store import Store, evidence_key
from cutover_prep.engines.base import CensusObject, Extent, ReadResult, Segment
from cutover_prep.findings.census import FIELDS, LISTED, WAIVER
from cutover_prep.models.run_input import parse_run_input
from cutover_prep.models.steps import EndCensusEvent, RunContext, StepError
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.report import render_report
from cutover_prep.steps.discover import discover_and_plan
from cutover_prep.steps.end_census import END_CENSUS, take_end_census
from cutover_prep.steps.finalize import finalize
from tests.unit.contexts import run_state
from tests.unit.stored_sections import catch_up_reads, census_section
from tests.unit.stored_sections import unread_of as _unread_of


def _unread_reasons(findings: dict, t: Thresholds) -> list[dict]:
    """The verdict's UNREAD_OBJECTS rule on a findings excerpt, its reasons as findings.json holds them."""
    return [r.stored() for r in verdict._unread_reasons(Findings.read(findings), t)]

MIB = 2**20
BS = 8192


# ---- the judge: census_section as it was at b9e5140 (before issue 32), verbatim but its name; its helpers
# (_unread_of, catch_up_reads, FIELDS, WAIVER) are unchanged since ------------------------------------------------

def old_census_section(start: list[dict[str, Any]] | None, reads: dict[str, dict[str, Any]],
                       end: list[dict[str, Any]] | None = None,
                       catch_up: list[dict[str, Any]] | None = None, *,
                       datafile_pass_complete: bool = False) -> dict[str, Any]:
    """``census``: the objects on the volume, what was read, and every unread object named with its bytes
    and reason, grouped per database. ``reads`` is ``coverage.segment_reads`` of the run; ``catch_up`` what
    the end census's catch-up pass read."""
    if start is None:
        return {"taken": False}
    reads = {**reads, **catch_up_reads(catch_up)}
    objects = {o["key"]: o for o in start}
    dropped: list[dict[str, Any]] = []
    created: set[str] = set()
    if end is not None:
        now = {o["key"]: o for o in end}
        dropped = [{f: objects[k].get(f) for f in FIELDS} for k in objects if k not in now]
        created = {k for k in now if k not in objects}
        objects = now
    unread, by_db = [], {}
    for key, obj in objects.items():
        size = int(obj.get("bytes") or 0)
        missing, reason = _unread_of(obj, reads, datafile_pass_complete)
        if reason and reason != WAIVER and key in created and key not in reads:  # the input's waiver holds
            reason = "created after the census"
        db = by_db.setdefault(obj.get("database"), {"database": obj.get("database"), "objects": 0, "bytes": 0,
                                                    "unread_objects": 0, "unread_bytes": 0, "waived_bytes": 0})
        db["objects"] += 1
        db["bytes"] += size
        if reason is None:
            continue
        waived = reason == WAIVER
        db["unread_objects"] += 1
        db["waived_bytes" if waived else "unread_bytes"] += missing
        unread.append({**{k: obj.get(k) for k in FIELDS}, "bytes": size, "unread_bytes": missing,
                       "size_known": obj.get("size_known", True), "reason": reason, "waived": waived})
    unread.sort(key=lambda u: (u["waived"], -u["unread_bytes"], str(u["database"]), str(u["key"])))
    counted = [u for u in unread if not u["waived"]]
    return {
        "taken": True, "end_census": end is not None,
        "objects": len(objects), "bytes": sum(int(o.get("bytes") or 0) for o in objects.values()),
        "unread_bytes": sum(u["unread_bytes"] for u in counted),
        "waived_bytes": sum(u["unread_bytes"] for u in unread if u["waived"]),
        "unknown_size": [u["key"] for u in counted if not u["size_known"]],
        "by_database": sorted(by_db.values(), key=lambda d: (-d["unread_bytes"], -d["bytes"], str(d["database"]))),
        "unread": unread,
        "created": sorted(created),
        "dropped": dropped,
        "catch_up": catch_up or [],
    }


# ---- a generated census with every case ---------------------------------------------------------------------

def generated(n: int, seed: int = 32) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any],
                                               list[dict[str, Any]]]:
    """A start census of ``n`` objects in 7 databases, an end census (some dropped, some created, some grown), the
    reads of the run (done, failed part-way, never started) and a catch-up pass; in no particular order."""
    rng = random.Random(seed)
    reasons = [None] * 14 + ["no privilege", "not readable by SQL", WAIVER]

    def one(i: int) -> dict[str, Any]:
        db = f"db{i % 7}"
        return {"database": db, "schema": "s", "name": f"r{i}", "kind": "table.main", "bytes": rng.randrange(0, 9) * BS,
                "key": f"{db}/s.r{i}#table.main", "readable": True, "reason": rng.choice(reasons),
                "file": f"base/{i}", "size_known": rng.random() > 0.01}

    start = [one(i) for i in range(n)]
    end = [dict(o) for o in start if rng.random() > 0.02] + [one(i) for i in range(n, n + n // 40)]
    for o in end:
        if rng.random() < 0.03:
            o["bytes"] += 3 * BS  # grew
    rng.shuffle(start)
    rng.shuffle(end)
    reads = {}
    for o in start:
        if o["reason"] is None and rng.random() < 0.97:  # planned
            done = rng.random() < 0.9
            reads[o["key"]] = {"planned": o["bytes"], "read": o["bytes"] if done else o["bytes"] // 2, "done": done,
                               "failed": not done}
    catch_up = [{"key": o["key"], "planned_bytes": 0, "bytes": o["bytes"], "bytes_read": o["bytes"],
                 "status": rng.choice(["READ", "NOT_READ"])} for o in end[: n // 50]]
    return start, end, reads, catch_up


def streamed(census: list[dict[str, Any]]) -> Any:
    """The census as Finalize reads it now: a stream in key order, never a list."""
    return iter(sorted(census, key=lambda o: o["key"]))


@pytest.mark.parametrize("with_end", [True, False])
def test_a_large_census_streamed_gives_the_section_of_before_with_its_list_bounded(with_end: bool) -> None:
    start, end, reads, catch_up = generated(20_000)
    before = old_census_section(start, reads, end if with_end else None, catch_up if with_end else None)
    sink: list[dict[str, Any]] = []
    now = census_section(streamed(start), reads, streamed(end) if with_end else None,
                         catch_up if with_end else None, listed=100, unread_sink=sink.append)
    for field in ("taken", "end_census", "objects", "bytes", "unread_bytes", "waived_bytes", "by_database",
                  "catch_up"):
        assert now[field] == before[field], field
    assert len(before["unread"]) > 1000  # the case is one the bound matters for
    assert now["unread"] == before["unread"][:100]  # the largest un-waived first, in the order of before
    assert sorted(sink, key=lambda u: u["key"]) == sorted(before["unread"], key=lambda u: u["key"])  # all of them
    counted = [u for u in before["unread"] if not u["waived"]]
    assert (now["unread_objects"], now["waived_objects"]) == (len(counted), len(before["unread"]) - len(counted))
    assert now["unread_more"] == {"objects": len(before["unread"]) - 100,
                                  "bytes": sum(u["unread_bytes"] for u in before["unread"][100:])}
    assert now["unknown_size_objects"] == len(before["unknown_size"])
    assert set(now["unknown_size"]) <= set(before["unknown_size"]) and len(now["unknown_size"]) == min(
        100, len(before["unknown_size"]))
    assert now["created_objects"] == len(before["created"]) and now["created"] == before["created"][:100]
    assert now["dropped_objects"] == len(before["dropped"])
    assert now["dropped"] == sorted(before["dropped"], key=lambda d: d["key"])[:100]
    if with_end:
        assert before["dropped"] and before["created"]
    # the verdict counts them all, not the listed ones: the same reason as before, word for word
    assert _unread_reasons({"census": now}, Thresholds()) == _unread_reasons({"census": before}, Thresholds())


def test_the_list_is_bounded_and_says_what_it_leaves_out() -> None:
    """Five objects not read (6, 5, 4, 3 MiB and a waived 9 MiB), two listed: the two largest un-waived ones, and
    three more of 4 + 3 + 9 MiB; the verdict still counts four un-waived objects and 18 MiB."""
    census = [{"key": f"app/s.t{i}#table.main", "database": "app", "schema": "s", "name": f"t{i}",
               "kind": "table.main", "bytes": size * MIB, "reason": reason, "size_known": True, "file": None}
              for i, (size, reason) in enumerate([(6, None), (5, None), (4, None), (3, None), (9, WAIVER), (1, None)])]
    reads = {census[5]["key"]: {"planned": MIB, "read": MIB, "done": True, "failed": False}}
    section = census_section(census, reads, listed=2)
    assert [(u["name"], u["unread_bytes"] // MIB) for u in section["unread"]] == [("t0", 6), ("t1", 5)]
    assert section["unread_more"] == {"objects": 3, "bytes": (4 + 3 + 9) * MIB}
    assert (section["unread_objects"], section["waived_objects"], section["unread_bytes"]) == (4, 1, 18 * MIB)
    assert section["unread_listed_at_most"] == 2 and LISTED == 1000  # the bound findings.json states
    (reason,) = _unread_reasons({"census": section}, Thresholds())
    assert not reason["ok"] and reason["message"].startswith("4 objects on the volume not read: 18.00 MiB")
    assert " and 1 more" in reason["message"]


def test_a_census_stream_out_of_key_order_is_refused() -> None:
    rows = [{"key": "b", "bytes": 1}, {"key": "a", "bytes": 1}]
    with pytest.raises(ValueError, match="key order"):
        census_section(iter(rows), {})
    assert census_section(rows, {})["objects"] == 2  # a list (an older run's) is sorted first


# ---- S3: the JSON Lines objects, in parts --------------------------------------------------------------------

def test_a_json_lines_object_is_sent_in_parts_and_read_back_whole(store: Store) -> None:
    rows = [{"key": f"db/s.t{i:06d}#table.main", "pad": "x" * 180, "odd": "line\nbreak\u2028é"} for i in range(60_000)]
    key = evidence_key("r-parts", CENSUS_START)
    with store.json_lines_writer(key) as writer:
        writer.part_bytes = 5 * MIB  # S3's least part size: ~12 MiB of rows in three parts
        for row in rows:
            writer.write(row)
    head = store._s3.head_object(Bucket=store.bucket, Key=key)
    assert head["ETag"].strip('"').endswith("-3")  # S3 names a multipart object's part count in its ETag
    body = store._s3.get_object(Bucket=store.bucket, Key=key)["Body"].read()
    assert body.count(b"\n") == len(rows) and head["ContentLength"] > 10 * MIB
    assert list(store.json_lines(key)) == rows


def test_a_small_object_is_one_put_and_a_failed_write_leaves_no_part(store: Store) -> None:
    assert store.put_json_lines(evidence_key("r-small", CENSUS_END), [{"a": 1}, {"b": 2}]) == 2
    assert not store._s3.head_object(Bucket=store.bucket, Key=evidence_key("r-small", CENSUS_END))["ETag"] \
        .strip('"').count("-")
    assert list(store.json_lines(evidence_key("r-small", CENSUS_END))) == [{"a": 1}, {"b": 2}]
    key = evidence_key("r-broken", CENSUS_UNREAD)
    with pytest.raises(RuntimeError), store.json_lines_writer(key) as writer:
        writer.part_bytes = 5 * MIB
        for i in range(30_000):
            writer.write({"i": i, "pad": "y" * 200})
        raise RuntimeError("the census failed half-way")
    assert store._s3.list_multipart_uploads(Bucket=store.bucket).get("Uploads", []) == []
    assert not store.exists(key)


# ---- a run, from Discover to Finalize, in the new format and in the format of before --------------------------

N = 40


class Volume:
    """A volume of 40 tables of 256 KiB: every tenth not readable ("no privilege"), every tenth + 1 left out by
    the input; at the end one was dropped (5), one created (42) and one grew (7)."""

    def __init__(self, end: bool = False) -> None:
        self.end = end

    def _objects(self) -> list[tuple[Segment, str | None]]:
        out = []
        for i in [*range(N), *([N + 2] if self.end else [])]:
            if self.end and i == 5:
                continue
            size = 256 * 1024 * (2 if self.end and i == 7 else 1)
            seg = Segment(schema="s", name=f"t{i:02d}", kind="table.main", bytes=size, block_size=BS,
                          extents=(Extent(0, 0, size // BS),), locator={"oid": i}, database="app")
            out.append((seg, "no privilege" if i % 10 == 0 else WAIVER if i % 10 == 1 else None))
        return out

    def census(self, options: Any) -> list[CensusObject]:
        return [CensusObject(database="app", schema="s", name=s.name, kind=s.kind, bytes=s.bytes, key=s.key,
                             readable=reason != "no privilege", reason=reason) for s, reason in self._objects()]

    def discover(self, options: Any) -> list[Segment]:
        return [s for s, reason in self._objects() if reason is None]

    def read_range(self, rng: Any) -> ReadResult:
        blocks = sum(e.blocks for e in rng.extents)
        return ReadResult(blocks=blocks, bytes=blocks * BS, seconds=0.01, method="fake")

    def close(self) -> None:
        pass


def _secret(_arn: str) -> str:
    return '{"username": "u", "password": "p", "dbInstanceIdentifier": "db1"}'


def run_to_the_end(store: Store, run_id: str) -> tuple[list[dict[str, Any]], set[str]]:
    """Discover, every unit read but the third (failed), EndCensus; the units and the keys the failed one holds."""
    config = parse_run_input({"target": {"db_instance_identifier": "db1", "engine": "postgres",
                                         "secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db"},
                              "run_id": run_id, "benchmark": {"enabled": False},
                              "warmup": {"unit_mb": 1, "max_concurrency": 2}})
    state = {**config, "started_at": "2026-11-27T00:00:00+00:00", "instance": {"address": "db.example.com"}}
    store.start_run(state)
    out = discover_and_plan(run_state(state), store=store, read_secret=_secret, open_engine=lambda s,
                            w: Volume()).to_json()
    units = store.get_json(evidence_key(run_id, "units.json"))
    assert len(units) > 3
    for i, unit in enumerate(units):
        if i == 2:
            store.fail_unit(run_id, unit["unit_id"], error="ShortRead", cause="the test failed it")
        else:
            store.commit_progress(run_id, unit["unit_id"], seq=0, cursor=None, blocks=unit["blocks"],
                                  bytes_=unit["bytes"], seconds=1.0, method="fake", done=True,
                                  planned_bytes=unit["bytes"])
    take_end_census(EndCensusEvent(run=RunContext.model_validate(out["context"]), plan=out["end_census"]),
                    store=store, read_secret=_secret,
                    open_engine=lambda s, w: Volume(end=True)).to_json()
    return units, {r["segment"] for r in units[2]["ranges"]}


def as_before_issue_32(store: Store, run_id: str) -> None:
    """Rewrite the run's evidence as Discover and EndCensus wrote it before: each census a list inside plan.json and
    census-end.json, no JSON Lines object."""
    for name, doc_name in ((CENSUS_START, "plan.json"), (CENSUS_END, END_CENSUS)):
        key, doc_key = evidence_key(run_id, name), evidence_key(run_id, doc_name)
        doc = store.get_json(doc_key)
        assert doc["census"]["key"] == key  # the new format names its object
        store.put_json(doc_key, {**doc, "census": list(store.json_lines(key))})
        store._s3.delete_object(Bucket=store.bucket, Key=key)


def test_a_run_finalizes_from_its_streamed_census_and_a_run_of_before_still_does(store: Store) -> None:
    sections = {}
    for run_id, old in (("r-new", False), ("r-old", True)):
        units, failed = run_to_the_end(store, run_id)
        if old:
            as_before_issue_32(store, run_id)
        finalize(run_id, store=store)
        findings = store.get_json(evidence_key(run_id, "findings.json"))
        sections[run_id] = census = findings["census"]
        # by construction: 4 not readable (0, 10, 20, 30), 4 waived (1, 11, 21, 31), the failed unit's tables;
        # 5 dropped, 42 created and 7 grown were caught up by EndCensus (read)
        want = {f"app/s.t{i:02d}#table.main" for i in (0, 10, 20, 30, 1, 11, 21, 31)} | (
            failed - {"app/s.t05#table.main", "app/s.t07#table.main"})
        assert {u["key"] for u in census["unread"]} == want
        assert (census["objects"], census["dropped_objects"]) == (N, 1)
        assert census["created"] == ["app/s.t42#table.main"]
        assert census["unread_evidence"] == evidence_key(run_id, CENSUS_UNREAD)
        assert {u["key"] for u in store.json_lines(census["unread_evidence"])} == want
        waived = {f"app/s.t{i:02d}#table.main" for i in (1, 11, 21, 31)}
        assert census["unread_bytes"] == 256 * 1024 * len(want - waived)
    new, old = ({k: v for k, v in s.items() if k != "unread_evidence"} for s in sections.values())
    assert new == old


def test_the_reports_say_how_many_more_and_where_every_unread_object_is() -> None:
    """60 objects not read of 1 MiB each (the largest first: t00 has 60 MiB ... t59 1 MiB), 55 listed in
    findings.json: the reports show 50 rows, then "10 more" of 10 + 9 + ... + 1 = 55 MiB, and name the evidence."""
    from cutover_prep.report.markdown import summary_markdown
    from cutover_prep.report.terminal import terminal_lines
    from tests.unit.test_report import sample_findings

    census = [{"key": f"app/s.t{i:02d}#table.main", "database": "app", "schema": "s", "name": f"t{i:02d}",
               "kind": "table.main", "bytes": (60 - i) * MIB, "reason": "no privilege", "size_known": True,
               "file": None} for i in range(60)]
    end = census[1:]  # t00 dropped
    section = {**census_section(census, {}, listed=55), "unread_evidence": "runs/r1/census-unread.jsonl"}
    findings = {**sample_findings(), "census": section}
    text = summary_markdown(findings, findings_uri="s3://b/f", report_uri="s3://b/r")
    assert "- ... and 10 more (55 MiB): every unread object is in census-unread.jsonl" in text
    lines = terminal_lines(findings)
    assert "    ... and 50 more objects not read: every unread object is in census-unread.jsonl" in lines
    html = render_report(findings)
    assert "… and 10 more (55 MiB): every unread object is in census-unread.jsonl." in html
    dropped = census_section(census, {}, end, listed=0)
    assert dropped["dropped_objects"] == 1 and dropped["dropped"] == []
    assert "    ... and 1 more dropped" in terminal_lines({**sample_findings(), "census": dropped})


def test_the_latest_word_on_a_missing_end_census_is_the_one_the_findings_give(store: Store) -> None:
    """An end census whose census a lock kept from ending wrote ``census: null`` with that error; a later attempt of
    the step failed otherwise and its Catch recorded that on the run item (``record_end_census_failure``): the
    findings name the later one. With only the first, they name the first. Either way there is no end census."""
    from cutover_prep.steps.end_census import record_end_census_failure

    for run_id, later in (("r-lock", False), ("r-lock-then-down", True)):
        run_to_the_end(store, run_id)
        store.put_json(evidence_key(run_id, END_CENSUS), {
            "census": None, "catch_up": [],
            "error": {"error": "LockWaitTimeout", "cause": "waited 30 s for a lock on s.t01"}})
        if later:
            record_end_census_failure(run_id, StepError(Error="DatabaseUnreachable",
                                                        Cause="the server did not answer"), store=store)
        finalize(run_id, store=store)
        census = store.get_json(evidence_key(run_id, "findings.json"))["census"]
        assert census["end_census"] is False
        assert census["end_census_failure"]["error"] == ("DatabaseUnreachable" if later else "LockWaitTimeout")
