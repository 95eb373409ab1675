"""The application's reads on Oracle (the warm-up's yield signal, ``engines.activity``).

``V$SYSSTAT``'s 'physical read total IO requests' and ``V$SYSTEM_EVENT``'s single- and multi-block read
waits ('db file sequential read', 'db file scattered read', 'db file parallel read'), less the warm-up's own
sessions' in ``V$SESSTAT`` / ``V$SESSION_EVENT`` (``V$SESSION.PROGRAM`` or ``MODULE`` 'cutover-prep').
Wait times are in microseconds (``TIME_WAITED_MICRO``); ``TIMED_STATISTICS`` off leaves them 0: ``read_ms``
is then None. Tested with fakes only (no Oracle server here).
"""

from __future__ import annotations

from typing import Any

from cutover_prep.engines.activity import Activity

ACTIVITY_SQL = """
SELECT (SELECT value FROM v$sysstat WHERE name = 'physical read total IO requests')
     - (SELECT nvl(sum(s.value), 0) FROM v$sesstat s JOIN v$statname n ON n.statistic# = s.statistic#
        WHERE n.name = 'physical read total IO requests'
          AND s.sid IN (SELECT sid FROM v$session WHERE program = 'cutover-prep' OR module = 'cutover-prep')),
       (SELECT nvl(sum(time_waited_micro), 0) FROM v$system_event
        WHERE event IN ('db file sequential read', 'db file scattered read', 'db file parallel read'))
     - (SELECT nvl(sum(time_waited_micro), 0) FROM v$session_event
        WHERE event IN ('db file sequential read', 'db file scattered read', 'db file parallel read')
          AND sid IN (SELECT sid FROM v$session WHERE program = 'cutover-prep' OR module = 'cutover-prep')),
       (SELECT value FROM v$parameter WHERE name = 'timed_statistics'),
       (SELECT value FROM v$parameter WHERE name = 'db_block_size')
FROM dual"""


def read(engine: Any) -> Activity:
    """The counters, on ``engine``'s session (its ``conn``)."""
    with engine.conn.cursor() as cur:
        cur.execute(ACTIVITY_SQL)
        reads, micro, timed, block_size = cur.fetchone()
    timing = str(timed or "").upper() == "TRUE"
    return Activity(reads=max(0, int(reads or 0)), read_ms=float(micro or 0) / 1000 if timing else None,
                    block_size=int(block_size or 8192), own_included=False, source="V$SYSSTAT")


STARTED_SQL = "SELECT to_char(startup_time, 'YYYY-MM-DD\"T\"HH24:MI:SS') FROM v$instance"


def started(engine: Any) -> str:
    """When the instance last started (``V$INSTANCE.STARTUP_TIME``, the database server's own clock, no zone)."""
    with engine.conn.cursor() as cur:
        cur.execute(STARTED_SQL)
        return str(cur.fetchone()[0])
