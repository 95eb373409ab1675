"""benchmarks/yielding.py on MariaDB: a private server (performance_schema on) whose datadir is on the emulated
restored volume, an application of point SELECTs at a fixed rate (a script of our own: sysbench is not
installed here), the warm-up through the MySQL engine's own ``read_range``.

The database: ``ybench.hot`` (the hot set, ``--hot-mb``) and ``--cold-mb`` of cold tables. The application:
``--clients`` threads issuing ``SELECT pad FROM ybench.hot WHERE id = ?`` (random ids) on a fixed schedule
(open loop: each transaction's latency counts from its scheduled start, so a late one carries its lag, as
``pgbench -R``); one later than ``--latency-limit-ms`` at its start is skipped. Its fully warm rate is
measured closed-loop after the warm-up alone; the application then runs at half of it. Plans and the table as
in benchmarks/yielding.py (``buffer`` here: the hot set read first into the buffer pool, the MySQL engine's
only way).

    .venv/bin/python benchmarks/yielding_mariadb.py [--cold-mb 768] [--hot-mb 64]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

import pymysql
from yielding import print_table, warm, warm_seconds  # benchmarks/yielding.py

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions
from cutover_prep.engines.mysql.engine import MySQLEngine
from cutover_prep.engines.mysql.sample_db import PrivateServer
from cutover_prep.local.volume import DEFAULT_PROFILE, EmulatedVolume, VolumeProfile, fuse_unavailable
from cutover_prep.warmup.concurrency import YieldSettings
from cutover_prep.warmup.planning import PlanOptions, plan_units

MIB = 2**20
DB = "ybench"
FUSE_OPTIONS = ("--innodb-flush-method=fsync", "--innodb-use-native-aio=0")  # benchmarks/mysql_emulated.py
ROW_BYTES = 1000


def connect(port: int) -> pymysql.Connection:
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)


def build(port: int, hot_mb: int, cold_mb: int) -> int:
    """The tables; the hot table's row count."""
    conn = connect(port)
    hot_rows = hot_mb * MIB // ROW_BYTES
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {DB}")
        tables = [("hot", hot_rows)] + [(f"cold_{i:02d}", 128 * MIB // ROW_BYTES)
                                        for i in range(max(1, cold_mb // 128))]
        for name, rows in tables:
            cur.execute(f"CREATE TABLE {DB}.{name} (id INT PRIMARY KEY, pad CHAR(200), more VARCHAR(800))")
            cur.execute(f"INSERT INTO {DB}.{name} SELECT seq, MD5(seq), REPEAT('x', 760) FROM {DB}.seq_1_to_{rows}")  # noqa: S608
    conn.close()
    return hot_rows


class App:
    """Point SELECTs at ``rate`` a second over ``clients`` threads, open loop; (scheduled start, ms or None)."""

    def __init__(self, port: int, rate: float, limit_ms: float, clients: int, rows: int) -> None:
        self.rows: list[tuple[float, float | None]] = []
        self.stop_at: float | None = None
        self.threads = [threading.Thread(target=self._client, args=(port, rate / clients, limit_ms, rows, i))
                        for i in range(clients)]
        for t in self.threads:
            t.start()

    def _client(self, port: int, rate: float, limit_ms: float, rows: int, seed: int) -> None:
        conn, rnd, mine = connect(port), random.Random(seed), []
        at = time.time()
        with conn.cursor() as cur:
            while self.stop_at is None or at < self.stop_at:
                at += rnd.expovariate(rate)  # Poisson arrivals, as pgbench -R
                now = time.time()
                if at > now:
                    time.sleep(at - now)
                elif (now - at) * 1000 > limit_ms:
                    mine.append((at, None))
                    continue
                cur.execute(f"SELECT pad FROM {DB}.hot WHERE id = %s", (rnd.randint(1, rows),))  # noqa: S608
                cur.fetchall()
                mine.append((at, (time.time() - at) * 1000))
        conn.close()
        self.rows.extend(mine)

    def stop(self) -> list[tuple[float, float | None]]:
        self.stop_at = time.time()
        for t in self.threads:
            t.join()
        return sorted(self.rows)


def closed_loop_rate(port: int, clients: int, rows: int, seconds: float = 10) -> float:
    done = [0] * clients
    end = time.time() + seconds

    def client(i: int) -> None:
        conn, rnd = connect(port), random.Random(i)
        with conn.cursor() as cur:
            while time.time() < end:
                cur.execute(f"SELECT pad FROM {DB}.hot WHERE id = %s", (rnd.randint(1, rows),))  # noqa: S608
                cur.fetchall()
                done[i] += 1
        conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hot-mb", type=int, default=64)
    parser.add_argument("--cold-mb", type=int, default=768)
    parser.add_argument("--pool-mb", type=int, default=256)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--unit-mb", type=int, default=16)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--latency-limit-ms", type=float, default=50.0)
    parser.add_argument("--full-s", type=int, default=15)
    parser.add_argument("--after-hot-set", type=int, default=1)
    parser.add_argument("--window-s", type=float, default=2.0)
    parser.add_argument("--plans", default="alone,warm,buffer,after_hot_set,yielding", help="as yielding.py's: warm "
                        "right after alone (the application on the volume alone left fully hydrated, the reference)")
    parser.add_argument("--rate", type=float)
    parser.add_argument("--save", type=Path, help="write every plan's result to this JSON file (yielding.py --judge "
                        "prints its table again)")
    args = parser.parse_args()
    if reason := fuse_unavailable():
        sys.exit(f"benchmarks/yielding_mariadb.py: {reason}")
    with tempfile.TemporaryDirectory(prefix="cutover-prep-yielding-mariadb-") as tmp:
        work = Path(tmp)
        builder, volume = EmulatedVolume(work / "vol", VolumeProfile.unlimited()), EmulatedVolume(work / "vol",
                                                                                                   DEFAULT_PROFILE)
        builder.mount()
        server = PrivateServer(buffer_pool_mb=args.pool_mb, performance_schema=True,
                               data_dir=builder.mountpoint / "data", options=FUSE_OPTIONS)
        try:
            server.start()
            hot_rows = build(server.port, args.hot_mb, args.cold_mb)
            spec = ConnectionSpec(engine="mariadb", host="127.0.0.1", port=server.port, database=DB, user="root",
                                  password="", tls="disable")
            server.stop()
            builder.unmount()
            print(f"MariaDB, performance_schema on, buffer pool {args.pool_mb} MiB; hot {args.hot_mb} MiB, cold "
                  f"{args.cold_mb} MiB; {args.concurrency} sessions; ceiling {DEFAULT_PROFILE.ceiling_mib_per_s:.2f} "
                  "MiB/s wall", flush=True)
            plans = {"alone": dict(app=False, after=None, yielding=True),
                     "warm": dict(app=True, after=None, yielding=False),
                     "buffer": dict(app=True, after=None, yielding=False),
                     "after_hot_set": dict(app=True, after=args.after_hot_set, yielding=False),
                     "yielding": dict(app=True, after=None, yielding=True)}
            rate, rows = args.rate, []
            for name in args.plans.split(","):
                plan_args = plans[name]
                hydrated_for = warm_seconds(name, rows, "benchmarks/yielding_mariadb.py")
                if hydrated_for is None:  # warm: the volume as alone left it, all of it read
                    volume.restore()
                volume.mount()
                server.start()
                try:
                    engine = MySQLEngine.connect(spec)
                    segments = engine.discover(DiscoveryOptions(include_schemas=(DB,)))
                    engine.close()
                    plan = plan_units(segments, PlanOptions(unit_bytes=args.unit_mb * MIB, hot_set=(f"{DB}.hot",)))
                    hot_units = {u.unit_id for u in plan.units if u.priority == 0}
                    assert hot_units, [s.label for s in segments]
                    app = App(server.port, rate, args.latency_limit_ms, args.clients, hot_rows) \
                        if plan_args["app"] else None
                    ysettings = YieldSettings(maximum=args.concurrency, window_seconds=args.window_s) \
                        if plan_args["yielding"] else None
                    if hydrated_for is not None and app is not None:  # no warm-up: the fully warm reference
                        started = time.time()
                        time.sleep(hydrated_for + args.full_s)
                        rows.append((name, {"seconds": hydrated_for, "started": started, "hot_after": 0.0,
                                            "levels": [], "decisions": [], "app": app.stop()}))
                        continue
                    r = warm(lambda: MySQLEngine.connect(spec, call_timeout_seconds=3600), "mariadb", plan.units,
                             args.concurrency, hot_units, plan_args["after"], ysettings)
                    if app is not None:
                        time.sleep(args.full_s)
                        r["app"] = app.stop()
                    else:
                        r["full_tps"] = closed_loop_rate(server.port, args.clients, hot_rows)
                        if rate is None:
                            rate = r["full_tps"] / 2
                            print(f"fully warm (closed loop, {args.clients} clients): {r['full_tps']:.0f} tx/s; the "
                                  f"application: {rate:.0f} tx/s, latency limit {args.latency_limit_ms:g} ms",
                                  flush=True)
                finally:
                    server.stop()
                    volume.unmount()
                rows.append((name, r))
                print(f"{name}: warm-up {r['seconds']:.1f} s, hot set after {r['hot_after']:.1f} s; levels "
                      + " ".join(f"{t:.0f}:{lv}" for t, lv in r["levels"][::4]), flush=True)
                if r["decisions"]:
                    print(f"{name}: decisions [t, cap, app reads/s, ms/read, decision]: {r['decisions']}", flush=True)
            if args.save:
                args.save.write_text(json.dumps({"rate": rate, "args": vars(args), "rows": rows}, default=str))
            print_table(rows, rate)
        finally:
            server.close()
            for step in (builder.unmount, volume.unmount):
                try:
                    step()
                except Exception:  # noqa: BLE001 (already unmounted)
                    pass


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
