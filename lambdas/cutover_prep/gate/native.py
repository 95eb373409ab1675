"""The gate's native replication condition, read on the target (and, for PostgreSQL, the source's slot).

MySQL/MariaDB: ``SHOW REPLICA STATUS`` (MariaDB 10.5.1+, MySQL 8.0.22+; ``SHOW SLAVE STATUS`` before), on
the target: both threads running and ``Seconds_Behind_Source`` (MySQL) / ``Seconds_Behind_Master``
(MariaDB) at most the threshold; NULL means the SQL thread is not applying (MariaDB KB "SHOW REPLICA
STATUS": https://mariadb.com/kb/en/show-replica-status/; MySQL 8.0 manual 15.7.7.35). Privilege: REPLICA
MONITOR (MariaDB 10.5.9+) or REPLICATION CLIENT.
PostgreSQL logical replication: on the target, each subscription of its database enabled with its apply
worker running (``pg_stat_subscription.pid``) and every table synchronized (``pg_subscription_rel.srsubstate``
``r``); on the source, the subscription's slot behind the source's current WAL position by at most the
threshold in bytes (``pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)`` of ``pg_replication_slots``;
PostgreSQL 16 manual, 31 "Logical Replication" and 28.2 "pg_stat_subscription"). Sessions are read-only.
"""

from __future__ import annotations

from typing import Any

from cutover_prep.gate.model import Condition

SUBSCRIPTIONS_SQL = """
SELECT s.subname, s.subenabled, s.subslotname, w.pid, w.received_lsn::text, w.latest_end_lsn::text,
       (SELECT count(*) FROM pg_subscription_rel r WHERE r.srsubid = s.oid AND r.srsubstate <> 'r'),
       (SELECT count(*) FROM pg_subscription_rel r WHERE r.srsubid = s.oid)
  FROM pg_subscription s
  LEFT JOIN pg_stat_subscription w ON w.subid = s.oid AND w.relid IS NULL
 WHERE s.subdbid = (SELECT oid FROM pg_database WHERE datname = current_database())
 ORDER BY s.subname"""
SLOT_LAG_SQL = """
SELECT slot_name, active, pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint
  FROM pg_replication_slots WHERE slot_name = ANY(%s)"""


def _first(row: dict[str, Any], *names: str) -> Any:
    return next((row[n] for n in names if n in row), None)


def mysql_replica_condition(conn: Any, *, max_lag_seconds: float) -> Condition:
    """``conn``: a pymysql connection to the target (the replica)."""
    import pymysql

    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        try:
            cur.execute("SHOW REPLICA STATUS")
        except pymysql.err.ProgrammingError:  # before MariaDB 10.5.1 / MySQL 8.0.22
            cur.execute("SHOW SLAVE STATUS")
        rows = cur.fetchall()
    if not rows:
        return Condition(name="replication", state="closed",
                         summary="the target is not a replica: SHOW REPLICA STATUS returned no row")
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
    if behind is None:
        problems.append("seconds behind the source unknown (NULL: not applying)")
    elif float(behind) > max_lag_seconds:
        problems.append(f"{behind} s behind the source (threshold {max_lag_seconds:g} s)")
    if error:
        problems.append(f"last error: {error}")
    if problems:
        return Condition(name="replication", state="closed", evidence=evidence,
                         summary="replica: " + "; ".join(problems))
    return Condition(name="replication", state="open", evidence=evidence,
                     summary=f"replica running, {behind} s behind the source (threshold {max_lag_seconds:g} s)")


def postgres_subscription_condition(target: Any, source: Any | None, *, max_lag_bytes: int) -> Condition:
    """``target``: a psycopg connection to the subscriber's database; ``source``: one to the publisher (for
    the slot's lag in bytes), or None (then the lag is unknown)."""
    subs = target.execute(SUBSCRIPTIONS_SQL).fetchall()
    if not subs:
        return Condition(name="replication", state="closed",
                         summary="the target database has no subscription (pg_subscription is empty)")
    problems, rows = [], []
    for name, enabled, slot, pid, received, latest, unsynced, tables in subs:
        rows.append({"subscription": name, "enabled": enabled, "slot": slot, "worker_pid": pid,
                     "received_lsn": received, "latest_end_lsn": latest, "tables": tables,
                     "tables_not_ready": unsynced})
        if not enabled:
            problems.append(f"subscription {name} is disabled")
        elif pid is None:
            problems.append(f"subscription {name} has no apply worker running")
        if unsynced:
            problems.append(f"subscription {name}: {unsynced} of {tables} table(s) not synchronized yet")
    evidence: dict[str, Any] = {"subscriptions": rows, "max_lag_bytes": max_lag_bytes}
    if source is None:
        if problems:
            return Condition(name="replication", state="closed", evidence=evidence, summary="; ".join(problems))
        return Condition(name="replication", state="unknown", evidence=evidence,
                         summary="the lag in bytes needs the source: give the publisher's connection (--source-dsn)")
    slots = {r["slot"] for r in rows if r["slot"]}
    lag = {n: (active, int(b) if b is not None else None)
           for n, active, b in source.execute(SLOT_LAG_SQL, (sorted(slots),)).fetchall()}
    evidence["slots"] = {n: {"active": a, "lag_bytes": b} for n, (a, b) in lag.items()}
    for slot in sorted(slots):
        if slot not in lag:
            problems.append(f"slot {slot} is not on the source")
        elif lag[slot][1] is None or lag[slot][1] > max_lag_bytes:
            problems.append(f"slot {slot} is {lag[slot][1]} bytes behind the source (threshold {max_lag_bytes})")
    if problems:
        return Condition(name="replication", state="closed", evidence=evidence, summary="; ".join(problems))
    worst = max((b for _, b in lag.values() if b is not None), default=0)
    return Condition(name="replication", state="open", evidence=evidence,
                     summary=f"{len(rows)} subscription(s) streaming, every table synchronized, at most {worst} "
                             f"bytes behind the source (threshold {max_lag_bytes})")
