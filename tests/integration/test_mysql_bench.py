"""The MySQL / MariaDB benchmark driver against a real server: counters, row lookups, scans, and the
opt-in write test's scratch table (named for the run, carrying its marker, dropped; never another's)."""

from __future__ import annotations

import time
from dataclasses import replace
from types import SimpleNamespace

import pymysql
import pytest

from cutover_prep.benchmark.scratch import scratch_for_run
from cutover_prep.engines import DiscoveryOptions
from cutover_prep.engines import bench as bench_module
from cutover_prep.engines.bench import PointSpec, SweepTarget
from cutover_prep.engines.mysql import block_readable
from cutover_prep.engines.mysql.bench import MySQLBench
from cutover_prep.engines.mysql.engine import MySQLEngine
from cutover_prep.engines.mysql.sql import qualified, quote_ident
from cutover_prep.engines.scratch import Dropped, ScratchExists
from tests.unit.fake_clock import FakeClock

pytestmark = pytest.mark.mysql


@pytest.fixture
def db(mysql_admin, mysql_database):
    name = mysql_database("bench")
    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password, autocommit=True)
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {quote_ident(name)}")
        cur.execute(f"CREATE TABLE {qualified(name, 'rows')} (id INT PRIMARY KEY, pad VARCHAR(200)) ENGINE=InnoDB")
        cur.executemany(f"INSERT INTO {qualified(name, 'rows')} VALUES (%s, %s)",
                        [(i * 10, "p" * 150) for i in range(1, 3001)])
    yield replace(mysql_admin, database=name, tls="disable"), conn
    conn.close()


def test_counters_lookups_and_scans(db, monkeypatch) -> None:
    spec, _ = db
    bench = MySQLBench.from_spec(spec, spec.database)
    try:
        counters = bench.counters()
        assert {"read_requests", "read_bytes", "write_requests", "write_bytes", "innodb_buffer_pool_reads",
                "innodb_buffer_pool_read_ahead", "innodb_buffer_pool_read_ahead_evicted"} <= set(counters)
        caps = bench.capabilities()
        assert caps["server_version"].startswith(("MariaDB", "MySQL")) and caps["block_size"] == 16384
        engine = MySQLEngine.connect(spec)
        (seg,) = [s for s in engine.discover(DiscoveryOptions(include_schemas=(spec.database,)))
                  if s.kind == "clustered"]
        engine.close()
        assert block_readable(seg.locator)
        reader = bench.random_reader()
        try:
            def handlers() -> dict[str, int]:
                with reader._engine.conn.cursor() as cur:
                    cur.execute("SHOW SESSION STATUS LIKE 'Handler_read%'")
                    return {k: int(v) for k, v in cur.fetchall()}

            reader.read_block(seg.locator, 0, 0)  # the key's range is found once, by two index dives
            before = handlers()
            for block in (0, seg.blocks // 2, seg.blocks - 1, seg.blocks):
                reader.read_block(seg.locator, 0, block)
            after = handlers()
            assert after["Handler_read_key"] - before["Handler_read_key"] == 4  # one dive per lookup
            assert after["Handler_read_rnd_next"] == before["Handler_read_rnd_next"]  # no scan
            assert reader._ranges[(spec.database, "rows", None)] == (10, 30000)
        finally:
            reader.close()
        target = SweepTarget(seg.key, seg.locator, ((0, 0, seg.blocks),), seg.block_size)
        # the scan's clock moves by the blocks it has read: two passes fit in the point, however busy the machine
        clock, read_range = FakeClock(), bench._control.read_range

        def timed_read(rng):
            result = read_range(rng)
            clock.sleep(sum(e.blocks for e in rng.extents) * 0.3 / (2 * seg.blocks))
            return result

        monkeypatch.setattr(bench_module, "time", SimpleNamespace(monotonic=clock))
        monkeypatch.setattr(bench._control, "read_range", timed_read)
        result = bench.scan(PointSpec("seq", "sequential", 0.3), target, clock() + 0.3)
        monkeypatch.undo()
        assert result.bytes >= seg.blocks * seg.block_size and result.calls >= 1
        assert [p.point_id for p in bench.io_size_points(type("O", (), {"seconds_per_point": 3})(), target)] \
            == ["seq-pk-walk"]
    finally:
        bench.close()


def test_the_write_test_creates_marks_caps_and_drops_its_own_table(db) -> None:
    spec, conn = db
    scratch = scratch_for_run("run-w", "mariadb", max_bytes=2 * 2**20)
    bench = MySQLBench.from_spec(spec, spec.database)
    try:
        # a point far longer than 2 MiB take to write: only the cap stops it
        result = bench.write_point(PointSpec("w", "write_direct", 600), time.monotonic() + 600, scratch)
        assert any("size cap" in n for n in result.notes) and result.calls > 0 and result.bytes > 0
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
                        (spec.database, scratch.name))
            assert cur.fetchone()[0] == 0  # dropped
        assert bench.drop_scratch(scratch) is Dropped.ABSENT
    finally:
        bench.close()


def test_a_table_with_the_scratch_name_that_is_not_the_runs_is_never_touched(db) -> None:
    spec, conn = db
    scratch = scratch_for_run("run-x", "mysql", max_bytes=2**20)
    table = qualified(spec.database, scratch.name)
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY) COMMENT = 'the customer''s'")
        cur.execute(f"INSERT INTO {table} VALUES (1), (2)")
    bench = MySQLBench.from_spec(spec, spec.database)
    try:
        with pytest.raises(ScratchExists, match="not created by this run"):
            bench.write_point(PointSpec("w", "write_direct", 5), time.monotonic() + 5, scratch)
        assert bench.drop_scratch(scratch) is Dropped.NOT_OURS
        with conn.cursor() as cur:
            cur.execute(f"SELECT COUNT(*) FROM {table}")
            assert cur.fetchone()[0] == 2
    finally:
        bench.close()


def test_the_warm_up_sessions_of_the_bench_stay_read_only_after_a_write_test(db) -> None:
    spec, _ = db
    bench = MySQLBench.from_spec(spec, spec.database)
    try:
        bench.write_point(PointSpec("w", "write_random", 0.5), time.monotonic() + 0.5,
                          scratch_for_run("run-r", "mysql", max_bytes=2**20))
        with bench._control.conn.cursor() as cur, pytest.raises(pymysql.err.MySQLError) as err:
            cur.execute(f"INSERT INTO {qualified(spec.database, 'rows')} VALUES (1, 'x')")
        assert err.value.args[0] == 1792
    finally:
        bench.close()
