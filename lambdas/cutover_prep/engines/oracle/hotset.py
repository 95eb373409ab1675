"""Oracle's hot set (``cutover-prep hotset``): each segment's object ranked by its logical plus physical reads.

``V$SEGMENT_STATISTICS`` ('logical reads', 'physical reads'; counted since the instance started), summed over
an object's partitions, with its bytes from ``DBA_SEGMENTS``. With ``--awr`` (only beside
``--diagnostics-pack-licensed``: AWR is part of the Oracle Diagnostics Pack, a separately licensed option) also
``DBA_HIST_SEG_STAT`` over the last days of AWR snapshots (``DBA_HIST_SEG_STAT_OBJ`` names the objects,
``DBA_HIST_SNAPSHOT`` dates them): AWR history is in the database, so it survives a snapshot restore and can be
read on the restored target as well as on the source. The objects only AWR names rank after those of
V$SEGMENT_STATISTICS. Names as discovery names segments (``OWNER.SEGMENT_NAME``). The system schemas
(``engines.oracle.sql.SYSTEM_SCHEMAS``) are left out.

Module top imports no driver (the registry imports this module).
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, Any

from cutover_prep.engines import keys
from cutover_prep.engines.hotset import SOURCE_AWR, SOURCE_STATISTICS, HotsetOptions, RelationStats, Source, Taken
from cutover_prep.engines.oracle.sql import SYSTEM_SCHEMAS

if TYPE_CHECKING:
    from cutover_prep.engines.base import ConnectionSpec

HOTSET_SEGMENT_STATISTICS_SQL = """
SELECT s.owner, s.object_name, MIN(s.object_type),
       SUM(CASE WHEN s.statistic_name = 'logical reads' THEN s.value ELSE 0 END),
       SUM(CASE WHEN s.statistic_name = 'physical reads' THEN s.value ELSE 0 END),
       MAX(g.bytes)
FROM v$segment_statistics s
LEFT JOIN (SELECT owner, segment_name, SUM(bytes) AS bytes FROM dba_segments GROUP BY owner, segment_name) g
       ON g.owner = s.owner AND g.segment_name = s.object_name
WHERE s.statistic_name IN ('logical reads', 'physical reads')
GROUP BY s.owner, s.object_name
"""

HOTSET_AWR_SQL = """
SELECT o.owner, o.object_name, MIN(o.object_type),
       SUM(h.logical_reads_delta), SUM(h.physical_reads_delta), MIN(sn.begin_interval_time)
FROM dba_hist_seg_stat h
JOIN dba_hist_seg_stat_obj o
  ON o.dbid = h.dbid AND o.ts# = h.ts# AND o.obj# = h.obj# AND o.dataobj# = h.dataobj#
JOIN dba_hist_snapshot sn
  ON sn.dbid = h.dbid AND sn.snap_id = h.snap_id AND sn.instance_number = h.instance_number
WHERE sn.begin_interval_time >= SYSTIMESTAMP - NUMTODSINTERVAL(:days, 'DAY')
GROUP BY o.owner, o.object_name
"""

HOTSET_INSTANCE_SQL = "SELECT version_full, TO_CHAR(startup_time, 'YYYY-MM-DD HH24:MI:SS') FROM v$instance"

FIGURE = "logical reads + physical reads"


def _selected(owner: str, patterns: tuple[str, ...]) -> bool:
    if owner.upper() in SYSTEM_SCHEMAS:
        return False
    return not patterns or any(fnmatch.fnmatchcase(owner, p) for p in patterns)


def _relations(rows: list[tuple], source: str, options: HotsetOptions) -> list[RelationStats]:
    out = []
    for owner, name, kind, logical, physical, extra in rows:
        if not _selected(str(owner), options.databases):
            continue
        figures = {"logical_reads": int(logical or 0), "physical_reads": int(physical or 0)}
        size = extra if source == SOURCE_STATISTICS else None
        out.append(RelationStats(schema=str(owner), name=str(name), kind=str(kind or "SEGMENT"), figures=figures,
                                 accesses=sum(figures.values()), bytes=int(size) if size is not None else None,
                                 segments=[keys.label((str(owner), str(name)))], source=source))
    return out


def collect(conn: Any, where: str, options: HotsetOptions) -> Taken:
    """The objects with reads, on an open python-oracledb connection (or a fake answering the same)."""
    with conn.cursor() as cur:
        version, started = cur.execute(HOTSET_INSTANCE_SQL).fetchone()
        relations = _relations(list(cur.execute(HOTSET_SEGMENT_STATISTICS_SQL).fetchall()), SOURCE_STATISTICS, options)
        sources = [Source(SOURCE_STATISTICS, ["V$SEGMENT_STATISTICS", "DBA_SEGMENTS"], FIGURE,
                          since=f"instance start {started}")]
        if options.awr:
            rows = list(cur.execute(HOTSET_AWR_SQL, days=options.awr_days).fetchall())
            first = min((str(r[5]) for r in rows if r[5] is not None), default=None)
            relations += _relations(rows, SOURCE_AWR, options)
            sources.append(Source(SOURCE_AWR, ["DBA_HIST_SEG_STAT", "DBA_HIST_SEG_STAT_OBJ", "DBA_HIST_SNAPSHOT"],
                                  f"{FIGURE} (AWR deltas)", since=f"AWR snapshots of the last {options.awr_days} "
                                  f"days{f', from {first}' if first else ''}"))
    conn.rollback()
    return Taken(engine="", server=f"Oracle {version} at {where}", sources=sources, relations=relations)


def run(spec: ConnectionSpec, options: HotsetOptions) -> Taken:
    from cutover_prep.engines.oracle.engine import OracleEngine

    engine = OracleEngine.connect(spec, call_timeout_seconds=options.call_timeout_seconds)
    try:
        taken = collect(engine.conn, f"{spec.host}:{spec.port}/{spec.database}", options)
    finally:
        engine.close()
    taken.engine = spec.engine
    return taken
