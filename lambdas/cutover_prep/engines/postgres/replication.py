"""Native (logical) replication on a PostgreSQL target, for the cutover gate (``gate``, issue 36 §2): read-only.

On the target, each subscription of its database enabled with its apply worker running
(``pg_stat_subscription.pid``) and every table synchronized (``pg_subscription_rel.srsubstate`` ``r``); on the
source, the subscription's slot behind the source's current WAL position by at most the threshold in bytes
(``pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)`` of ``pg_replication_slots``; PostgreSQL manual,
31 "Logical Replication" and 28.2 "pg_stat_subscription"). ``pg_subscription.subconninfo`` (which may hold a
password) is never read. Returns ``replication.Found`` (the gate makes it a condition).

A lag of 0 is the only one that proves every committed transaction is on the target: the manual's
``confirmed_flush_lsn`` is where the transactions committed before it are confirmed, and the subscriber confirms
the position it received while it applies nothing, so the slot moves into a transaction whose commit it has not
applied yet. Seen here: 20,000 rows inserted while the subscription was disabled (3.6 MB of WAL), enabled again,
the slot 925,120 bytes behind and the target without one of the rows (docs/gate.md).
"""

from __future__ import annotations

from typing import Any

from cutover_prep.engines.base import ConnectionSpec
from cutover_prep.engines.replication import Found

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


def subscription_status(target: Any, source: Any | None, *, max_lag_bytes: int) -> Found:
    """``target``: a psycopg connection to the subscriber's database; ``source``: one to the publisher (for
    the slot's lag in bytes), or None (then the lag is unknown)."""
    subs = target.execute(SUBSCRIPTIONS_SQL).fetchall()
    if not subs:
        return Found("closed", "the target database has no subscription (pg_subscription is empty)", {})
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
            return Found("closed", "; ".join(problems), evidence)
        return Found("unknown", "the lag in bytes needs the source: give the publisher's connection (--source-dsn)",
                     evidence)
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
        return Found("closed", "; ".join(problems), evidence)
    worst = max((b for _, b in lag.values() if b is not None), default=0)
    behind = ("every transaction the source committed is applied (0 bytes behind)" if worst <= 0 else
              f"at most {worst} bytes behind the source (threshold {max_lag_bytes}): transactions committed in "
              "those bytes may not be applied yet")
    return Found("open", f"{len(rows)} subscription(s) streaming, every table synchronized, {behind}", evidence)


def check(replica: ConnectionSpec, source: ConnectionSpec | None, *, max_lag_seconds: float,
          max_lag_bytes: int) -> Found:
    """The gate's hook (``EngineFamily.replication``): the subscriber's view, and the publisher's slot."""
    from cutover_prep.engines.postgres.engine import PostgresEngine

    target = PostgresEngine.connect(replica)  # the engine's read-only, bounded sessions
    publisher = PostgresEngine.connect(source) if source is not None else None
    try:
        return subscription_status(target.connection(replica.database),
                                   publisher.connection(source.database) if publisher and source else None,
                                   max_lag_bytes=max_lag_bytes)
    finally:
        target.close()
        if publisher is not None:
            publisher.close()
