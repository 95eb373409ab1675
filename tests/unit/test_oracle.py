"""Oracle engine: identifier quoting, SQL of each read, discovery grouping, error mapping —
against a fake connection (there is no Oracle here; see tests/integration/test_oracle_live.py)."""

from __future__ import annotations

import oracledb
import pytest

from cutover_prep.engines import (
    DatabaseUnreachable,
    DiscoveryOptions,
    PermanentReadError,
    ReadRange,
    TransientDatabaseError,
)
from cutover_prep.engines.base import Extent
from cutover_prep.engines.oracle import read_sql as rq
from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle.engine import OracleEngine, map_error
from tests.unit.oracle_segment_fake import decode_rowid


@pytest.mark.parametrize(("name", "quoted"), [
    ("lower", '"lower"'), ("MiXeD", '"MiXeD"'), ("SYS$X", '"SYS$X"'), ("A#B", '"A#B"'),
    ("naïve_表", '"naïve_表"'), ("with space", '"with space"'),
    ("DROP TABLE X; --", '"DROP TABLE X; --"'),
])
def test_identifiers_are_quoted_as_they_are(name, quoted):
    assert q.quote_identifier(name) == quoted


@pytest.mark.parametrize("name", ['A"B', "", "x\x00y", "é" * 65])
def test_names_oracle_cannot_quote_are_refused(name):
    with pytest.raises(ValueError):
        q.quote_identifier(name)


def test_rowid_range_sql_quotes_names_and_binds_values():
    sql = rq.rowid_range_count_sql("App", 'Or"ders'.replace('"', ""), "P 2024", False)
    assert 'FROM "App"."Orders" PARTITION ("P 2024") t' in sql
    assert "ROWID(t)" in sql and "FULL(t)" not in sql and "t.ROWID BETWEEN :start_id AND :end_id" in sql
    assert "SUBPARTITION" in rq.rowid_range_count_sql("A", "T", "SP1", True)


def test_index_ffs_sql_forces_the_fast_full_scan():
    sql = rq.index_ffs_sql("APP", "ORDERS", "orders_idx", "CUSTOMER_ID", nullable=True)
    assert 'INDEX_FFS(t "orders_idx")' in sql and 'WHERE t."CUSTOMER_ID" IS NOT NULL' in sql
    assert "WHERE" not in rq.index_ffs_sql("APP", "ORDERS", "PK", "ID", nullable=False)


def test_lob_block_reads_every_piece_with_the_right_buffer():
    blob = rq.lob_read_block("APP", "DOCS", "BODY", "BLOB")
    clob = rq.lob_read_block("APP", "DOCS", "BODY", "CLOB")
    assert "RAW(32767)" in blob and "VARCHAR2(32767)" in clob
    assert "DBMS_LOB.READ" in blob and ":total" in blob and "INSERT" not in blob.upper()


class FakeCursor:
    def __init__(self, conn):
        self.conn, self.arraysize, self._rows = conn, 100, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, parameters=None, **binds):
        self.conn.executed.append((sql, binds or parameters))
        if sql in self.conn.refuse:
            raise oracledb.DatabaseError(type("E", (), {"code": 2248, "full_code": "ORA-02248",
                                                        "message": "ORA-02248: invalid option for ALTER SESSION"})())
        if self.conn.fail and sql not in (q.SET_TRANSACTION_READ_ONLY_SQL,):
            raise self.conn.fail
        self._rows = list(self.conn.answer(sql, binds or parameters or {}))
        return self  # python-oracledb: execute() of a query returns the cursor, iterable over its rows

    def __iter__(self):
        return iter(self._rows)

    def fetchone(self):
        return self._rows[0] if self._rows else (0,)

    def var(self, _type):  # an out bind nothing sets (DBMS_SPACE.UNUSED_SPACE: no mark known)
        return type("Var", (), {"getvalue": lambda self, pos=0: None})()


class FakeConnection:
    def __init__(self, answers=None, fail=None, refuse=()):
        self.answers, self.fail, self.executed = answers or {}, fail, []
        self.refuse = refuse  # statements this "database version" does not know (ORA-02248)
        self.call_timeout, self.module, self.action = 0, None, None

    def rollback(self):
        self.executed.append(("ROLLBACK", None))

    def commit(self):
        self.executed.append(("COMMIT", None))

    def answer(self, sql, binds=None):
        if "v$mystat" in sql or "v$segment_statistics" in sql:  # not granted here: reads unconfirmed (what the
            raise oracledb.DatabaseError(type("E", (), {  # counters say: test_oracle_read_confirmation.py,
                "code": 942, "full_code": "ORA-00942",     # test_oracle_rowid_range_reads.py)
                "message": "ORA-00942: table or view does not exist"})())
        for marker, rows in self.answers.items():
            if marker in sql:
                return rows(sql, binds or {}) if callable(rows) else rows
        if sql == rq.SEGMENT_NOW_SQL:  # the segment looked up again before a read (issue 32): no row, read as
            return []                 # planned; what a changed segment does: tests/unit/test_oracle_rebuilt_segment.py
        return [(1,)]

    def cursor(self):
        return FakeCursor(self)

    def close(self):
        pass


def seg_row(owner, name, part, seg_type, **kw):
    base = dict(size=8192 * 16, blocks=16, block_size=8192, objd=None, lob_table=None, lob_column=None,
                lob_type=None, idx_owner=None, idx_table=None, index_type=None, locality=None, lob_part=None,
                bigfile="NO", lob_col=None, iot_type=None, iot_name=None, lob_subpart=None, visibility="VISIBLE",
                lob_table_iot=None)
    base.update(kw)
    return (owner, name, part, seg_type, *base.values())


def test_discovery_groups_extents_excludes_system_and_applies_filters():
    from tests.unit.oracle_dictionary import dictionary_answers

    conn = FakeConnection({
        "oracle_maintained": [("AUDSYS",)],
        **dictionary_answers(
            [seg_row("APP", "ORDERS", None, "TABLE", objd=777),
             seg_row("APP", "ORDERS_IDX", None, "INDEX", idx_owner="APP", idx_table="ORDERS", index_type="NORMAL"),
             seg_row("APP", "SYS_LOB01", None, "LOBSEGMENT", lob_table="DOCS", lob_column="BODY", lob_type="CLOB"),
             seg_row("SYS", "OBJ$", None, "TABLE", objd=18),
             seg_row("OTHER", "T", None, "TABLE", objd=5)],
            [("APP", "ORDERS", None, 4, 128, 8), ("APP", "ORDERS", None, 4, 256, 8), ("SYS", "OBJ$", None, 1, 8, 8),
             ("APP", "ORDERS_IDX", None, 4, 512, 16), ("APP", "SYS_LOB01", None, 4, 900, 16),
             ("OTHER", "T", None, 5, 8, 8)]),
    })
    segments = OracleEngine(conn).discover(DiscoveryOptions(exclude_schemas=("OTH*",)))
    by_name = {s.name: s for s in segments}
    assert set(by_name) == {"ORDERS", "ORDERS_IDX", "SYS_LOB01"}
    assert by_name["ORDERS"].extents == (Extent(4, 128, 8), Extent(4, 256, 8)) and by_name["ORDERS"].splittable
    assert by_name["ORDERS"].locator.to_json()["data_object_id"] == 777
    assert not by_name["ORDERS_IDX"].splittable and by_name["ORDERS_IDX"].locator.to_json()["read"] == "index"
    assert by_name["SYS_LOB01"].locator.to_json()["read"] == "lob"


def test_table_range_is_read_per_extent_with_binds():
    conn = FakeConnection()
    rng = ReadRange("APP.ORDERS#TABLE", {"read": "rowid_range", "owner": "APP", "table": "ORDERS", "partition": None,
                                         "subpartition": False, "data_object_id": 777, "segment_type": "TABLE"},
                    (Extent(4, 128, 8), Extent(4, 256, 4)), 8192)
    result = OracleEngine(conn).read_range(rng)
    assert result.method == "rowid_range_scan" and result.blocks == 12
    binds = [b for sql, b in conn.executed if "ROWID BETWEEN" in sql]
    assert [(decode_rowid(b["start_id"]), decode_rowid(b["end_id"])) for b in binds] == [
        ((777, 4, 128, 0), (777, 4, 135, 32767)), ((777, 4, 256, 0), (777, 4, 259, 32767))]
    assert all("777" not in sql for sql, _ in conn.executed)


def test_index_is_read_with_ffs_using_its_first_column():
    conn = FakeConnection({"dba_ind_columns": [(1, "CUSTOMER_ID", "Y", "NO")]})
    rng = ReadRange("k", {"read": "index", "owner": "APP", "segment": "ORDERS_IDX", "partition": None,
                          "table_owner": "APP", "table": "ORDERS", "whole_index": False, "segment_type": "INDEX"},
                    (Extent(4, 512, 16),), 8192, splittable=False)
    assert OracleEngine(conn).read_range(rng).method == "index_ffs"
    assert any('INDEX_FFS(t "ORDERS_IDX")' in sql for sql, _ in conn.executed)


def test_unsupported_segments_fail_by_name():
    rng = ReadRange("k", {"read": "unsupported", "segment_type": "CLUSTER"}, (Extent(1, 1, 1),), 8192)
    with pytest.raises(PermanentReadError, match="CLUSTER"):
        OracleEngine(FakeConnection()).read_range(rng)


def test_errors_are_mapped_transient_or_permanent():
    gone = oracledb.DatabaseError(type("E", (), {"code": 8103, "full_code": "ORA-08103",
                                                 "message": "ORA-08103: object no longer exists"})())
    lost = oracledb.DatabaseError(type("E", (), {"code": 3113, "full_code": "ORA-03113",
                                                 "message": "ORA-03113: end-of-file on communication channel"})())
    assert isinstance(map_error(gone, "x"), PermanentReadError)
    assert isinstance(map_error(lost, "x"), TransientDatabaseError)
    rng = ReadRange("k", {"read": "rowid_range", "owner": "A", "table": "T", "partition": None, "subpartition": False,
                          "data_object_id": 1, "segment_type": "TABLE"}, (Extent(1, 1, 1),), 8192)
    with pytest.raises(TransientDatabaseError):
        OracleEngine(FakeConnection(fail=lost)).read_range(rng)


def read_only_wrapped(executed: list, read_marker: str) -> bool:
    """Every statement containing ``read_marker`` ran inside SET TRANSACTION READ ONLY ... ROLLBACK."""
    in_read_only = False
    seen = False
    for sql, _ in executed:
        if sql == q.SET_TRANSACTION_READ_ONLY_SQL:
            in_read_only = True
        elif sql in ("ROLLBACK", "COMMIT"):
            in_read_only = False
        elif read_marker in sql:
            seen = True
            if not in_read_only:
                return False
    return seen and not in_read_only  # and the transaction was ended afterwards


def test_every_read_runs_in_a_read_only_transaction_that_is_rolled_back():
    conn = FakeConnection({"dba_ind_columns": [(1, "ID", "N", "NO")]})
    engine = OracleEngine(conn)
    table = ReadRange("k", {"read": "rowid_range", "owner": "A", "table": "T", "partition": None,
                            "subpartition": False, "data_object_id": 1, "segment_type": "TABLE"},
                      (Extent(1, 1, 4),), 8192)
    engine.read_range(table)
    assert read_only_wrapped(conn.executed, "ROWID BETWEEN")
    assert conn.executed[0] == ("ROLLBACK", None)  # SET TRANSACTION must open its transaction
    conn.executed.clear()
    lob = ReadRange("k", {"read": "lob", "owner": "A", "table": "D", "column": "B", "data_type": "BLOB",
                          "segment_type": "LOBSEGMENT"}, (Extent(1, 1, 4),), 8192, splittable=False)
    engine.read_range(lob)
    assert read_only_wrapped(conn.executed, "DBMS_LOB.READ")


def test_discovery_runs_in_a_read_only_transaction():
    from tests.unit.oracle_dictionary import dictionary_answers

    conn = FakeConnection(dictionary_answers([seg_row("APP", "T", None, "TABLE", objd=7)],
                                             [("APP", "T", None, 4, 8, 8)]))
    OracleEngine(conn).discover(DiscoveryOptions())
    assert read_only_wrapped(conn.executed, "dba_segments")


def test_a_failed_read_still_ends_its_transaction():
    lost = oracledb.DatabaseError(type("E", (), {"code": 3113, "full_code": "ORA-03113", "message": "ORA-03113"})())
    conn = FakeConnection(fail=lost)
    rng = ReadRange("k", {"read": "rowid_range", "owner": "A", "table": "T", "partition": None, "subpartition": False,
                          "data_object_id": 1, "segment_type": "TABLE"}, (Extent(1, 1, 1),), 8192)
    with pytest.raises(TransientDatabaseError):
        OracleEngine(conn).read_range(rng)
    assert conn.executed[-1] == ("ROLLBACK", None)


@pytest.mark.parametrize(("refuse", "guard"), [((), "session+transaction"),
                                               ((q.SESSION_READ_ONLY_SQL,), "transaction")])
def test_the_session_is_read_only_where_the_database_has_the_parameter(refuse, guard):
    conn = FakeConnection(refuse=refuse)
    engine = OracleEngine(conn)
    engine.prepare_session()
    statements = [sql for sql, _ in conn.executed]
    assert statements[-2:] == ["ROLLBACK", q.SESSION_READ_ONLY_SQL]  # no transaction open when it is set
    assert engine.read_only_guard == guard
    assert q.SESSION_READ_ONLY_SQL == "ALTER SESSION SET READ_ONLY = TRUE"
    assert q.SET_TRANSACTION_READ_ONLY_SQL == "SET TRANSACTION READ ONLY"


def test_allow_writes_lifts_only_the_session_guard_and_tolerates_old_versions():
    from cutover_prep.engines.oracle.engine import allow_writes

    conn = FakeConnection()
    allow_writes(conn)
    assert [sql for sql, _ in conn.executed] == ["ROLLBACK", q.SESSION_READ_WRITE_SQL]
    allow_writes(FakeConnection(refuse=(q.SESSION_READ_WRITE_SQL,)))  # 19c: nothing to lift, no error


def _connect_with(monkeypatch, tls_mode, outcomes, **spec_kw):
    from cutover_prep.engines import ConnectionSpec

    calls = []

    def fake_connect(**kwargs):
        calls.append(kwargs)
        outcome = outcomes[len(calls) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return FakeConnection()

    monkeypatch.setattr(oracledb, "connect", fake_connect)
    spec = ConnectionSpec("oracle", "db1.abc.eu-west-1.rds.amazonaws.com", 1521, "ORCL", "warmer", "pw-x",
                          tls=tls_mode, **spec_kw)
    return spec, calls


def test_tls_required_connects_with_verified_tcps_on_the_ssl_option_port(monkeypatch):
    import ssl

    from cutover_prep.engines.transport import CA_BUNDLE

    spec, calls = _connect_with(monkeypatch, "require", [None], tls_port=2484)
    engine = OracleEngine.connect(spec)
    (kw,) = calls
    assert kw["protocol"] == "tcps" and kw["port"] == 2484 and kw["ssl_server_dn_match"] is True
    context = kw["ssl_context"]
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert len(context.get_ca_certs()) == CA_BUNDLE.read_text().count("BEGIN CERTIFICATE") >= 115
    assert engine.transport == "tcps-verified"


def test_tls_required_never_falls_back_to_tcp(monkeypatch):
    refused = oracledb.OperationalError(type("E", (), {"code": 0, "full_code": "DPY-6005",
                                                       "message": "DPY-6005: cannot connect to database"})())
    spec, calls = _connect_with(monkeypatch, "require", [refused, None], tls_port=2484)
    with pytest.raises(DatabaseUnreachable) as err:
        OracleEngine.connect(spec)
    assert len(calls) == 1 and calls[0]["protocol"] == "tcps"
    message = str(err.value)
    assert "TLS is required" in message and "2484" in message and "pw-x" not in message and "\n" not in message


def test_tls_prefer_falls_back_to_tcp_and_says_so(monkeypatch):
    refused = oracledb.OperationalError(type("E", (), {"code": 0, "full_code": "DPY-6005", "message": "DPY-6005"})())
    spec, calls = _connect_with(monkeypatch, "prefer", [refused, None], tls_port=2484)
    engine = OracleEngine.connect(spec)
    assert [(c["protocol"], c["port"]) for c in calls] == [("tcps", 2484), ("tcp", 1521)]
    assert engine.transport == "plaintext"
    spec, calls = _connect_with(monkeypatch, "disable", [None])
    assert OracleEngine.connect(spec).transport == "plaintext" and calls[0]["protocol"] == "tcp"
