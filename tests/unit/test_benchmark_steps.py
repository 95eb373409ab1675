"""The benchmark steps' bookkeeping on a real Store (moto) with a scripted driver:
what is measured once stays measured, failures are recorded before they are raised."""

from __future__ import annotations

from typing import Any

import pytest

from cutover_prep.benchmark.steps import measure_point, plan_sweep, probe, record_benchmark_failure
from cutover_prep.dal.records.run import PointItem
from cutover_prep.dal.store import evidence_key
from cutover_prep.engines import PermanentReadError, TransientDatabaseError
from cutover_prep.engines.bench import PointSpec, ScanResult
from cutover_prep.engines.locators import PgLocator
from cutover_prep.models.benchmark import Benchmark
from cutover_prep.models.steps import RunContext, StepError
from tests.unit.contexts import context

UNITS = [
    {"unit_id": "u1", "ranges": [
        {"segment": "db/app.big#table.main",
         "locator": {"database": "db", "oid": 16385, "fork": "main", "relkind": "r"},
         "extents": [[0, 0, 64_000]], "block_size": 8192},  # 1,000 snapshot blocks: room for 50-block probes
        {"segment": "db/app.big_idx#index.main",
         "locator": {"database": "db", "oid": 16386, "fork": "main", "relkind": "i"},
         "extents": [[0, 0, 5000]], "block_size": 8192},
    ]},
    {"unit_id": "u2", "ranges": [
        {"segment": "db/app.small#table.main",
         "locator": {"database": "db", "oid": 16387, "fork": "main", "relkind": "r"},
         "extents": [[0, 0, 10]], "block_size": 8192},
    ]},
]


class Reader:
    def __init__(self, log: list) -> None:
        self.log = log

    def read_block(self, locator: PgLocator, file_id: int, block: int) -> None:
        self.log.append((locator.oid, block))

    def close(self) -> None:
        pass


class Driver:
    engine = "fake"

    def __init__(self, fail: Exception | None = None) -> None:
        self.reads: list = []
        self.fail = fail
        self.closed = False
        self.reads_counter = 0
        self.engine_counts_reads = True

    def capabilities(self) -> dict[str, Any]:
        return {"server_version": "1", "knobs": {}, "counters": "fake", "latency_histogram": None, "notes": ["n1"]}

    def io_size_points(self, options, target) -> list[PointSpec]:
        return [PointSpec("seq", "sequential", options.seconds_per_point)]

    def counters(self) -> dict[str, float]:
        self.reads_counter += 10
        return {"read_requests": float(self.reads_counter), "read_bytes": float(self.reads_counter * 8192)}

    def counts_reads_of(self, spec) -> bool:
        return self.engine_counts_reads

    def latency_histogram(self):
        return None

    def scan(self, spec, target, deadline) -> ScanResult:
        if self.fail:
            raise self.fail
        return ScanResult(bytes=8192 * 4, calls=4, seconds=0.01)

    def random_reader(self) -> Reader:
        return Reader(self.reads)

    def write_point(self, spec, deadline, scratch) -> ScanResult:
        raise AssertionError("no write test unless asked")

    def drop_scratch(self, scratch):
        raise AssertionError("no scratch object unless asked")

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def run(store) -> RunContext:
    store.put_json(evidence_key("r1", "units.json"), UNITS)
    bench = Benchmark(probe_blocks=50, seconds_per_point=1, sessions=[1]).model_dump(mode="json")
    return context("r1", "db1", benchmark=bench, warmup={"create_extension": False})


def test_cold_probe_samples_table_blocks_only_and_is_never_measured_twice(store, run):
    driver = Driver()
    first = probe(run, "cold", store=store, open_driver=lambda r, db: driver).to_json()
    assert first["status"] == "DONE" and first["blocks_read"] == 50 and not first["reused"]
    assert {oid for oid, _ in driver.reads} <= {16385, 16387}  # never the index (oid 16386)
    assert driver.closed
    again = Driver()
    second = probe(run, "cold", store=store, open_driver=lambda r, db: again).to_json()
    assert second["reused"] and again.reads == []  # blocks are warm now: a second "cold" probe would lie


def test_warm_probe_reads_a_fresh_sample_disjoint_from_the_cold_one(store, run):
    """The old warm probe re-read the cold probe's blocks, which the cold probe had hydrated."""
    cold, warm = Driver(), Driver()
    probe(run, "cold", store=store, open_driver=lambda r, db: cold)
    summary = probe(run, "warm", store=store, open_driver=lambda r, db: warm).to_json()
    assert len(set(warm.reads)) == 50 and set(warm.reads).isdisjoint(cold.reads)
    assert {oid for oid, _ in warm.reads} <= {16385, 16387}  # the same distribution: table blocks only
    item = store.get_point("r1", "probe-warm").stored()
    assert item["blocks_read"] == 50 and item["overlap_blocks"] == 0 and item["cold_sample_blocks"] == 50
    assert summary["overlap_blocks"] == 0


def test_a_retried_warm_probe_reads_the_same_fresh_blocks(store, run):
    probe(run, "cold", store=store, open_driver=lambda r, db: Driver())

    class Flaky(Driver):  # the first attempt dies half-way, the retry reads again from the start
        def random_reader(self):
            reader = Reader(self.reads)
            read = reader.read_block

            def once_broken(locator, file_id, block):
                if len(self.reads) == 20 and not getattr(self, "broke", False):
                    self.broke = True
                    raise TransientDatabaseError("connection reset")
                read(locator, file_id, block)
            reader.read_block = once_broken
            return reader

    flaky = Flaky()
    probe(run, "warm", store=store, open_driver=lambda r, db: flaky)
    assert flaky.reads[:20] == flaky.reads[20:40] and store.get_point("r1", "probe-warm").retries == 1
    saved = store.get_json(evidence_key("r1", "probes/sample-warm.json"))["blocks"]
    assert [(b["locator"]["oid"], b["block"]) for b in saved] == flaky.reads[20:]


def test_a_database_with_no_block_outside_the_cold_sample_says_the_warm_probe_re_read_them(store, run):
    # one table block, the cold sample's (a probe reads at most a quarter of the snapshot blocks, at least one)
    tiny = [{"unit_id": "u1", "ranges": [{**UNITS[1]["ranges"][0], "extents": [[0, 0, 1]]}]}]
    store.put_json(evidence_key("r1", "units.json"), tiny)
    cold, warm = Driver(), Driver()
    probe(run, "cold", store=store, open_driver=lambda r, db: cold)
    probe(run, "warm", store=store, open_driver=lambda r, db: warm)
    item = store.get_point("r1", "probe-warm").stored()
    assert sorted(warm.reads) == sorted(cold.reads) and item["overlap_blocks"] == 1
    assert "re-read" in item["note"]


def test_warm_probe_without_a_cold_one_is_skipped_not_invented(store, run):
    result = probe(run, "warm", store=store, open_driver=lambda r, db: Driver()).to_json()
    assert result == {"phase": "warm", "status": "SKIPPED"}
    assert "no cold probe" in store.get_point("r1", "probe-warm").cause


def test_a_cold_probe_after_a_restart_says_blocks_may_be_warm(store, run):
    store.commit_progress("r1", "u1", seq=0, cursor=None, blocks=1000, bytes_=8192000, seconds=1.0,
                          method="x", done=True, planned_bytes=8192000)
    probe(run, "cold", store=store, open_driver=lambda r, db: Driver())
    assert "may not be cold" in store.get_point("r1", "probe-cold").note


def test_sweep_plan_targets_the_biggest_table_and_is_kept_on_restart(store, run):
    planned = plan_sweep(run, store=store, open_driver=lambda r, db: Driver()).to_json()
    assert [p["point_id"] for p in planned["points"]] == ["seq", "random-01s"]
    plan = store.get_json(evidence_key("r1", "sweep/plan.json"))
    assert plan["target"]["segment"] == "db/app.big#table.main" and plan["notes"] == ["n1"]
    again = plan_sweep(run, store=store, open_driver=lambda r, db: pytest.fail("no new plan")).to_json()
    assert again["reused"] and again["points"] == planned["points"]


def test_write_points_only_when_asked(store, run):
    run.benchmark.write_test = True
    planned = plan_sweep(run, store=store, open_driver=lambda r, db: Driver()).to_json()
    assert {"write-direct", "write-random"} <= {p["point_id"] for p in planned["points"]}


def test_a_point_is_measured_once_with_counter_deltas(store, run):
    planned = plan_sweep(run, store=store, open_driver=lambda r, db: Driver()).to_json()
    seq = planned["points"][0]
    result = measure_point(run, seq, store=store, open_driver=lambda r, db: Driver()).to_json()
    doc = store.get_json(evidence_key("r1", "sweep/points/seq.json"))
    assert doc["source"] == "engine" and doc["requests"] == 10 and doc["bytes"] == 81920
    assert doc["client"]["requests"] == 4
    assert result["status"] == "DONE" and not result["reused"]
    assert measure_point(run, seq, store=store, open_driver=lambda r, db: pytest.fail("measured twice")).reused


def test_counters_that_do_not_see_the_points_reads_are_not_its_rate(store, run):
    """The demo's random-01s read 254 blocks with pg_read_binary_file (below shared buffers) while
    pg_stat_io moved by 5 other reads: the point was recorded as 1 IO/s from the 'engine'."""
    planned = plan_sweep(run, store=store, open_driver=lambda r, db: Driver()).to_json()
    blind = Driver()
    blind.engine_counts_reads = False
    measure_point(run, planned["points"][0], store=store, open_driver=lambda r, db: blind)
    doc = store.get_json(evidence_key("r1", "sweep/points/seq.json"))
    assert doc["source"] == "client" and doc["requests"] == 4 and doc["bytes"] == 4 * 8192


def test_a_failing_point_is_recorded_before_it_is_raised(store, run):
    planned = plan_sweep(run, store=store, open_driver=lambda r, db: Driver()).to_json()
    broken = Driver(fail=PermanentReadError("relation was dropped"))
    with pytest.raises(PermanentReadError):
        measure_point(run, planned["points"][0], store=store, open_driver=lambda r, db: broken)
    item = store.get_point("r1", "seq").stored()
    assert item["status"] == "FAILED" and item["error"] == "PermanentReadError" and "dropped" in item["cause"]
    assert broken.closed


def test_benchmark_failure_is_recorded_on_the_run(store, run):
    store.start_run({"run_id": "r1", "target": {"db_instance_identifier": "db1"}, "started_at": "2026-01-01T00:00:00"})
    out = record_benchmark_failure("r1", StepError(Error="TransientDatabaseError",
                                                   Cause='{"errorMessage": "timeout", "stackTrace": []}'), store=store)
    assert out.to_json() == {"status": "FAILED", "error": "TransientDatabaseError", "cause": "timeout"}
    item = store.get_run("r1").stored()
    assert item["benchmark_status"] == "FAILED" and item["benchmark_cause"] == "timeout"


def test_a_point_that_did_not_finish_is_recorded_failed_once(store, run):
    from cutover_prep.benchmark.steps import record_point_failure

    error = StepError(Error="States.Timeout", Cause="")
    assert record_point_failure("r1", "random-01s", error, store=store).to_json() == {
        "point_id": "random-01s", "status": "FAILED", "error": "States.Timeout", "recorded": True}
    item = store.get_point("r1", "random-01s").stored()
    assert (item["status"], item["error"], item["cause"]) == ("FAILED", "States.Timeout", "States.Timeout")
    store.put_point("r1", PointItem.new(point_id="seq", status="DONE", iops=5.0))
    assert record_point_failure("r1", "seq", error, store=store).to_json() == {
        "point_id": "seq", "status": "DONE", "recorded": False}
    assert store.get_point("r1", "seq").status == "DONE"


def test_planned_points_without_a_record_count_as_not_measured():
    from cutover_prep.benchmark.evidence import failed_points
    from cutover_prep.dal.records.run import PointItem

    planned = [PointSpec("seq", "sequential", 1.0), PointSpec("random-01s", "random", 1.0),
               PointSpec("write-direct", "write_direct", 1.0)]
    items = {pid: PointItem.read({"point_id": pid, "status": status}) for pid, status in (("seq", "DONE"),
                                                                                         ("random-01s", "RUNNING"))}
    assert [p.point_id for p in failed_points(planned, items, write_test=False)] == ["random-01s"]
    assert [p.error for p in failed_points(planned, items, write_test=True)] == ["NotMeasured", "NotMeasured"]
    assert failed_points(planned, items, write_test=False)[0]._asdict() == {
        "point_id": "random-01s", "error": "NotMeasured",
        "cause": "the point did not finish and left no record (RUNNING)"}


class Flaky(Driver):
    """Fails its first scan or read with a transient database error."""

    failures = 0

    def scan(self, spec, target, deadline) -> ScanResult:
        if Flaky.failures:
            Flaky.failures -= 1
            raise TransientDatabaseError("connection reset (injected)")
        return super().scan(spec, target, deadline)


def test_a_point_is_retried_after_a_transient_error_and_the_retry_is_counted(store, run):
    plan_sweep(run, store=store, open_driver=lambda r, db: Driver())
    Flaky.failures = 1
    opened = []
    result = measure_point(run, {"point_id": "seq", "kind": "sequential", "seconds": 0.01}, store=store,
                           open_driver=lambda r, db: opened.append(1) or Flaky()).to_json()
    assert result["status"] == "DONE" and len(opened) == 2
    assert store.get_point("r1", "seq").retries == 1


def test_a_cold_probe_is_never_retried(store, run):
    """Its first attempt has read (warmed) some of the sample: a second attempt would not be cold."""
    class Broken(Driver):
        def random_reader(self):
            raise TransientDatabaseError("connection reset (injected)")

    opened = []
    with pytest.raises(TransientDatabaseError):
        probe(run, "cold", store=store, open_driver=lambda r, db: opened.append(1) or Broken())
    assert len(opened) == 1
    item = store.get_point("r1", "probe-cold").stored()
    assert item["status"] == "FAILED" and item["error"] == "TransientDatabaseError" and item["retries"] == 0
