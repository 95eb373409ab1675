"""MySQL and MariaDB: everything the run knows about these engines, in one folder.

- ``engine``: reading for the warm-up (``MySQLEngine``); ``discovery``: what is read;
- ``sql``: the SQL text of both, built without a database, MySQL 8 vs MariaDB (unit-tested);
- ``bench``: the benchmark driver (``MySQLBench``, see ``engines/bench.py``);
- ``sample_db``: a generated sample catalogue for tests and bench scripts;
- here: the light hooks the registry (``engines.registry``) names. They import PyMySQL only
  when called, so reading the registry loads no database driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cutover_prep.engines.locators import BaseLocator, MysqlLocator

if TYPE_CHECKING:
    from cutover_prep.engines.base import ConnectionSpec, Engine


def open_engine(spec: ConnectionSpec, *, call_timeout_seconds: float | None = None,
                create_extension: bool = False) -> Engine:
    """``create_extension`` is PostgreSQL's; MySQL has nothing to install."""
    from cutover_prep.engines.mysql.engine import MySQLEngine

    return MySQLEngine.connect(spec, call_timeout_seconds=call_timeout_seconds)


def open_bench(spec: ConnectionSpec, database: str | None, *, call_timeout_seconds: float | None = None,
               create_extension: bool = False) -> Any:
    from cutover_prep.engines.mysql.bench import MySQLBench

    return MySQLBench.from_spec(spec, database or spec.database, call_timeout_seconds=call_timeout_seconds)


def block_readable(locator: BaseLocator) -> bool:
    """A clustered index with an integer single-column key: one row is found by one index dive."""
    loc = MysqlLocator.of(locator)
    return loc.read == "pk_walk" and bool(loc.probe)


def server_version(spec: ConnectionSpec) -> str | None:
    """The server's version (``SELECT VERSION()``), or None when it cannot be asked."""
    import pymysql

    from cutover_prep.engines.bounds import session_bounds
    from cutover_prep.engines.mysql.sql import lock_timeout_sql
    from cutover_prep.engines.mysql.tls import mysql_params

    params, _ = mysql_params(spec)
    bounds = session_bounds()  # the server's flavour is not known yet: its lock bounds (both have them), the socket's
    try:
        conn = pymysql.connect(host=spec.host, port=spec.port, user=spec.user, password=spec.password,
                               database=spec.database or None, connect_timeout=10,
                               init_command=lock_timeout_sql(bounds.lock_whole_seconds),
                               read_timeout=bounds.statement_seconds, **params)
    except pymysql.err.MySQLError:
        return None
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION()")
            return str(cur.fetchone()[0]).replace("5.5.5-", "", 1).split("-")[0]
    finally:
        conn.close()
