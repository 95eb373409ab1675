"""Issue 22, finding 5 (invisible indexes), the documented way: an invisible index is ignored by the
optimizer, hints included, unless the session's OPTIMIZER_USE_INVISIBLE_INDEXES is TRUE (Database
Reference, "OPTIMIZER_USE_INVISIBLE_INDEXES"; Administrator's Guide, "Understand When to Use
Invisible Indexes"). The engine sets it for the invisible index's read only (ALTER SESSION is
allowed in a read-only transaction: SQL Language Reference, "SET TRANSACTION"), keeps the
USE_INVISIBLE_INDEXES hint, and sets the session back to FALSE after.

The fake plays the documented server: its INDEX_FFS of the invisible index reads the index's
blocks (V$MYSTAT moves) only while the session parameter is TRUE; else the optimizer did not use the
index and the read is not confirmed (ShortRead)."""

from __future__ import annotations

import pytest

from cutover_prep.engines.base import PermanentReadError, ReadRange, ShortRead
from cutover_prep.engines.oracle import read_sql as rq
from cutover_prep.engines.oracle.engine import OracleEngine
from tests.unit.test_oracle import seg_row
from tests.unit.test_oracle_fakes import OracleFake, ora_error
from tests.unit.test_oracle_object_kinds import discover

TRUE_SQL = "ALTER SESSION SET OPTIMIZER_USE_INVISIBLE_INDEXES = TRUE"
FALSE_SQL = "ALTER SESSION SET OPTIMIZER_USE_INVISIBLE_INDEXES = FALSE"


def index_segment(visibility: str):
    (seg,) = discover(seg_row("APP", "HIDDEN_IDX", None, "INDEX", idx_owner="APP", idx_table="T",
                              index_type="NORMAL", visibility=visibility)).values()
    return seg


def documented_server(**fail) -> OracleFake:
    """INDEX_FFS reads the index's 8 blocks only while OPTIMIZER_USE_INVISIBLE_INDEXES is TRUE."""
    db = OracleFake(fail=fail)
    session = {"use_invisible": False}

    def set_parameter(sql, _binds):
        session["use_invisible"] = sql.rstrip().endswith("TRUE")
        return []

    def index_ffs(_sql, _binds):
        if session["use_invisible"]:
            db.read(8)
        return [(100,)]

    db.answers.update({"dba_ind_columns": [(1, "ID", "N", "NO")], "OPTIMIZER_USE_INVISIBLE_INDEXES": set_parameter,
                       "INDEX_FFS": index_ffs})
    db.session = session
    return db


def read(seg, db):
    return OracleEngine(db).read_range(ReadRange(seg.key, seg.locator, seg.extents, 8192, seg.splittable))


def test_the_session_parameter_statements():
    assert rq.USE_INVISIBLE_INDEXES_SQL == TRUE_SQL
    assert rq.IGNORE_INVISIBLE_INDEXES_SQL == FALSE_SQL


def test_an_invisible_index_is_read_under_optimizer_use_invisible_indexes_true():
    seg = index_segment("INVISIBLE")
    db = documented_server()
    result = read(seg, db)
    sent = [sql for sql, _ in db.executed]
    ffs = next(i for i, sql in enumerate(sent) if "INDEX_FFS" in sql)
    assert sent[ffs - 1] == TRUE_SQL  # set right before the read, in the same session
    assert sent[ffs + 1] == FALSE_SQL  # and back to the default right after
    assert 'SELECT /*+ INDEX_FFS(t "HIDDEN_IDX") USE_INVISIBLE_INDEXES NO_PARALLEL(t) */ COUNT(*)' in sent[ffs]
    assert result.details["optimizer_use_invisible_indexes"] is True
    assert db.session["use_invisible"] is False


def test_without_the_session_parameter_the_documented_server_reads_nothing(monkeypatch):
    """What the hint alone gets on a real server (the landed code): the index is not used, no block is
    read, and the read is not confirmed."""
    seg = index_segment("INVISIBLE")
    monkeypatch.setattr(rq, "USE_INVISIBLE_INDEXES_SQL", "SELECT 1 FROM dual")  # the parameter never set
    with pytest.raises(ShortRead):
        read(seg, documented_server())


def test_a_visible_index_leaves_the_session_parameter_alone():
    seg = index_segment("VISIBLE")
    db = OracleFake({"dba_ind_columns": [(1, "ID", "N", "NO")]}, reads={"INDEX_FFS": 8})
    read(seg, db)
    assert db.statements("OPTIMIZER_USE_INVISIBLE_INDEXES") == []
    (ffs, _), = db.statements("INDEX_FFS")
    assert "USE_INVISIBLE_INDEXES" not in ffs


def test_a_failed_read_still_sets_the_session_back():
    seg = index_segment("INVISIBLE")
    db = documented_server(INDEX_FFS=ora_error(1502, "index or partition of such index is in unusable state"))
    with pytest.raises(PermanentReadError, match="ORA-01502"):
        read(seg, db)
    assert [sql for sql, _ in db.statements("OPTIMIZER_USE_INVISIBLE_INDEXES")] == [TRUE_SQL, FALSE_SQL]
    assert db.session["use_invisible"] is False
