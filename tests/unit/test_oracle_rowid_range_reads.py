"""Issue 35 §1 and §2: a table chunk is read by the access path Oracle documents for rowid chunks, and the
read is confirmed by its own segment's counters, with over-reads named.

No Oracle here: ``tests.unit.oracle_segment_fake.TableFake`` plays one table segment as the documentation
describes it (its docstring cites each page), and decodes the rowids the engine binds by its own decoder.
Expected block counts are worked by hand from the fake's extents and high-water mark."""

from __future__ import annotations

import pytest

from cutover_prep.engines.base import Extent, PermanentReadError, ReadRange, ShortRead
from cutover_prep.engines.oracle.engine import OracleEngine
from tests.unit.oracle_segment_fake import Ext, TableFake, decode_rowid, ora_error

TABLE = {"read": "rowid_range", "owner": "APP", "table": "ORDERS", "partition": None, "subpartition": False,
         "data_object_id": 777, "segment_type": "TABLE", "bigfile": False, "segment": "ORDERS"}
FOUR = [Ext(0, 4, 128, 128), Ext(1, 4, 256, 128), Ext(2, 4, 384, 128), Ext(3, 4, 512, 128)]  # 512 blocks, all used


def chunk(*extents: Extent) -> ReadRange:
    return ReadRange("APP.ORDERS#TABLE", TABLE, tuple(extents), 8192, True)


def reads_of(db: TableFake) -> list[tuple[str, dict]]:
    return [(s, b) for s, b in db.executed if "COUNT(*)" in s and '"APP"."ORDERS"' in s]


def test_a_chunk_is_read_by_the_statement_dbms_parallel_execute_documents_for_rowid_chunks():
    """PL/SQL Packages and Types Reference 19c, "DBMS_PARALLEL_EXECUTE"
    (https://docs.oracle.com/en/database/oracle/oracle-database/19/arpls/DBMS_PARALLEL_EXECUTE.html):
    CREATE_CHUNKS_BY_ROWID chunks a table into rowid ranges, and the documented statement run on each chunk
    is hinted ``ROWID`` with ``WHERE rowid BETWEEN :start_id AND :end_id``. The chunk of blocks 128-255 of
    file 4 is the rowid range (777, 4, 128, row 0) .. (777, 4, 255, row 32767); no FULL hint, which the
    documentation never says stops at rowid bounds."""
    db = TableFake(FOUR, hwm=(3, 128))
    result = OracleEngine(db).read_range(chunk(Extent(4, 128, 128)))
    (sql, binds), = reads_of(db)
    assert "/*+ ROWID(t)" in sql and "FULL(t)" not in sql
    assert "WHERE t.ROWID BETWEEN :start_id AND :end_id" in sql
    assert decode_rowid(binds["start_id"]) == (777, 4, 128, 0)
    assert decode_rowid(binds["end_id"]) == (777, 4, 255, 32767)
    assert result.blocks == 128 and result.method == "rowid_range_scan"


def test_a_scan_that_reads_the_whole_table_for_one_chunk_is_an_over_read_not_a_confirmed_read():
    """The fake ignores the hint and full-scans (SQL Tuning Guide, "Full Table Scans",
    https://docs.oracle.com/database/122/TGSQL/optimizer-access-paths.htm: every block below the high-water
    mark): a chunk of 128 blocks costs 512 physical reads (V$MYSTAT and V$SEGMENT_STATISTICS alike). The old
    code "confirmed" it (512 >= half of 128); every chunk would read the whole table again."""
    db = TableFake(FOUR, hwm=(3, 128), ignore_hints=True)
    with pytest.raises(PermanentReadError) as err:
        OracleEngine(db).read_range(chunk(Extent(4, 256, 128)))
    assert type(err.value).__name__ == "OverRead"
    assert "512" in str(err.value) and "128" in str(err.value)


def test_a_read_is_confirmed_by_its_own_segments_counters_not_by_the_sessions():
    """Database Reference 19c, "V$SEGMENT_STATISTICS"
    (https://docs.oracle.com/en/database/oracle/oracle-database/19/refrn/V-SEGMENT_STATISTICS.html): the
    statistics of one segment (OWNER, OBJECT_NAME, SUBOBJECT_NAME, STATISTIC_NAME, VALUE). Here the session's
    V$MYSTAT moves by 128 (the scan) but the segment's own counters do not (the blocks read were someone
    else's: recursive or dictionary reads count in the session too): not confirmed, a ShortRead naming the
    segment's counters. The old code confirmed it from V$MYSTAT alone."""
    db = TableFake(FOUR, hwm=(3, 128), segment_stats_move=False)
    with pytest.raises(ShortRead, match=r"V\$SEGMENT_STATISTICS"):
        OracleEngine(db).read_range(chunk(Extent(4, 128, 128)))


def test_a_confirmed_read_records_the_segments_delta_beside_the_sessions():
    """V$SEGMENT_STATISTICS 'logical reads', 'physical reads', 'physical reads direct' each +128 for a
    128-block chunk (worked by hand), and the session's V$MYSTAT the same: confirmed, not an over-read."""
    db = TableFake(FOUR, hwm=(3, 128))
    result = OracleEngine(db).read_range(chunk(Extent(4, 384, 128)))
    assert result.details["segment_stats"] == {"logical reads": 128, "physical reads": 128,
                                               "physical reads direct": 128}
    assert result.details["confirmed_blocks"] == 128
    assert result.details["mystat"]["physical reads direct"] == 128 == result.details["mystat"]["physical reads"]


def test_the_dictionary_look_ups_before_a_read_are_not_counted_as_its_reads():
    """On a cold volume the read's own dictionary look-ups (DBA_EXTENTS for the segment now, DBMS_SPACE for its
    high-water mark) are physical reads of the session too: 40 blocks each here. Counted in the read's window
    they would make 128 + 80 = 208 > 128 + 16 (the tolerance) an over-read of a correct read; the counters
    are taken right before the data statement, so the session's delta is the read's 128."""
    db = TableFake(FOUR, hwm=(3, 128), recursive=40)
    result = OracleEngine(db).read_range(chunk(Extent(4, 128, 128)))
    assert result.details["mystat"]["physical reads"] == 128 and result.blocks == 128
    assert db.mystat["physical reads cache"] - 5000 == 80  # they happened, outside the window


def test_blocks_above_the_high_water_mark_are_named_free_and_never_sent_to_a_read():
    """PL/SQL Packages and Types Reference, "DBMS_SPACE.UNUSED_SPACE"
    (https://docs.oracle.com/cd/A97630_01/appdev.920/a96612/d_space2.htm): unused_blocks are the blocks above
    the high-water mark; last_used_extent_file_id / last_used_extent_block_id / last_used_block say where it
    is. Two extents of 128 blocks, the mark at block 40 of the second: 128 + 40 = 168 blocks exist to read,
    88 are free and no query reads them. The old code planned and confirmed 256 (half of 256 = 128 <= 168)."""
    db = TableFake([Ext(0, 4, 128, 128), Ext(1, 4, 256, 128)], hwm=(1, 40))
    result = OracleEngine(db).read_range(chunk(Extent(4, 128, 128), Extent(4, 256, 128)))
    assert (result.blocks, result.gone) == (168, 88)
    assert "high-water mark" in result.details["gone_reason"] and "never read" in result.details["gone_reason"]
    ends = [decode_rowid(b["end_id"])[2] for _, b in reads_of(db)]
    assert ends == [255, 256 + 40 - 1]
    assert result.details["segment_stats"]["physical reads"] == 168 and result.details["confirmed_blocks"] == 168


def test_a_chunk_wholly_above_the_high_water_mark_sends_no_read():
    """The mark at block 100 of the first extent: the second extent (blocks 256-383) holds nothing any query
    reads, so its chunk sends no statement and counts 128 blocks free (hand-worked)."""
    db = TableFake([Ext(0, 4, 128, 128), Ext(1, 4, 256, 128)], hwm=(0, 100))
    result = OracleEngine(db).read_range(chunk(Extent(4, 256, 128)))
    assert reads_of(db) == [] and (result.blocks, result.gone) == (0, 128)


def test_without_analyze_privilege_the_mark_is_unknown_and_the_whole_extents_are_read():
    """DBMS_SPACE.UNUSED_SPACE needs the ANALYZE privilege on the object (same page); refused (ORA-01031),
    the read goes by the planned extents, says the mark is not known, and is still confirmed."""
    db = TableFake(FOUR, hwm=(3, 128), unused_space_error=ora_error(1031, "insufficient privileges"))
    result = OracleEngine(db).read_range(chunk(Extent(4, 128, 128)))
    assert result.blocks == 128 and result.gone == 0
    assert "not known" in result.details["high_water_mark"]


def test_unformatted_blocks_below_the_mark_in_its_last_extent_are_not_a_short_read():
    """PL/SQL Packages, "DBMS_SPACE" (https://docs.oracle.com/cd/A97630_01/appdev.920/a96612/d_space2.htm):
    SPACE_USAGE counts unformatted blocks below the high-water mark of an automatic segment space management
    segment; a scan has nothing to read in them. Here 30 of the last used extent's 128 blocks: the chunk reads
    98. The blocks of the mark's own extent are confirmed with the looser bound (half: 64), the others with the
    tolerance; hand-worked floor 0 + 64 = 64 <= 98. On the previous code: 98 < 128 - 16 = 112, a ShortRead."""
    db = TableFake([Ext(0, 4, 128, 128)], hwm=(0, 128), unformatted=30)
    result = OracleEngine(db).read_range(chunk(Extent(4, 128, 128)))
    assert result.blocks == 128 and result.details["confirmed_blocks"] == 98
