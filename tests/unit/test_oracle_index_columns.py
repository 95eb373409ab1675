"""Issue 22, finding 1: the index read looks its column up where Oracle keeps it.

Oracle Database Reference, "DBA_TAB_COLS": it "differs from DBA_TAB_COLUMNS in that
system-generated hidden columns are not filtered out". A function-based index, and a
descending one (Oracle implements DESC keys as SYS_OP_DESCEND(col)), index such a hidden
virtual column (SYS_NCnnnnn$); DBA_IND_COLUMNS names it, DBA_IND_EXPRESSIONS gives its
expression (SQL Language Reference, CREATE INDEX, "function-based indexes"; Database Reference,
"DBA_IND_EXPRESSIONS"). Joined to DBA_TAB_COLUMNS the lookup returns no row, python-oracledb's
``fetchone()`` is ``None`` and unpacking it was a TypeError that escaped ``read_range``.
A cluster index (INDEX_TYPE 'CLUSTER') indexes a cluster, which no SELECT can name."""

from __future__ import annotations

import pytest

from cutover_prep.engines.base import DiscoveryOptions, Extent, PermanentReadError, ReadRange
from cutover_prep.engines.oracle import read_sql as rq
from cutover_prep.engines.oracle.engine import OracleEngine
from tests.unit.oracle_dictionary import dictionary_answers
from tests.unit.test_oracle import seg_row
from tests.unit.test_oracle_fakes import OracleFake

LOC = {"read": "index", "owner": "APP", "segment": "ORDERS_DESC_IDX", "partition": None, "table_owner": "APP",
       "table": "ORDERS", "whole_index": False, "segment_type": "INDEX"}
RNG = ReadRange("APP.ORDERS_DESC_IDX#INDEX", LOC, (Extent(4, 512, 16),), 8192, splittable=False)


def hidden_aware(sql, _binds):
    """DBA_TAB_COLUMNS hides SYS_NC00003$; DBA_TAB_COLS shows it (HIDDEN_COLUMN = 'YES')."""
    if "dba_tab_cols " in sql or "dba_tab_cols\n" in sql:
        return [(1, "SYS_NC00003$", "Y", "YES")]
    return []


def test_a_descending_index_is_read_through_its_hidden_column_from_dba_tab_cols():
    db = OracleFake({"dba_ind_columns": hidden_aware, "dba_ind_expressions": [('"CREATED_AT"',)]},
                    reads={"INDEX_FFS": 16})
    result = OracleEngine(db).read_range(RNG)
    lookup = db.statements("dba_ind_columns")[0][0]
    assert "dba_tab_cols" in lookup and "dba_tab_columns" not in lookup
    assert db.statements("dba_ind_columns")[0][1] == {"owner": "APP", "index_name": "ORDERS_DESC_IDX"}
    (ffs, _), = db.statements("INDEX_FFS")
    assert 'INDEX_FFS(t "ORDERS_DESC_IDX")' in ffs and 'WHERE t."SYS_NC00003$" IS NOT NULL' in ffs
    assert db.statements("dba_ind_expressions")[0][1] == {"owner": "APP", "index_name": "ORDERS_DESC_IDX",
                                                           "position": 1}
    assert result.details["index_column"] == {"name": "SYS_NC00003$", "hidden": True, "nullable": True,
                                               "expression": '"CREATED_AT"'}


def test_an_index_with_a_not_null_key_column_needs_no_predicate():
    db = OracleFake({"dba_ind_columns": [(1, "SYS_NC00005$", "Y", "YES"), (2, "ID", "N", "NO")]},
                    reads={"INDEX_FFS": 16})
    OracleEngine(db).read_range(RNG)
    (ffs, _), = db.statements("INDEX_FFS")
    assert "WHERE" not in ffs  # every row has an entry: ID is NOT NULL


def test_an_index_whose_column_is_found_nowhere_fails_by_name_not_with_a_type_error():
    db = OracleFake({"dba_ind_columns": []})
    with pytest.raises(PermanentReadError, match=r"APP\.ORDERS_DESC_IDX.*DBA_IND_COLUMNS"):
        OracleEngine(db).read_range(RNG)
    assert not db.statements("INDEX_FFS")


def test_a_cluster_index_is_not_planned_the_census_names_it_read_by_the_datafile_pass_only():
    """Issue 35 §3: planned, it was a unit that failed every night; now it is no unit at all
    (tests/unit/test_oracle_discovery_plan.py: the census names it)."""
    db = OracleFake(dictionary_answers([seg_row("APP", "EMP_DEPT_IDX", None, "INDEX", idx_owner="APP",
                                                idx_table="EMP_DEPT", index_type="CLUSTER")],
                                       [("APP", "EMP_DEPT_IDX", None, 4, 64, 8)]))
    assert OracleEngine(db).discover(DiscoveryOptions()) == []


def test_the_lookup_sql_reads_every_key_column_in_order():
    assert "FROM dba_ind_columns ic" in rq.INDEX_COLUMNS_SQL and "ORDER BY ic.column_position" in rq.INDEX_COLUMNS_SQL
    assert "FROM dba_ind_expressions" in rq.INDEX_EXPRESSION_SQL and ":position" in rq.INDEX_EXPRESSION_SQL
