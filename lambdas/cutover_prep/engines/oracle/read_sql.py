"""The warm-up's read statements (``engines.oracle.reads``, ``lobsplit``, ``iotsplit``) and the counters and
plan that confirm them (``engines.oracle.confirm``, the preflight), built without a database so they can be
unit-tested. Identifiers go through ``sql.quote_identifier``; values are binds (a rowid chunk's: ``rowids``).
"""

# ruff: noqa: S608 -- SQL text from identifiers, each through quote_identifier; values are binds
from __future__ import annotations

from cutover_prep.engines.oracle.sql import partition_clause, qualified, quote_identifier

# One table segment as it is now (read before each rowid range read, issue 32): its DATA_OBJECT_ID and extents.
# A TRUNCATE or MOVE gives the object a new segment, so a new DATA_OBJECT_ID (Database Reference, "ALL_OBJECTS":
# "Dictionary object number of the segment that contains the object"); a SHRINK SPACE keeps the segment and
# releases the extents above its new high water mark. No row: the dictionary does not say (dropped, not visible).
# EXTENT_ID (the extent's order in its segment) places the high-water mark (``UNUSED_SPACE_BLOCK``): extents after
# the last used one hold nothing any query reads (issue 35 §2).
SEGMENT_NOW_SQL = """
SELECT o.data_object_id, e.relative_fno, e.block_id, e.blocks, e.extent_id
FROM dba_objects o
LEFT JOIN dba_extents e ON e.owner = o.owner AND e.segment_name = o.object_name
  AND e.segment_type = o.object_type
  AND (e.partition_name = o.subobject_name OR (e.partition_name IS NULL AND o.subobject_name IS NULL))
WHERE o.owner = :owner AND o.object_name = :name AND o.object_type = :segment_type
  AND (o.subobject_name = :partition OR (o.subobject_name IS NULL AND :partition IS NULL))
ORDER BY e.relative_fno, e.block_id
"""

# A segment's high-water mark (issue 35 §2): PL/SQL Packages and Types Reference, "DBMS_SPACE.UNUSED_SPACE"
# (https://docs.oracle.com/cd/A97630_01/appdev.920/a96612/d_space2.htm): ``unused_blocks`` are the blocks above
# the high-water mark, ``last_used_extent_file_id`` / ``last_used_extent_block_id`` the extent it is in and
# ``last_used_block`` the last block of that extent that holds data. Needs ANALYZE on the object (ANALYZE ANY);
# refused, the read goes by the planned extents and says the mark is not known.
UNUSED_SPACE_BLOCK = (
    "BEGIN DBMS_SPACE.UNUSED_SPACE(segment_owner => :owner, segment_name => :name, segment_type => :segment_type, "
    "total_blocks => :total_blocks, total_bytes => :total_bytes, unused_blocks => :unused_blocks, "
    "unused_bytes => :unused_bytes, last_used_extent_file_id => :last_file, "
    "last_used_extent_block_id => :last_block_id, last_used_block => :last_block, partition_name => :partition); "
    "END;"
)

# Every key column of an index, in order, with whether the table column may be NULL (to force an
# INDEX_FFS the query must not need rows whose key columns are all NULL). DBA_TAB_COLS, not
# DBA_TAB_COLUMNS: a function-based or DESC index keys a system-generated hidden column
# (SYS_NCnnnnn$), which DBA_TAB_COLUMNS filters out (Database Reference, "DBA_TAB_COLS").
INDEX_COLUMNS_SQL = """
SELECT ic.column_position, ic.column_name, tc.nullable, tc.hidden_column
FROM dba_ind_columns ic
LEFT JOIN dba_tab_cols tc ON tc.owner = ic.table_owner AND tc.table_name = ic.table_name
                         AND tc.column_name = ic.column_name
WHERE ic.index_owner = :owner AND ic.index_name = :index_name
ORDER BY ic.column_position
"""

# The expression a hidden key column stands for (recorded with the read; a LONG, fetched alone).
INDEX_EXPRESSION_SQL = """
SELECT column_expression FROM dba_ind_expressions
WHERE index_owner = :owner AND index_name = :index_name AND column_position = :position
"""

# The session's own read counters (Database Reference, "V$MYSTAT", "Statistics Descriptions"):
# 'physical reads' = blocks read from storage (buffered + direct), 'physical reads direct' around the
# buffer cache, 'physical reads cache' into it, 'session logical reads' = blocks got, from the cache
# included (a block already cached is read without a physical read). Taken before and after each read.
MYSTAT_NAMES = ("physical reads", "physical reads direct", "physical reads cache", "session logical reads")
MYSTAT_SQL = (
    "SELECT n.name, m.value FROM v$mystat m JOIN v$statname n ON n.statistic# = m.statistic# "
    "WHERE n.name IN (" + ", ".join(f"'{name}'" for name in MYSTAT_NAMES) + ")"
)


# One segment's own read counters (issue 35 §2; Database Reference 19c, "V$SEGMENT_STATISTICS",
# https://docs.oracle.com/en/database/oracle/oracle-database/19/refrn/V-SEGMENT_STATISTICS.html): instance-wide
# but per segment, so a read is confirmed by the segment it was meant to read, not by whatever the session read
# (recursive and dictionary reads count in V$MYSTAT). No partition: every subobject (a global index read whole).
SEGMENT_STATISTIC_NAMES = ("logical reads", "physical reads", "physical reads direct")
SEGMENT_STATISTICS_SQL = (
    "SELECT statistic_name, SUM(value) FROM v$segment_statistics "
    "WHERE owner = :owner AND object_name = :name AND (:partition IS NULL OR subobject_name = :partition) "
    "AND statistic_name IN (" + ", ".join(f"'{name}'" for name in SEGMENT_STATISTIC_NAMES) + ") "
    "GROUP BY statistic_name"
)

# The plan the read ran with (issue 35 §1, the preflight's proof): the session's previous statement
# (Database Reference, "V$SESSION": PREV_SQL_ID, PREV_CHILD_NUMBER) and its plan lines (Database Reference,
# "V$SQL_PLAN", https://docs.oracle.com/database/122/REFRN/V-SQL_PLAN.htm: OPERATION e.g. TABLE ACCESS, OPTIONS
# e.g. BY ROWID RANGE), what DBMS_XPLAN.DISPLAY_CURSOR formats (PL/SQL Packages 19c, "DBMS_XPLAN",
# https://docs.oracle.com/en/database/oracle/oracle-database/19/arpls/DBMS_XPLAN.html: DISPLAY_CURSOR needs
# SELECT on V$SQL_PLAN, V$SESSION, V$SQL_PLAN_STATISTICS_ALL; all in SELECT_CATALOG_ROLE).
PREV_SQL_SQL = "SELECT prev_sql_id, prev_child_number FROM v$session WHERE sid = SYS_CONTEXT('USERENV', 'SID')"
SQL_PLAN_SQL = ("SELECT id, operation, options, object_owner, object_name FROM v$sql_plan "
                "WHERE sql_id = :sql_id AND child_number = :child_number ORDER BY id")


def rowid_range_count_sql(owner: str, table: str, partition: str | None = None, subpartition: bool = False) -> str:
    """Count the rows of one rowid range the way Oracle documents rowid chunks (issue 35 §1): PL/SQL Packages
    and Types Reference 19c, "DBMS_PARALLEL_EXECUTE"
    (https://docs.oracle.com/en/database/oracle/oracle-database/19/arpls/DBMS_PARALLEL_EXECUTE.html): chunks
    made by CREATE_CHUNKS_BY_ROWID are processed by a statement hinted ``ROWID`` with
    ``WHERE rowid BETWEEN :start_id AND :end_id``; its plan is ``TABLE ACCESS BY ROWID RANGE`` (SQL Tuning
    Guide, "Table Access by Rowid", https://docs.oracle.com/database/122/TGSQL/optimizer-access-paths.htm),
    which the preflight proves from V$SQL_PLAN. NO_INDEX keeps an index fast full scan (whose entries carry
    rowids too) from answering the count; NO_PARALLEL keeps it one serial statement (a parallel one is a
    ``PX BLOCK ITERATOR`` over block range granules, not this access path). No session setting chooses between
    direct path and buffered reads (issue 35: the documented settings only): Oracle chooses, and each read says
    which it was from its segment's counters (``confirm.read_path``). Binds: ``rowids.rowid_bounds``."""
    return (
        "SELECT /*+ ROWID(t) NO_INDEX(t) NO_PARALLEL(t) */ "
        f"COUNT(*) FROM {qualified(owner, table)}"
        f"{partition_clause(partition, subpartition)} t "
        "WHERE t.ROWID BETWEEN :start_id AND :end_id"
    )


# An invisible index is ignored by the optimizer, hints included, unless the session's
# OPTIMIZER_USE_INVISIBLE_INDEXES is TRUE (Database Reference, "OPTIMIZER_USE_INVISIBLE_INDEXES";
# Administrator's Guide, "Understand When to Use Invisible Indexes"). The engine sets it for the read
# of an invisible index only, and back to FALSE (the default) after: session scoped, writes nothing,
# and an optimizer parameter, so a cursor parsed under TRUE is not shared with one parsed under FALSE.
USE_INVISIBLE_INDEXES_SQL = "ALTER SESSION SET OPTIMIZER_USE_INVISIBLE_INDEXES = TRUE"
IGNORE_INVISIBLE_INDEXES_SQL = "ALTER SESSION SET OPTIMIZER_USE_INVISIBLE_INDEXES = FALSE"


def index_ffs_sql(table_owner: str, table: str, index: str, column: str, nullable: bool,
                  partition: str | None = None, invisible: bool = False) -> str:
    """Read a whole index (or the local partition of one: ``partition`` is the *table's* partition at
    the index partition's position, ``INDEX_TABLE_PARTITION_SQL``) with an index fast full scan.
    An invisible index is ignored by the optimizer, hint included: the session runs this under
    ``USE_INVISIBLE_INDEXES_SQL``; the USE_INVISIBLE_INDEXES hint is kept as well."""
    predicate = f" WHERE t.{quote_identifier(column)} IS NOT NULL" if nullable else ""
    use_invisible = " USE_INVISIBLE_INDEXES" if invisible else ""
    return (
        f"SELECT /*+ INDEX_FFS(t {quote_identifier(index)}){use_invisible} NO_PARALLEL(t) */ COUNT(*) "
        f"FROM {qualified(table_owner, table)}{partition_clause(partition, False)} t{predicate}"
    )


LOB_BUFFERS = {"BLOB": ("RAW(32767)", 32767), "CLOB": ("VARCHAR2(32767)", 8191),
               "NCLOB": ("NVARCHAR2(32767)", 8191)}  # DBMS_LOB.READ: the buffer in the LOB's character set


def lob_read_block(owner: str, table: str, column: str, data_type: str, partition: str | None = None,
                   subpartition: bool = False, rowid_range: bool = False) -> str:
    """Anonymous PL/SQL that reads every LOB value of a column in 32 KiB pieces (server side).

    Out bind :total receives the bytes (BLOB) or characters (CLOB/NCLOB) read. Read-only. An NCLOB
    needs an NVARCHAR2 buffer; CLOB/NCLOB amounts are characters (up to 4 bytes each). ``rowid_range``: only
    the rows of one rowid range of the table (binds of ``rowid_range_binds``), found the way
    DBMS_PARALLEL_EXECUTE's rowid chunks are (the ROWID hint and a ROWID BETWEEN predicate: PL/SQL Packages
    and Types Reference, "DBMS_PARALLEL_EXECUTE"), so a LOB is read in slices of its table
    (``engines.oracle.lobsplit``)."""
    if data_type not in LOB_BUFFERS:
        raise ValueError(f"no DBMS_LOB.READ buffer for a {data_type} column")
    buffer, amount = LOB_BUFFERS[data_type]
    hint, rows = "/*+ FULL(t) */", ""
    if rowid_range:
        hint = "/*+ ROWID(t) NO_PARALLEL(t) */"
        rows = ("t.ROWID BETWEEN DBMS_ROWID.ROWID_CREATE(1, :objd, :lo_fno, :lo_block, 0) "
                "AND DBMS_ROWID.ROWID_CREATE(1, :objd, :hi_fno, :hi_block, 32767) AND ")
    return (
        "DECLARE\n"
        f"  buf {buffer};\n"
        "  amt INTEGER;\n"
        "  pos INTEGER;\n"
        "  len INTEGER;\n"
        "  total NUMBER := 0;\n"
        "BEGIN\n"
        f"  FOR r IN (SELECT {hint} t.{quote_identifier(column)} AS v "
        f"FROM {qualified(owner, table)}{partition_clause(partition, subpartition)} t "
        f"WHERE {rows}t.{quote_identifier(column)} IS NOT NULL) LOOP\n"
        "    len := DBMS_LOB.GETLENGTH(r.v);\n"
        "    pos := 1;\n"
        "    WHILE pos <= len LOOP\n"
        f"      amt := {amount};\n"
        "      DBMS_LOB.READ(r.v, amt, pos, buf);\n"
        "      pos := pos + amt;\n"
        "      total := total + amt;\n"
        "    END LOOP;\n"
        "  END LOOP;\n"
        "  :total := total;\n"
        "END;"
    )


# A LOB segment's extents now, in discovery's order (relative file, block): where a planned LOB range lies in
# its segment (``engines.oracle.lobsplit``).
LOB_EXTENTS_SQL = """
SELECT relative_fno, block_id, blocks
FROM dba_extents
WHERE owner = :owner AND segment_name = :name AND segment_type = :segment_type
  AND (partition_name = :partition OR (partition_name IS NULL AND :partition IS NULL))
ORDER BY relative_fno, block_id
"""

# What of a SecureFiles LOB segment its LOB values use now (PL/SQL Packages and Types Reference, "DBMS_SPACE",
# SPACE_USAGE's SecureFiles form: "the space actively used by the LOB column, freed space that has retention
# expired, and freed space that has retention unexpired"; segment types LOB, LOB PARTITION, LOB SUBPARTITION;
# the caller needs ANALYZE on the table, or ANALYZE ANY). Blocks DBMS_LOB cannot reach (retained versions, free
# chunks) are named, not planned as reads (``engines.oracle.lobsplit.reachable``). A BasicFiles LOB raises
# (that form is SecureFiles only): then what is reachable is not known, and the read is planned whole.
LOB_SPACE_USAGE_SQL = (
    "BEGIN DBMS_SPACE.SPACE_USAGE(segment_owner => :owner, segment_name => :name, segment_type => :segment_type, "
    "segment_size_blocks => :size_blocks, segment_size_bytes => :size_bytes, used_blocks => :used_blocks, "
    "used_bytes => :used_bytes, expired_blocks => :expired_blocks, expired_bytes => :expired_bytes, "
    "unexpired_blocks => :unexpired_blocks, unexpired_bytes => :unexpired_bytes, partition_name => :partition); END;"
)
LOB_SPACE_TYPES = {"LOBSEGMENT": "LOB", "LOB PARTITION": "LOB PARTITION", "LOB SUBPARTITION": "LOB SUBPARTITION"}

# The LOB's table (sub)partition now: its DATA_OBJECT_ID (the rowids' object number), its extents in the same
# order, and whether its tablespace is bigfile (DBA_TABLESPACES.BIGFILE: the rowid's block encoding).
LOB_TABLE_NOW_SQL = """
SELECT o.data_object_id, e.relative_fno, e.block_id, e.blocks, t.bigfile
FROM dba_objects o
LEFT JOIN dba_extents e ON e.owner = o.owner AND e.segment_name = o.object_name
  AND e.segment_type = o.object_type
  AND (e.partition_name = o.subobject_name OR (e.partition_name IS NULL AND o.subobject_name IS NULL))
LEFT JOIN dba_tablespaces t ON t.tablespace_name = e.tablespace_name
WHERE o.owner = :owner AND o.object_name = :name AND o.object_type = :segment_type
  AND (o.subobject_name = :partition OR (o.subobject_name IS NULL AND :partition IS NULL))
ORDER BY e.relative_fno, e.block_id
"""

# The table partition a LOCAL index partition indexes: the one at the same PARTITION_POSITION
# (names differ for interval and renamed partitions: naming the index's is ORA-02149).
INDEX_TABLE_PARTITION_SQL = """
SELECT tp.partition_name
FROM dba_ind_partitions ip
JOIN dba_tab_partitions tp ON tp.table_owner = :table_owner AND tp.table_name = :table_name
                          AND tp.partition_position = ip.partition_position
WHERE ip.index_owner = :owner AND ip.index_name = :index_name AND ip.partition_name = :partition
"""

# The IOT partition an overflow partition belongs to (equipartitioned, by position).
OVERFLOW_IOT_PARTITION_SQL = """
SELECT ip.partition_name
FROM dba_tab_partitions op
JOIN dba_tab_partitions ip ON ip.table_owner = op.table_owner AND ip.table_name = :iot_name
                          AND ip.partition_position = op.partition_position
WHERE op.table_owner = :owner AND op.table_name = :overflow AND op.partition_name = :partition
"""

# The columns of an IOT whose COUNT makes the server fetch each row's overflow piece (LONG cannot be counted).
IOT_COLUMNS_SQL = """
SELECT column_name FROM dba_tab_columns
WHERE owner = :owner AND table_name = :table_name AND data_type NOT IN ('LONG', 'LONG RAW')
ORDER BY column_id
"""


def iot_overflow_sql(owner: str, iot: str, columns: list[str], partition: str | None = None, *,
                     key: str | None = None, bounded: bool = True) -> str:
    """Read an IOT's overflow segment through the IOT (its own name is ORA-25191): counting every
    column makes the server follow each row's pointer to its overflow piece. ``key``: only the rows whose
    leading key column is in ``[:key_from, :key_to)`` (``bounded``) or ``>= :key_from`` (the last slice,
    ``engines.oracle.iotsplit``)."""
    if not columns:
        raise ValueError(f"index-organized table {owner}.{iot} has no column to read its overflow by")
    counts = ", ".join(f"COUNT(t.{quote_identifier(c)})" for c in columns)
    where = ""
    if key is not None:
        k = f"t.{quote_identifier(key)}"
        where = f" WHERE {k} >= :key_from" + (f" AND {k} < :key_to" if bounded else "")
    return (f"SELECT /*+ NO_PARALLEL(t) */ {counts} FROM {qualified(owner, iot)}{partition_clause(partition, False)} t"
            f"{where}")


# The leading column of an IOT's key, and its type: the first column of its primary key index, the one of
# DBA_INDEXES.INDEX_TYPE 'IOT - TOP' (an IOT is stored in the index of its primary key), from views the run's
# grants already hold (DBA_INDEXES, DBA_IND_COLUMNS, DBA_TAB_COLS).
IOT_KEY_SQL = """
SELECT ic.column_name, tc.data_type
FROM dba_indexes i
JOIN dba_ind_columns ic ON ic.index_owner = i.owner AND ic.index_name = i.index_name AND ic.column_position = 1
JOIN dba_tab_cols tc ON tc.owner = i.table_owner AND tc.table_name = i.table_name AND tc.column_name = ic.column_name
WHERE i.table_owner = :owner AND i.table_name = :table_name AND i.index_type = 'IOT - TOP'
"""


def iot_key_range_sql(owner: str, iot: str, key: str, partition: str | None = None) -> str:
    """The smallest and largest leading key of an IOT (partition): the range its overflow is sliced by."""
    k = f"t.{quote_identifier(key)}"
    return f"SELECT MIN({k}), MAX({k}) FROM {qualified(owner, iot)}{partition_clause(partition, False)} t"

