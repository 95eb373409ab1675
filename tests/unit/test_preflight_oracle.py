"""The Oracle preflight (issue 22) on a fake python-oracledb connection: the SQL it sends, asserted.

No Oracle here: ``tests.unit.test_oracle_fakes.OracleFake`` records every statement and moves the
session's V$MYSTAT counters only as far as the test says the server read."""

from __future__ import annotations

from typing import Any

import oracledb
import pytest

from cutover_prep.engines import ConnectionSpec
from cutover_prep.engines.base import CensusObject, EngineError, Extent, Segment
from cutover_prep.engines.oracle import preflight as pf
from cutover_prep.engines.oracle import rowids as rid
from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle.engine import OracleEngine
from cutover_prep.engines.registry import family
from cutover_prep.preflight import FAIL, INFO, PASS, Context
from tests.unit.test_oracle_fakes import OracleFake, ora_error

SPEC = ConnectionSpec(engine="oracle", host="db.example", port=2484, database="ORCL", user="CP", password="pw-secret")
BIG_BLOCK = 5_000_000  # a bigfile extent at RELATIVE_FNO 1024 ending at block 5,000,000
TABLE = Segment(schema="APP", name="T", kind="TABLE", bytes=8 * 8192, block_size=8192,
                extents=(Extent(1024, BIG_BLOCK - 7, 8),),
                locator={"owner": "APP", "segment": "T", "partition": None, "segment_type": "TABLE",
                         "read": "rowid_range", "table": "T", "data_object_id": 777, "subpartition": False,
                         "bigfile": True})
INDEX = Segment(schema="APP", name="T_PK", kind="INDEX", bytes=4 * 8192, block_size=8192,
                extents=(Extent(1024, 100, 4),), splittable=False,
                locator={"owner": "APP", "segment": "T_PK", "partition": None, "segment_type": "INDEX",
                         "read": "index", "table_owner": "APP", "table": "T", "whole_index": False,
                         "invisible": False})
LOB = Segment(schema="APP", name="SYS_LOB01", kind="LOBSEGMENT", bytes=2 * 8192, block_size=8192,
              extents=(Extent(1024, 200, 2),), splittable=False,
              locator={"owner": "APP", "segment": "SYS_LOB01", "partition": None, "segment_type": "LOBSEGMENT",
                       "read": "lob", "table": "T", "column": "DOC", "data_type": "CLOB", "table_partition": None,
                       "table_subpartition": False})
CENSUS = [CensusObject(database=None, schema="APP", name="T", kind="TABLE", bytes=TABLE.bytes, key=TABLE.key),
          CensusObject(database=None, schema="HR", name="PAY", kind="TABLE", bytes=1 << 20, key="HR.PAY#TABLE",
                       readable=False, reason="no privilege")]


def _roundtrip(_sql: str, binds: dict[str, Any]) -> list[tuple]:
    """DBMS_ROWID.ROWID_BLOCK_NUMBER(rowid, 'BIGFILE'): the file field holds the block's high bits."""
    return [((binds["fno"] << rid.SMALLFILE_BLOCK_BITS) | binds["block"],)]


def _fake(**changes: Any) -> OracleFake:
    answers: dict[str, Any] = {
        "version_full": [("19.24.0.0.0",)],
        "v$version": [("Oracle Database 19c Standard Edition 2 Release 19.0.0.0.0 - Production",)],
        "session_privs": [("CREATE SESSION",), ("READ ANY TABLE",)],
        "WHERE ROWNUM < 1": [(0,)],
        "all_procedures": [(1,)],
        "FROM dba_ind_columns ic": [(1, "ID", "N", "NO")],
        "ROWID_BLOCK_NUMBER": _roundtrip,
    }
    answers.update(changes.pop("answers", {}))
    reads = {"ROWID BETWEEN": 8, "INDEX_FFS": 4, "DBMS_LOB.READ": 2, **changes.pop("reads", {})}
    return OracleFake(answers, reads=reads, **changes)


def _run(fake: OracleFake, *, datafiles: bool = False, segments: list[Segment] | None = None) -> list[Any]:
    engine = OracleEngine(fake, "tcps-verified")
    engine.discover = lambda options: list((TABLE, INDEX, LOB) if segments is None else segments)  # type: ignore
    engine.census = lambda options: list(CENSUS)  # type: ignore[method-assign]
    return pf.checks_of(engine, SPEC, Context(datafiles=datafiles), errors=(EngineError, oracledb.Error))


def _by_name(checks: list[Any]) -> dict[str, Any]:
    return {c.name: c for c in checks}


def test_the_registry_names_the_oracle_preflight() -> None:
    assert family("oracle-se2-cdb").preflight is pf.run


def test_every_view_the_engines_sql_names_is_probed_and_each_read_method_is_confirmed_by_v_mystat() -> None:
    fake = _fake()
    checks = _by_name(_run(fake))
    sent = [s for s, _ in fake.executed]
    for view in ("dba_segments", "dba_extents", "dba_ind_columns", "dba_tab_cols", "dba_lobs", "v$mystat",
                 "v$statname", "dba_users"):
        assert f"SELECT COUNT(*) FROM {view} WHERE ROWNUM < 1" in sent
        assert checks[f"SELECT on {view.upper()}"].status == PASS
    assert "SELECT COUNT(*) FROM dba_data_files WHERE ROWNUM < 1" in sent  # the census reads it too
    assert not any("all_procedures" in s or "v$rman" in s.lower() for s in sent)  # no datafile pass asked
    for method in ("rowid_range_scan", "index_ffs", "lob_read"):
        assert checks[method].status == PASS, checks[method].line()
        assert "V$SEGMENT_STATISTICS physical reads +" in checks[method].detail and "V$MYSTAT" in checks[method].detail
    assert checks["read-only session"].status == PASS
    assert checks["version"].detail == "19.24.0.0.0" and "Standard Edition 2" in checks["edition"].detail
    assert checks["tls"].status == PASS
    # every read inside SET TRANSACTION READ ONLY; nothing written
    assert sent.count(q.SET_TRANSACTION_READ_ONLY_SQL) >= 3
    assert not any(s.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "MERGE", "GRANT"))
                   for s in sent)
    # the census: an object the user may not read fails, named with its bytes
    assert checks["HR.PAY#TABLE"].status == FAIL and checks["HR.PAY#TABLE"].bytes == 1 << 20


def test_the_bigfile_round_trip_sends_the_split_block_and_checks_what_dbms_rowid_reads_back() -> None:
    fake = _fake()
    check = _by_name(_run(fake))["bigfile round trip"]
    (sql, binds), = fake.statements("ROWID_BLOCK_NUMBER")
    assert sql == rid.BIGFILE_ROUNDTRIP_SQL
    assert binds == {"objd": 777, "fno": BIG_BLOCK >> 22, "block": BIG_BLOCK & ((1 << 22) - 1)}
    assert check.status == PASS and "5,000,000" in check.detail
    wrong = _fake(answers={"ROWID_BLOCK_NUMBER": [(BIG_BLOCK & ((1 << 22) - 1),)]})  # the smallfile reading
    check = _by_name(_run(wrong))["bigfile round trip"]
    assert check.status == FAIL and "would miss blocks" in check.detail


def test_v_mystat_counters_that_do_not_move_fail_the_method_by_name() -> None:
    fake = _fake(reads={"INDEX_FFS": 0})  # the hint ignored: the session read nothing of the index
    checks = _by_name(_run(fake))
    assert checks["index_ffs"].status == FAIL and "V$MYSTAT" in checks["index_ffs"].detail
    assert checks["rowid_range_scan"].status == PASS


def test_a_view_the_user_may_not_select_is_named_with_the_grant() -> None:
    fake = _fake(fail={"FROM dba_extents WHERE ROWNUM < 1": ora_error(942, "table or view does not exist")})
    check = _by_name(_run(fake))["SELECT on DBA_EXTENTS"]
    assert check.status == FAIL and "ORA-00942" in check.detail
    assert "grant_sys_object('DBA_EXTENTS'" in check.detail


def test_no_v_mystat_means_the_reads_are_not_confirmed() -> None:
    fake = _fake(fail={"v$mystat m": ora_error(942, "table or view does not exist")})
    checks = _by_name(_run(fake))
    assert checks["rowid_range_scan"].status == FAIL and "not confirmed" in checks["rowid_range_scan"].detail


def test_the_datafile_pass_checks_rdsadmin_rman_util_and_its_views() -> None:
    fake = _fake(answers={"all_procedures": [(0,)]})
    checks = _by_name(_run(fake, datafiles=True))
    assert pf.RMAN_UTIL_SQL in [s for s, _ in fake.executed]
    assert checks["EXECUTE on rdsadmin.rdsadmin_rman_util"].status == FAIL
    for view in ("V$RMAN_STATUS", "V$RMAN_OUTPUT", "DBA_DATA_FILES"):
        assert checks[f"SELECT on {view}"].status == PASS
    ok = _by_name(_run(_fake(), datafiles=True))
    assert ok["EXECUTE on rdsadmin.rdsadmin_rman_util"].status == PASS


def test_a_method_the_plan_does_not_use_is_said_so() -> None:
    checks = _by_name(_run(_fake(), segments=[INDEX]))
    assert checks["lob_read"].status == INFO and checks["rowid_range_scan"].status == INFO
    assert checks["bigfile round trip"].status == INFO


def test_view_names_come_from_the_engines_own_sql_only() -> None:
    with pytest.raises(ValueError):
        pf.view_probe_sql("dba_users; DROP TABLE x")
    assert "dba_segments" in pf.engine_views(False) and "v$rman_status" not in pf.engine_views(False)
    assert "v$rman_status" in pf.engine_views(True)


def test_a_table_rebuilt_since_discovery_proves_nothing_and_says_so() -> None:
    """Issue 32: the sample table got a new DATA_OBJECT_ID (TRUNCATE or MOVE) between discovery and its read: the
    read takes what exists (nothing of the planned storage), which proves no read method: a FAIL naming why, never
    a PASS with 0 blocks "confirmed"."""
    fake = _fake(answers={"dba_extents e": [(901, 1024, 100, 8)]})
    check = _by_name(_run(fake))["rowid_range_scan"]
    assert check.status == FAIL and "rebuilt while the run ran" in check.detail and "901" in check.detail
