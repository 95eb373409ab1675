"""A PostgreSQL session's bounds and errors (``engines.bounds``, issue 32 §3): the connection options that make
``statement_timeout``, ``lock_timeout`` and ``idle_in_transaction_session_timeout`` the session's defaults, the
sessions that hold a lock ours waited for (``LOCK_HOLDERS_SQL``, in words; never another session's query text),
and a psycopg error as the engine's error kinds (transient, lost session, permanent)."""

from __future__ import annotations

import psycopg

from cutover_prep.engines.base import ConnectionLost, PermanentReadError, TransientDatabaseError
from cutover_prep.engines.bounds import SessionBounds

# Who holds, or is queued for, a lock that blocks our AccessShareLock (what pg_prewarm, a scan and
# pg_relation_size take; only AccessExclusiveLock conflicts with it: PostgreSQL, "Table-Level Locks").
# Read after our statement was cancelled by lock_timeout, so our own pid no longer waits and
# pg_blocking_pids(pg_backend_pid()) is empty: the lock table says who holds it; for a request queued
# ahead of ours, pg_blocking_pids says whom it waits for. It reads pg_locks, pg_class and
# pg_stat_activity, never the locked relation, and runs under DIAGNOSIS_SECONDS. No query text: another
# session's statement may hold a secret.
LOCK_HOLDERS_SQL = """
SELECT format('%%I.%%I', n.nspname, c.relname) AS relation, l.mode, l.granted, l.pid, a.usename,
       a.application_name, host(a.client_addr), a.state, date_trunc('second', a.xact_start)::text,
       date_trunc('second', a.query_start)::text, pg_blocking_pids(l.pid)
FROM pg_locks l
JOIN pg_class c ON c.oid = l.relation
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'relation' AND l.mode = 'AccessExclusiveLock' AND l.pid <> pg_backend_pid()
  AND l.database IN (0, (SELECT oid FROM pg_database WHERE datname = current_database()))
  AND (%(oid)s::oid IS NULL OR l.relation = %(oid)s::oid)
ORDER BY 1, l.granted DESC, l.pid
LIMIT 10
"""


def session_options(bounds: SessionBounds) -> str:
    """libpq ``options``: the session's defaults, so a ``RESET`` returns to them. ``statement_timeout`` and
    ``lock_timeout`` (``engines.bounds``), and ``idle_in_transaction_session_timeout`` at the statement bound:
    a session of ours left in an open transaction (its Lambda frozen or killed) ends, and releases the locks
    it holds on the customer's relations. All three are settable by any role for its own session."""
    return (f"-c statement_timeout={bounds.statement_ms} -c lock_timeout={bounds.lock_ms} "
            f"-c idle_in_transaction_session_timeout={bounds.statement_ms}")


def holders_words(rows: list[tuple]) -> str:
    """``LOCK_HOLDERS_SQL``'s rows as words: per relation, each session holding or queued for the lock."""
    by_relation: dict[str, list[str]] = {}
    for relation, mode, granted, pid, user, app, client, state, xact_start, query_start, blocked_by in rows:
        who = ", ".join(part for part in (
            f"user {user}" if user else "", f"application {app!r}" if app else "",
            f"client {client}" if client else "", state or "",
            f"transaction started {xact_start}" if xact_start else "",
            f"statement started {query_start}" if query_start else "") if part)
        if granted:
            how = f"held in {mode} by pid {pid}"
        else:
            waits = f", waiting for pid {', '.join(str(p) for p in blocked_by)}" if blocked_by else ""
            how = f"pid {pid} queued for {mode} ahead of ours{waits}"
        by_relation.setdefault(relation, []).append(how + (f" ({who})" if who else ""))
    return "; ".join(f"{relation}: {', '.join(sessions)}" for relation, sessions in by_relation.items())


def map_error(exc: Exception, what: str, *, lost: bool = False) -> Exception:
    """``lost``: the session the call ran on is gone (``ConnectionLost``: the next call opens another)."""
    if lost:
        return ConnectionLost(f"{what}: the session was dropped: {type(exc).__name__}: {str(exc).strip()}")
    if isinstance(exc, psycopg.errors.QueryCanceled | psycopg.errors.LockNotAvailable):
        return TransientDatabaseError(f"{what}: {type(exc).__name__}: {str(exc).strip()}")
    if isinstance(exc, psycopg.OperationalError):
        return TransientDatabaseError(f"{what}: connection problem: {str(exc).strip()}")
    return PermanentReadError(f"{what}: {type(exc).__name__}: {str(exc).strip()}")
