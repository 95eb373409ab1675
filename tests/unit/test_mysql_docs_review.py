"""Issue 21, item 5: what a review of the MySQL and MariaDB documentation found in the engine.

Each test drives ``MySQLEngine`` against a scripted PyMySQL connection that answers as the
documented server does (a MySQL 8 or a MariaDB 10.11 dialect) and records every statement,
so what the engine sends is judged against the vendors' documentation, cited per test.
"""

from __future__ import annotations

from typing import Any

import pymysql
import pytest

from cutover_prep.engines import ConnectionSpec
from cutover_prep.engines.base import DiscoveryOptions, Extent, ReadRange
from cutover_prep.engines.mysql import engine as mysql_engine
from cutover_prep.engines.mysql import sql as q


class FakeCursor:
    def __init__(self, conn: FakeConn) -> None:
        self.conn = conn
        self.rows: list[tuple] = []
        self.description: list[tuple] | None = None

    def __enter__(self) -> FakeCursor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, statement: str, params: Any = None) -> None:
        self.conn.statements.append(statement)
        self.description = None
        self.rows = self.conn.answer(statement, self)

    def fetchall(self) -> list[tuple]:
        return list(self.rows)

    def fetchone(self) -> tuple | None:
        return self.rows[0] if self.rows else None


class FakeConn:
    """Answers the engine's statements as a server of ``version`` would; unknown variables raise 1193."""

    def __init__(self, version: str, catalogue: dict[str, list[tuple]] | None = None,
                 variables: tuple[str, ...] = ()) -> None:
        self.version = version
        self.catalogue = catalogue or {}
        self.variables = variables  # session variables this server has beyond the common ones
        self.statements: list[str] = []
        self.handler_reads = 0

    def cursor(self) -> FakeCursor:
        return FakeCursor(self)

    def close(self) -> None:
        return None

    def answer(self, statement: str, cur: FakeCursor) -> list[tuple]:
        text = statement.strip()
        if text == q.SETTINGS_SQL:
            return [(self.version, 16384, 0)]
        if text.startswith("SELECT @@SESSION."):
            return [(1,)]
        if text.startswith("SET SESSION"):
            name = text.split()[2]
            # both servers document lock_wait_timeout and innodb_lock_wait_timeout ("Server System Variables")
            if name not in ("max_execution_time", "max_statement_time", "TRANSACTION", "lock_wait_timeout",
                            "innodb_lock_wait_timeout") + self.variables:
                raise pymysql.err.OperationalError(1193, f"Unknown system variable '{name}'")
            return []
        if text.startswith("EXPLAIN"):
            cur.description = [(c,) for c in ("id", "select_type", "table", "type", "key", "Extra")]
            return [(1, "SIMPLE", "t", "index", "k", "Using index")]
        if text == q.HANDLER_SQL:  # the index is read: Handler_read_next moves
            self.handler_reads += 3
            return [("Handler_read_next", str(self.handler_reads))]
        if text.startswith("SELECT COUNT(*)"):
            return [(3, 12)]
        for marker, rows in self.catalogue.items():
            if marker in text:
                return rows
        return []


MYSQL_VARIABLES = ("information_schema_stats_expiry", "optimizer_switch")
SPEC = ConnectionSpec(engine="mysql", host="127.0.0.1", port=3306, database="app", user="u", password="p",
                      tls="disable")


def connect(monkeypatch: pytest.MonkeyPatch, conn: FakeConn) -> mysql_engine.MySQLEngine:
    monkeypatch.setattr(mysql_engine.pymysql, "connect", lambda **kw: conn)
    return mysql_engine.MySQLEngine.connect(SPEC)


def partitioned_catalogue(stats_rows: list[tuple]) -> dict[str, list[tuple]]:
    """One InnoDB table ``t`` in two partitions, a primary key and two secondary indexes; each
    partition's INDEX_LENGTH is 8 pages, which an even split would share 4 and 4."""
    return {
        "FROM INFORMATION_SCHEMA.TABLES WHERE": [("app", "t", "InnoDB", 0, 0, 0, "partitioned")],
        "FROM INFORMATION_SCHEMA.PARTITIONS": [("app", "t", "p0", None, 16384 * 4, 16384 * 8, 100),
                           ("app", "t", "P1", None, 16384 * 4, 16384 * 8, 100)],
        "FROM INFORMATION_SCHEMA.STATISTICS": [("app", "t", "PRIMARY", 0, 1, "id", None, "BTREE"),
                           ("app", "t", "big", 1, 1, "a", None, "BTREE"),
                           ("app", "t", "small", 1, 1, "b", None, "BTREE")],
        "FROM INFORMATION_SCHEMA.COLUMNS": [("app", "t", "id", "int", "NO", 0, ""),
                                            ("app", "t", "a", "int", "YES", 0, ""),
                                            ("app", "t", "b", "int", "YES", 0, "")],
        "FROM mysql.innodb_index_stats": stats_rows,
    }


@pytest.mark.parametrize(("version", "p0", "p1"), [
    # MySQL 8.0.18 and later (WL#13352, "Innodb: Case insensitive names for partition tables"): the
    # separators are lower case and so is the partition name: t#p#p0, t#p#p1 (for partition P1).
    ("8.0.39", "t#p#p0", "t#p#p1"),
    # MariaDB (and MySQL before 8.0.18 on Linux): #P#, the partition name as written.
    ("10.11.19-MariaDB", "t#P#p0", "t#P#P1"),
])
def test_index_sizes_of_partitions_are_found_with_either_separator(monkeypatch, version, p0, p1) -> None:
    """mysql.innodb_index_stats names a partition ``table#p#partition`` from MySQL 8.0.18 (WL#13352,
    https://dev.mysql.com/worklog/task/?id=13352), ``#P#`` before and on MariaDB; the old code looked
    for ``#P#`` only, so on MySQL 8 every partitioned index fell back to an even split."""
    stats = [("app", p0, "big", 7), ("app", p0, "small", 1), ("app", p1, "big", 6), ("app", p1, "small", 2),
             ("app", p0, "PRIMARY", 4), ("app", p1, "PRIMARY", 4)]
    conn = FakeConn(version, partitioned_catalogue(stats), MYSQL_VARIABLES)
    engine = connect(monkeypatch, conn)
    pages = {s.key: s.blocks for s in engine.discover(DiscoveryOptions()) if s.kind == "index"}
    assert pages == {"app.t.big:p0#index": 7, "app.t.small:p0#index": 1,
                     "app.t.big:P1#index": 6, "app.t.small:P1#index": 2}


def test_subpartition_index_sizes_are_found() -> None:
    """A subpartition is ``table#p#part#sp#subpart`` (MySQL 8.0.18+) or ``#P#...#SP#`` (WL#13352)."""
    assert q.stats_table_key("t#p#p1#sp#p1sp0") == ("t", "p1sp0")
    assert q.stats_table_key("t#P#p1#SP#P1sp0") == ("t", "p1sp0")
    assert q.stats_table_key("t") == ("t", None)
    assert q.stats_table_key("a@0023p@0023b#p#x") == ("a#p#b", "x")  # a '#' in a name is encoded in file names


def test_mysql_8_sessions_do_not_read_cached_information_schema_statistics(monkeypatch) -> None:
    """MySQL 8 caches INFORMATION_SCHEMA.TABLES' TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH for
    ``information_schema_stats_expiry`` seconds (default 86400); 0 reads them from the storage
    engine (MySQL 8.0 Reference Manual, "Optimizing INFORMATION_SCHEMA Queries" and the variable's
    entry in "Server System Variables"). MariaDB has no such variable: it is not set there."""
    conn = FakeConn("8.0.39", variables=MYSQL_VARIABLES)
    connect(monkeypatch, conn)
    assert "SET SESSION information_schema_stats_expiry = 0" in conn.statements
    maria = FakeConn("10.11.19-MariaDB")  # would raise 1193 on any MySQL-only variable
    connect(monkeypatch, maria)
    assert not any("information_schema_stats_expiry" in s for s in maria.statements)


def test_mysql_8_sessions_may_read_invisible_indexes(monkeypatch) -> None:
    """An INVISIBLE index (MySQL 8) is maintained on disk but the optimizer ignores it, and naming it
    in FORCE INDEX is an error, unless ``use_invisible_indexes=on`` in the session's
    ``optimizer_switch`` (MySQL 8.0 Reference Manual, "Invisible Indexes")."""
    conn = FakeConn("8.0.39", variables=MYSQL_VARIABLES)
    connect(monkeypatch, conn)
    assert "SET SESSION optimizer_switch = 'use_invisible_indexes=on'" in conn.statements


def test_mariadb_ignored_indexes_are_named_not_readable() -> None:
    """MariaDB 10.6+'s IGNORED index is maintained but "treated as if it doesn't exist even if USE
    INDEX or FORCE INDEX is used", and naming it in a hint is an error (MariaDB docs, "Ignored
    Indexes"); there is no session switch. So it is a ``not_readable`` segment naming why, and a
    full scan's IGNORE INDEX list leaves it out (checked on MariaDB 10.11: error 1176)."""
    from cutover_prep.engines.mysql import discovery

    maria = q.Dialect.from_version("10.11.19-MariaDB")
    assert "IGNORED" in maria.statistics_sql() and "IS_VISIBLE" not in maria.statistics_sql()
    cat = discovery.Catalogue(
        page_size=16384,
        tables=[("app", "g", "InnoDB", 16384, 32768, 3, ""), ("app", "h", "InnoDB", 16384, 16384, 3, "")],
        partitions=[], index_pages=None, fulltext_aux=[],
        statistics=[("app", "g", "PRIMARY", 0, 1, "id", None, "BTREE", "NO"),
                    ("app", "g", "kb", 1, 1, "b", None, "BTREE", "YES"),
                    ("app", "g", "kc", 1, 1, "c", None, "BTREE", "NO"),
                    ("app", "h", "hb", 1, 1, "b", None, "BTREE", "YES")],
        columns=[("app", "g", "id", "int", "NO", 0, ""), ("app", "g", "b", "int", "YES", 0, ""),
                 ("app", "g", "c", "int", "YES", 0, ""), ("app", "h", "b", "int", "YES", 0, "")])
    found = {s.key: s for s in discovery.segments(cat, DiscoveryOptions())}
    assert found["app.g.kb#index"].locator.to_json()["read"] == "not_readable"
    assert "IGNORED" in found["app.g.kb#index"].locator.to_json()["why"]
    assert found["app.g.kc#index"].locator.to_json()["read"] == "index_scan"
    assert found["app.h#clustered (GEN_CLUST_INDEX)"].locator.to_json()["indexes"] == []  # never IGNORE INDEX (hb)


def test_mysql_explains_in_the_traditional_format_whatever_explain_format_says(monkeypatch) -> None:
    """From MySQL 8.0.32 a plain EXPLAIN prints in the format of the ``explain_format`` variable
    (TRADITIONAL, JSON or TREE); the guard parses the tabular output, so it asks for FORMAT=TRADITIONAL
    (MySQL 8.0 Reference Manual, "EXPLAIN Statement"). MariaDB has no such variable."""
    conn = FakeConn("8.0.39", variables=MYSQL_VARIABLES)
    engine = connect(monkeypatch, conn)
    loc = {"read": "index_scan", "schema": "app", "table": "t", "index": "k", "index_columns": ["a"],
           "partition": None}
    engine.read_range(ReadRange("app.t.k#index", loc, (Extent(0, 0, 1),), 16384, False))
    explains = [s for s in conn.statements if s.startswith("EXPLAIN")]
    assert explains and all(s.startswith("EXPLAIN FORMAT=TRADITIONAL SELECT") for s in explains)
    assert q.Dialect.from_version("10.11.19-MariaDB").explain("SELECT 1") == "EXPLAIN SELECT 1"
