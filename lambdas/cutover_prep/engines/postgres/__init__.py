"""PostgreSQL: everything the run knows about this engine, in one folder.

- ``engine``: discovery and reading for the warm-up (``PostgresEngine``);
- ``bench``: the benchmark driver (``PostgresBench``, see ``engines/bench.py``);
- ``sample_db``: the generated sample database and the embedded server of ``cutover-prep local``;
- here: the light hooks the registry (``engines.registry``) names. They import psycopg only
  when called, so reading the registry loads no database driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutover_prep.engines.locators import BaseLocator, PgLocator

if TYPE_CHECKING:
    from cutover_prep.engines.base import ConnectionSpec, Engine

# Relation kinds whose main fork is a heap of single blocks a probe can read on its own:
# tables (and partitions), materialized views, TOAST tables.
HEAP_RELKINDS = ("r", "m", "t")
# OIDs below this were assigned by initdb: the system catalogues, their TOAST tables and
# information_schema (PostgreSQL, src/include/access/transam.h, FirstNormalObjectId). The warm-up reads
# them (they are on the volume); the benchmark's samples leave them out: they are the user's data's
# performance it measures, and in the emulated demo the shared catalogues and the ``postgres``
# database live off the emulated volume (their reads cost nothing: a random point measured 3,560
# IOPS against a 3,000 IOPS ceiling).
FIRST_NORMAL_OBJECT_ID = 16384


def open_engine(spec: ConnectionSpec, *, call_timeout_seconds: float | None = None,
                create_extension: bool = False) -> Engine:
    from cutover_prep.engines.postgres.engine import PostgresEngine

    return PostgresEngine.connect(spec, call_timeout_seconds=call_timeout_seconds, create_extension=create_extension)


def open_bench(spec: ConnectionSpec, database: str | None, *, call_timeout_seconds: float | None = None,
               create_extension: bool = False) -> Any:
    from cutover_prep.engines.postgres.bench import PostgresBench

    return PostgresBench.from_spec(spec, database or spec.database, call_timeout_seconds=call_timeout_seconds,
                                   create_extension=create_extension)


def block_readable(locator: BaseLocator) -> bool:
    """A heap main fork of a user relation: its single blocks can be read by TID range."""
    loc = PgLocator.of(locator)
    return (loc.fork == "main" and loc.relkind in HEAP_RELKINDS
            and (loc.oid is None or int(loc.oid) >= FIRST_NORMAL_OBJECT_ID))


def server_version(spec: ConnectionSpec) -> str | None:
    """The server's version (``SHOW server_version``), or None when it cannot be asked; over the spec's TLS."""
    import psycopg

    from cutover_prep.engines.bounds import session_bounds
    from cutover_prep.engines.postgres.session import session_options
    from cutover_prep.engines.postgres.tls import postgres_params

    params, _ = postgres_params(spec)
    try:
        with psycopg.connect(host=spec.host, port=spec.port, dbname=spec.database, user=spec.user,
                             password=spec.password or None, connect_timeout=10,
                             options=session_options(session_bounds()), **params) as conn:
            return str(conn.execute("SHOW server_version").fetchone()[0]).split()[0]
    except psycopg.Error:
        return None
