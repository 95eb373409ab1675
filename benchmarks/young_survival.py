"""Does a hot set read into InnoDB's young sublist (decision 0094) outlive the warm-up's reads of the rest?

A private MariaDB (``--pool-mb``) on the emulated restored volume: a 48 MiB hot table read by the MySQL engine as a
``cache`` range (``--plan young``) or once (``--plan once``), then ``--sessions`` cold tables of 48 MiB, read by the
engine in 16 MiB chunks, all at once (``--serial``: one after the other by one session). Printed after each step:
the hot table's pages in the pool (``INNODB_BUFFER_PAGE_LRU``) and the server's ``PAGES_MADE_YOUNG``,
``DATABASE_PAGES``, ``OLD_DATABASE_PAGES`` (``INNODB_BUFFER_POOL_STATS``).

    .venv/bin/python benchmarks/young_survival.py [--plan young|once] [--sessions 8] [--serial] [--pool-mb 96]
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import pymysql
from yielding_mariadb import FUSE_OPTIONS  # benchmarks/yielding_mariadb.py

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions, ReadRange
from cutover_prep.engines.base import Segment
from cutover_prep.engines.mysql.engine import MySQLEngine
from cutover_prep.engines.mysql.sample_db import PrivateServer
from cutover_prep.local.volume import DEFAULT_PROFILE, EmulatedVolume, VolumeProfile
from cutover_prep.warmup.planning import PlanOptions, plan_units
from cutover_prep.warmup.unit import chunks

MIB = 2**20
TABLE_MB = 48
POOL_SQL = ("SELECT PAGES_MADE_YOUNG, DATABASE_PAGES, OLD_DATABASE_PAGES "
            "FROM information_schema.INNODB_BUFFER_POOL_STATS")
HOT_PAGES_SQL = "SELECT COUNT(*) FROM information_schema.INNODB_BUFFER_PAGE_LRU WHERE TABLE_NAME = '`w`.`hot`'"


def build(port: int, tables: list[str]) -> None:
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE w")
        for name in tables:
            cur.execute(f"CREATE TABLE w.{name} (id INT PRIMARY KEY, pad VARCHAR(990))")
            cur.execute(f"INSERT INTO w.{name} SELECT seq, REPEAT('x', 990) "  # noqa: S608 - our own names
                        f"FROM w.seq_1_to_{TABLE_MB * MIB // 1000}")
        cur.execute("ANALYZE TABLE " + ", ".join(f"w.{name}" for name in tables))
    conn.close()


def pool(port: int) -> str:
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="")
    with conn.cursor() as cur:
        cur.execute(HOT_PAGES_SQL)
        hot = cur.fetchone()[0]
        cur.execute(POOL_SQL)
        made, pages, old = cur.fetchone()
    conn.close()
    return f"hot pages in the pool {hot}; pages made young {made}, pool pages {pages}, old {old}"


def read(engine: MySQLEngine, segment: Segment, *, cache: bool) -> None:
    """The segment in 16 MiB chunks, as the warm-unit Lambda reads it."""
    for unit in plan_units([segment], PlanOptions(unit_bytes=4096 * MIB)).units:
        for chunk in chunks(unit.ranges, {"range": 0, "extent": 0, "offset": 0}, 16 * MIB):
            rng = chunk.rng
            engine.read_range(ReadRange(rng.segment_key, rng.locator.with_fields(cache=cache), rng.extents,
                                        rng.block_size))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plan", choices=("young", "once"), default="young")
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--serial", action="store_true")
    parser.add_argument("--pool-mb", type=int, default=96)
    args = parser.parse_args()
    cold = [f"cold{i}" for i in range(args.sessions)]
    with tempfile.TemporaryDirectory(prefix="cutover-prep-young-") as tmp:
        work = Path(tmp)
        builder = EmulatedVolume(work / "vol", VolumeProfile.unlimited())
        volume = EmulatedVolume(work / "vol", DEFAULT_PROFILE)
        builder.mount()
        server = PrivateServer(buffer_pool_mb=args.pool_mb, performance_schema=False,
                               data_dir=builder.mountpoint / "data", options=FUSE_OPTIONS)
        server.start()
        build(server.port, ["hot", *cold])
        server.stop()
        builder.unmount()
        volume.mount()
        server.start()
        try:
            spec = ConnectionSpec(engine="mariadb", host="127.0.0.1", port=server.port, database="w", user="root",
                                  password="", tls="disable")
            engine = MySQLEngine.connect(spec)
            found = engine.discover(DiscoveryOptions(include_schemas=("w",)))
            segments = {s.locator.to_json()["table"]: s for s in found}
            print(f"pool {args.pool_mb} MiB, young sublist {engine.cache_bytes()} bytes", flush=True)
            started = time.time()
            read(engine, segments["hot"], cache=args.plan == "young")
            print(f"hot ({args.plan}) read in {time.time() - started:.1f} s: {pool(server.port)}", flush=True)

            def reader(names: list[str]) -> None:
                own = MySQLEngine.connect(spec)
                for name in names:
                    read(own, segments[name], cache=False)
                own.close()

            threads = [threading.Thread(target=reader, args=(cold,))] if args.serial else \
                [threading.Thread(target=reader, args=([name],)) for name in cold]
            started = time.time()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            how = "one session" if args.serial else f"{args.sessions} sessions"
            print(f"{len(cold)} cold tables by {how} in {time.time() - started:.1f} s: {pool(server.port)}",
                  flush=True)
            engine.close()
        finally:
            server.close()
            volume.unmount()


if __name__ == "__main__":
    main()
