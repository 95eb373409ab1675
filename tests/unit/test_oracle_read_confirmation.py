"""Issue 22, finding 3: every read is confirmed by the session's own counters.

Oracle Database Reference, "V$MYSTAT" (the current session's statistics) joined to
"V$STATNAME"; "Statistics Descriptions": 'physical reads' (blocks read from disk, buffered
and direct), 'physical reads direct' (read around the buffer cache), 'physical reads cache'
(read into the cache) and 'session logical reads' (blocks got from the cache or by a direct
read: a block already cached is read without a physical read). A scan stopped at the
high-water mark, an ignored FULL hint or an invisible index reads far fewer blocks than
planned, which only the counters show: such a read is ``ShortRead``, not DONE."""

from __future__ import annotations

import pytest

from cutover_prep.engines.base import Extent, ReadRange, ShortRead
from cutover_prep.engines.oracle import read_sql as rq
from cutover_prep.engines.oracle.engine import OracleEngine
from tests.unit.test_oracle_fakes import OracleFake, ora_error

TABLE = {"read": "rowid_range", "owner": "APP", "table": "ORDERS", "partition": None, "subpartition": False,
         "data_object_id": 777, "segment_type": "TABLE", "bigfile": False}
RNG = ReadRange("APP.ORDERS#TABLE", TABLE, (Extent(4, 128, 64), Extent(4, 256, 64)), 8192)


def test_the_counters_are_the_sessions_own_from_v_mystat():
    sql = rq.MYSTAT_SQL
    assert "FROM v$mystat m JOIN v$statname n ON n.statistic# = m.statistic#" in sql
    for name in ("'physical reads'", "'physical reads direct'", "'physical reads cache'", "'session logical reads'"):
        assert name in sql


def test_counters_that_do_not_move_make_a_short_read_not_a_done_one():
    db = OracleFake()  # the FULL scans run, the server reads nothing: V$MYSTAT stays put
    with pytest.raises(ShortRead, match=r"APP\.ORDERS#TABLE: .*0 of the 128 blocks"):
        OracleEngine(db).read_range(RNG)
    statements = [s for s, _ in db.executed]
    mystat = [i for i, s in enumerate(statements) if s == rq.MYSTAT_SQL]
    reads = [i for i, s in enumerate(statements) if "ROWID BETWEEN" in s]
    assert len(mystat) == 2 and mystat[0] < reads[0] and reads[-1] < mystat[1]  # before and after the read


def test_a_read_the_counters_confirm_records_them():
    db = OracleFake(reads={"ROWID BETWEEN": 63})  # each range read but for its segment header
    result = OracleEngine(db).read_range(RNG)
    assert result.blocks == 128 and result.method == "rowid_range_scan"
    assert result.details["mystat"] == {"physical reads": 126, "physical reads direct": 126,
                                        "physical reads cache": 0, "session logical reads": 126}
    assert result.details["confirmed_blocks"] == 126  # 2 fewer than planned: within the stated tolerance


def test_blocks_already_in_the_buffer_cache_count_through_logical_reads():
    db = OracleFake()
    db.reads = {}

    def cached_read(_sql, _binds):
        db.mystat["session logical reads"] += 64  # got from the cache: no physical read
        db.segstat["logical reads"] += 64
        return [(500,)]
    db.answers["ROWID BETWEEN"] = cached_read
    result = OracleEngine(db).read_range(RNG)
    assert result.blocks == 128 and result.details["confirmed_blocks"] == 128
    assert result.details["mystat"]["physical reads"] == 0


def test_without_select_on_v_mystat_the_read_says_it_is_unconfirmed_by_the_session():
    db = OracleFake(fail={"v$mystat": ora_error(942, "table or view does not exist")}, reads={"ROWID BETWEEN": 64})
    result = OracleEngine(db).read_range(RNG)
    assert result.blocks == 128 and result.details["confirmed_blocks"] == 128  # by its segment's counters
    assert "V$MYSTAT" in result.details["unconfirmed"]


def test_without_either_view_the_read_is_not_confirmed():
    no_view = ora_error(942, "table or view does not exist")
    db = OracleFake(fail={"v$mystat": no_view, "v$segment_statistics": no_view})
    result = OracleEngine(db).read_range(RNG)
    assert result.blocks == 128 and result.details["confirmed_blocks"] is None
    assert "V$MYSTAT" in result.details["unconfirmed"]
    assert "V$SEGMENT_STATISTICS" in result.details["segment_unconfirmed"]
