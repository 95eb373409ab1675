"""The MySQL / MariaDB engine's SQL text, built without a database: quoting, key bounds, and the
differences between MySQL 8 and MariaDB asserted statement by statement."""

from __future__ import annotations

import pymysql
import pytest

from cutover_prep.engines.base import DiscoveryOptions, PermanentReadError, TransientDatabaseError
from cutover_prep.engines.locators import MysqlLocator
from cutover_prep.engines.mysql import discovery
from cutover_prep.engines.mysql import sql as q
from cutover_prep.engines.mysql.engine import map_error, ordinal

MYSQL8 = q.Dialect.from_version("8.0.39")
MYSQL84 = q.Dialect.from_version("8.4.2")
MARIADB = q.Dialect.from_version("5.5.5-10.11.19-MariaDB-0+deb12u1")
MARIADB11 = q.Dialect.from_version("11.4.3-MariaDB-log")


def test_versions_are_told_apart() -> None:
    assert (MYSQL8.flavor, MYSQL8.version) == ("mysql", (8, 0, 39))
    assert (MYSQL84.flavor, MYSQL84.version) == ("mysql", (8, 4, 2))
    assert (MARIADB.flavor, MARIADB.version) == ("mariadb", (10, 11, 19))  # not the 5.5.5- compatibility prefix
    assert (MARIADB11.flavor, MARIADB11.version) == ("mariadb", (11, 4, 3))
    assert MARIADB.label == "MariaDB 10.11.19" and MYSQL84.label == "MySQL 8.4.2"


def test_the_per_statement_timeout_is_max_execution_time_on_mysql_and_max_statement_time_on_mariadb() -> None:
    assert MYSQL8.timeout_sql(12.5) == "SET SESSION max_execution_time = 12500"
    assert MYSQL84.timeout_sql(0) == "SET SESSION max_execution_time = 0"
    assert MARIADB.timeout_sql(12.5) == "SET SESSION max_statement_time = 12.500"
    assert MARIADB11.timeout_sql(-3) == "SET SESSION max_statement_time = 0.000"
    assert MYSQL8.timeout_errors == (3024,) and MARIADB.timeout_errors == (1969,)


def test_the_tablespace_views_differ() -> None:
    assert MYSQL8.tablespaces_view == "INFORMATION_SCHEMA.INNODB_TABLESPACES"
    assert MARIADB.tablespaces_view == "INFORMATION_SCHEMA.INNODB_SYS_TABLESPACES"
    assert MYSQL8.innodb_tables_view == "INFORMATION_SCHEMA.INNODB_TABLES"
    assert MARIADB.innodb_tables_view == "INFORMATION_SCHEMA.INNODB_SYS_TABLES"
    assert MYSQL8.system_tablespaces_sql() == ("SELECT NAME, FILE_SIZE FROM INFORMATION_SCHEMA.INNODB_TABLESPACES "
                                               "WHERE SPACE_TYPE IN ('System', 'Undo') ORDER BY NAME")
    assert MARIADB.system_tablespaces_sql() == ("SELECT NAME, FILE_SIZE FROM INFORMATION_SCHEMA.INNODB_SYS_TABLESPACES "
                                                "WHERE SPACE = 0 OR NAME LIKE 'innodb\\_undo%' ORDER BY NAME")
    assert "INFORMATION_SCHEMA.INNODB_TABLESPACES" in MYSQL84.fulltext_aux_sql()
    assert "INNODB_SYS_TABLESPACES" in MARIADB.fulltext_aux_sql() and "FTS\\_" in MARIADB.fulltext_aux_sql()


def test_the_read_only_variable_follows_the_version() -> None:
    assert MYSQL8.read_only_variable() == "@@SESSION.transaction_read_only"
    assert MARIADB.read_only_variable() == "@@SESSION.tx_read_only"
    assert MARIADB11.read_only_variable() == "@@SESSION.transaction_read_only"


@pytest.mark.parametrize(("name", "quoted"), [
    ("plain", "`plain`"), ("we`ird", "`we``ird`"), ("a b;c", "`a b;c`"), ('"q\'', "`\"q'`"), ("表", "`表`"),
    ("``", "``````")])
def test_identifiers_are_quoted_with_backticks_doubled(name: str, quoted: str) -> None:
    assert q.quote_ident(name) == quoted


@pytest.mark.parametrize("name", ["", "a\x00b", "emoji \U0001F600"])
def test_a_name_mysql_cannot_hold_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="cannot be a MySQL identifier"):
        q.quote_ident(name)


def test_a_composite_key_bound_is_the_expanded_form_with_parameters() -> None:
    text, params = q.key_bound(["a", "b`"], ">=", [1, "x'y"])
    assert text == "((`a` > %s) OR (`a` = %s AND `b``` > %s) OR (`a` = %s AND `b``` = %s))"
    assert params == [1, 1, "x'y", 1, "x'y"]
    text, params = q.key_bound(["a", "b", "c"], "<", [1, 2, 3])
    assert text == "((`a` < %s) OR (`a` = %s AND `b` < %s) OR (`a` = %s AND `b` = %s AND `c` < %s))"
    assert params == [1, 1, 2, 1, 2, 3]
    with pytest.raises(ValueError):
        q.key_bound(["a"], ">", [1])
    with pytest.raises(ValueError):
        q.key_bound(["a", "b"], "<", [1])


PLANNED = {"schema": "s`1", "table": "t 1", "partition": "p;0", "key_index": "PRIMARY", "key_columns": ["id"],
           "offpage": ["body", "note"], "rows": 1000, "pages": 10}
LOC = MysqlLocator.of(PLANNED)


def test_the_boundary_walks_the_clustered_index_with_force_index_and_offset() -> None:
    text, params = q.boundary_sql(LOC, None, 250)
    assert text == ("SELECT `id` FROM `s``1`.`t 1` PARTITION (`p;0`) FORCE INDEX (`PRIMARY`) "
                    "ORDER BY `id` LIMIT 1 OFFSET %s")
    assert params == [250]
    text, params = q.boundary_sql(LOC, (42,), 100)
    assert text.endswith("FORCE INDEX (`PRIMARY`) WHERE ((`id` > %s) OR (`id` = %s)) ORDER BY `id` LIMIT 1 OFFSET %s")
    assert params == [42, 42, 100]


def test_a_chunk_reads_every_off_page_column_between_its_bounds() -> None:
    text, params = q.chunk_sql(LOC, (5,), (9,))
    assert text == ("SELECT COUNT(*), COALESCE(SUM(COALESCE(LENGTH(`body`), 0) + COALESCE(LENGTH(`note`), 0)), 0) "
                    "FROM `s``1`.`t 1` PARTITION (`p;0`) FORCE INDEX (`PRIMARY`) "
                    "WHERE ((`id` > %s) OR (`id` = %s)) AND ((`id` < %s))")
    assert params == [5, 5, 9]
    text, params = q.chunk_sql(MysqlLocator.of({**PLANNED, "offpage": [], "partition": None}), None, None)
    assert text == ("SELECT COUNT(*), COALESCE(SUM(COALESCE(LENGTH(`id`), 0)), 0) FROM `s``1`.`t 1` "
                    "FORCE INDEX (`PRIMARY`)")  # a column is read, so MySQL 8 cannot count another way
    assert params == []


def test_index_scans_are_covering_and_full_scans_ignore_every_index() -> None:
    planned = {"schema": "d", "table": "t", "index": "i`x", "index_columns": ["a", "id"]}
    assert q.index_scan_sql(MysqlLocator.of(planned)) == ("SELECT COUNT(*), COALESCE(SUM(COALESCE(LENGTH(`a`), 0) + "
                                     "COALESCE(LENGTH(`id`), 0)), 0) FROM `d`.`t` FORCE INDEX (`i``x`)", [])
    text, params = q.index_scan_sql(MysqlLocator.of({**planned, "range_column": "doc", "index_columns": ["id"]}))
    assert text.endswith("FORCE INDEX (`i``x`) WHERE (`doc` IS NULL OR `doc` >= %s)") and params == [""]
    full = q.full_scan_sql(MysqlLocator.of({"schema": "d", "table": "t", "partition": None,
                                            "indexes": ["PRIMARY", "k"], "columns": ["a"]}))
    assert full == ("SELECT COUNT(*), COALESCE(SUM(COALESCE(LENGTH(`a`), 0)), 0) FROM `d`.`t` "
                    "IGNORE INDEX (`PRIMARY`, `k`)")


def test_row_ordinals_are_a_fixed_function_of_the_block() -> None:
    loc = MysqlLocator.of({"rows": 1000, "pages": 7})
    marks = [ordinal(b, loc) for b in range(8)]
    assert marks[0] == 0 and marks[-1] == 1000 and marks == sorted(marks)
    assert ordinal(99, loc) == 1000  # past the end: the end
    assert ordinal(3, MysqlLocator.of({"rows": 0, "pages": 7})) == 0


def test_errors_are_transient_or_permanent_by_code() -> None:
    assert isinstance(map_error(pymysql.err.OperationalError(1969, "Query execution was interrupted"), "x"),
                      TransientDatabaseError)
    assert isinstance(map_error(pymysql.err.OperationalError(3024, "maximum statement execution time"), "x"),
                      TransientDatabaseError)
    assert isinstance(map_error(pymysql.err.OperationalError(2013, "Lost connection"), "x"), TransientDatabaseError)
    err = map_error(pymysql.err.ProgrammingError(1146, "Table 'd.t' doesn't exist"), "reading d.t")
    assert isinstance(err, PermanentReadError) and str(err) == "reading d.t: (1146) Table 'd.t' doesn't exist"
    assert isinstance(map_error(pymysql.err.OperationalError(1142, "SELECT command denied"), "x"), PermanentReadError)


def _catalogue(**changes: object) -> discovery.Catalogue:
    base = dict(
        page_size=16384,
        tables=[("app", "t", "InnoDB", 163840, 32768, 500, ""), ("app", "nopk", "InnoDB", 16384, 0, 3, ""),
                ("app", "m", "MyISAM", 5000, 2048, 10, ""), ("app", "mem", "MEMORY", 0, 0, 0, ""),
                ("mysql", "user", "Aria", 16384, 16384, 5, "")],
        partitions=[], index_pages=None, fulltext_aux=[("app/FTS_0000000000000012_CONFIG", 65536)],
        statistics=[("app", "t", "PRIMARY", 0, 1, "id", None, "BTREE"), ("app", "t", "k", 1, 1, "doc", 10, "BTREE"),
                    ("app", "t", "ft", 1, 1, "doc", None, "FULLTEXT"),
                    ("app", "m", "PRIMARY", 0, 1, "id", None, "BTREE")],
        columns=[("app", "t", "id", "bigint", "NO", 0, ""), ("app", "t", "doc", "text", "YES", 65535, ""),
                 ("app", "t", "v", "varchar", "YES", 400, "VIRTUAL GENERATED"),
                 ("app", "nopk", "a", "int", "YES", 0, ""), ("app", "m", "id", "int", "NO", 0, "")])
    return discovery.Catalogue(**{**base, **changes})  # type: ignore[arg-type]


def test_discovery_names_every_table_index_and_what_sql_cannot_read() -> None:
    found = {s.key: s for s in discovery.segments(_catalogue(), DiscoveryOptions())}
    assert sorted(found) == ["app.FTS_0000000000000012_CONFIG#fulltext_aux", "app.m#table", "app.m.PRIMARY#index",
                             "app.nopk#clustered (GEN_CLUST_INDEX)", "app.t#clustered", "app.t.ft#index",
                             "app.t.k#index"]
    clustered = found["app.t#clustered"]
    assert clustered.splittable and clustered.blocks == 10 and clustered.locator.to_json()["read"] == "pk_walk"
    assert clustered.locator.to_json()["offpage"] == ["doc"]
    assert clustered.locator.to_json()["probe"] == {"column": "id"}
    assert found["app.nopk#clustered (GEN_CLUST_INDEX)"].locator.to_json()["read"] == "full_scan"
    assert not found["app.nopk#clustered (GEN_CLUST_INDEX)"].splittable
    assert found["app.t.k#index"].locator.to_json()["range_column"] == "doc"  # a prefix index: no covering scan
    assert found["app.t.k#index"].locator.to_json()["index_columns"] == ["id"]
    assert found["app.t.ft#index"].locator.to_json()["read"] == "not_readable"
    assert found["app.FTS_0000000000000012_CONFIG#fulltext_aux"].locator.to_json()["read"] == "not_readable"
    assert found["app.m#table"].locator.to_json()["read"] == "full_scan"
    system = {s.key for s in discovery.segments(_catalogue(), DiscoveryOptions(include_system=True))}
    assert "mysql.user#table" in system


def test_a_unique_not_null_index_is_the_clustered_key_without_a_primary_key() -> None:
    cat = _catalogue(tables=[("app", "u", "InnoDB", 16384, 16384, 3, "")],
                     statistics=[("app", "u", "uk", 0, 1, "code", None, "BTREE")],
                     columns=[("app", "u", "code", "varchar", "NO", 40, "")], fulltext_aux=[])
    (seg,) = discovery.segments(cat, DiscoveryOptions())
    assert seg.kind == "clustered" and seg.locator.to_json()["key_index"] == "uk" and "probe" not in seg.locator


def test_partitions_are_segments_of_their_own() -> None:
    cat = _catalogue(partitions=[("app", "t", "p0", None, 32768, 16384, 100), ("app", "t", "p1", "p1sp0", 16384, 0, 1)])
    keys = [s.key for s in discovery.segments(cat, DiscoveryOptions(include_schemas=("app",))) if "app.t" in s.key]
    assert keys == ["app.t:p0#clustered", "app.t.k:p0#index", "app.t.ft:p0#index",
                    "app.t:p1sp0#clustered", "app.t.k:p1sp0#index", "app.t.ft:p1sp0#index"]
