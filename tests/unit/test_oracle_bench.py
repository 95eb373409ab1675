"""Oracle benchmark driver against a fake connection (no Oracle here): the SQL of each step,
session settings, deadlines, counters, histograms, privileges and the write test's cleanup.

The driver's clock is a fake (``clock``): each statement of the fake connection takes ``STATEMENT_S`` of it, plus
the connection's ``delay``, so how many statements fit before a deadline does not depend on the machine's load."""

from __future__ import annotations

import time
from types import SimpleNamespace

import oracledb
import pytest

from cutover_prep.benchmark.scratch import scratch_for_run
from cutover_prep.benchmark.steps import sweep_options
from cutover_prep.engines import PermanentReadError
from cutover_prep.engines.bench import PointSpec, SweepTarget
from cutover_prep.engines.oracle import bench as oracle_bench
from cutover_prep.engines.oracle.bench import OracleBench, mbrc_sql
from cutover_prep.engines.scratch import Dropped, ScratchExists
from cutover_prep.models.benchmark import Benchmark
from tests.unit.fake_clock import FakeClock
from tests.unit.oracle_segment_fake import decode_rowid


class Cursor:
    def __init__(self, conn):
        self.conn, self._rows = conn, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, parameters=None, **binds):
        self.conn.log.append((sql, binds))
        for marker, exc in self.conn.fail.items():
            if marker in sql:
                raise exc
        markers = [m for m in self.conn.answers if m in sql]  # the most specific marker answers
        rows = self.conn.answers[max(markers, key=len)] if markers else [(1,)]
        self._rows = rows() if callable(rows) else rows
        if self.conn.clock is not None:  # the driver's fake clock (this file's tests)
            self.conn.clock.sleep(STATEMENT_S + self.conn.delay)
        elif self.conn.delay:  # other files' tests of the driver on the real clock
            time.sleep(self.conn.delay)
        return iter(self._rows)

    def fetchone(self):
        return self._rows[0] if self._rows else None


class Conn:
    def __init__(self, shared):
        self.log, self.answers, self.fail = shared["log"], shared["answers"], shared["fail"]
        self.delay, self.clock = shared["delay"], shared.get("clock")
        self.closed = False
        self.commits = 0
        shared["conns"].append(self)

    def cursor(self):
        return Cursor(self)

    def commit(self):
        self.commits += 1

    def rollback(self):
        self.log.append(("ROLLBACK", {}))

    def close(self):
        self.closed = True


def ora_error(code):
    err = type("E", (), {"code": code, "full_code": f"ORA-{code:05d}", "message": f"ORA-{code:05d}: boom"})()
    return oracledb.DatabaseError(err)


STATEMENT_S = 0.001  # what one statement of the fake connection takes on the fake clock


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock(start=1000.0)
    monkeypatch.setattr(oracle_bench, "time", SimpleNamespace(monotonic=fake))
    return fake


@pytest.fixture
def shared(clock):
    return {"log": [], "answers": {"v$": [], "product_component_version": []}, "fail": {}, "delay": 0.0,
            "conns": [], "clock": clock}


@pytest.fixture
def bench(shared):
    return OracleBench(lambda: Conn(shared))


TARGET = SweepTarget("APP.ORDERS#TABLE", {"owner": "App", "table": "Or ders", "partition": "P1", "subpartition": False,
                                          "data_object_id": 777, "read": "rowid_range"},
                     ((4, 128, 20000), (5, 8, 100)), 8192)


def executed(shared, marker):
    return [(sql, binds) for sql, binds in shared["log"] if marker in sql]


def test_io_size_points_follow_the_mbrc_list():
    options = sweep_options(Benchmark(mbrc_values=[1, 8, 128], seconds_per_point=3))
    points = OracleBench(lambda: None).io_size_points(options, TARGET)
    assert [(p.point_id, p.io_size_kb, p.knobs) for p in points] == [
        ("mbrc-001", 8.0, {"db_file_multiblock_read_count": 1}),
        ("mbrc-008", 64.0, {"db_file_multiblock_read_count": 8}),
        ("mbrc-128", 1024.0, {"db_file_multiblock_read_count": 128})]
    assert all(p.kind == "sequential" and p.seconds == 3 for p in points)


@pytest.mark.parametrize("bad", [0, 1025, "8; DROP TABLE x", 8.5, True])
def test_mbrc_must_be_a_plain_integer(bad):
    with pytest.raises(ValueError):
        mbrc_sql(bad)


def test_scan_sets_its_own_session_and_reads_quoted_pieces_until_the_end(bench, shared, clock):
    result = bench.scan(PointSpec("mbrc-016", "sequential", 60, knobs={"db_file_multiblock_read_count": 16}),
                        TARGET, deadline=clock() + 0.05)
    scan_conn = shared["conns"][1]
    assert scan_conn.closed and not shared["conns"][0].closed  # settings die with the scan's own session
    assert executed(shared, "db_file_multiblock_read_count = 16")
    settings = [sql for sql, _ in executed(shared, "ALTER SESSION")]
    assert settings == ["ALTER SESSION SET db_file_multiblock_read_count = 16"]  # no read-path setting
    reads = executed(shared, "COUNT(*)")
    assert 'FROM "App"."Or ders" PARTITION ("P1") t' in reads[0][0] and "ROWID(t)" in reads[0][0]
    first_pass = [(decode_rowid(b["start_id"]), decode_rowid(b["end_id"])) for _, b in reads][:4]
    assert first_pass[0] == ((777, 4, 128, 0), (777, 4, 128 + 8192 - 1, 32767))
    assert [(lo[1], lo[2], hi[2]) for lo, hi in first_pass] == [
        (4, 128, 8319), (4, 8320, 16511), (4, 16512, 20127), (5, 8, 107)]
    assert result.calls == len(reads) and result.bytes > 0


def test_scan_stops_at_the_deadline(bench, shared, clock):
    shared["delay"] = 0.02
    started = clock()
    result = bench.scan(PointSpec("m", "sequential", 1, knobs={"db_file_multiblock_read_count": 8}), TARGET,
                        deadline=started + 0.1)
    assert clock() - started < 0.5 and 1 <= result.calls <= 8


def test_counters_map_sysstat_names(bench, shared):
    shared["answers"]["v$sysstat"] = [("physical read total IO requests", 10), ("physical read total bytes", 81920),
                                      ("physical read total multi block requests", 2)]
    c = bench.counters()
    assert c["read_requests"] == 10 and c["read_bytes"] == 81920 and c["multiblock_read_requests"] == 2
    assert c["physical read total bytes"] == 81920


def test_histogram_prefers_micro_and_falls_back_to_milli(bench, shared):
    shared["answers"]["v$event_histogram_micro"] = [(256, 5), (512, 7)]
    assert bench.latency_histogram() == {"256": 5, "512": 7}
    shared["fail"]["v$event_histogram_micro"] = ora_error(942)
    shared["answers"]["v$event_histogram "] = [(1, 3), (8, 2)]
    assert bench.latency_histogram() == {"1000": 3, "8000": 2}
    assert "'db file sequential read'" in executed(shared, "v$event_histogram ")[0][0]


def test_missing_privileges_are_notes_not_failures(bench, shared):
    shared["fail"]["v$sysstat"] = ora_error(942)
    shared["fail"]["v$parameter"] = ora_error(942)
    shared["fail"]["v$event_histogram"] = ora_error(942)
    assert bench.counters() == {}
    caps = bench.capabilities()
    assert caps["counters"] is None and caps["latency_histogram"] is None
    assert any("v$sysstat" in n for n in caps["notes"]) and any("v$parameter" in n for n in caps["notes"])


def test_capabilities_record_settings(bench, shared):
    shared["answers"]["v$parameter"] = [("db_block_size", "16384"), ("db_file_multiblock_read_count", "128"),
                                        ("filesystemio_options", "SETALL")]
    shared["answers"]["product_component_version"] = [("19.0.0.0.0",)]
    shared["answers"]["v$sysstat"] = [("physical read total bytes", 1)]
    shared["answers"]["v$event_histogram"] = []
    caps = bench.capabilities()
    assert caps["counters"] == "v$sysstat" and caps["latency_histogram"] == "v$event_histogram"
    assert caps["block_size"] == 16384 and caps["server_version"] == "19.0.0.0.0"
    assert any("direct IO" in n for n in caps["notes"])


def test_random_reader_reads_one_block_at_a_time_and_sets_nothing(bench, shared):
    reader = bench.random_reader()
    reader.read_block(TARGET.locator, 4, 4242)
    reader.close()
    assert not executed(shared, "ALTER SESSION")  # Oracle chooses the path; the point's wait events say which
    (sql, binds), = executed(shared, "COUNT(*)")
    assert decode_rowid(binds["start_id"]) == (777, 4, 4242, 0)
    assert decode_rowid(binds["end_id"]) == (777, 4, 4242, 32767)
    assert shared["conns"][-1].closed


def test_random_reader_maps_errors(bench, shared):
    shared["fail"]["COUNT(*)"] = ora_error(8103)
    with pytest.raises(PermanentReadError, match="block 7"):
        bench.random_reader().read_block(TARGET.locator, 4, 7)


SCRATCH = scratch_for_run("rehearsal-1", "oracle", 64 * 2**20)


def scratch_table(shared):
    """user_tab_comments answers with the marker once the run has commented its table."""
    def rows():
        made = [sql for sql, _ in shared["log"] if "COMMENT ON TABLE" in sql or "DROP TABLE" in sql]
        return [(SCRATCH.marker,)] if made and "COMMENT ON TABLE" in made[-1] else []
    shared["answers"]["user_tab_comments"] = rows
    shared["answers"]["user_segments"] = [(0,)]


@pytest.mark.parametrize("kind", ["write_direct", "write_random"])
def test_write_test_drops_its_table_even_when_it_fails(bench, shared, kind, clock):
    scratch_table(shared)
    shared["fail"]["INSERT"] = ora_error(1536)  # quota exceeded
    with pytest.raises(PermanentReadError):
        bench.write_point(PointSpec(kind, kind, 1), deadline=clock() + 1, scratch=SCRATCH)
    name = SCRATCH.name
    assert name.startswith("CPREP_SCRATCH_") and len(name) <= 30
    assert executed(shared, f'CREATE TABLE "{name}"')
    assert executed(shared, f"""COMMENT ON TABLE "{name}" IS 'cutover-prep scratch object of run rehearsal-1;""")
    assert executed(shared, f'DROP TABLE "{name}" PURGE')
    assert shared["conns"][-1].closed


def test_write_test_writes_then_drops(bench, shared, clock):
    scratch_table(shared)
    result = bench.write_point(PointSpec("w", "write_random", 1), deadline=clock() + 0.05, scratch=SCRATCH)
    assert result.calls >= 1 and executed(shared, "INSERT /*+ APPEND */") and executed(shared, "DROP TABLE")
    assert shared["conns"][-1].commits == result.calls


def test_a_table_with_the_scratch_name_that_is_not_the_runs_is_never_dropped(bench, shared, clock):
    shared["answers"]["user_tab_comments"] = [("payroll, do not touch",)]
    with pytest.raises(ScratchExists, match="left untouched"):
        bench.write_point(PointSpec("w", "write_direct", 1), deadline=clock() + 1, scratch=SCRATCH)
    assert not executed(shared, "DROP TABLE") and not executed(shared, "CREATE TABLE")
    assert bench.drop_scratch(SCRATCH) is Dropped.NOT_OURS and not executed(shared, "DROP TABLE")


def test_the_write_test_stops_at_its_size_cap(bench, shared, clock):
    scratch_table(shared)
    shared["answers"]["user_segments"] = [(SCRATCH.max_bytes,)]
    result = bench.write_point(PointSpec("w", "write_direct", 30), deadline=clock() + 30, scratch=SCRATCH)
    assert result.calls == 0 and "size cap of 64 MiB" in result.notes[0]
    assert not executed(shared, "INSERT")


def test_nothing_is_written_without_the_write_test(bench, shared, clock):
    bench.capabilities()
    bench.counters()
    bench.scan(PointSpec("m", "sequential", 1, knobs={"db_file_multiblock_read_count": 8}), TARGET,
               deadline=clock() + 0.01)
    reader = bench.random_reader()
    reader.read_block(TARGET.locator, 4, 1)
    words = ("INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "MERGE", "TRUNCATE")
    assert not [sql for sql, _ in shared["log"] if sql.lstrip().upper().startswith(words)]
