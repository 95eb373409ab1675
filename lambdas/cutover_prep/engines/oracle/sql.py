"""SQL of the Oracle engine, built without a database so it can be unit-tested.

Identifiers from the catalogue are always double-quoted (case, ``$``, ``#``, spaces and
unicode preserved). Oracle cannot quote a name containing ``"`` or NUL, and limits names
to 128 bytes: such names are refused with a clear error rather than pasted. Values are
always bind variables.
"""

# ruff: noqa: S608 -- SQL text from identifiers, each through quote_identifier; values are binds
from __future__ import annotations

MAX_IDENTIFIER_BYTES = 128

# Schemas Oracle and RDS maintain; excluded unless include_system. ORACLE_MAINTAINED='Y'
# in DBA_USERS covers the rest on 12c and later.
SYSTEM_SCHEMAS = frozenset({
    "SYS", "SYSTEM", "RDSADMIN", "AUDSYS", "XDB", "MDSYS", "CTXSYS", "ORDSYS", "ORDDATA", "ORDPLUGINS",
    "OUTLN", "DBSNMP", "APPQOSSYS", "GSMADMIN_INTERNAL", "WMSYS", "OJVMSYS", "LBACSYS", "DVSYS", "DVF",
    "OLAPSYS", "SI_INFORMTN_SCHEMA", "MDDATA", "SPATIAL_CSW_ADMIN_USR", "SPATIAL_WFS_ADMIN_USR",
    "DBSFWUSER", "REMOTE_SCHEDULER_AGENT", "GGSYS", "ANONYMOUS", "XS$NULL", "DIP", "ORACLE_OCM",
    "SYSBACKUP", "SYSDG", "SYSKM", "SYSRAC", "SYS$UMF", "GSMCATUSER", "GSMUSER", "FLOWS_FILES",
})

SYSTEM_SCHEMAS_SQL = "SELECT username FROM dba_users WHERE oracle_maintained = 'Y'"

# Read-only guard. SET TRANSACTION READ ONLY (every version) must open the transaction and
# lasts until COMMIT/ROLLBACK; the READ_ONLY session parameter exists from 23ai (Oracle
# Database Reference, "READ_ONLY") and cannot be set while a transaction is open.
SET_TRANSACTION_READ_ONLY_SQL = "SET TRANSACTION READ ONLY"
SESSION_READ_ONLY_SQL = "ALTER SESSION SET READ_ONLY = TRUE"
SESSION_READ_WRITE_SQL = "ALTER SESSION SET READ_ONLY = FALSE"

# One row per segment with what reading it needs. Table-type segments carry their
# data_object_id (rowid ranges), their tablespace's BIGFILE, and IOT_TYPE/IOT_NAME (an IOT's
# overflow segment SYS_IOT_OVER_n is read through its IOT); LOB segments their table and column,
# the column found in DBA_TAB_COLS (hidden columns of XMLType and object types included, by name
# or QUALIFIED_COL_NAME); index segments their table, type, locality and VISIBILITY; LOB
# (sub)partitions the table (sub)partition they belong to, and whether that table is index-organized
# (``lt.iot_type``: a heap table's LOB is read by the table's rowid ranges, ``engines.oracle.lobsplit``).
SEGMENTS_SQL = """
SELECT s.owner, s.segment_name, s.partition_name, s.segment_type, s.bytes, s.blocks, t.block_size,
       o.data_object_id,
       l.table_name, l.column_name, c.data_type,
       i.table_owner, i.table_name, i.index_type, pi.locality,
       lp.partition_name, t.bigfile,
       c.column_name, tb.iot_type, tb.iot_name, lsp.subpartition_name, i.visibility, lt.iot_type
FROM dba_segments s
JOIN dba_tablespaces t ON t.tablespace_name = s.tablespace_name
LEFT JOIN dba_objects o
       ON s.segment_type IN ('TABLE', 'TABLE PARTITION', 'TABLE SUBPARTITION')
      AND o.owner = s.owner AND o.object_name = s.segment_name AND o.object_type = s.segment_type
      AND (o.subobject_name = s.partition_name OR (o.subobject_name IS NULL AND s.partition_name IS NULL))
LEFT JOIN dba_lobs l
       ON s.segment_type IN ('LOBSEGMENT', 'LOB PARTITION', 'LOB SUBPARTITION')
      AND l.owner = s.owner AND l.segment_name = s.segment_name
LEFT JOIN dba_tables lt ON lt.owner = l.owner AND lt.table_name = l.table_name
LEFT JOIN dba_tab_cols c
       ON c.owner = l.owner AND c.table_name = l.table_name
      AND (c.column_name = l.column_name OR c.qualified_col_name = l.column_name)
LEFT JOIN dba_lob_partitions lp
       ON s.segment_type = 'LOB PARTITION'
      AND lp.table_owner = s.owner AND lp.lob_name = s.segment_name AND lp.lob_partition_name = s.partition_name
LEFT JOIN dba_lob_subpartitions lsp
       ON s.segment_type = 'LOB SUBPARTITION'
      AND lsp.table_owner = s.owner AND lsp.lob_name = s.segment_name AND lsp.lob_subpartition_name = s.partition_name
LEFT JOIN dba_tables tb
       ON s.segment_type IN ('TABLE', 'TABLE PARTITION', 'TABLE SUBPARTITION')
      AND tb.owner = s.owner AND tb.table_name = s.segment_name
LEFT JOIN dba_indexes i
       ON s.segment_type IN ('INDEX', 'INDEX PARTITION', 'INDEX SUBPARTITION')
      AND i.owner = s.owner AND i.index_name = s.segment_name
LEFT JOIN dba_part_indexes pi ON pi.owner = i.owner AND pi.index_name = i.index_name
WHERE s.segment_type IN ('TABLE', 'TABLE PARTITION', 'TABLE SUBPARTITION', 'INDEX', 'INDEX PARTITION',
                         'INDEX SUBPARTITION', 'LOBSEGMENT', 'LOB PARTITION', 'LOB SUBPARTITION')
  AND s.owner = :owner AND (:after IS NULL OR s.segment_name > :after) AND s.segment_name <= :upto
  AND s.segment_name NOT LIKE 'BIN$%'
ORDER BY s.segment_name, s.partition_name, s.segment_type
"""

# Discovery goes owner by owner, and page by page within an owner (issue 35 §4, ``engines.oracle.discovery``):
# DBA_EXTENTS over a whole database, on a cold volume, reads every segment header (each a first touch) and may
# outlast the Lambda. OWNERS_SQL lists every user (DBA_USERS: "all users of the database"; a segment's owner is
# one); the selection (include/exclude patterns, system schemas) is applied to that list, so the segment and
# extent queries name one selected owner each, in SQL. A page is the next PAGE_NAMES segment names of the owner
# in name order (PAGE_LAST_NAME_SQL gives the page's last name, NULL when the owner has no more): the segment
# and extent queries of a page bind (owner, after, upto), ``after`` NULL on the owner's first page.
OWNERS_SQL = "SELECT username FROM dba_users ORDER BY username"

PAGE_LAST_NAME_SQL = """
SELECT MAX(segment_name) FROM (
  SELECT segment_name FROM (
    SELECT DISTINCT segment_name FROM dba_segments
    WHERE owner = :owner AND (:after IS NULL OR segment_name > :after) AND segment_name NOT LIKE 'BIN$%'
      AND segment_type IN ('TABLE', 'TABLE PARTITION', 'TABLE SUBPARTITION', 'INDEX', 'INDEX PARTITION',
                           'INDEX SUBPARTITION', 'LOBSEGMENT', 'LOB PARTITION', 'LOB SUBPARTITION')
    ORDER BY segment_name)
  WHERE ROWNUM <= :page_names)
"""

# The extents of one page's segments, in block order, with SEGMENT_TYPE: a segment is keyed by (owner, name,
# partition, type), as a table and an index of one name are two segments (tables and indexes have separate
# namespaces: SQL Language Reference, "Database Object Namespaces").
EXTENTS_SQL = """
SELECT owner, segment_name, partition_name, segment_type, relative_fno, block_id, blocks
FROM dba_extents
WHERE owner = :owner AND (:after IS NULL OR segment_name > :after) AND segment_name <= :upto
  AND segment_type IN ('TABLE', 'TABLE PARTITION', 'TABLE SUBPARTITION', 'INDEX', 'INDEX PARTITION',
                       'INDEX SUBPARTITION', 'LOBSEGMENT', 'LOB PARTITION', 'LOB SUBPARTITION')
  AND segment_name NOT LIKE 'BIN$%'
ORDER BY segment_name, partition_name, segment_type, relative_fno, block_id
"""

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

# The server's own rowid for (objd, file, block, row) (PL/SQL Packages, "DBMS_ROWID.ROWID_CREATE"): the preflight
# and the live test prove ``rowid_of`` builds the same text.
ROWID_CREATE_SQL = "SELECT ROWIDTOCHAR(DBMS_ROWID.ROWID_CREATE(1, :objd, :fno, :block, :row_number)) FROM dual"


def quote_identifier(name: str) -> str:
    """Oracle's quoted identifier, or ValueError for names Oracle itself cannot quote."""
    if not name:
        raise ValueError("empty Oracle identifier")
    if '"' in name or "\x00" in name:
        raise ValueError(f"Oracle identifier {name!r} contains a double quote or NUL and cannot be quoted")
    if len(name.encode("utf-8")) > MAX_IDENTIFIER_BYTES:
        raise ValueError(f"Oracle identifier {name[:20]!r}... is longer than {MAX_IDENTIFIER_BYTES} bytes")
    return f'"{name}"'


def qualified(owner: str, name: str) -> str:
    return f"{quote_identifier(owner)}.{quote_identifier(name)}"


def _partition_clause(partition: str | None, sub: bool) -> str:
    if not partition:
        return ""
    return f" {'SUBPARTITION' if sub else 'PARTITION'} ({quote_identifier(partition)})"


SMALLFILE_BLOCK_BITS = 22  # a smallfile rowid: 10 bits of relative file number, 22 of block number


def rowid_range_binds(objd: int, rfno: int, first_block: int, last_block: int, bigfile: bool) -> dict[str, int]:
    """The rowid fields (``rowid_bounds``) of blocks ``first_block..last_block`` of one file.

    ROWID_CREATE builds the smallfile layout. In a bigfile tablespace the rowid has no file number
    (DBA_EXTENTS says RELATIVE_FNO 1024, which 10 bits cannot hold): its block number is encoded
    across the file and block fields (DBMS_ROWID: ROWID_BLOCK_NUMBER(rowid, 'BIGFILE')), so the
    block is split into its high bits (the file field) and its low 22 bits."""
    if not bigfile:
        return {"objd": objd, "lo_fno": rfno, "lo_block": first_block, "hi_fno": rfno, "hi_block": last_block}
    mask = (1 << SMALLFILE_BLOCK_BITS) - 1
    return {"objd": objd, "lo_fno": first_block >> SMALLFILE_BLOCK_BITS, "lo_block": first_block & mask,
            "hi_fno": last_block >> SMALLFILE_BLOCK_BITS, "hi_block": last_block & mask}


# The bigfile encoding proven on the server: the block number DBMS_ROWID reads back from the rowid
# ``rowid_range_binds`` builds must be the block asked for (for the preflight and the live test).
BIGFILE_ROUNDTRIP_SQL = ("SELECT DBMS_ROWID.ROWID_BLOCK_NUMBER(DBMS_ROWID.ROWID_CREATE(1, :objd, :fno, :block, 0), "
                         "'BIGFILE') FROM dual")


SERIAL_DIRECT_READ_MODES = ("ALWAYS", "NEVER")


def serial_direct_read_sql(mode: str) -> str:
    """The session setting of a read mode: ALWAYS = direct path reads, NEVER = through the buffer cache."""
    if mode not in SERIAL_DIRECT_READ_MODES:
        raise ValueError(f"_serial_direct_read must be one of {SERIAL_DIRECT_READ_MODES}, got {mode!r}")
    return f'ALTER SESSION SET "_serial_direct_read" = {mode}'


# Extended rowids (Concepts, "Rowid Format", https://docs.oracle.com/cd/G47991_01/cncpt/img_text/cncpt249.html:
# AAAPec = data object number, AAF = relative file number, AAAABS = block number, AAA = row number, each a base-64
# number over A-Z a-z 0-9 + /). DBMS_PARALLEL_EXECUTE's CREATE_CHUNKS_BY_ROWID hands each chunk out as two such
# rowids, START_ROWID and END_ROWID; the engine builds them the same way from the extents it plans.
ROWID_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
ROWID_FIELDS = (("objd", 6, 32), ("fno", 3, 10), ("block", 6, 22), ("row_number", 3, 16))  # name, chars, bits
MAX_ROW_NUMBER = 32767  # the last row slot of a block, as DBMS_PARALLEL_EXECUTE's chunks end


def rowid_of(objd: int, fno: int, block: int, row_number: int) -> str:
    """The 18-character extended rowid of (data object, relative file, block, row)."""
    out = []
    for (name, chars, bits), value in zip(ROWID_FIELDS, (objd, fno, block, row_number), strict=True):
        if not 0 <= int(value) < (1 << bits):
            raise ValueError(f"rowid {name} {value} does not fit its {bits} bits")
        digits, value = [], int(value)
        for _ in range(chars):
            digits.append(ROWID_DIGITS[value % 64])
            value //= 64
        out.append("".join(reversed(digits)))
    return "".join(out)


def rowid_bounds(objd: int, rfno: int, first_block: int, last_block: int, bigfile: bool) -> dict[str, str]:
    """Binds of ``rowid_range_count_sql``: the rowid range of blocks ``first_block..last_block`` of one file,
    from row 0 of the first block to row 32767 of the last (``rowid_range_binds`` places a bigfile block)."""
    b = rowid_range_binds(objd, rfno, first_block, last_block, bigfile)
    return {"start_id": rowid_of(b["objd"], b["lo_fno"], b["lo_block"], 0),
            "end_id": rowid_of(b["objd"], b["hi_fno"], b["hi_block"], MAX_ROW_NUMBER)}


def rowid_range_count_sql(owner: str, table: str, partition: str | None = None, subpartition: bool = False, *,
                          serial_direct_read: str) -> str:
    """Count the rows of one rowid range the way Oracle documents rowid chunks (issue 35 §1): PL/SQL Packages
    and Types Reference 19c, "DBMS_PARALLEL_EXECUTE"
    (https://docs.oracle.com/en/database/oracle/oracle-database/19/arpls/DBMS_PARALLEL_EXECUTE.html): chunks
    made by CREATE_CHUNKS_BY_ROWID are processed by a statement hinted ``ROWID`` with
    ``WHERE rowid BETWEEN :start_id AND :end_id``; its plan is ``TABLE ACCESS BY ROWID RANGE`` (SQL Tuning
    Guide, "Table Access by Rowid", https://docs.oracle.com/database/122/TGSQL/optimizer-access-paths.htm),
    which the preflight proves from V$SQL_PLAN. NO_INDEX keeps an index fast full scan (whose entries carry
    rowids too) from answering the count. The session's ``_serial_direct_read`` decides direct path or buffer
    cache; each mode has its own text (a comment naming it), so a cursor of one mode is never shared with the
    other. Binds: ``rowid_bounds``."""
    serial_direct_read_sql(serial_direct_read)  # validates the mode
    return (
        "SELECT /*+ ROWID(t) NO_INDEX(t) NO_PARALLEL(t) */ "
        f"/* cutover-prep _serial_direct_read={serial_direct_read} */ "
        f"COUNT(*) FROM {qualified(owner, table)}"
        f"{_partition_clause(partition, subpartition)} t "
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
        f"FROM {qualified(table_owner, table)}{_partition_clause(partition, False)} t{predicate}"
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
        f"FROM {qualified(owner, table)}{_partition_clause(partition, subpartition)} t "
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
    return (f"SELECT /*+ NO_PARALLEL(t) */ {counts} FROM {qualified(owner, iot)}{_partition_clause(partition, False)} t"
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
    return f"SELECT MIN({k}), MAX({k}) FROM {qualified(owner, iot)}{_partition_clause(partition, False)} t"


# The server's version (PRODUCT_COMPONENT_VERSION: every user may read it). VERSION_FULL (18c+) is the
# release update ('19.24.0.0.0'), VERSION there only the release ('19.0.0.0.0'); before 18c there is
# no VERSION_FULL (ORA-00904) and VERSION is the full one.
VERSION_FULL_SQL = "SELECT version_full FROM product_component_version WHERE product LIKE 'Oracle%' AND ROWNUM = 1"
VERSION_SQL = "SELECT version FROM product_component_version WHERE product LIKE 'Oracle%' AND ROWNUM = 1"


# -- the census (issue 21) ---------------------------------------------------------------
# Every segment on the volume, of every type (undo, temporary, the recycle bin's BIN$ ones too),
# with what decides the key the plan gives it: a global (or composite, or IOT) partitioned index
# is planned whole, as one segment. DBA views: SELECT_CATALOG_ROLE (README's grants).
CENSUS_SEGMENTS_SQL = """
SELECT s.owner, s.segment_name, s.partition_name, s.segment_type, s.bytes, s.tablespace_name,
       i.index_type, pi.locality
FROM dba_segments s
LEFT JOIN dba_indexes i
       ON s.segment_type IN ('INDEX', 'INDEX PARTITION', 'INDEX SUBPARTITION')
      AND i.owner = s.owner AND i.index_name = s.segment_name
LEFT JOIN dba_part_indexes pi ON pi.owner = i.owner AND pi.index_name = i.index_name
ORDER BY s.owner, s.segment_name, s.partition_name
"""

# Every datafile, whatever its state (an offline one is on the volume too): the datafile pass's unit.
CENSUS_DATAFILES_SQL = """
SELECT f.file_id, f.tablespace_name, f.file_name, f.blocks, t.block_size, f.status, f.online_status
FROM dba_data_files f
JOIN dba_tablespaces t ON t.tablespace_name = f.tablespace_name
ORDER BY f.file_id
"""

# What the run's user may read: the ALL_ views list only objects it has a privilege on.
ACCESSIBLE_SQL = """
SELECT owner, table_name FROM all_tables
UNION ALL SELECT owner, index_name FROM all_indexes
UNION ALL SELECT owner, segment_name FROM all_lobs
UNION ALL SELECT owner, index_name FROM all_lobs
UNION ALL SELECT owner, cluster_name FROM all_clusters
"""

# The segment types discovery plans (SEGMENTS_SQL's list); any other type has no SQL read path.
PLANNED_SEGMENT_TYPES = frozenset({
    "TABLE", "TABLE PARTITION", "TABLE SUBPARTITION", "INDEX", "INDEX PARTITION", "INDEX SUBPARTITION",
    "LOBSEGMENT", "LOB PARTITION", "LOB SUBPARTITION"})
# Segments no SQL statement reads by a documented path, which only the datafile pass reads (issue 35 §3):
# a cluster (its tables' rows, by cluster key) and a nested table's storage table (ORA-22812: it cannot be
# named in a query), and a LOB index, which DBMS_LOB consults only as far as its LOB needs it, nothing
# confirming which blocks; of the index segment types, a cluster index and a LOB index (DBA_INDEXES.INDEX_TYPE
# 'CLUSTER', 'LOB': a partitioned LOB's index partitions are INDEX PARTITION segments, named by
# DBA_LOB_PARTITIONS.LOB_INDPART_NAME), which INDEX_FFS cannot read (no table column keys them).
DATAFILE_ONLY_SEGMENT_TYPES = frozenset({"CLUSTER", "NESTED TABLE", "LOBINDEX"})
DATAFILE_ONLY_INDEX_TYPES = frozenset({"CLUSTER", "LOB"})


# -- RDS additional storage volumes (cutover_prep.volumes, engines.oracle.volumes) ---------------
# Each datafile's path, which names the volume it is on. Run only when RDS lists additional volumes.
DATAFILE_PATHS_SQL = """
SELECT df.tablespace_name, df.relative_fno, df.file_id, df.file_name
FROM dba_data_files df
ORDER BY df.file_id
"""

# The segments of one tablespace that has a datafile on an additional volume (DBA_EXTENTS gives the
# segment's RELATIVE_FNO, which is unique only within its tablespace).
TABLESPACE_SEGMENTS_SQL = """
SELECT sg.owner, sg.segment_name, sg.partition_name
FROM dba_segments sg
WHERE sg.tablespace_name = :tablespace_name
"""
