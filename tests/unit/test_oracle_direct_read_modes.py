"""Issue 22, finding 4: each direct-read mode has its own SQL text, and each point says what it waited on.

``_serial_direct_read`` is an optimizer-environment setting stored with the child cursor but
not a reason to build a new one: a session reusing the shared cursor of an identical SQL text
parsed under the other setting reads the way that cursor was built (cursor sharing: SQL Tuning
Guide, "Shared Pool Check" / "Reasons a child cursor is not shared", V$SQL_SHARED_CURSOR; the
statement text, comments included, is the key of the parent cursor). So the cold probe
(``NEVER``: ``db file sequential read``) and the warm-up and sweep (``ALWAYS``: ``direct path
read``) must not share a text: a comment naming the mode makes them distinct. What the session
actually waited on is V$SESSION_EVENT of its own SID (Database Reference, "V$SESSION_EVENT":
TOTAL_WAITS, TIME_WAITED_MICRO), taken before and after each sequential point."""

from __future__ import annotations

import time

from cutover_prep.engines.base import Extent, ReadRange
from cutover_prep.engines.bench import PointSpec
from cutover_prep.engines.oracle import bench as b
from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle.engine import OracleEngine
from tests.unit.test_oracle_bench import TARGET, Conn, executed
from tests.unit.test_oracle_fakes import OracleFake


def shared_db():
    return {"log": [], "answers": {"v$": [], "product_component_version": []}, "fail": {}, "delay": 0.0, "conns": []}


def test_the_cached_and_the_direct_read_texts_differ_and_name_their_mode():
    direct = q.rowid_range_count_sql("A", "T", serial_direct_read="ALWAYS")
    cached = q.rowid_range_count_sql("A", "T", serial_direct_read="NEVER")
    assert direct != cached
    assert "/* cutover-prep _serial_direct_read=ALWAYS */" in direct
    assert "/* cutover-prep _serial_direct_read=NEVER */" in cached


def test_the_probe_reader_and_the_sweep_never_send_the_same_text():
    shared = shared_db()
    bench = b.OracleBench(lambda: Conn(shared))
    reader = bench.random_reader()
    reader.read_block(TARGET.locator, 4, 4242)
    reader.close()
    bench.scan(PointSpec("mbrc-016", "sequential", 1, knobs={"db_file_multiblock_read_count": 16}), TARGET,
               deadline=time.monotonic() + 0.02)
    probe = {sql for sql, _ in shared["log"] if "COUNT(*)" in sql and "NEVER" in sql}
    sweep = {sql for sql, _ in shared["log"] if "COUNT(*)" in sql and "ALWAYS" in sql}
    assert probe and sweep and not probe & sweep
    assert all("_serial_direct_read=NEVER" in s for s in probe) and all("=ALWAYS" in s for s in sweep)


def test_the_warm_up_reads_with_the_direct_text():
    db = OracleFake(reads={"ROWID BETWEEN": 8})
    loc = {"read": "rowid_range", "owner": "A", "table": "T", "partition": None, "subpartition": False,
           "data_object_id": 1, "segment_type": "TABLE", "bigfile": False}
    OracleEngine(db).read_range(ReadRange("A.T#TABLE", loc, (Extent(4, 8, 8),), 8192))
    (sql, _), = db.statements("ROWID BETWEEN")
    assert "/* cutover-prep _serial_direct_read=ALWAYS */" in sql


def test_a_sequential_point_records_the_wait_events_its_session_saw():
    shared = shared_db()
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


def test_a_sweep_that_read_through_the_buffer_cache_says_so():
    shared = shared_db()
    seen = iter([[], [("db file scattered read", 40, 400_000)]])
    shared["answers"]["v$session_event"] = lambda: next(seen)
    result = b.OracleBench(lambda: Conn(shared)).scan(
        PointSpec("mbrc-008", "sequential", 1, knobs={"db_file_multiblock_read_count": 8}), TARGET,
        deadline=time.monotonic() + 0.02)
    assert any("no direct path read" in n for n in result.notes)
