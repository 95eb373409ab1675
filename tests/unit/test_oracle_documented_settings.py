"""Issue 35 §1: "direct path reads where the mode asks for them, with the documented session settings only".

The warm-up and the sweep had set ``ALTER SESSION SET "_serial_direct_read" = ALWAYS`` (the random reads ``NEVER``):
an underscore (hidden) parameter that no Oracle manual describes, which Oracle's own guidance leaves to Oracle
Support. The documented ways to read around the buffer cache are not for this statement: parallel execution
(SQL Language Reference, ``PARALLEL`` hint, ``ALTER SESSION FORCE PARALLEL QUERY``) reads by direct path ("By
default parallel execution does not use the SGA (buffer cache) to cache the scanned blocks", VLDB and
Partitioning Guide, https://docs.oracle.com/database/122/VLDBG/inmemory-parallel-exec.htm) but divides a scan into
block range granules under a ``PX BLOCK ITERATOR``
(https://docs.oracle.com/database/121/VLDBG/GUID-D28717E4-0F77-44F5-BB4E-234C31D4E4BA.htm), not the ``TABLE ACCESS
BY ROWID RANGE`` the preflight proves, and is an Enterprise Edition feature
(https://docs.oracle.com/cd/E18283_01/server.112/e17120/manproc006.htm) that Standard Edition 2 does not have. So
no session setting chooses the path: Oracle does, serially, and each read says which it was from its segment's
counters (``physical reads direct`` vs the rest of ``physical reads``; Database Reference, V$SEGMENT_STATISTICS,
https://docs.oracle.com/en/database/oracle/oracle-database/19/refrn/V-SEGMENT_STATISTICS.html), each sweep point
from its session's V$MYSTAT and V$SESSION_EVENT. Either path reads a block from storage; a buffered pass after the
first may come from memory, which the point says (``cached``).

The fakes here are servers that know only documented parameters (``DocumentedOracle``: an underscore parameter is
refused as ORA-02248 after it is recorded), so every test below fails on the code that set ``_serial_direct_read``."""

from __future__ import annotations

import re
import time
from pathlib import Path
from types import SimpleNamespace

import oracledb
import pytest

from cutover_prep.engines import ConnectionSpec
from cutover_prep.engines.base import Extent, ReadRange
from cutover_prep.engines.bench import PointSpec, SweepTarget
from cutover_prep.engines.oracle import bench as b
from cutover_prep.engines.oracle.engine import OracleEngine
from tests.unit.fake_clock import FakeClock
from tests.unit.test_oracle_bench import TARGET, Conn, executed
from tests.unit.test_oracle_fakes import UNDERSCORE_PARAMETER, DocumentedOracle, ora_error

ORACLE = Path(__file__).resolve().parents[2] / "lambdas" / "cutover_prep" / "engines" / "oracle"
# Every session setting the engine may send, each on its Database Reference page (docs/engines/oracle.md)
DOCUMENTED_SETTINGS = re.compile(r"^ALTER SESSION SET (READ_ONLY = (TRUE|FALSE)|OPTIMIZER_USE_INVISIBLE_INDEXES = "
                                 r"(TRUE|FALSE)|db_file_multiblock_read_count = \d+)$")
ROWID_LOC = {"read": "rowid_range", "owner": "A", "table": "T", "partition": None, "subpartition": False,
             "data_object_id": 1, "segment_type": "TABLE", "bigfile": False}


def settings(statements) -> list[str]:
    return [sql for sql, _ in statements if sql.upper().startswith(("ALTER SESSION", "ALTER SYSTEM"))]


def test_no_module_of_the_engine_names_an_underscore_parameter():
    found = [f"{path.name}: {line.strip()}" for path in sorted(ORACLE.glob("*.py"))
             for line in path.read_text().splitlines()
             if "_serial_direct_read" in line or UNDERSCORE_PARAMETER.search(line)]
    assert not found, found


def test_a_warm_up_session_sends_only_documented_settings(monkeypatch):
    """OracleEngine.connect on a documented-only server: the session opens (the old code's
    ``"_serial_direct_read" = ALWAYS`` was refused here, ORA-02248) and a read sets nothing beyond the read-only
    guard."""
    db = DocumentedOracle(reads={"ROWID BETWEEN": 8})
    monkeypatch.setattr(oracledb, "connect", lambda **kw: db)
    engine = OracleEngine.connect(ConnectionSpec("oracle", "db.example", 1521, "ORCL", "warmer", "pw", tls="disable"))
    engine.read_range(ReadRange("A.T#TABLE", ROWID_LOC, (Extent(4, 8, 8),), 8192))
    sent = settings(db.executed)
    assert sent and all(DOCUMENTED_SETTINGS.match(s) for s in sent), sent


def test_the_sweep_and_the_random_reads_send_only_documented_settings():
    shared = {"log": [], "answers": {"v$": [], "product_component_version": []}, "conns": [], "delay": 0.0,
              "fail": {'SET "_': ora_error(2248, "invalid option for ALTER SESSION"),
                       "SET _": ora_error(2248, "invalid option for ALTER SESSION")}}
    bench = b.OracleBench(lambda: Conn(shared))
    reader = bench.random_reader()
    reader.read_block(TARGET.locator, 4, 4242)
    reader.close()
    bench.scan(PointSpec("mbrc-016", "sequential", 1, knobs={"db_file_multiblock_read_count": 16}), TARGET,
               deadline=time.monotonic() + 0.02)
    sent = settings(shared["log"])
    assert sent == ["ALTER SESSION SET db_file_multiblock_read_count = 16"], sent
    assert executed(shared, "COUNT(*)") and "_serial_direct_read" not in bench.capabilities()["knobs"]


@pytest.mark.parametrize(("direct", "path"), [(True, "direct path"), (False, "buffer cache")])
def test_a_read_says_which_path_oracle_chose_and_is_confirmed_either_way(direct, path):
    db = DocumentedOracle(reads={"ROWID BETWEEN": 8})
    db.direct = direct
    result = OracleEngine(db).read_range(ReadRange("A.T#TABLE", ROWID_LOC, (Extent(4, 8, 8),), 8192))
    assert result.details["read_path"] == {"path": path, "direct": 8 if direct else 0,
                                           "buffer_cache": 0 if direct else 8, "by": "V$SEGMENT_STATISTICS"}
    assert result.details["confirmed_blocks"] == 8 and result.blocks == 8


SMALL = SweepTarget("A.T#TABLE", {"owner": "A", "table": "T", "partition": None, "subpartition": False,
                                  "data_object_id": 1, "read": "rowid_range"}, ((4, 8, 8),), 8192)


def sweep_of(monkeypatch, mystat_before, mystat_after, waits_after):
    """A sequential point over an 8-block table, read several times before its deadline (on the driver's fake
    clock: each statement takes 1 ms of it); the scan session's V$MYSTAT and V$SESSION_EVENT as the server counted
    them."""
    clock = FakeClock(start=1000.0)
    monkeypatch.setattr(b, "time", SimpleNamespace(monotonic=clock))
    shared = {"log": [], "answers": {"v$": [], "product_component_version": []}, "fail": {}, "delay": 0.0,
              "conns": [], "clock": clock}
    mystat, events = iter([mystat_before, mystat_after]), iter([[], waits_after])
    shared["answers"]["v$mystat"] = lambda: next(mystat)
    shared["answers"]["v$session_event"] = lambda: next(events)
    return b.OracleBench(lambda: Conn(shared)).scan(
        PointSpec("mbrc-008", "sequential", 1, knobs={"db_file_multiblock_read_count": 8}), SMALL,
        deadline=clock() + 0.05)


def stats(direct, cache, logical):
    return [("physical reads", direct + cache), ("physical reads direct", direct), ("physical reads cache", cache),
            ("session logical reads", logical)]


def test_a_sweep_point_read_by_direct_path_is_a_storage_figure(monkeypatch):
    result = sweep_of(monkeypatch, stats(0, 0, 0), stats(400, 2, 402), [("direct path read", 50, 40_000)])
    assert result.passes > 1 and not result.cached
    assert any("direct path reads: each pass from storage" in n for n in result.notes)
    assert any(n.startswith("read path (V$MYSTAT): 400 blocks by direct path, 2 through the buffer cache")
               for n in result.notes)


def test_a_sweep_point_oracle_read_through_the_buffer_cache_is_marked_cached(monkeypatch):
    """Oracle chose buffered reads (no setting asks otherwise): the first pass read 8 blocks into the cache, the
    others got them from memory. Before, the point claimed ``cached=False`` (direct path) whatever Oracle did."""
    result = sweep_of(monkeypatch, stats(0, 0, 0), stats(0, 8, 400), [("db file scattered read", 1, 900)])
    assert result.passes > 1 and result.cached
    assert any("no direct path read: Oracle read the scan through the buffer cache" in n for n in result.notes)


def test_a_sequential_point_records_the_wait_events_its_session_saw():
    shared = {"log": [], "answers": {"v$": [], "product_component_version": []}, "fail": {}, "delay": 0.0,
              "conns": []}
    seen = iter([[("direct path read", 10, 1_000), ("SQL*Net message from client", 5, 10)],
                 [("direct path read", 70, 901_000), ("db file sequential read", 3, 3_000),
                  ("SQL*Net message from client", 9, 20)]])
    shared["answers"]["v$session_event"] = lambda: next(seen)
    bench = b.OracleBench(lambda: Conn(shared))
    result = bench.scan(PointSpec("mbrc-016", "sequential", 1, knobs={"db_file_multiblock_read_count": 16}),
                        TARGET, deadline=time.monotonic() + 0.02)
    (sql, _), (_, _) = executed(shared, "v$session_event")
    assert "SYS_CONTEXT('USERENV', 'SID')" in sql and "time_waited_micro" in sql
    assert bench.wait_events["mbrc-016"] == {"direct path read": {"waits": 60, "seconds": 0.9},
                                             "db file sequential read": {"waits": 3, "seconds": 0.003},
                                             "SQL*Net message from client": {"waits": 4, "seconds": 1e-05}}
    assert any(n.startswith("wait events (V$SESSION_EVENT): direct path read 60") for n in result.notes)
