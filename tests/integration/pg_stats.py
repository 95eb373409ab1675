"""Reading PostgreSQL's cumulative statistics without waiting a guessed time.

A backend reports what it read and wrote at a transaction end (at most once a second) or when it exits, and the
exit report is made before the backend leaves pg_stat_activity (PostgreSQL 15+: ``pgstat_shutdown_hook`` runs
before ``pgstat_beshutdown_hook``; the statistics documentation, "The Cumulative Statistics System"). So once a
closed session's pid is gone from pg_stat_activity, its figures are in the counters, however busy the machine."""

from __future__ import annotations

import time
from collections.abc import Iterable

import psycopg

from tests.conftest import conninfo

HUNG_SERVER_S = 120  # the sessions waited for were closed by their clients: only a hung server takes this long


def wait_reported(spec, pids: Iterable[int] = (), *, whole_database: bool = False) -> None:
    """Return once the sessions ``pids`` (closed by their clients) have exited, and with ``whole_database`` every
    other client session on ``spec.database`` too: their statistics are then counted."""
    pids = list(pids)
    with psycopg.connect(conninfo(spec), autocommit=True) as conn:
        deadline = time.monotonic() + HUNG_SERVER_S
        while True:
            left = conn.execute("SELECT pid, application_name, state FROM pg_stat_activity "
                                "WHERE (pid = ANY(%s) OR (%s AND datname = current_database())) "
                                "AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
                                (pids, whole_database)).fetchall()
            if not left:
                return
            assert time.monotonic() < deadline, f"sessions still on the server after their close: {left}"
            conn.execute("SELECT pg_sleep(0.05)")
