"""A generated sample database: the default target of the local run and of the tests.

``embedded_postgres`` starts a throwaway server (pgserver) holding it: ``cutover-prep
local`` without ``--dsn``. Neither is part of the Lambda's work; both live here because
they are PostgreSQL's.

Several schemas, a range-partitioned table with a partitioned index, a TOAST-heavy
table (values stored out of line), a materialized view, a sequence, and objects with
hostile names (quotes, mixed case, ``$``, ``#``, spaces, unicode) — everything the
PostgreSQL engine must cover. Only ever written into a database this module creates.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

from cutover_prep.engines.base import ConnectionSpec
from cutover_prep.engines.registry import POSTGRES

DEMO_DATABASE = "cutover_demo"
DEMO_TABLESPACE = "cutover_demo_restored"  # on the emulated restored volume
HOSTILE_SCHEMA = 'Mixed "Case" $chema'
HOSTILE_TABLE = 'Weird "Name" #1 naïve'


def pgserver_module() -> Any:
    """``import pgserver``, without platformdirs' ``XDG_RUNTIME_DIR is not set`` warning: pgserver asks for its
    lock directory when it is imported, and outside a login session (a container, CI) the variable is unset and
    platformdirs warns before falling back to ``/tmp/runtime-<uid>``, which serves a throwaway server well.
    Only that warning, only around the import (it is the one place pgserver asks)."""
    with warnings.catch_warnings():
        try:
            from platformdirs import RuntimeDirWarning
        except ImportError:  # platformdirs before 4.5 has no category of its own: its message
            warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
        else:
            warnings.simplefilter("ignore", RuntimeDirWarning)
        import pgserver
    return pgserver


def create_sample(conninfo: str, *, size_mb: int = 300) -> dict[str, int]:
    """Fill the (empty) database at ``conninfo`` with about ``size_mb`` of data; return row counts."""
    order_rows = max(2_000, size_mb * 1024 * 1024 * 55 // 100 // 140)
    doc_rows = max(200, size_mb * 1024 * 1024 * 30 // 100 // 4200)
    emp_rows = max(1_000, size_mb * 1024 * 1024 * 5 // 100 // 120)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for schema in ("sales", "docs", "hr"):
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        conn.execute("""
            CREATE TABLE sales.orders (
                order_id bigint NOT NULL, customer_id int NOT NULL, order_date date NOT NULL,
                amount numeric(12,2), note text, PRIMARY KEY (order_id, order_date)
            ) PARTITION BY RANGE (order_date)""")
        for year in (2023, 2024, 2025, 2026):
            conn.execute(sql.SQL(
                "CREATE TABLE sales.{} PARTITION OF sales.orders FOR VALUES FROM ({}) TO ({})"
            ).format(sql.Identifier(f"orders_{year}"), sql.Literal(f"{year}-01-01"),
                     sql.Literal(f"{year + 1}-01-01")))
        conn.execute("""
            INSERT INTO sales.orders
            SELECT g, (g::bigint * 7919) %% 50000, DATE '2023-01-01' + (g %% 1460),
                   (g %% 100000) / 100.0, md5(g::text) || md5((g + 1)::text)
            FROM generate_series(1, %s) AS g""", (order_rows,))
        conn.execute("CREATE INDEX orders_customer_idx ON sales.orders (customer_id)")
        conn.execute("""
            CREATE TABLE docs.documents (doc_id int PRIMARY KEY, title text NOT NULL, body text NOT NULL)""")
        conn.execute("ALTER TABLE docs.documents ALTER COLUMN body SET STORAGE EXTERNAL")
        conn.execute("""
            INSERT INTO docs.documents
            SELECT g, 'document ' || g,
                   (SELECT string_agg(md5(g::text || ':' || i), '') FROM generate_series(1, 128) AS i)
            FROM generate_series(1, %s) AS g""", (doc_rows,))
        conn.execute("CREATE SEQUENCE hr.employee_seq")
        conn.execute("""
            CREATE TABLE hr.employees (
                employee_id int PRIMARY KEY DEFAULT nextval('hr.employee_seq'), dept int NOT NULL,
                name text NOT NULL, salary numeric(10,2) NOT NULL)""")
        conn.execute("""
            INSERT INTO hr.employees (dept, name, salary)
            SELECT g %% 40, 'employee ' || g, 30000 + (g %% 700) * 100 FROM generate_series(1, %s) AS g""",
                     (emp_rows,))
        conn.execute("CREATE INDEX employees_dept_idx ON hr.employees (dept)")
        conn.execute("""
            CREATE MATERIALIZED VIEW hr.salary_by_dept AS
            SELECT dept, count(*) AS people, sum(salary) AS total FROM hr.employees GROUP BY dept""")
        schema, table = sql.Identifier(HOSTILE_SCHEMA), sql.Identifier(HOSTILE_SCHEMA, HOSTILE_TABLE)
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(schema))
        conn.execute(sql.SQL('CREATE TABLE {} ("Id" int PRIMARY KEY, "da$h#" text)').format(table))
        conn.execute(sql.SQL("INSERT INTO {} SELECT g, repeat('x', 200) FROM generate_series(1, 2000) g")
                     .format(table))
        conn.execute("VACUUM ANALYZE")  # visibility maps and free space maps, so every fork exists
    return {"sales.orders": order_rows, "docs.documents": doc_rows, "hr.employees": emp_rows}


def server_socket(server: object) -> str:
    """The unix socket directory of a pgserver instance."""
    return urlsplit(server.get_uri()).query.removeprefix("host=")  # type: ignore[attr-defined]


@contextlib.contextmanager
def embedded_postgres(size_mb: int, volume: Any = None,
                      restored: Any = None) -> Iterator[tuple[ConnectionSpec, str | None]]:
    """Start pgserver in a temporary directory with a generated sample database.

    With ``volume`` (a mounted ``local.volume.EmulatedVolume``) the sample's relations are built in
    a tablespace on it (the catalogue stays on the ordinary disk); then the server stops,
    ``volume`` is unmounted, ``restored`` (the same directory with the profile to emulate) is
    "restored" (every chunk cold) and mounted, and the server starts with empty shared buffers.
    Yields the connection and the database's directory relative to the volume's root (None
    without a volume).
    """
    pgserver = pgserver_module()

    superuser = bootstrap_db = "postgres"  # pgserver's superuser and first database
    with tempfile.TemporaryDirectory(prefix="cutover-prep-pg-") as work:
        pgdata = Path(work) / "pgdata"
        pgdata.mkdir()
        server = pgserver.get_server(pgdata, cleanup_mode="stop")
        try:
            admin = f"host={server_socket(server)} dbname={bootstrap_db} user={superuser}"
            tablespace = ""
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DEMO_DATABASE)))
                if volume is not None:
                    location = _owned_dir(volume.mountpoint / "pg", owner_of=pgdata)
                    conn.execute(sql.SQL("CREATE TABLESPACE {} LOCATION {}").format(
                        sql.Identifier(DEMO_TABLESPACE), sql.Literal(str(location))))
                    tablespace = f" options='-c default_tablespace={DEMO_TABLESPACE}'"
            # the sample's tables, indexes, TOAST and views on the volume; the catalogue stays on the
            # ordinary disk: the emulator loads 512 KiB per file, so each of its ~700 tiny files would
            # cost a whole snapshot chunk (on a real volume they share chunks)
            create_sample(f"host={server_socket(server)} dbname={DEMO_DATABASE} user={superuser}{tablespace}",
                          size_mb=size_mb)
            database_dir = None
            if volume is not None:
                with psycopg.connect(admin, autocommit=True) as conn:
                    conn.execute("CHECKPOINT")
                    database_dir = _database_dir(conn, location)
                server.cleanup()  # stopped: shared buffers empty, as on an instance just created
                volume.unmount()
                restored = restored or volume
                restored.restore()  # every chunk cold: a volume just created from the snapshot
                restored.mount()
                server = pgserver.get_server(pgdata, cleanup_mode="stop")
            yield ConnectionSpec(engine=POSTGRES.name, host=server_socket(server), port=POSTGRES.default_port,
                                 database=DEMO_DATABASE, user=superuser, password=""), database_dir
        finally:
            server.cleanup()
            _stop_restarted(pgdata, server.system_user)


class ServerControl:
    """``pg_ctl`` on an embedded server (``embedded_postgres``), as the OS user it runs as: the restart and
    the outage the tests cause under a run (issue 32 §4). ``spec``: its superuser's connection (a socket)."""

    def __init__(self, spec: ConnectionSpec) -> None:
        with psycopg.connect(host=spec.host, port=spec.port, dbname=spec.database, user=spec.user,
                             autocommit=True) as conn:
            self.pgdata = Path(conn.execute("SHOW data_directory").fetchone()[0])
        self.socket_dir = spec.host
        self.user = self.pgdata.owner() if os.geteuid() == 0 else None  # pgserver runs it as its own user as root

    def _pg_ctl(self, *args: str) -> None:
        pgserver = pgserver_module()
        pgserver.pg_ctl(["-w", "-t", "120", *args], pgdata=self.pgdata, user=self.user)

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every session ends, the server starts again at once."""
        self._pg_ctl("-m", "fast", "-l", str(self.pgdata / "log"), "restart")

    def stop(self) -> None:
        self._pg_ctl("-m", "fast", "stop")

    def start(self) -> None:
        """Started as pgserver starts it: no TCP, the same socket directory."""
        self._pg_ctl("-o", '-h ""', "-o", f"-k {self.socket_dir}", "-l", str(self.pgdata / "log"), "start")


def _stop_restarted(pgdata: Path, user: str | None) -> None:
    """A server restarted by ``ServerControl`` is not the process pgserver's handle knows, which then stops
    nothing: stop it here, before its directory goes."""
    if not (pgdata / "postmaster.pid").exists():
        return
    import subprocess

    pgserver = pgserver_module()
    with contextlib.suppress(subprocess.CalledProcessError):
        pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)


def _owned_dir(path: Path, *, owner_of: Path) -> Path:
    """A directory owned by the OS user that owns ``owner_of`` (as root, pgserver runs postgres as its own user)."""
    path.mkdir(parents=True, exist_ok=True)
    st = owner_of.stat()
    os.chown(path, st.st_uid, st.st_gid)
    path.chmod(0o700)
    return path


def _database_dir(conn: psycopg.Connection, location: Path) -> str:
    """The demo database's directory relative to the volume's root: ``pg/PG_<version>_<catalog>/<oid>``."""
    oid = conn.execute("SELECT oid FROM pg_database WHERE datname = %s", (DEMO_DATABASE,)).fetchone()[0]  # type: ignore[index]
    version_dir = next(p.name for p in location.iterdir() if p.name.startswith("PG_"))
    return f"{location.name}/{version_dir}/{oid}"
