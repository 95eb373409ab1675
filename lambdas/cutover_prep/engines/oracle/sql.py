"""SQL of the Oracle engine's dictionary side, built without a database so it can be unit-tested: identifiers,
the read-only session, discovery (owners, pages, segments, extents), the census, the version and the RDS storage
volumes. The warm-up's read statements and the counters that confirm them are in ``engines.oracle.read_sql``; the
rowid text and binds of rowid chunks in ``engines.oracle.rowids``.

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


def partition_clause(partition: str | None, sub: bool) -> str:
    if not partition:
        return ""
    return f" {'SUBPARTITION' if sub else 'PARTITION'} ({quote_identifier(partition)})"

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


# -- RDS additional storage volumes (cutover_prep.engines.volumes, engines.oracle.volumes) ---------------
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
