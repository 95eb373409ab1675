"""Probes and sweep points against the real PostgreSQL server: real reads, real counters,
nothing written unless the write test is asked for (and then nothing left behind)."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from cutover_prep.benchmark.scratch import scratch_for_run
from cutover_prep.benchmark.steps import sweep_options
from cutover_prep.engines import DiscoveryOptions
from cutover_prep.engines.bench import PointSpec
from cutover_prep.engines.postgres.bench import PostgresBench
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.measure import runner
from cutover_prep.measure.runner import run_point, run_probe
from cutover_prep.measure.sample import BlockPicker, block_readable, scan_target
from cutover_prep.models.benchmark import Benchmark
from cutover_prep.warmup.planning import PlanOptions, plan_units
from tests.conftest import conninfo
from tests.integration.test_postgres_engine import tuple_counters

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def units(sample_db):
    engine = PostgresEngine.connect(sample_db)
    try:
        segments = engine.discover(DiscoveryOptions(databases=(sample_db.database,)))
    finally:
        engine.close()
    return [u.to_json() for u in plan_units(segments, PlanOptions(unit_bytes=2 * 2**20)).units]


@pytest.fixture
def bench(sample_db):
    driver = PostgresBench.from_spec(sample_db, sample_db.database)
    yield driver
    driver.close()


def all_ranges(units):
    return [r for u in units for r in u["ranges"]]


def test_the_same_seed_picks_the_same_blocks_and_only_heap_blocks(units):
    a = BlockPicker(all_ranges(units), seed=7).sample(200)
    b = BlockPicker(all_ranges(units), seed=7).sample(200)
    assert a == b and len(a) == 200
    assert len({(x["segment"], x["block"]) for x in a}) == 200
    assert all(block_readable(x["locator"]) and x["locator"]["fork"] == "main" for x in a)
    sizes = {r["segment"]: sum(e[2] for e in r["extents"]) for r in all_ranges(units)}
    assert all(x["block"] < 10**7 for x in a) and sizes


def test_scan_target_is_the_biggest_heap(units):
    target = scan_target(units)
    heaps = {}
    for r in all_ranges(units):
        if block_readable(r["locator"]):
            heaps[r["segment"]] = heaps.get(r["segment"], 0) + sum(e[2] for e in r["extents"])
    assert target.segment_key == max(heaps, key=heaps.get)
    assert sum(e[2] for e in target.extents) == heaps[target.segment_key]


def test_probe_reads_each_sampled_block_once_and_times_it(bench, units, sample_db):
    blocks = BlockPicker(all_ranges(units), seed=1).sample(50)
    before = tuple_counters(sample_db)
    result = run_probe(bench, blocks, phase="cold", max_seconds=60)
    assert result["blocks_read"] == 50 and not result["cut_short"]
    assert result["iops"] > 0 and result["throughput_kbps"] == pytest.approx(result["iops"] * 8, rel=0.01)
    assert sum(result["latency_hist_us"].values()) == 50
    assert result["latency_us"]["p50"] <= result["latency_us"]["p99"] <= result["latency_us"]["max"]
    assert result["started_at"] < result["finished_at"]
    assert tuple_counters(sample_db) == before  # read-only


def test_the_server_times_each_probe_read_inside_the_clients_own_time(bench, units):
    """Issue 24 §5: the probe's latencies are the server's (the read's own statement), each one inside the
    client's round trip for it, so every order statistic of the server's is at most the client's."""
    blocks = BlockPicker(all_ranges(units), seed=3).sample(30)
    result = run_probe(bench, blocks, phase="cold", max_seconds=60)
    assert result["timed_by"] == "server" and result["blocks_read"] == 30
    server, client = result["latency_us"], result["client_latency_us"]
    assert 0 < server["p50"] <= client["p50"] and server["max"] <= client["max"]


def test_timed_read_measures_the_expression_it_evaluates(sample_db):
    """The server's clock around the expression, in the order the data imposes: pg_sleep(0.05) takes at least
    50 ms on it (PostgreSQL's documentation: at least the given time), and no more than the client waited."""
    from psycopg import sql

    from cutover_prep.engines.postgres.bench import timed_read

    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        started = time.perf_counter()
        value, seconds = timed_read(conn, sql.SQL("(SELECT 7 FROM pg_sleep(%s))"), (0.05,))
        waited = time.perf_counter() - started
    assert value == 7 and 0.05 <= seconds <= waited


def test_probe_stops_at_its_time_limit(bench, units):
    blocks = BlockPicker(all_ranges(units), seed=2).sample(500)
    result = run_probe(bench, blocks, phase="warm", max_seconds=0)
    assert result["blocks_read"] == 0 and result["cut_short"]


def test_capabilities_say_which_knobs_apply(bench):
    caps = bench.capabilities()
    version = caps["version_num"]
    assert caps["knobs"]["io_combine_limit"] is (version >= 170000)
    assert caps["counters"] == ("pg_stat_io" if version >= 160000 else "pg_stat_database")
    if version < 170000:
        assert any("io_combine_limit" in n for n in caps["notes"])
    points = bench.io_size_points(sweep_options(Benchmark(seconds_per_point=1)), scan_target([]) or _dummy_target())
    assert points[0].kind == "sequential" and points[0].knobs == {}
    assert (len(points) > 1) is (version >= 170000)


def _dummy_target():
    from cutover_prep.engines.bench import SweepTarget

    return SweepTarget("x", {}, ((0, 0, 1),), 8192)


def test_sequential_point_reads_the_target_in_order_for_its_time(bench, units):
    target = scan_target(units)
    spec = PointSpec(point_id="seq", kind="sequential", seconds=1.0)
    m = run_point(bench, spec, target=target, picker=None, block_size=8192)
    assert m.seconds >= 0.2
    assert m.client.bytes > 0 and m.client.bytes % 8192 == 0
    passes = m.passes  # structured; the note says the same in words
    assert (passes - 1) * target.bytes < m.client.bytes <= passes * target.bytes
    assert m.cached == (passes > 1) and m.to_json()["cached"] == m.cached  # a re-read may come from the page cache
    assert (f"was read {passes} times" in " ".join(m.notes)) == (passes > 1)
    assert m.started_at < m.finished_at
    assert m.throughput_kbps > 0 and m.to_json()["effective_io_kb"] > 0


class ReadsClock:
    """``time`` for the point runner: each thread's ``monotonic`` moves ``STEP`` on from its last answer, so a
    session sees the deadline after the same number of reads whatever the machine's load or the threads' turns;
    the main thread sees the furthest any thread got (the point's length). ``perf_counter`` is the real one."""

    STEP = 1 / 64  # exact in binary: no rounding at the deadline

    def __init__(self) -> None:
        self._local, self._lock, self._furthest = threading.local(), threading.Lock(), 0.0

    def monotonic(self) -> float:
        if threading.current_thread() is threading.main_thread():
            with self._lock:
                return self._furthest
        now = getattr(self._local, "now", 0.0)
        self._local.now = now + self.STEP
        with self._lock:
            self._furthest = max(self._furthest, now)
        return now

    perf_counter = staticmethod(time.perf_counter)


@pytest.mark.parametrize("sessions", [1, 4])
def test_random_point_runs_every_session_until_the_deadline(bench, units, sessions, monkeypatch):
    ranges = all_ranges(units)
    monkeypatch.setattr(runner, "time", ReadsClock())
    spec = PointSpec(point_id=f"random-{sessions}", kind="random", seconds=0.5, sessions=sessions)
    m = run_point(bench, spec, target=None, picker=lambda i: BlockPicker(ranges, seed=100 + i), block_size=8192)
    assert m.notes == []
    reads_each = int(spec.seconds / ReadsClock.STEP)  # a read at 0, STEP, ... up to the one before the deadline
    assert m.client.requests == sessions * reads_each  # every session read until the deadline, none after
    assert sum(m.latency_hist_us.values()) == m.client.requests
    assert m.seconds == spec.seconds
    assert m.iops > 0


@pytest.mark.parametrize("kind", ["write_direct", "write_random"])
def test_write_test_writes_only_its_scratch_schema_and_drops_it(bench, sample_db, kind):
    spec = PointSpec(point_id=kind, kind=kind, seconds=0.5)
    scratch = scratch_for_run(f"sweep-{kind}", "postgres", 64 * 2**20)
    m = run_point(bench, spec, target=None, picker=None, block_size=8192, scratch=scratch)
    assert m.client.requests >= 1
    with psycopg.connect(conninfo(sample_db)) as conn:
        assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = %s",
                            (scratch.name,)).fetchone()[0] == 0


def test_counters_wait_for_the_closed_sessions_to_report_their_reads(bench, sample_db):
    """A session's reads reach the statistics when it reports them: at a transaction end at most
    once a second, else when the backend exits (PostgreSQL, "The Cumulative Statistics System":
    "each individual server process flushes out accumulated statistics to shared memory just
    before going idle, but not more frequently than once per PGSTAT_MIN_INTERVAL milliseconds
    (1 second)"; the exit flush runs before the backend leaves pg_stat_activity). Counters read right
    after a point's sessions closed lacked their last second: the next point got it (a random
    point measured 3,570 IOPS against a 3,000 IOPS emulated ceiling in CI). The closed session
    here is kept busy for a second after its client hung up, so it exits late: the counters taken
    after its close must include its reads all the same."""
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        table, blocks = conn.execute(
            "SELECT c.oid::regclass::text, c.relpages FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
            "ORDER BY c.relpages DESC LIMIT 1").fetchone()
        conn.execute(f"SELECT count(*) FROM {table}")  # in shared buffers: the scan below counts hits  # noqa: S608
        setup_pid = conn.info.backend_pid
    assert blocks > 100
    with psycopg.connect(conninfo(sample_db), autocommit=True) as watch:  # the setup's own hits reported first
        while watch.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (setup_pid,)).fetchone():
            watch.execute("SELECT pg_sleep(0.05)")
    before = bench.counters()
    reader = bench.random_reader()
    session = reader._engine.connection(sample_db.database)
    session.execute("SELECT 1")  # the session's first report is at once; the next waits a second
    session.execute(f"SELECT count(*) FROM {table}")  # noqa: S608
    session.pgconn.send_query(b"SELECT pg_sleep(1)")  # busy when the client hangs up: exits a second late
    reader.close()
    after = bench.counters()
    assert after["blks_hit"] - before["blks_hit"] >= blocks
