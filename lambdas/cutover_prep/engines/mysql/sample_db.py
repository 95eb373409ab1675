"""A generated MySQL / MariaDB catalogue for tests and bench scripts (never used by a run).

``create_sample(conn, database, rows=...)`` creates ``database`` (it must not exist) and fills
it with the cases the warm-up must handle: hostile identifiers (quotes, backticks, spaces,
``;``, unicode), composite, non-integer and sparse primary keys, off-page BLOB/TEXT, a
partitioned table, a table without a primary key, MyISAM (and Aria on MariaDB), secondary
indexes including a prefix index. Values are always parameters.

``PrivateServer`` starts a MariaDB (or MySQL) instance of its own from the machine's binaries
(``mariadb-install-db`` into a temporary directory, ``mariadbd`` on a free port with its own
socket), never touching the machine's server; ``restart()`` gives a cold buffer pool (no dump
or load of the pool), so what the server reads can be counted from nothing.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from cutover_prep.engines.mysql.sql import qualified, quote_ident

HOSTILE_TABLE = "we`ird; \"name' ünï 表"
HOSTILE_COLUMN = "col `x`; drop"
HOSTILE_INDEX = "idx `a`; b"
BATCH = 500


def _insert(cur: Any, database: str, table: str, columns: list[str], rows: list[tuple]) -> None:
    cols = ", ".join(quote_ident(c) for c in columns)
    marks = ", ".join(["%s"] * len(columns))
    statement = f"INSERT INTO {qualified(database, table)} ({cols}) VALUES ({marks})"  # noqa: S608 - quoted names
    for i in range(0, len(rows), BATCH):
        cur.executemany(statement, rows[i:i + BATCH])


def tables(database: str, aria: bool) -> list[tuple[str, str]]:
    """(table, CREATE TABLE statement) of the sample catalogue."""
    t = lambda name: qualified(database, name)  # noqa: E731
    out = [
        ("int_pk", f"CREATE TABLE {t('int_pk')} (id BIGINT PRIMARY KEY, v INT NOT NULL, pad VARCHAR(64), "
                   "KEY v_idx (v)) ENGINE=InnoDB"),
        ("sparse_pk", f"CREATE TABLE {t('sparse_pk')} (id BIGINT PRIMARY KEY, pad CHAR(100)) ENGINE=InnoDB"),
        ("composite_pk", f"CREATE TABLE {t('composite_pk')} (a INT NOT NULL, b VARCHAR(40) NOT NULL, "
                         "c DATETIME(6) NOT NULL, v INT, PRIMARY KEY (a, b, c), KEY bv (b, v)) ENGINE=InnoDB"),
        ("string_pk", f"CREATE TABLE {t('string_pk')} (k VARCHAR(64) COLLATE utf8mb4_unicode_ci PRIMARY KEY, "
                      "doc TEXT, KEY doc_prefix (doc(10))) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"),
        ("blobs", f"CREATE TABLE {t('blobs')} (id INT PRIMARY KEY, body LONGBLOB, note MEDIUMTEXT) "
                  "ENGINE=InnoDB ROW_FORMAT=DYNAMIC"),
        ("parted", f"CREATE TABLE {t('parted')} (id INT NOT NULL, grp INT NOT NULL, pad VARCHAR(100), "
                   "PRIMARY KEY (id, grp), KEY grp_idx (grp)) ENGINE=InnoDB "
                   "PARTITION BY RANGE (grp) (PARTITION p0 VALUES LESS THAN (3), PARTITION `p 1;` VALUES "
                   "LESS THAN (6), PARTITION pmax VALUES LESS THAN MAXVALUE)"),
        ("no_pk", f"CREATE TABLE {t('no_pk')} (a INT, b VARCHAR(50), KEY a_idx (a)) ENGINE=InnoDB"),
        ("my_isam", f"CREATE TABLE {t('my_isam')} (id INT PRIMARY KEY, s VARCHAR(80), KEY s_idx (s)) ENGINE=MyISAM"),
        (HOSTILE_TABLE, f"CREATE TABLE {t(HOSTILE_TABLE)} ({quote_ident(HOSTILE_COLUMN)} INT NOT NULL, "
                        f"`ü` VARCHAR(20), PRIMARY KEY ({quote_ident(HOSTILE_COLUMN)}), "
                        f"KEY {quote_ident(HOSTILE_INDEX)} (`ü`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"),
    ]
    if aria:
        out.append(("aria_t", f"CREATE TABLE {t('aria_t')} (id INT PRIMARY KEY, s VARCHAR(80)) ENGINE=Aria"))
    return out


def create_sample(conn: Any, database: str, *, rows: int = 2000, blob_kib: int = 40, seed: int = 7) -> dict[str, int]:
    """Create and fill ``database``; return the row count of each table."""
    rnd = random.Random(seed)
    with conn.cursor() as cur:
        cur.execute("SELECT VERSION()")
        aria = "mariadb" in str(cur.fetchone()[0]).lower()
        cur.execute(f"CREATE DATABASE {quote_ident(database)} CHARACTER SET utf8mb4")
        for _, statement in tables(database, aria):
            cur.execute(statement)
        counts: dict[str, int] = {}

        def fill(table: str, columns: list[str], data: list[tuple]) -> None:
            _insert(cur, database, table, columns, data)
            counts[table] = len(data)

        fill("int_pk", ["id", "v", "pad"], [(i, rnd.randrange(1000), f"p{i:08d}") for i in range(1, rows + 1)])
        fill("sparse_pk", ["id", "pad"], [(i * i * 7919 + (1 << 40 if i % 3 else 0), "s" * 50)
                                          for i in range(1, rows + 1)])
        fill("composite_pk", ["a", "b", "c", "v"],
             [(i % 7, f"k{i % 13:02d}-{i}", f"2024-01-01 00:00:{i % 60:02d}.{i:06d}", i) for i in range(rows)])
        fill("string_pk", ["k", "doc"], [(f"{rnd.choice('aAbBéÉzZ')}{i:06d}-ü", "t" * rnd.randrange(1, 3000))
                                         for i in range(rows)])
        fill("blobs", ["id", "body", "note"], [(i, rnd.randbytes(blob_kib * 1024), "n" * 20000 if i % 2 else None)
                                               for i in range(max(4, rows // 40))])
        fill("parted", ["id", "grp", "pad"], [(i, i % 9, "x" * 80) for i in range(rows)])
        fill("no_pk", ["a", "b"], [(i % 50, f"row {i}") for i in range(rows)])
        fill("my_isam", ["id", "s"], [(i, f"m{i}") for i in range(rows)])
        fill(HOSTILE_TABLE, [HOSTILE_COLUMN, "ü"], [(i, f"ü{i}") for i in range(rows // 4)])
        if aria:
            fill("aria_t", ["id", "s"], [(i, f"a{i}") for i in range(rows // 2)])
        cur.execute(f"ANALYZE TABLE {', '.join(qualified(database, name) for name, _ in tables(database, aria))}")
        cur.fetchall()
    return counts


class PrivateServerUnavailable(Exception):
    """The binaries to start a private server are not on this machine (the message says which)."""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivateServer:
    """A MariaDB instance in a temporary directory: ``start()``, ``restart()``, ``stop()``; root, no password."""

    def __init__(self, *, buffer_pool_mb: int = 64, performance_schema: bool = True, data_dir: Path | None = None,
                 options: tuple[str, ...] = ()) -> None:
        self.install = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
        self.server = shutil.which("mariadbd") or next(
            (p for p in ("/usr/sbin/mariadbd", "/usr/sbin/mysqld") if Path(p).exists()), None)
        if not self.install or not self.server:
            raise PrivateServerUnavailable("mariadb-install-db and mariadbd are not installed "
                                           "(Debian: apt-get install mariadb-server)")
        self.dir = Path(tempfile.mkdtemp(prefix="cutover-prep-mariadb-"))
        self.data = data_dir or self.dir / "data"  # e.g. on an emulated restored volume
        self.port = _free_port()
        self.options = [f"--innodb-buffer-pool-size={buffer_pool_mb}M",
                        f"--performance-schema={'ON' if performance_schema else 'OFF'}", *options]
        self._proc: subprocess.Popen | None = None

    def _user(self) -> list[str]:
        return ["--user=root"] if os.geteuid() == 0 else []

    def start(self) -> PrivateServer:
        data = self.data
        if not (data / "mysql").exists():  # installed on local disk, then copied (the bootstrap is slow on FUSE)
            seed = self.dir / "seed"
            subprocess.run([self.install, "--no-defaults", f"--datadir={seed}",  # noqa: S603 - fixed arguments
                            "--auth-root-authentication-method=normal", "--skip-test-db", *self._user()],
                           check=True, capture_output=True, timeout=120)
            shutil.copytree(seed, data, dirs_exist_ok=True)
            shutil.rmtree(seed)
        self._proc = subprocess.Popen(  # noqa: S603 - the machine's own binary, fixed arguments
            [self.server, "--no-defaults", f"--datadir={data}", f"--port={self.port}", "--bind-address=127.0.0.1",
             f"--socket={self.dir / 'sock'}", f"--pid-file={self.dir / 'pid'}", f"--log-error={self.dir / 'err.log'}",
             "--skip-log-bin", "--innodb-buffer-pool-load-at-startup=0", "--innodb-buffer-pool-dump-at-shutdown=0",
             *self.options, *self._user()], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import pymysql

        deadline = time.monotonic() + 60
        while True:
            try:
                pymysql.connect(host="127.0.0.1", port=self.port, user="root", password="", connect_timeout=2).close()
                return self
            except pymysql.err.OperationalError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    raise PrivateServerUnavailable(f"the private server did not start; see {self.dir / 'err.log'}")\
                        from None
                time.sleep(0.2)

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)  # a clean shutdown of the process this object started
            try:
                self._proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None

    def restart(self) -> None:
        """Stop and start again: the buffer pool starts empty (no dump at shutdown, no load at startup)."""
        self.stop()
        self.start()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
