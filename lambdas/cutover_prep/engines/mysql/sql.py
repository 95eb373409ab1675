"""The SQL text of the MySQL / MariaDB engine, built without a database (unit-tested).

Identifiers are quoted with backticks by MySQL's rules (a backtick inside a name is
doubled); values are always parameters (PyMySQL's ``%s``), never formatted into the text.
Where MySQL 8 and MariaDB differ, ``Dialect`` says which spelling the server takes:

| what | MySQL 8.0 / 8.4 | MariaDB 10.6-11 |
| --- | --- | --- |
| per-statement timeout | ``max_execution_time`` (ms, SELECT only) | ``max_statement_time`` (seconds) |
| InnoDB file sizes | ``INFORMATION_SCHEMA.INNODB_TABLESPACES`` | ``INFORMATION_SCHEMA.INNODB_SYS_TABLESPACES`` |
| InnoDB tables | ``INFORMATION_SCHEMA.INNODB_TABLES`` | ``INFORMATION_SCHEMA.INNODB_SYS_TABLES`` |
| system and undo tablespaces | ``SPACE_TYPE IN ('System', 'Undo')`` | ``SPACE = 0`` or ``innodb_undo%`` |
| timeout error | 3024 ``ER_QUERY_TIMEOUT`` | 1969 ``ER_STATEMENT_TIMEOUT`` |
| session settings | ``information_schema_stats_expiry = 0``, ``use_invisible_indexes=on`` | none (no such variables) |
| an index the optimizer skips | INVISIBLE: read with ``use_invisible_indexes=on`` | IGNORED (10.6+): unreadable |
| EXPLAIN | ``EXPLAIN FORMAT=TRADITIONAL`` (8.0.32+: plain EXPLAIN follows ``explain_format``) | ``EXPLAIN`` |
| partition in ``mysql.innodb_index_stats`` | ``t#p#part#sp#sub`` lower case (8.0.18+, WL#13352) | ``t#P#part#SP#sub`` |
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cutover_prep.engines.locators import MysqlLocator

SYSTEM_SCHEMAS = ("mysql", "sys", "performance_schema", "information_schema")
# Column types InnoDB may store off-page (BLOB pages): read only when the column is read.
OFFPAGE_TYPES = {"tinyblob", "blob", "mediumblob", "longblob", "tinytext", "text", "mediumtext", "longtext",
                 "json", "geometry", "point", "linestring", "polygon", "multipoint", "multilinestring",
                 "multipolygon", "geometrycollection", "geomcollection"}
LONG_VARIABLE_TYPES = {"varchar", "varbinary"}
LONG_VARIABLE_BYTES = 256  # a VARCHAR/VARBINARY longer than this may go off-page in DYNAMIC/COMPRESSED rows


def quote_ident(name: str) -> str:
    """``name`` as a MySQL quoted identifier: in backticks, a backtick doubled."""
    if not name or "\x00" in name or any(ord(ch) > 0xFFFF for ch in name):
        raise ValueError(f"{name!r} cannot be a MySQL identifier (empty, NUL, or a character beyond U+FFFF)")
    return "`" + name.replace("`", "``") + "`"


def qualified(schema: str, table: str) -> str:
    return f"{quote_ident(schema)}.{quote_ident(table)}"


def lock_timeout_sql(seconds: int) -> str:
    """A session's bound on lock waits, whole seconds, the same on MySQL and MariaDB: metadata locks
    (``lock_wait_timeout``: a ``LOCK TABLES ... WRITE``, a running ``ALTER TABLE``) and InnoDB row locks
    (``innodb_lock_wait_timeout``); both error 1205 ``ER_LOCK_WAIT_TIMEOUT``. One statement (also a
    connection's ``init_command``); numbers only."""
    whole = max(1, int(seconds))
    return f"SET SESSION lock_wait_timeout = {whole}, SESSION innodb_lock_wait_timeout = {whole}"


@dataclass(frozen=True)
class Dialect:
    """MySQL 8 or MariaDB, from ``SELECT VERSION()`` (MariaDB's says ``-MariaDB``)."""

    flavor: str  # "mysql" | "mariadb"
    version: tuple[int, int, int]

    @classmethod
    def from_version(cls, text: str) -> Dialect:
        found = re.search(r"(\d+)\.(\d+)\.(\d+)", text.replace("5.5.5-", "", 1))
        version = tuple(int(x) for x in found.groups()) if found else (0, 0, 0)
        return cls("mariadb" if "mariadb" in text.lower() else "mysql", version)  # type: ignore[arg-type]

    @property
    def label(self) -> str:
        return f"{'MariaDB' if self.flavor == 'mariadb' else 'MySQL'} {'.'.join(map(str, self.version))}"

    def timeout_sql(self, seconds: float) -> str:
        """This session's per-statement timeout (0: none). Numbers only: formatted, not a value from outside."""
        if self.flavor == "mariadb":
            return f"SET SESSION max_statement_time = {max(0.0, float(seconds)):.3f}"
        return f"SET SESSION max_execution_time = {max(0, int(seconds * 1000))}"

    def bounded(self, select: str, seconds: int) -> str:
        """``select`` (a SELECT) cut at ``seconds`` whatever the session's bound: MariaDB's ``SET STATEMENT
        max_statement_time = n FOR``, MySQL's optimizer hint ``MAX_EXECUTION_TIME(ms)``."""
        if self.flavor == "mariadb":
            return f"SET STATEMENT max_statement_time = {int(seconds)} FOR {select}"
        return select.replace("SELECT", f"SELECT /*+ MAX_EXECUTION_TIME({int(seconds) * 1000}) */", 1)

    @property
    def timeout_errors(self) -> tuple[int, ...]:
        return (1969,) if self.flavor == "mariadb" else (3024,)

    @property
    def tablespaces_view(self) -> str:
        return "INFORMATION_SCHEMA.INNODB_SYS_TABLESPACES" if self.flavor == "mariadb" \
            else "INFORMATION_SCHEMA.INNODB_TABLESPACES"

    @property
    def innodb_tables_view(self) -> str:
        return "INFORMATION_SCHEMA.INNODB_SYS_TABLES" if self.flavor == "mariadb" \
            else "INFORMATION_SCHEMA.INNODB_TABLES"

    def fulltext_aux_sql(self) -> str:
        """FULLTEXT auxiliary tables (``db/FTS_<table id>_...``): no complete SQL read path."""
        return (f"SELECT NAME, FILE_SIZE FROM {self.tablespaces_view} "  # noqa: S608 - a view name, no value
                "WHERE NAME LIKE '%/FTS\\_%' OR NAME LIKE '%/fts\\_%' ORDER BY NAME")

    def system_tablespaces_sql(self) -> str:
        """The system and undo tablespaces: no SQL read path (named in the plan, never silently skipped)."""
        if self.flavor == "mariadb":
            where = "SPACE = 0 OR NAME LIKE 'innodb\\_undo%'"
        else:
            where = "SPACE_TYPE IN ('System', 'Undo')"
        return f"SELECT NAME, FILE_SIZE FROM {self.tablespaces_view} WHERE {where} ORDER BY NAME"  # noqa: S608

    def session_sql(self) -> list[str]:
        """What each session sets after connecting (issue 21, item 5). MySQL 8: INFORMATION_SCHEMA's
        table statistics read from the storage engine, not a cache up to a day old
        (``information_schema_stats_expiry``), and INVISIBLE indexes usable in FORCE INDEX
        (``use_invisible_indexes``). MariaDB has neither variable (setting one is error 1193)."""
        if self.flavor == "mariadb":
            return []
        return ["SET SESSION information_schema_stats_expiry = 0",
                "SET SESSION optimizer_switch = 'use_invisible_indexes=on'"]

    def statistics_sql(self) -> str:
        """STATISTICS_SQL plus whether the index is one no hint can name: MariaDB 10.6+'s IGNORED
        indexes. MySQL 8's INVISIBLE indexes are usable here (``session_sql``), so never."""
        flag = "IGNORED" if self.flavor == "mariadb" and self.version >= (10, 6, 0) else "'NO'"
        return STATISTICS_SQL.replace("INDEX_TYPE\nFROM", f"INDEX_TYPE, {flag}\nFROM", 1)

    def explain(self, statement: str) -> str:
        """EXPLAIN in the tabular format the guard parses: MySQL 8.0.32+ prints a plain EXPLAIN in
        the format of ``explain_format`` (JSON or TREE if so set), so it is asked for by name."""
        if self.flavor == "mariadb":
            return f"EXPLAIN {statement}"
        return f"EXPLAIN FORMAT=TRADITIONAL {statement}"

    def census_tablespaces_sql(self) -> str:
        """Every InnoDB tablespace on the volume, whoever may read its tables (PROCESS is enough):
        SPACE, NAME, FILE_SIZE (NULL: not known), the file's path as the server writes it, and its
        type (System, Undo, General, Single or Temporary). MySQL 8's paths are in INNODB_DATAFILES.
        MariaDB's INNODB_SYS_TABLESPACES lists only the tablespaces opened since the server started
        (checked here on 10.11: after a restart a table nobody opened is not there, which is every
        table of a just restored instance), so its tables come from INNODB_SYS_TABLES, the data
        dictionary, and the file is ``NAME.ibd``; the size of one not opened yet is not known."""
        if self.flavor == "mariadb":
            kind = ("CASE WHEN s.SPACE = 0 THEN 'System' WHEN s.NAME LIKE 'innodb\\_undo%' THEN 'Undo' "
                    "WHEN s.NAME = 'innodb_temporary' THEN 'Temporary' ELSE 'General' END")
            tables, spaces = self.innodb_tables_view, self.tablespaces_view  # view names, no value
            return (f"SELECT t.SPACE, t.NAME, s.FILE_SIZE, COALESCE(s.FILENAME, CONCAT('./', t.NAME, '.ibd')), "  # noqa: S608
                    f"'Single' FROM {tables} t LEFT JOIN {spaces} s ON s.SPACE = t.SPACE WHERE t.SPACE <> 0 "
                    f"UNION ALL SELECT s.SPACE, s.NAME, s.FILE_SIZE, s.FILENAME, {kind} FROM {spaces} s "
                    "WHERE s.NAME NOT LIKE '%/%' ORDER BY 1")
        return ("SELECT t.SPACE, t.NAME, t.FILE_SIZE, d.PATH, t.SPACE_TYPE "
                "FROM INFORMATION_SCHEMA.INNODB_TABLESPACES t "
                "LEFT JOIN INFORMATION_SCHEMA.INNODB_DATAFILES d ON d.SPACE = t.SPACE ORDER BY t.SPACE")

    def engine_files_sql(self) -> str | None:
        """MySQL 8: the InnoDB files INNODB_TABLESPACES leaves out ("limited to file-per-table, general, and undo
        tablespaces", its manual says): the system and the global temporary tablespace, from INFORMATION_SCHEMA.FILES
        (PROCESS), in ``census_tablespaces_sql``'s columns. MariaDB's INNODB_SYS_TABLESPACES lists them: None."""
        if self.flavor == "mariadb":
            return None
        return ("SELECT FILE_ID, TABLESPACE_NAME, TOTAL_EXTENTS * EXTENT_SIZE, FILE_NAME, "
                "CASE FILE_TYPE WHEN 'TEMPORARY' THEN 'Temporary' WHEN 'UNDO LOG' THEN 'Undo' ELSE 'System' END "
                "FROM INFORMATION_SCHEMA.FILES WHERE ENGINE = 'InnoDB' "
                "AND (FILE_TYPE IN ('TEMPORARY', 'UNDO LOG') OR TABLESPACE_NAME = 'innodb_system') ORDER BY FILE_ID")

    def redo_log_sql(self) -> str:
        """The redo log (file or directory under the data directory, bytes): MariaDB 10.5+ writes one file,
        ib_logfile0, of innodb_log_file_size; MySQL 8.0.30+ innodb_redo_log_capacity bytes in #innodb_redo;
        MySQL before 8.0.30 innodb_log_files_in_group files ib_logfile0... of innodb_log_file_size each
        (https://dev.mysql.com/doc/refman/8.0/en/innodb-redo-log.html)."""
        if self.flavor == "mariadb":
            return "SELECT 'ib_logfile0', @@innodb_log_file_size"
        if self.version >= (8, 0, 30):
            return "SELECT '#innodb_redo', @@innodb_redo_log_capacity"
        return "SELECT 'ib_logfile0', @@innodb_log_file_size * @@innodb_log_files_in_group"

    def read_only_variable(self) -> str:
        """The session variable that says the session is read-only."""
        if self.flavor == "mysql" or self.version >= (11, 1, 0):
            return "@@SESSION.transaction_read_only"
        return "@@SESSION.tx_read_only"


SESSION_READ_ONLY_SQL = "SET SESSION TRANSACTION READ ONLY"
START_READ_ONLY_SQL = "START TRANSACTION READ ONLY"

TABLES_SQL = """
SELECT TABLE_SCHEMA, TABLE_NAME, ENGINE, COALESCE(DATA_LENGTH, 0), COALESCE(INDEX_LENGTH, 0),
       COALESCE(TABLE_ROWS, 0), COALESCE(CREATE_OPTIONS, '')
FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_SCHEMA, TABLE_NAME
"""
PARTITIONS_SQL = """
SELECT TABLE_SCHEMA, TABLE_NAME, PARTITION_NAME, SUBPARTITION_NAME, COALESCE(DATA_LENGTH, 0),
       COALESCE(INDEX_LENGTH, 0), COALESCE(TABLE_ROWS, 0)
FROM INFORMATION_SCHEMA.PARTITIONS WHERE PARTITION_NAME IS NOT NULL
ORDER BY TABLE_SCHEMA, TABLE_NAME, PARTITION_ORDINAL_POSITION, SUBPARTITION_ORDINAL_POSITION
"""
STATISTICS_SQL = """
SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART, INDEX_TYPE
FROM INFORMATION_SCHEMA.STATISTICS ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX
"""
COLUMNS_SQL = """
SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, IS_NULLABLE, COALESCE(CHARACTER_OCTET_LENGTH, 0),
       COALESCE(EXTRA, '')
FROM INFORMATION_SCHEMA.COLUMNS ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION
"""
INDEX_SIZES_SQL = """
SELECT database_name, table_name, index_name, stat_value FROM mysql.innodb_index_stats WHERE stat_name = 'size'
"""
SETTINGS_SQL = "SELECT VERSION(), @@innodb_page_size, @@performance_schema"

# Who holds a metadata lock on a table (after our wait for it reached lock_wait_timeout), in the order
# tried: MariaDB's METADATA_LOCK_INFO plugin (granted locks only; "METADATA_LOCK_INFO Plugin"), then
# performance_schema.metadata_locks (MySQL 8 by default; MariaDB with performance_schema on and the
# wait/lock/metadata/sql/mdl instrument), then, when the server says neither, the sessions connected to
# the table's schema as candidates. Each reads server state only, never the locked table, cut at
# bounds.DIAGNOSIS_SECONDS (``Dialect.bounded``). Our reads are consistent reads in READ ONLY
# transactions: they take no InnoDB row locks, so they never wait in INNODB_LOCK_WAITS / data_lock_waits.
MDL_INFO_HOLDERS_SQL = """
SELECT m.THREAD_ID, m.LOCK_MODE, p.USER, p.HOST, p.COMMAND, p.TIME, p.STATE
FROM information_schema.METADATA_LOCK_INFO m
LEFT JOIN information_schema.PROCESSLIST p ON p.ID = m.THREAD_ID
WHERE m.TABLE_SCHEMA = %s AND m.TABLE_NAME = %s AND m.THREAD_ID <> CONNECTION_ID()
ORDER BY m.THREAD_ID LIMIT 10
"""
PS_MDL_HOLDERS_SQL = """
SELECT t.PROCESSLIST_ID, m.LOCK_TYPE, t.PROCESSLIST_USER, t.PROCESSLIST_HOST, t.PROCESSLIST_COMMAND,
       t.PROCESSLIST_TIME, t.PROCESSLIST_STATE
FROM performance_schema.metadata_locks m
JOIN performance_schema.threads t ON t.THREAD_ID = m.OWNER_THREAD_ID
WHERE m.OBJECT_TYPE = 'TABLE' AND m.OBJECT_SCHEMA = %s AND m.OBJECT_NAME = %s AND m.LOCK_STATUS = 'GRANTED'
  AND t.PROCESSLIST_ID <> CONNECTION_ID()
ORDER BY t.PROCESSLIST_ID LIMIT 10
"""
SCHEMA_SESSIONS_SQL = """
SELECT ID, NULL, USER, HOST, COMMAND, TIME, STATE
FROM information_schema.PROCESSLIST
WHERE DB = %s AND ID <> CONNECTION_ID() AND COALESCE(STATE, '') NOT LIKE 'Waiting for table metadata lock%%'
ORDER BY TIME DESC, ID LIMIT 10
"""
DATADIR_SQL = "SELECT @@datadir"
# Persistent statistics (pages): the size of a tablespace the server has not opened, where readable.
TABLE_STATS_SQL = ("SELECT database_name, table_name, clustered_index_size + sum_of_other_index_sizes "
                   "FROM mysql.innodb_table_stats")
FREE_SQL = """
SELECT TABLE_SCHEMA, TABLE_NAME, COALESCE(SUBPARTITION_NAME, PARTITION_NAME), COALESCE(DATA_FREE, 0)
FROM INFORMATION_SCHEMA.PARTITIONS
"""
HANDLER_SQL = "SHOW SESSION STATUS LIKE 'Handler\\_read%'"
INNODB_READS_SQL = ("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_pages_read', 'Innodb_buffer_pool_reads', "
                    "'Innodb_data_read', 'Innodb_data_reads')")
FILE_SUMMARY_SQL = ("SELECT 'file_bytes_read', COALESCE(SUM(SUM_NUMBER_OF_BYTES_READ), 0) "
                    "FROM performance_schema.file_summary_by_instance "
                    "WHERE EVENT_NAME = 'wait/io/file/innodb/innodb_data_file'")


def is_offpage(data_type: str, octet_length: int) -> bool:
    data_type = data_type.lower()
    return data_type in OFFPAGE_TYPES or (data_type in LONG_VARIABLE_TYPES and octet_length > LONG_VARIABLE_BYTES)


def from_clause(schema: str, table: str, partition: str | None, hint: str) -> str:
    """``db.t [PARTITION (p)] <hint>``: MySQL's order (partition before index hints)."""
    text = qualified(schema, table)
    if partition:
        text += f" PARTITION ({quote_ident(partition)})"
    return f"{text} {hint}".rstrip()


def force_index(index: str) -> str:
    return f"FORCE INDEX ({quote_ident(index)})"


def ignore_indexes(indexes: Sequence[str]) -> str:
    return f"IGNORE INDEX ({', '.join(quote_ident(i) for i in indexes)})" if indexes else ""


def lengths_sum(columns: Sequence[str]) -> str:
    """An expression that reads every named column (their byte lengths summed), 0 with none."""
    return f"COALESCE(SUM({row_lengths(columns)}), 0)" if columns else "0"


def row_lengths(columns: Sequence[str]) -> str:
    """One row's byte lengths of the named columns (NULL counts 0), 0 with none."""
    return " + ".join(f"COALESCE(LENGTH({quote_ident(c)}), 0)" for c in columns) if columns else "0"


def key_bound(columns: Sequence[str], op: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
    """``(c1, c2, ...) op (v1, v2, ...)`` in the expanded form every optimizer turns into a range
    (as percona-toolkit writes it): ``c1 > v1 OR (c1 = v1 AND c2 > v2) ... [OR all equal]``."""
    if op not in (">=", "<"):
        raise ValueError(f"key bound {op!r}: use >= or <")
    if len(columns) != len(values) or not columns:
        raise ValueError("a key bound needs one value per key column")
    strict = ">" if op == ">=" else "<"
    terms, params = [], []
    for i, column in enumerate(columns):
        parts = [f"{quote_ident(c)} = %s" for c in columns[:i]] + [f"{quote_ident(column)} {strict} %s"]
        terms.append("(" + " AND ".join(parts) + ")")
        params.extend([*values[:i], values[i]])
    if op == ">=":
        terms.append("(" + " AND ".join(f"{quote_ident(c)} = %s" for c in columns) + ")")
        params.extend(values)
    return "(" + " OR ".join(terms) + ")", params


def where(conditions: Sequence[tuple[str, list[Any]]]) -> tuple[str, list[Any]]:
    if not conditions:
        return "", []
    return " WHERE " + " AND ".join(c for c, _ in conditions), [p for _, ps in conditions for p in ps]


def boundary_sql(loc: MysqlLocator, lower: Sequence[Any] | None, offset: int) -> tuple[str, list[Any]]:
    """The key ``offset`` rows on from ``lower`` (inclusive), walking the clustered index (NibbleIterator)."""
    columns = loc.key_columns
    clause, params = where([key_bound(columns, ">=", lower)] if lower is not None else [])
    cols = ", ".join(quote_ident(c) for c in columns)
    source = from_clause(loc.schema_name, loc.table, loc.partition, force_index(loc.key_index))
    text = f"SELECT {cols} FROM {source}{clause} ORDER BY {cols} LIMIT 1 OFFSET %s"  # noqa: S608
    return text, [*params, int(offset)]


def chunk_sql(loc: MysqlLocator, lower: Sequence[Any] | None, upper: Sequence[Any] | None) -> tuple[str, list[Any]]:
    """Read the rows ``lower <= key < upper`` through the clustered index, off-page columns included."""
    columns = loc.key_columns
    conditions = []
    if lower is not None:
        conditions.append(key_bound(columns, ">=", lower))
    if upper is not None:
        conditions.append(key_bound(columns, "<", upper))
    clause, params = where(conditions)
    source = from_clause(loc.schema_name, loc.table, loc.partition, force_index(loc.key_index))
    read = loc.offpage or loc.key_columns  # a column read keeps MySQL 8 from counting another way
    return f"SELECT COUNT(*), {lengths_sum(read)} FROM {source}{clause}", params  # noqa: S608


def full_scan_sql(loc: MysqlLocator) -> str:
    """A whole-table scan (no key to walk: GEN_CLUST_INDEX, MyISAM, Aria) reading every column."""
    source = from_clause(loc.schema_name, loc.table, loc.partition, ignore_indexes(loc.indexes))
    return f"SELECT COUNT(*), {lengths_sum(loc.columns)} FROM {source}"  # noqa: S608


def index_scan_sql(loc: MysqlLocator) -> tuple[str, list[Any]]:
    """A covering scan of one secondary index: only columns the index holds are read, so the
    server reads the index and nothing else (EXPLAIN says ``Using index``). ``COUNT(*)`` alone is
    not used: MySQL 8 may count through the clustered index whatever the hint says.

    An index that starts with a column prefix (``KEY (doc(10))``) cannot cover anything and the
    server will not scan it whole: it is read as a range over all values of its first column
    (``IS NULL OR >= ''``), each entry then looked up in the clustered index (read already)."""
    source = from_clause(loc.schema_name, loc.table, loc.partition, force_index(loc.index))
    text = f"SELECT COUNT(*), {lengths_sum(loc.index_columns)} FROM {source}"  # noqa: S608
    if loc.range_column:
        column = quote_ident(loc.range_column)
        return f"{text} WHERE ({column} IS NULL OR {column} >= %s)", [""]
    return text, []


def probe_sql(loc: MysqlLocator) -> str:
    """One single-row lookup by primary key: the first row at or after a value of the (integer) key."""
    column = quote_ident(loc.probe.column if loc.probe else "")
    source = from_clause(loc.schema_name, loc.table, loc.partition, force_index(loc.key_index))
    return (f"SELECT {column}, {row_lengths(loc.offpage)} FROM {source} WHERE {column} >= %s "  # noqa: S608
            f"ORDER BY {column} LIMIT 1")


def key_range_sql(loc: MysqlLocator) -> str:
    """The smallest and largest value of an integer single-column key: two index dives."""
    column = quote_ident(loc.key_columns[0])
    source = from_clause(loc.schema_name, loc.table, loc.partition, force_index(loc.key_index))
    return f"SELECT MIN({column}), MAX({column}) FROM {source}"  # noqa: S608


def stats_table_key(name: str, decode: Callable[[str], str] | None = None) -> tuple[str, str | None]:
    """``(table, partition)`` of a ``table_name`` in ``mysql.innodb_index_stats`` (or of a tablespace
    name after its ``db/``): ``t``, ``t#P#p0`` or ``t#P#p0#SP#p0sp0`` (MariaDB, MySQL before
    8.0.18), ``t#p#p0#sp#p0sp0`` (MySQL 8.0.18+, WL#13352, which also writes the partition name in
    lower case). The partition is the subpartition where there is one, in lower case (partition
    names are case-insensitive); a ``#`` inside a name is ``@0023`` in this file-name encoding, so
    the split comes before decoding (``decode``: ``decode_filename`` unless given)."""
    decode = decode or decode_filename
    table, part = split_file_name(name)
    return decode(table), decode(part).lower() if part is not None else None


def split_file_name(name: str) -> tuple[str, str | None]:
    """The undecoded table and (sub)partition pieces of ``t[#P#p[#SP#s]]`` (either case)."""
    pieces = re.split(r"#[pP]#", name, maxsplit=1)
    if len(pieces) == 1:
        return name, None
    return pieces[0], re.split(r"#[sS][pP]#", pieces[1])[-1]


DECODE_FILENAME_SQL = "CONVERT(CAST(%s AS BINARY) USING filename)"


def decode_filename(text: str) -> str:
    """MySQL's file-name encoding of names (``@0020`` for a space, ...), for the names of
    tablespaces; characters it encodes otherwise (``@1o``: two-character codes of letters beyond
    ASCII) are left as written: the server decodes those (``DECODE_FILENAME_SQL``)."""
    return re.sub(r"@([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
