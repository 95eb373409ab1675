"""benchmarks/yielding_local.py on MariaDB: every plan a real ``cutover-prep local --dsn mariadb://`` run.

The server, the tables and the application are ``benchmarks/yielding_mariadb.py``'s: a private MariaDB 10.11
(``performance_schema`` on, the yield signal's source) whose datadir is on the emulated restored volume,
``ybench.hot`` (the hot set) and cold tables, our own open-loop point SELECTs at half the fully warm rate. The run
is the product's, as in ``yielding_local.py``: moto, the workflow, the handlers, the slots, the MySQL engine's
reads, the hot set given as the run input's ``warmup.hot_set`` (the table the application reads), and everything
judged read from the run's findings (``yielding_local.result_of``) by ``yielding.py``'s judge. ``buffer``: full
concurrency after the hot set (the MySQL engine reads the hot set into the buffer pool as it reads everything: it
marks nothing, decision 0094).

``--pin``: the server on CPU 1; the volume daemon, the run and the application (threads of this process) on CPU 0.

    .venv/bin/python benchmarks/yielding_local_mariadb.py [--cold-mb 768] [--pool-mb 256] [--pin] [--save F]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import yielding  # benchmarks/yielding.py: the judge, the table
import yielding_local as local  # the run, its findings
import yielding_mariadb as maria  # the tables, the application
from yielding_mariadb import DB

from cutover_prep.engines.mysql.sample_db import PrivateServer
from cutover_prep.local.volume import DEFAULT_PROFILE, EmulatedVolume, VolumeProfile, fuse_unavailable


def start(server: PrivateServer, pinned: bool) -> None:
    server.start()
    if pinned:  # every thread of the server; those it starts later inherit the mask
        pid = (server.dir / "pid").read_text().strip()
        subprocess.run(["taskset", "-a", "-p", "-c", local.SERVER_CPU, pid], check=True, capture_output=True)


def run_input(args: argparse.Namespace, *, after: int | None, yielding_on: bool) -> dict:
    """The plan as a run input: ``yielding_local.run_input``'s, the hot set the application's table."""
    hot = {"engine": "mariadb", "server": "benchmarks/yielding_local_mariadb.py", "sources": ["the benchmark"],
           "taken_at": datetime.now(UTC).isoformat(timespec="seconds"), "relations": 1, "names": [f"{DB}.hot"]}
    return local.run_input(args, hot, after=after, yielding_on=yielding_on)


def run_once(server: PrivateServer, volume: EmulatedVolume, work: Path, name: str, args: argparse.Namespace,
             hot_rows: int, *, app: bool, after: int | None, yielding_on: bool, rate: float | None,
             hydrated_for: float | None = None) -> dict:
    """One plan from a restarted server on the restored volume (``hydrated_for``: the plan ``warm``, no run)."""
    if hydrated_for is None:
        volume.restore()
    volume.mount()
    start(server, args.pin)
    try:
        application = maria.App(server.port, rate, args.latency_limit_ms, args.clients, hot_rows) if app else None
        if hydrated_for is not None and application is not None:
            started = time.time()
            time.sleep(hydrated_for + args.full_s)
            return {"seconds": hydrated_for, "started": started, "hot_after": 0.0, "levels": [], "decisions": [],
                    "app": application.stop()}
        dsn = f"mariadb://root@127.0.0.1:{server.port}/{DB}?ssl-mode=DISABLED"
        result = local.result_of(local.local_run(dsn, args.pin, work, name, run_input(
            args, after=after, yielding_on=yielding_on)))
        if application is None:
            result["full_tps"] = maria.closed_loop_rate(server.port, args.clients, hot_rows)
        else:
            time.sleep(args.full_s)
            result["app"] = application.stop()
        return result
    finally:
        server.stop()
        volume.unmount()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hot-mb", type=int, default=64)
    parser.add_argument("--cold-mb", type=int, default=768)
    parser.add_argument("--pool-mb", type=int, default=256)
    args = local.arguments(parser, plans="alone,buffer,yielding")
    if reason := fuse_unavailable():
        sys.exit(f"benchmarks/yielding_local_mariadb.py: {reason}")
    if args.pin and (os.cpu_count() or 1) < 2:
        sys.exit("benchmarks/yielding_local_mariadb.py: --pin needs two CPUs")
    with tempfile.TemporaryDirectory(prefix="cutover-prep-yielding-local-mariadb-") as tmp:
        work = Path(tmp)
        builder = EmulatedVolume(work / "vol", VolumeProfile.unlimited())
        volume = EmulatedVolume(work / "vol", DEFAULT_PROFILE)
        builder.mount()
        server = PrivateServer(buffer_pool_mb=args.pool_mb, performance_schema=True,
                               data_dir=builder.mountpoint / "data", options=maria.FUSE_OPTIONS)
        try:
            server.start()
            hot_rows = maria.build(server.port, args.hot_mb, args.cold_mb)
            server.stop()
            builder.unmount()
            if args.pin:
                os.sched_setaffinity(0, {int(local.OTHERS_CPU)})  # this process, its threads, what it starts
            print(f"MariaDB, performance_schema on, buffer pool {args.pool_mb} MiB; hot {args.hot_mb} MiB, cold "
                  f"{args.cold_mb} MiB; {args.concurrency} units at once; pinned: {args.pin}", flush=True)
            rows, rate = local.run_plans(
                args, "benchmarks/yielding_local_mariadb.py",
                lambda name, rate, hydrated_for, **plan: run_once(server, volume, work, name, args, hot_rows,
                                                                  rate=rate, hydrated_for=hydrated_for, **plan),
                lambda tps, rate: f"fully warm (closed loop, {args.clients} clients) after the warm-up alone: "
                f"{tps:.0f} tx/s; the application: {rate:.0f} tx/s, latency limit {args.latency_limit_ms:g} ms")
            yielding.save_and_print(rows, rate, args)
        finally:
            yielding.quietly(server.close, builder.unmount, volume.unmount)


if __name__ == "__main__":
    main()
