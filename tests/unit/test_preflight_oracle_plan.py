"""Issue 35 §1: the preflight proves the rowid range read on the customer's largest table before the night:
its plan (operation TABLE ACCESS, option BY ROWID RANGE), its physical reads against the chunk's blocks, and
the rowid text the engine builds; a mismatch fails by a named check.

Pages: PL/SQL Packages and Types Reference 19c, "DBMS_XPLAN"
(https://docs.oracle.com/en/database/oracle/oracle-database/19/arpls/DBMS_XPLAN.html: DISPLAY_CURSOR formats the
plan of a loaded cursor from V$SQL_PLAN and needs SELECT on V$SQL_PLAN, V$SESSION, V$SQL_PLAN_STATISTICS_ALL);
Database Reference, "V$SQL_PLAN" (https://docs.oracle.com/database/122/REFRN/V-SQL_PLAN.htm: OPERATION, e.g.
TABLE ACCESS; OPTIONS, e.g. FULL); SQL Tuning Guide, "Table Access by Rowid"
(https://docs.oracle.com/database/122/TGSQL/optimizer-access-paths.htm); DBMS_PARALLEL_EXECUTE's rowid chunks
(https://docs.oracle.com/en/database/oracle/oracle-database/19/arpls/DBMS_PARALLEL_EXECUTE.html).
The fake (``tests.unit.oracle_segment_fake``) plays the table; V$SQL_PLAN answers the plan its last read took."""

from __future__ import annotations

import oracledb

from cutover_prep.engines import ConnectionSpec
from cutover_prep.engines.base import EngineError, Extent, Segment
from cutover_prep.engines.oracle import preflight as pf
from cutover_prep.engines.oracle.engine import OracleEngine
from cutover_prep.preflight import FAIL, PASS, Context
from tests.unit.oracle_segment_fake import Ext, TableFake

SPEC = ConnectionSpec(engine="oracle", host="db.example", port=2484, database="ORCL", user="CP", password="pw-secret")
EXTENTS = [Ext(0, 4, 128, 128), Ext(1, 4, 256, 128), Ext(2, 4, 384, 128), Ext(3, 4, 512, 128)]


def table(name: str, extents: tuple[Extent, ...], objd: int) -> Segment:
    return Segment(schema="APP", name=name, kind="TABLE", bytes=sum(e.blocks for e in extents) * 8192,
                   block_size=8192, extents=extents,
                   locator={"owner": "APP", "segment": name, "partition": None, "segment_type": "TABLE",
                            "read": "rowid_range", "table": name, "data_object_id": objd, "subpartition": False,
                            "bigfile": False})


ORDERS = table("ORDERS", tuple(Extent(e.file_id, e.block_id, e.blocks) for e in EXTENTS), 777)
SMALL = table("CODES", (Extent(4, 8, 8),), 901)


def run(db: TableFake) -> dict:
    engine = OracleEngine(db, "tcps-verified")
    engine.discover = lambda options: [SMALL, ORDERS]  # type: ignore[method-assign]
    engine.census = lambda options: []  # type: ignore[method-assign]
    return {c.name: c for c in pf.checks_of(engine, SPEC, Context(), errors=(EngineError, oracledb.Error))}


def test_one_chunk_of_the_largest_table_runs_by_rowid_range_and_its_reads_match_its_blocks():
    db = TableFake(EXTENTS, hwm=(3, 128))
    checks = run(db)
    reads = [s for s, _ in db.executed if "ROWID BETWEEN" in s]
    assert len(reads) == 1 and '"APP"."ORDERS"' in reads[0]  # the largest table, one chunk
    plan = checks[pf.ROWID_PLAN]
    assert plan.status == PASS and "TABLE ACCESS BY ROWID RANGE ORDERS" in plan.detail
    method = checks["rowid_range_scan"]
    assert method.status == PASS and method.data["segment_stats"]["physical reads"] == 128
    assert checks[pf.ROWID_ENCODING].status == PASS


def test_a_chunk_that_runs_as_a_full_scan_fails_the_preflight_by_name():
    """The optimizer ignores the hint: TABLE ACCESS FULL, 512 blocks read for a 128-block chunk. The old
    preflight passed it ("V$MYSTAT confirmed 512")."""
    checks = run(TableFake(EXTENTS, hwm=(3, 128), ignore_hints=True))
    plan = checks[pf.ROWID_PLAN]
    assert plan.status == FAIL and "TABLE ACCESS FULL" in plan.detail
    method = checks["rowid_range_scan"]
    assert method.status == FAIL and "OverRead" in method.detail and "512" in method.detail


def test_a_chunk_whose_segment_counters_do_not_move_fails_the_preflight():
    checks = run(TableFake(EXTENTS, hwm=(3, 128), segment_stats_move=False))
    method = checks["rowid_range_scan"]
    assert method.status == FAIL and "ShortRead" in method.detail and "V$SEGMENT_STATISTICS" in method.detail


def test_the_preflight_says_whether_dbms_space_can_give_the_high_water_mark():
    """DBMS_SPACE.UNUSED_SPACE needs ANALYZE on the object (https://docs.oracle.com/cd/A97630_01/appdev.920/a96612/d_space2.htm):
    SESSION_PRIVS is asked for ANALYZE ANY and the answer is an INFO line (nothing fails without it)."""
    checks = run(TableFake(EXTENTS, hwm=(3, 128)))
    assert "ANALYZE ANY" in pf.SESSION_PRIVS_SQL
    assert checks["ANALYZE ANY"].status == "info" and "not held" in checks["ANALYZE ANY"].detail
