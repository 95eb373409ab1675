"""The findings read the run's stored documents as records (``dal.records``): a typed read must lose no field of what
it reads and writes on (the plan's units and ranges with the engine's own locator fields, the run item's plan summary
and preflight, a point item's fields, the ETA's replay, a census row)."""

from __future__ import annotations

import json

from cutover_prep.dal.records.findings import PreflightReport
from cutover_prep.dal.records.plan import PlanSegment, PlanSummary, PlanUnit
from cutover_prep.dal.records.run import PointItem, RunItem
from cutover_prep.dal.records.units import UnitProgress
from cutover_prep.findings import census, document, eta

UNIT = {"unit_id": "u000001", "priority": 0, "bytes": 3 * 8192, "blocks": 3,
        "ranges": [{"segment": "app/s.t#table", "locator": {"oid": 16384, "fork": "main", "cache": True,
                                                             "file_volumes": {"7": "rdsdbdata2"}, "rowid": [1, 2]},
                    "extents": [[7, 0, 2], [1, 4, 1]], "block_size": 8192, "splittable": False, "newer": "kept"}]}


def test_a_unit_of_units_json_reads_and_writes_back_with_every_field_of_its_ranges() -> None:
    unit = PlanUnit.model_validate(UNIT)
    assert json.dumps(unit.stored()) == json.dumps(UNIT)  # the Map's item, as it is: names, order, values
    (rng,) = unit.ranges
    assert (rng.bytes, rng.cached, rng.locator.file_volumes) == (3 * 8192, True, {"7": "rdsdbdata2"})
    assert unit.summary() == (UNIT["unit_id"], 3 * 8192, 3, 0, 1, True)


def test_the_run_items_plan_and_preflight_keep_the_fields_they_do_not_name() -> None:
    stored = {"run_id": "r1", "plan": {"units": 2, "segments": 1, "bytes": 8192, "read_methods": {"app": None},
                                       "later": {"a": 1}},
              "preflight": {"enabled": True, "ok": False, "failed": ["x"], "seconds": 1, "checks": {"fail": 1},
                            "on_failure": "warn", "evidence_key": "k", "later": True}}
    item = RunItem.read(stored)
    assert isinstance(item.plan, PlanSummary) and item.plan.read_methods == {"app": None}
    assert item.preflight.on_failure == "warn" and item.preflight.seconds == 1
    assert item.stored() == {**stored, "schema_version": 1}


def test_every_point_field_the_findings_name_reaches_the_benchmark_section() -> None:
    point = {f: f"v-{f}" for f in document.POINT_FIELDS if f not in ("sessions", "io_size_kb", "effective_io_kb",
                                                                     "iops", "throughput_kbps", "seconds")}
    probe = {f: f"v-{f}" for f in document.PROBE_FIELDS if f not in ("blocks_planned", "blocks_read", "overlap_blocks",
                                                                    "cold_sample_blocks", "iops", "throughput_kbps")}
    items = {"p1": PointItem.model_validate({**point, "point_id": "p1", "unnamed": 1}),
             "probe-cold": PointItem.model_validate({**probe, "point_id": "probe-cold"})}
    section = document.benchmark_section(RunItem(run_id="r1"), None, items, None).stored()
    assert section["points"] == [{**point, "point_id": "p1", "cloudwatch": {}}]
    assert section["probes"] == {"cold": probe}


def test_a_preflight_report_reads_every_check_field() -> None:
    report = PreflightReport.model_validate({"ok": True, "seconds": 0.5, "engine": "postgres", "failed": [],
                                             "checks": [{"kind": "k", "name": "n", "status": "PASS", "detail": "d",
                                                         "bytes": 8, "data": {"x": 1}}]})
    section = document.preflight_section(RunItem(run_id="r1"), report).stored()
    assert section["checks"] == [{"kind": "k", "name": "n", "status": "PASS", "detail": "d", "bytes": 8}]
    assert section["on_failure"] == "fail"  # a report without it: the default


def test_an_eta_replay_is_written_back_as_it_was_read() -> None:
    record = {"planned_bytes": 10, "read_bytes": 10,
              "estimate": {"assumed_mib_per_s": 9.5, "range_seconds": None, "concurrency": 1},
              "units": [{"unit_id": "u", "bytes": 10, "ranges": 2}],
              "unit_items": {"u": {"status": "DONE", "started_at": "2026-01-01T00:00:00+00:00",
                                   "finished_at": "2026-01-01T00:00:01+00:00", "bytes_read": 10,
                                   "chunks": [["2026-01-01T00:00:01+00:00", 10, 1.0]]}}}
    replay = eta.EtaReplay.model_validate(record)
    assert json.dumps(replay.stored()) == json.dumps(record)
    items = {"u": UnitProgress.read(record["unit_items"]["u"])}
    made = eta.replay_record(items, [PlanUnit.model_validate({"unit_id": "u", "bytes": 10,
                                                              "ranges": [{}, {}]}).summary()], 10, 10, replay.estimate)
    assert json.dumps(made.stored()) == json.dumps(record)


def test_a_census_row_reads_every_field_and_an_unread_row_is_written_in_the_order_of_before() -> None:
    row = {"database": "d", "schema": "s", "name": "t", "kind": "table.main", "bytes": 8192, "key": "d/s.t#table",
           "readable": False, "reason": "no privilege", "file": "f", "size_known": False, "identity": "1"}
    entry = census.CensusEntry.of(row)
    assert entry._asdict() == row
    seen: list = []
    census.census_section([row], {}, unread_sink=seen.append)
    assert list(seen[0].stored()) == [*census.FIELDS, "unread_bytes", "waived"]
    assert PlanSegment.model_validate({"key": "k", "schema": "s", "name": "t"}).names() == ["s.t"]
