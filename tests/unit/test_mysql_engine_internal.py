"""Issue 33 §2: what the application's queries read (the user's tables and indexes: read, or NOT_READY) apart
from InnoDB's engine-internal files no SQL can read (system, undo and temporary tablespaces, MySQL 8's data
dictionary, a tablespace's free extents, the redo log): named in the census with their bytes, a class of their
own (``engine-internal``), judged by what RDS says of the whole volume, and failing the verdict only with
``verdict.engine_internal: strict``. The system schemas (``mysql``, ``sys``, ``performance_schema``,
``information_schema``) follow the selection: left out by default and named as waived.

MySQL 8 cannot be installed here; its rows are written as its reference manual says the server writes them:
- INFORMATION_SCHEMA.INNODB_TABLESPACES, SPACE_TYPE ``General`` / ``Single`` / ``System`` / ``Undo``:
  https://dev.mysql.com/doc/refman/8.0/en/information-schema-innodb-tablespaces-table.html
- the data dictionary (and the ``mysql`` system tables) in one InnoDB tablespace ``mysql.ibd`` in the data
  directory, "its name cannot be modified or used by another tablespace":
  https://dev.mysql.com/doc/refman/8.0/en/data-dictionary-transactional-storage.html
- two default undo tablespaces, files ``undo_001`` and ``undo_002``, named ``innodb_undo_001`` and
  ``innodb_undo_002`` in the data dictionary, 16 MiB initially (8.0.23+):
  https://dev.mysql.com/doc/refman/8.0/en/innodb-undo-tablespaces.html
- the redo log: from 8.0.30 ``innodb_redo_log_capacity`` bytes in the ``#innodb_redo`` directory, before it
  ``innodb_log_files_in_group`` files ``ib_logfile0``, ``ib_logfile1`` ... of ``innodb_log_file_size`` each:
  https://dev.mysql.com/doc/refman/8.0/en/innodb-redo-log.html
- MariaDB 10.5+: one redo log file ``ib_logfile0`` of ``innodb_log_file_size`` bytes:
  https://mariadb.com/kb/en/innodb-redo-log/
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from cutover_prep.engines.base import UNREAD_REASONS, DiscoveryOptions
from cutover_prep.engines.mysql import census, discovery
from cutover_prep.engines.mysql import sql as q
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.verdict import NOT_READY, READY
from tests.unit.stored_sections import census_section
from tests.unit.verdict_of_documents import decide

MIB = 2**20
MYSQL8 = q.Dialect.from_version("8.0.39")
MYSQL8_OLD = q.Dialect.from_version("8.0.28")
MARIADB = q.Dialect.from_version("10.11.19-MariaDB")
INTERNAL = "engine-internal"


def catalogue(tables: list[tuple]) -> discovery.Catalogue:
    return discovery.Catalogue(page_size=16384, tables=tables, partitions=[],
                               statistics=[(s, t, "PRIMARY", 0, 1, "id", None, "BTREE", "NO") for s, t, *_ in tables],
                               columns=[(s, t, "id", "int", "NO", 0, "") for s, t, *_ in tables], index_pages=None,
                               fulltext_aux=[])


def mysql8_rows(**changes: object) -> census.CensusRows:
    """A MySQL 8.0.39 volume as INNODB_TABLESPACES + INNODB_DATAFILES list it: the data dictionary ``mysql``
    (General), the two default undo tablespaces (Undo), a user's general tablespace ``ts1`` holding a table of
    the application, and the application's file-per-table tablespace (Single)."""
    tables = [("app", "t", "InnoDB", 16384 * 8, 0, 100, "")]
    cat = catalogue(tables)
    base = dict(
        datadir="/rdsdbdata/db/",
        tablespaces=[(0, "innodb_system", 12 * MIB, "./ibdata1", "System"),
                     (4294967294, "mysql", 24 * MIB, "./mysql.ibd", "General"),
                     (4294967279, "innodb_undo_001", 16 * MIB, "./undo_001", "Undo"),
                     (4294967278, "innodb_undo_002", 16 * MIB, "./undo_002", "Undo"),
                     (4294967293, "innodb_temporary", 12 * MIB, "./ibtmp1", "System"),
                     (20, "ts1", 1 * MIB, "./ts1.ibd", "General"),
                     (21, "app/t", 3 * MIB, "./app/t.ibd", "Single")],
        tables=tables, partitions=[], segments=discovery.segments(cat, DiscoveryOptions(include_system=True)),
        free={("app", "t", None): 2 * MIB}, redo=[("#innodb_redo", 100 * MIB)])
    return census.CensusRows(**{**base, **changes})  # type: ignore[arg-type]


def by_key(rows: census.CensusRows, options: DiscoveryOptions = DiscoveryOptions()) -> dict:
    return {o.key: o for o in census.objects(rows, options)}


def test_engine_internal_is_a_reason_of_its_own() -> None:
    assert INTERNAL in UNREAD_REASONS and census.ENGINE_INTERNAL == INTERNAL


def test_mysql_8_engine_internal_files_are_named_with_their_bytes_in_a_class_of_their_own() -> None:
    found = by_key(mysql8_rows())
    internal = {k: (o.kind, o.bytes, o.file) for k, o in found.items() if o.reason == INTERNAL}
    assert internal == {
        "(innodb).innodb_system#system_tablespace": ("system_tablespace", 12 * MIB, "ibdata1"),
        # the data dictionary's own tablespace (mysql.ibd): no SQL statement reads the dictionary's tables
        "(innodb).mysql#data_dictionary": ("data_dictionary", 24 * MIB, "mysql.ibd"),
        "(innodb).innodb_undo_001#system_tablespace": ("undo_tablespace", 16 * MIB, "undo_001"),
        "(innodb).innodb_undo_002#system_tablespace": ("undo_tablespace", 16 * MIB, "undo_002"),
        "(innodb).innodb_temporary#temporary_tablespace": ("temporary_tablespace", 12 * MIB, "ibtmp1"),
        "app.t#free space": ("free space", 2 * MIB, "app/t.ibd"),
        "(innodb).redo_log#redo_log": ("redo_log", 100 * MIB, "#innodb_redo"),
    }
    assert all(not found[k].readable for k in internal)
    # a user's general tablespace holds the application's tables: not engine-internal, it still counts as unread
    assert found["(innodb).ts1#general_tablespace"].reason == "not readable by SQL"
    assert found["app.t#clustered"].reason is None  # the application's table: planned, to be read


def test_mariadb_temporary_tablespace_and_redo_log_are_named() -> None:
    """MariaDB's census SQL says 'Temporary' for innodb_temporary (``Dialect.census_tablespaces_sql``); it was
    left out before (recreated at every start), now it is named as engine-internal with its bytes."""
    rows = mysql8_rows(tablespaces=[(0, "innodb_system", 12 * MIB, "./ibdata1", "System"),
                                    (4294967294, "innodb_temporary", 12 * MIB, "./ibtmp1", "Temporary")],
                       redo=[("ib_logfile0", 96 * MIB)], free={})
    found = by_key(rows)
    assert found["(innodb).innodb_temporary#temporary_tablespace"].reason == INTERNAL
    assert (found["(innodb).redo_log#redo_log"].bytes, found["(innodb).redo_log#redo_log"].file) == (
        96 * MIB, "ib_logfile0")


def test_the_redo_log_sql_follows_the_server() -> None:
    assert MARIADB.redo_log_sql() == "SELECT 'ib_logfile0', @@innodb_log_file_size"
    assert MYSQL8.redo_log_sql() == "SELECT '#innodb_redo', @@innodb_redo_log_capacity"  # 8.0.30 and later
    assert MYSQL8_OLD.redo_log_sql() == ("SELECT 'ib_logfile0', @@innodb_log_file_size * "
                                         "@@innodb_log_files_in_group")


def test_system_schemas_follow_the_selection_excluded_by_default_and_named_as_waived() -> None:
    """mysql.* of a user without SELECT on it (MariaDB: file-per-table tablespaces, .frm, db.opt) and of one
    with it (planned only with include_system) are waived by default, never 'no privilege' or 'not in the plan'."""
    tables = [("app", "t", "InnoDB", 16384, 0, 1, "")]
    hidden = census.CensusRows(
        datadir="/var/lib/mysql/", tables=tables, partitions=[],
        tablespaces=[(0, "innodb_system", 12 * MIB, "./ibdata1", "System"),
                     (2, "mysql/innodb_table_stats", 64 * 1024, "./mysql/innodb_table_stats.ibd", "Single"),
                     (21, "app/t", 98304, "./app/t.ibd", "Single")],
        segments=discovery.segments(catalogue(tables), DiscoveryOptions(include_system=True)), frm=True)
    objects = census.objects(hidden, DiscoveryOptions())
    mysql = [o for o in objects if o.schema == "mysql"]
    assert {(o.kind, o.reason) for o in mysql} == {("tablespace", "excluded by input"),
                                                   ("table definition", "excluded by input"),
                                                   ("database options", "excluded by input")}
    asked = census.objects(hidden, DiscoveryOptions(include_system=True))
    assert {o.reason for o in asked if o.schema == "mysql"} == {"no privilege"}
    # a user with SELECT on mysql.*: its Aria tables are in the census, waived by default
    seen = [("mysql", "help_topic", "Aria", 2 * MIB, 0, 500, ""), *tables]
    visible = census.CensusRows(datadir="/var/lib/mysql/", tables=seen, partitions=[], tablespaces=[],
                                segments=discovery.segments(catalogue(seen), DiscoveryOptions(include_system=True)))
    help_topic = [o for o in census.objects(visible, DiscoveryOptions()) if o.schema == "mysql"]
    assert help_topic and {o.reason for o in help_topic} == {"excluded by input"}


def census_dicts(rows: census.CensusRows) -> list[dict]:
    from cutover_prep.dal.records.census import census_json

    return census_json(census.objects(rows, DiscoveryOptions()))


def reads_of_the_plan(rows: census.CensusRows) -> dict:
    return {s.key: {"planned": s.bytes, "read": s.bytes, "done": True, "failed": False} for s in rows.segments}


def test_the_census_section_counts_engine_internal_bytes_apart_from_the_unread() -> None:
    rows = mysql8_rows()
    section = census_section(census_dicts(rows), reads_of_the_plan(rows))
    # hand-worked: 12 + 24 + 16 + 16 + 12 (tablespaces) + 2 (free extents) + 100 (redo) MiB
    assert section["engine_internal_bytes"] == 182 * MIB and section["engine_internal_objects"] == 7
    assert section["unread_bytes"] == 1 * MIB  # ts1 alone: a user's general tablespace no SQL reads whole
    assert section["engine_internal_by_kind"]["redo_log"] == 100 * MIB
    rows_internal = [u for u in section["unread"] if u.get("engine_internal")]
    assert len(rows_internal) == 7 and not any(u["waived"] for u in rows_internal)
    # the application's unread object is listed before the engine's files, however small
    assert section["unread"][0]["key"] == "(innodb).ts1#general_tablespace"


GOOD = {"units": {"total": 1, "done": 1, "failed": 0, "in_progress": 0, "not_started": 0}, "coverage_pct": 100.0}


def findings_with(section: dict, storage: dict | None = None) -> dict:
    return {**GOOD, "census": {**section, "end_census": True},
            **({"storage_initialization": storage} if storage is not None else {})}


def app_read_rows() -> census.CensusRows:
    return mysql8_rows(tablespaces=[(0, "innodb_system", 12 * MIB, "./ibdata1", "System"),
                                    (21, "app/t", 3 * MIB, "./app/t.ibd", "Single")], redo=[("ib_logfile0", 96 * MIB)])


def reason(result: dict, code: str) -> dict:
    (found,) = [r for r in result["reasons"] if r["code"] == code]
    return found


def test_a_local_run_is_ready_with_the_engine_internal_bytes_named_not_judged() -> None:
    rows = app_read_rows()
    section = census_section(census_dicts(rows), reads_of_the_plan(rows))
    result = decide(findings_with(section), benchmark_requested=False)
    assert result["verdict"] == READY, result["reasons"]
    unread = reason(result, "UNREAD_OBJECTS")
    assert unread["ok"] and "110.00 MiB engine-internal" in unread["message"]
    internal = reason(result, "ENGINE_INTERNAL")
    assert internal["ok"] and internal["judged"] is False
    text = internal["message"]
    # the rule in the verdict's words: what it is, its bytes, how it is judged, how to make it fail
    assert "110.00 MiB" in text and "no SQL" in text and "InnoDB system tablespace 12.00 MiB" in text
    assert "redo log 96.00 MiB" in text and "free extents 2.00 MiB" in text
    assert "StorageOperationStatus" in text and "verdict.engine_internal: strict" in text


def test_strict_fails_a_local_run_on_engine_internal_bytes() -> None:
    rows = app_read_rows()
    section = census_section(census_dicts(rows), reads_of_the_plan(rows))
    result = decide(findings_with(section), Thresholds(engine_internal="strict"), benchmark_requested=False)
    assert result["verdict"] == NOT_READY
    internal = reason(result, "ENGINE_INTERNAL")
    assert not internal["ok"] and "110.00 MiB" in internal["message"]
    assert {r["code"] for r in result["reasons"] if not r["ok"]} == {"ENGINE_INTERNAL"}


INITIALIZED = {"reported": True, "initialized_at_end": True, "last": {"at": "t2", "status": None, "percent": None}}
INITIALIZING = {"reported": True, "initialized_at_end": False,
                "last": {"at": "t2", "status": "Initializing", "percent": 63}}


def test_rds_saying_the_volume_is_initialized_covers_the_engine_internal_bytes_even_when_strict() -> None:
    rows = app_read_rows()
    section = census_section(census_dicts(rows), reads_of_the_plan(rows))
    for thresholds in (Thresholds(), Thresholds(engine_internal="strict")):
        result = decide(findings_with(section, INITIALIZED), thresholds, benchmark_requested=False)
        internal = reason(result, "ENGINE_INTERNAL")
        assert result["verdict"] == READY and internal["ok"] and internal.get("judged", True)
        assert "covered" in internal["message"]


def test_rds_still_initializing_fails_strict_naming_its_percent_and_is_a_line_otherwise() -> None:
    rows = app_read_rows()
    section = census_section(census_dicts(rows), reads_of_the_plan(rows))
    strict = decide(findings_with(section, INITIALIZING), Thresholds(engine_internal="strict"),
                    benchmark_requested=False)
    internal = reason(strict, "ENGINE_INTERNAL")
    assert strict["verdict"] == NOT_READY and not internal["ok"] and "Initializing 63 %" in internal["message"]
    named = reason(decide(findings_with(section, INITIALIZING), benchmark_requested=False), "ENGINE_INTERNAL")
    assert named["ok"] and named["judged"] is False and "Initializing 63 %" in named["message"]


def test_a_census_without_engine_internal_bytes_adds_no_reason() -> None:
    section = census_section([{"key": "app.t#clustered", "database": None, "schema": "app", "name": "t",
                               "kind": "clustered", "bytes": MIB, "reason": None, "file": None}],
                             {"app.t#clustered": {"planned": MIB, "read": MIB, "done": True, "failed": False}})
    assert section["engine_internal_bytes"] == 0
    assert "ENGINE_INTERNAL" not in {r["code"] for r in decide(findings_with(section))["reasons"]}


def test_the_run_input_takes_engine_internal_named_or_strict_only() -> None:
    assert Thresholds().engine_internal == "named"
    assert Thresholds(engine_internal="strict").engine_internal == "strict"
    with pytest.raises(ValidationError, match="named"):
        Thresholds(engine_internal="lenient")


def test_mysql_8_system_and_temporary_tablespaces_come_from_information_schema_files() -> None:
    """MySQL 8's manual: INNODB_TABLESPACES and INNODB_DATAFILES are "limited to file-per-table, general, and undo
    tablespaces"; INFORMATION_SCHEMA.FILES reports the system tablespace and the global temporary tablespace too
    (FILE_TYPE TABLESPACE / TEMPORARY / UNDO LOG; its example: innodb_system, ./ibdata1, TOTAL_EXTENTS 12 of
    EXTENT_SIZE 1048576). https://dev.mysql.com/doc/refman/8.0/en/innodb-information-schema-files-table.html and
    https://dev.mysql.com/doc/refman/8.0/en/information-schema-files-table.html"""
    sql = MYSQL8.engine_files_sql()
    assert sql is not None and "INFORMATION_SCHEMA.FILES" in sql and "TOTAL_EXTENTS * EXTENT_SIZE" in sql
    assert MARIADB.engine_files_sql() is None  # MariaDB's INNODB_SYS_TABLESPACES lists them (checked here)
    listed = [(4294967294, "mysql", 24 * MIB, "./mysql.ibd", "General"),
              (4294967279, "innodb_undo_001", 16 * MIB, "./undo_001", "Undo"),
              (21, "app/t", 3 * MIB, "./app/t.ibd", "Single")]
    files = [(0, "innodb_system", 12 * MIB, "./ibdata1", "System"),
             (4294967293, "innodb_temporary", 12 * MIB, "./ibtmp1", "Temporary"),
             (4294967279, "innodb_undo_001", 16 * MIB, "./undo_001", "Undo")]  # listed already: once
    merged = census.with_engine_files(listed, files)
    assert [r[1] for r in merged] == ["innodb_system", "app/t", "innodb_undo_001", "innodb_temporary", "mysql"]
    found = by_key(mysql8_rows(tablespaces=merged))
    assert found["(innodb).innodb_system#system_tablespace"].bytes == 12 * MIB
    assert found["(innodb).innodb_temporary#temporary_tablespace"].file == "ibtmp1"
    assert sum(o.kind == "undo_tablespace" for o in found.values()) == 1


def test_the_run_context_carries_engine_internal_only_when_the_input_sets_it_strict() -> None:
    """Every state's payload stays the JSON it was (tests/unit/test_run_context.py); a strict input is carried."""
    from cutover_prep.models.run_input import parse_run_input
    from cutover_prep.warmup.discovery import run_context
    from tests.unit.contexts import run_state

    secret = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:o-AbCdEf"
    raw = {"run_id": "orders-1", "target": {"db_instance_identifier": "orders", "engine": "mariadb",
                                            "secret_arn": secret}}
    named = run_context(run_state({**parse_run_input(raw), "instance": {}})).to_json()
    assert "engine_internal" not in named["verdict"]
    strict = run_context(run_state({**parse_run_input({**raw, "verdict": {"engine_internal": "strict"}}),
                                    "instance": {}})).to_json()
    assert strict["verdict"]["engine_internal"] == "strict"
