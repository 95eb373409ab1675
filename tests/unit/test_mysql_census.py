"""The census of a MySQL 8 volume (issue 21), from rows as MySQL 8 writes them (no MySQL 8 server
here; MariaDB is tested against the real server in tests/integration/test_mysql_census.py).

MySQL 8.0 Reference Manual: INFORMATION_SCHEMA.INNODB_TABLESPACES (SPACE_TYPE ``Single``,
``General``, ``System``, ``Undo``; FILE_SIZE), INNODB_DATAFILES (PATH), the ``mysql`` general
tablespace (the data dictionary), and WL#13352 (partition tablespaces ``db/t#p#p0``)."""

from __future__ import annotations

from cutover_prep.engines.base import DiscoveryOptions
from cutover_prep.engines.mysql import census, discovery
from cutover_prep.engines.mysql import sql as q

MYSQL8 = q.Dialect.from_version("8.0.39")
MARIADB = q.Dialect.from_version("10.11.19-MariaDB")


def rows(**changes: object) -> census.CensusRows:
    cat = discovery.Catalogue(
        page_size=16384,
        tables=[("app", "t", "InnoDB", 0, 0, 0, "partitioned"), ("app", "m", "MyISAM", 5000, 2048, 10, "")],
        partitions=[("app", "t", "P0", None, 16384, 0, 5)],
        statistics=[("app", "t", "PRIMARY", 0, 1, "id", None, "BTREE", "NO"),
                    ("app", "m", "PRIMARY", 0, 1, "id", None, "BTREE", "NO")],
        columns=[("app", "t", "id", "int", "NO", 0, "")], index_pages=None, fulltext_aux=[])
    base = dict(
        datadir="/rdsdbdata/db/",
        tablespaces=[(0, "innodb_system", 12582912, "./ibdata1", "System"),
                     (4294967279, "innodb_undo_001", 16777216, "./undo_001", "Undo"),
                     (4294967294, "mysql", 25165824, "./mysql.ibd", "General"),
                     (4294967293, "innodb_temporary", 12582912, "./ibtmp1", "Temporary"),
                     (7, "app/t#p#p0", 114688, "./app/t#p#p0.ibd", "Single"),
                     (8, "secret/pay", 75_000_000, "/rdsdbdata/db/secret/pay.ibd", "Single")],
        tables=cat.tables, partitions=cat.partitions,
        segments=discovery.segments(cat, DiscoveryOptions(include_system=True)), free={("app", "t", "p0"): 4 * 2**20})
    return census.CensusRows(**{**base, **changes})  # type: ignore[arg-type]


def test_mysql_8_tablespaces_are_named_with_their_reason_and_the_plans_key() -> None:
    found = {o.key: o for o in census.objects(rows(), DiscoveryOptions())}
    system = found["(innodb).innodb_system#system_tablespace"]
    # issue 33: the engine's own files are a class of their own (tests/unit/test_mysql_engine_internal.py)
    assert (system.reason, system.bytes, system.file) == ("engine-internal", 12582912, "ibdata1")
    undo = found["(innodb).innodb_undo_001#system_tablespace"]  # the key discover(include_system=True) gives it
    assert undo.kind == "undo_tablespace" and not undo.readable
    assert found["(innodb).mysql#data_dictionary"].reason == "engine-internal"
    assert found["(innodb).innodb_temporary#temporary_tablespace"].reason == "engine-internal"
    # the partition P0 (as INFORMATION_SCHEMA.PARTITIONS writes it) of a file written #p#p0: the plan's segment
    t = found["app.t:P0#clustered"]
    assert (t.readable, t.file, t.bytes) == (True, "app/t#p#p0.ibd", 16384)
    free = found["app.t:p0#free space"]
    assert (free.bytes, free.reason, free.file) == (4 * 2**20, "engine-internal", "app/t#p#p0.ibd")
    # a database the user cannot see: PROCESS shows its tablespace, with its size and file
    pay = found["secret.pay#tablespace"]
    assert (pay.schema, pay.reason, pay.bytes, pay.file) == ("secret", "no privilege", 75_000_000, "secret/pay.ibd")
    # MyISAM: the table's segment with .MYD, its indexes' with .MYI, the plan's keys
    assert (found["app.m#table"].file, found["app.m.PRIMARY#index"].file) == ("app/m.MYD", "app/m.MYI")


def test_an_explicit_exclusion_is_a_waiver_and_so_is_the_system_default() -> None:
    objects = census.objects(rows(), DiscoveryOptions(exclude_schemas=("secret",)))
    assert {o.reason for o in objects if o.schema == "secret"} == {"excluded by input"}
    only_app = census.objects(rows(), DiscoveryOptions(include_schemas=("app",)))
    assert {o.reason for o in only_app if o.schema == "secret"} == {"excluded by input"}
    extra = rows(tablespaces=[(9, "mysql/innodb_index_stats", 65536, "./mysql/innodb_index_stats.ibd", "Single")],
                 tables=[("mysql", "innodb_index_stats", "InnoDB", 16384, 0, 3, "")], partitions=[],
                 segments=discovery.segments(discovery.Catalogue(
                     page_size=16384, tables=[("mysql", "innodb_index_stats", "InnoDB", 16384, 0, 3, "")],
                     partitions=[], statistics=[], columns=[], index_pages=None, fulltext_aux=[]),
                     DiscoveryOptions(include_system=True)))
    (stats,) = census.objects(extra, DiscoveryOptions())
    assert stats.reason == "excluded by input"  # issue 33: the system schemas follow the selection, waived
    (stats,) = census.objects(extra, DiscoveryOptions(include_system=True))
    assert stats.readable and stats.reason is None  # asked for: planned and read


def test_the_census_sql_reads_every_tablespace_with_its_file() -> None:
    assert "INNODB_DATAFILES" in MYSQL8.census_tablespaces_sql() and "SPACE_TYPE" in MYSQL8.census_tablespaces_sql()
    # MariaDB: the dictionary's tables (INNODB_SYS_TABLESPACES lists only those opened since the start)
    assert "FROM INFORMATION_SCHEMA.INNODB_SYS_TABLES t LEFT JOIN INFORMATION_SCHEMA.INNODB_SYS_TABLESPACES s" \
        in MARIADB.census_tablespaces_sql()
    assert "CONCAT('./', t.NAME, '.ibd')" in MARIADB.census_tablespaces_sql()
    assert census.file_name_pieces([(1, "d@0020b/t@1o#P#p@00201", 0, None, "Single")]) == \
        {"d@0020b", "t@1o", "p@00201"}


def test_a_tablespace_not_opened_since_the_start_is_of_unknown_size_not_empty() -> None:
    """MariaDB opens a file-per-table tablespace on first use, and until then INNODB_SYS_TABLESPACES gives
    FILE_SIZE 0 (seen here on MariaDB 10.11 after a restart on the emulated volume: a 4 MiB table of a
    database the user could not see was named with 0 bytes, so its unread bytes counted nothing). An
    InnoDB tablespace file is never 0 bytes: 0 is "not known", and the verdict fails on unknown sizes."""
    cold = rows(tablespaces=[(8, "secret/pay", 0, "/rdsdbdata/db/secret/pay.ibd", "Single"),
                             (9, "app/FTS_0000000000000010_DELETED", 0, "./app/FTS_0000000000000010_DELETED.ibd",
                              "Single")])
    found = {o.key: o for o in census.objects(cold, DiscoveryOptions())}
    pay = found["secret.pay#tablespace"]
    assert (pay.reason, pay.bytes, pay.size_known) == ("no privilege", 0, False)
    aux = found["app.FTS_0000000000000010_DELETED#fulltext_aux"]
    assert aux.size_known is False
