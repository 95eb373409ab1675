"""Native replication on a MySQL/MariaDB target, for the cutover gate (``gate``, issue 36 §2): read-only.

``SHOW REPLICA STATUS`` (MariaDB 10.5.1+, MySQL 8.0.22+; ``SHOW SLAVE STATUS`` before), on the target: both
threads running and ``Seconds_Behind_Source`` (MySQL) / ``Seconds_Behind_Master`` (MariaDB) at most the
threshold; NULL means the SQL thread is not applying (MariaDB KB "SHOW REPLICA STATUS":
https://mariadb.com/kb/en/show-replica-status/; MySQL 8.0 manual 15.7.7.35). Privilege: REPLICA MONITOR
(MariaDB 10.5.9+) or REPLICATION CLIENT. Returns ``replication.Found`` (the gate makes it a condition).

A 0 is not proof: the manual says "When no event is currently being processed on the slave, this value is 0"
(MySQL 5.6 manual, SHOW SLAVE STATUS), and right after ``START SLAVE SQL_THREAD`` the SQL thread reads 0 before it
takes its first event from the relay log. So a 0 counts only when the replica has applied all it received (the
executed source position is the received one); else the gate stays closed, naming both positions.
"""

from __future__ import annotations

from typing import Any

from cutover_prep.engines.base import ConnectionSpec
from cutover_prep.engines.replication import Found


def _first(row: dict[str, Any], *names: str) -> Any:
    return next((row[n] for n in names if n in row), None)


def replica_status(conn: Any, *, max_lag_seconds: float) -> Found:
    """``conn``: a pymysql connection to the target (the replica)."""
    import pymysql  # the registry imports this module: no driver at import time

    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        try:
            cur.execute("SHOW REPLICA STATUS")
        except pymysql.err.ProgrammingError:  # before MariaDB 10.5.1 / MySQL 8.0.22
            cur.execute("SHOW SLAVE STATUS")
        rows = cur.fetchall()
    if not rows:
        return Found("closed", "the target is not a replica: SHOW REPLICA STATUS returned no row", {})
    row = rows[0]
    io = _first(row, "Replica_IO_Running", "Slave_IO_Running")
    sql = _first(row, "Replica_SQL_Running", "Slave_SQL_Running")
    behind = _first(row, "Seconds_Behind_Source", "Seconds_Behind_Master")
    error = _first(row, "Last_IO_Error") or _first(row, "Last_SQL_Error") or ""
    evidence = {"io_running": io, "sql_running": sql, "seconds_behind": behind, "last_error": error,
                "source": f"{_first(row, 'Source_Host', 'Master_Host')}:{_first(row, 'Source_Port', 'Master_Port')}",
                "max_lag_seconds": max_lag_seconds}
    problems = []
    if io != "Yes":
        problems.append(f"IO thread {io}")
    if sql != "Yes":
        problems.append(f"SQL thread {sql}")
    received = (_first(row, "Source_Log_File", "Master_Log_File"), _first(row, "Read_Source_Log_Pos",
                                                                         "Read_Master_Log_Pos"))
    applied = (_first(row, "Relay_Source_Log_File", "Relay_Master_Log_File"), _first(row, "Exec_Source_Log_Pos",
                                                                                    "Exec_Master_Log_Pos"))
    evidence |= {"received": f"{received[0]}:{received[1]}", "applied": f"{applied[0]}:{applied[1]}"}
    if behind is None:
        problems.append("seconds behind the source unknown (NULL: not applying)")
    elif float(behind) == 0 and received != applied:
        problems.append(f"received up to {received[0]}:{received[1]}, applied up to {applied[0]}:{applied[1]} "
                        "(0 s behind is what the SQL thread reads between events: not proof)")
    elif float(behind) > max_lag_seconds:
        problems.append(f"{behind} s behind the source (threshold {max_lag_seconds:g} s)")
    if error:
        problems.append(f"last error: {error}")
    if problems:
        return Found("closed", "replica: " + "; ".join(problems), evidence)
    return Found("open", f"replica running, {behind} s behind the source (threshold {max_lag_seconds:g} s)", evidence)


def check(replica: ConnectionSpec, source: ConnectionSpec | None, *, max_lag_seconds: float,
          max_lag_bytes: int) -> Found:
    """The gate's hook (``EngineFamily.replication``): the target's own view; ``source`` is not needed."""
    from cutover_prep.engines.mysql.engine import MySQLEngine

    engine = MySQLEngine.connect(replica)  # the engine's read-only, bounded session
    try:
        return replica_status(engine.conn, max_lag_seconds=max_lag_seconds)
    finally:
        engine.close()
