"""The benchmark steps' bookkeeping on a real Store (moto) with a scripted driver:
what is measured once stays measured, failures are recorded before they are raised."""

from __future__ import annotations

from typing import Any

import pytest

from cutover_prep.benchmark import measure_point, plan_sweep, probe, record_benchmark_failure
from cutover_prep.engines import PermanentReadError
from cutover_prep.inputs import Benchmark
from cutover_prep.store import evidence_key
from cutover_prep.sweep.model import PointSpec, ScanResult

UNITS = [
    {"unit_id": "u1", "ranges": [
        {"segment": "db/app.big#table.main", "locator": {"database": "db", "oid": 1, "fork": "main", "relkind": "r"},
         "extents": [[0, 0, 1000]], "block_size": 8192},
        {"segment": "db/app.big_idx#index.main",
         "locator": {"database": "db", "oid": 2, "fork": "main", "relkind": "i"},
         "extents": [[0, 0, 5000]], "block_size": 8192},
    ]},
    {"unit_id": "u2", "ranges": [
        {"segment": "db/app.small#table.main",
         "locator": {"database": "db", "oid": 3, "fork": "main", "relkind": "r"},
         "extents": [[0, 0, 10]], "block_size": 8192},
    ]},
]


class Reader:
    def __init__(self, log: list) -> None:
        self.log = log

    def read_block(self, locator: dict[str, Any], file_id: int, block: int) -> None:
        self.log.append((locator["oid"], block))

    def close(self) -> None:
        pass


class Driver:
    engine = "fake"

    def __init__(self, fail: Exception | None = None) -> None:
        self.reads: list = []
        self.fail = fail
        self.closed = False
        self.reads_counter = 0

    def capabilities(self) -> dict[str, Any]:
        return {"server_version": "1", "knobs": {}, "counters": "fake", "latency_histogram": None, "notes": ["n1"]}

    def io_size_points(self, options, target) -> list[PointSpec]:
        return [PointSpec("seq", "sequential", options.seconds_per_point)]

    def counters(self) -> dict[str, float]:
        self.reads_counter += 10
        return {"read_requests": float(self.reads_counter), "read_bytes": float(self.reads_counter * 8192)}

    def latency_histogram(self):
        return None

    def scan(self, spec, target, deadline) -> ScanResult:
        if self.fail:
            raise self.fail
        return ScanResult(bytes=8192 * 4, calls=4, seconds=0.01)

    def random_reader(self) -> Reader:
        return Reader(self.reads)

    def write_point(self, spec, deadline) -> ScanResult:
        raise AssertionError("no write test unless asked")

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def run(store) -> dict[str, Any]:
    store.put_json(evidence_key("r1", "units.json"), UNITS)
    bench = Benchmark(probe_blocks=50, seconds_per_point=1, sessions=[1]).model_dump(mode="json")
    return {"run_id": "r1", "target": {"db_instance_identifier": "db1"}, "benchmark": bench,
            "warmup": {"create_extension": False}}


def test_cold_probe_samples_table_blocks_only_and_is_never_measured_twice(store, run):
    driver = Driver()
    first = probe(run, "cold", store=store, open_driver=lambda r, db: driver)
    assert first["status"] == "DONE" and first["blocks_read"] == 50 and not first["reused"]
    assert {oid for oid, _ in driver.reads} <= {1, 3}  # never the index (oid 2)
    assert driver.closed
    again = Driver()
    second = probe(run, "cold", store=store, open_driver=lambda r, db: again)
    assert second["reused"] and again.reads == []  # blocks are warm now: a second "cold" probe would lie


def test_warm_probe_reads_exactly_the_cold_blocks(store, run):
    cold, warm = Driver(), Driver()
    probe(run, "cold", store=store, open_driver=lambda r, db: cold)
    probe(run, "warm", store=store, open_driver=lambda r, db: warm)
    assert warm.reads == cold.reads
    assert store.get_point("r1", "probe-warm")["blocks_read"] == 50


def test_warm_probe_without_a_cold_one_is_skipped_not_invented(store, run):
    result = probe(run, "warm", store=store, open_driver=lambda r, db: Driver())
    assert result["status"] == "SKIPPED"
    assert "no cold probe" in store.get_point("r1", "probe-warm")["cause"]


def test_a_cold_probe_after_a_restart_says_blocks_may_be_warm(store, run):
    store.commit_progress("r1", "u1", seq=0, cursor=None, blocks=1000, bytes_=8192000, seconds=1.0,
                          method="x", done=True, planned_bytes=8192000)
    probe(run, "cold", store=store, open_driver=lambda r, db: Driver())
    assert "may not be cold" in store.get_point("r1", "probe-cold")["note"]


def test_sweep_plan_targets_the_biggest_table_and_is_kept_on_restart(store, run):
    planned = plan_sweep(run, store=store, open_driver=lambda r, db: Driver())
    assert [p["point_id"] for p in planned["points"]] == ["seq", "random-01s"]
    plan = store.get_json(evidence_key("r1", "sweep/plan.json"))
    assert plan["target"]["segment"] == "db/app.big#table.main" and plan["notes"] == ["n1"]
    again = plan_sweep(run, store=store, open_driver=lambda r, db: pytest.fail("no new plan"))
    assert again["reused"] and again["points"] == planned["points"]


def test_write_points_only_when_asked(store, run):
    run["benchmark"]["write_test"] = True
    planned = plan_sweep(run, store=store, open_driver=lambda r, db: Driver())
    assert {"write-direct", "write-random"} <= {p["point_id"] for p in planned["points"]}


def test_a_point_is_measured_once_with_counter_deltas(store, run):
    planned = plan_sweep(run, store=store, open_driver=lambda r, db: Driver())
    seq = planned["points"][0]
    result = measure_point(run, seq, store=store, open_driver=lambda r, db: Driver())
    doc = store.get_json(evidence_key("r1", "sweep/points/seq.json"))
    assert doc["source"] == "engine" and doc["requests"] == 10 and doc["bytes"] == 81920
    assert doc["client"]["requests"] == 4
    assert result["status"] == "DONE" and not result["reused"]
    assert measure_point(run, seq, store=store, open_driver=lambda r, db: pytest.fail("measured twice"))["reused"]


def test_a_failing_point_is_recorded_before_it_is_raised(store, run):
    planned = plan_sweep(run, store=store, open_driver=lambda r, db: Driver())
    broken = Driver(fail=PermanentReadError("relation was dropped"))
    with pytest.raises(PermanentReadError):
        measure_point(run, planned["points"][0], store=store, open_driver=lambda r, db: broken)
    item = store.get_point("r1", "seq")
    assert item["status"] == "FAILED" and item["error"] == "PermanentReadError" and "dropped" in item["cause"]
    assert broken.closed


def test_benchmark_failure_is_recorded_on_the_run(store, run):
    store.start_run({"run_id": "r1", "target": {"db_instance_identifier": "db1"}, "started_at": "2026-01-01T00:00:00"})
    out = record_benchmark_failure("r1", {"Error": "TransientDatabaseError",
                                          "Cause": '{"errorMessage": "timeout", "stackTrace": []}'}, store=store)
    assert out["error"] == "TransientDatabaseError" and out["cause"] == "timeout"
    item = store.get_run("r1")
    assert item["benchmark_status"] == "FAILED" and item["benchmark_cause"] == "timeout"
