"""The hot set first, measured (issue 23 §1): time until `pgbench -S` is back to 90 % of its warm tps.

A pgbench database (the hot set: pgbench_accounts, _branches, _tellers, _history and their indexes)
beside ``--cold-mb`` of cold history tables (schema ``archive``), all in a tablespace on an emulated
restored volume (``local.volume``, FUSE; root) of a private PostgreSQL instance started from Debian's
binaries (``benchmarks/hydration.PrivateServer``; the machine's own server is not touched).

1. Build; reset the statistics; run the application (``pgbench -S``) for ``--workload-s``; take the hot
   set with ``cutover-prep hotset``'s own code (``hotset.take``, the PostgreSQL hook) - the source's profile.
2. For each plan, without and with the profile: stop the server (empty shared buffers), restore the
   volume (every chunk cold), start the server, and warm every planned unit with ``--concurrency``
   sessions taking units in plan order (as the WarmUp Map hands them out), through the engine's own
   ``read_range``; meanwhile ``pgbench -S`` runs in 1-second probes (``-T 1``). When the warm-up is
   done, a ``--full-s`` probe gives the fully warm tps.
3. Report the warm-up's time, when the hot set's units were all read, and the first probe that reached
   90 % of the fully warm tps (its end, since the warm-up began), and that time's share of the warm-up.
   Also, when the hot set was read: how many of its relations' pages were in shared buffers
   (pg_buffercache), and the hot relations' block reads / hits during the warm-up (pg_statio: pgbench's
   own misses; pg_prewarm's 'read' mode and pg_read_binary_file do not pass through shared buffers).

The plans (``--plans``): ``none`` (no profile), ``profile``, ``back-off`` (the profile with
``warmup.after_hot_set.max_concurrency`` = ``--after-hot-set``: once the hot set is read, sessions beyond
``warmup.slots.effective_level`` take no new unit, the slot rule's), ``buffer`` (the profile, with the run's
own choice: ``planning.cache_hot_set`` marks the hot set's ranges ``cache`` as far as they fit 0.9 of
shared_buffers, ``PostgresEngine.cache_bytes``, and the engine reads them with pg_prewarm 'buffer'; the
``read`` plans leave them unmarked, as a run did before), ``buffer+back-off``.

Without a profile the plan reads in discovery order (schema, then name): ``archive`` before ``public``,
so the cold tables come first here - the case a profile is for (where the hot set falls by name in a
real database is chance).

    .venv/bin/python benchmarks/hotset.py [--cold-mb 1024] [--scale 5] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
from hydration import PrivateServer, _pg_bin  # benchmarks/hydration.py: the private server
from psycopg import sql

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions
from cutover_prep.engines.hotset import HotsetOptions
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.hotset import take
from cutover_prep.local.volume import DEFAULT_PROFILE, EmulatedVolume, VolumeProfile, fuse_unavailable
from cutover_prep.warmup.planning import PlanOptions, cache_hot_set, plan_units
from cutover_prep.warmup.slots import effective_level

DATABASE = "hotset_bench"
MIB = 2**20
TPS = re.compile(r"tps = ([0-9.]+)")


class Server(PrivateServer):
    """benchmarks/hydration.py's private server with shared buffers that hold the application's working set."""

    shared_buffers = "256MB"

    def start(self) -> None:
        opts = (f"-p 55439 -k {self.socket} -c listen_addresses='' -c shared_buffers={self.shared_buffers} "
                "-c fsync=off")
        self._run("pg_ctl", "-D", str(self.data), "-o", opts, "-l", str(self.data / "log"), "-w", "start")


def build(server: PrivateServer, builder: EmulatedVolume, scale: int, cold_mb: int) -> None:
    location = builder.mountpoint / "pg"
    location.mkdir()
    os.chown(location, server.user.pw_uid, server.user.pw_gid)
    admin = server.spec("postgres")
    with psycopg.connect(host=admin.host, port=admin.port, user="postgres", dbname="postgres", autocommit=True) as c:
        c.execute(sql.SQL("CREATE TABLESPACE bench_restored LOCATION {}").format(sql.Literal(str(location))))
        # the relations on the volume, the catalogue not (as benchmarks/hydration.py: a session's own catalogue reads
        # would otherwise wait behind the warm-up)
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    with psycopg.connect(host=admin.host, port=admin.port, user="postgres", dbname=DATABASE, autocommit=True) as c:
        c.execute("CREATE EXTENSION pg_prewarm")  # the bench's own database: both read methods are the server's
        c.execute("CREATE EXTENSION pg_buffercache")
    pgbench("-i", "-q", "-s", str(scale), "--tablespace=bench_restored", "--index-tablespace=bench_restored",
            spec=server.spec(DATABASE))
    per_table, tables = 128, max(1, cold_mb // 128)
    with psycopg.connect(host=admin.host, port=admin.port, user="postgres", dbname=DATABASE, autocommit=True) as c:
        c.execute("CREATE SCHEMA archive")
        for i in range(tables):  # ~ 1 KiB rows: per_table MiB each
            c.execute(sql.SQL("CREATE TABLE archive.{} (id bigint PRIMARY KEY, at timestamptz, pad text) "
                              "TABLESPACE bench_restored").format(sql.Identifier(f"history_{i:02d}")))
            c.execute(sql.SQL("INSERT INTO archive.{} SELECT g, now() - g * interval '1 minute', "
                              "repeat(md5(g::text), 28) FROM generate_series(1, %s) g").format(
                                  sql.Identifier(f"history_{i:02d}")), (per_table * 1024 * 1024 // 1100,))
        c.execute("VACUUM ANALYZE")
        c.execute("CHECKPOINT")


def pgbench(*args: str, spec: ConnectionSpec, timeout: float = 3600) -> str:
    out = subprocess.run([str(PGBENCH), "-h", spec.host, "-p", str(spec.port), "-U", "postgres", *args, spec.database],
                         capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"pgbench {' '.join(args)}: {out.stderr.strip()[-300:]}")
    return out.stdout


class Probe:
    """One ``pgbench -S -P 1`` for the whole warm-up and after: (seconds since ``t0``, tps) each second."""

    PROGRESS = re.compile(r"progress: ([0-9.]+) s, ([0-9.]+) tps")

    def __init__(self, spec: ConnectionSpec, clients: int) -> None:
        self.samples: list[tuple[float, float]] = []
        self.proc = subprocess.Popen(  # noqa: S603 - the machine's pgbench, fixed arguments
            [str(PGBENCH), "-h", spec.host, "-p", str(spec.port), "-U", "postgres", "-S", "-n", "-P", "1", "-T", "3600",
             "-c", str(clients), "-j", str(min(clients, 2)), spec.database],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.t0 = time.monotonic()
        self.reader = threading.Thread(target=self._read)
        self.reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            m = self.PROGRESS.search(line)
            if m:
                self.samples.append((float(m[1]), float(m[2])))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.reader.join(timeout=30)


def tps(spec: ConnectionSpec, seconds: int, clients: int) -> float:
    text = pgbench("-S", "-n", "-T", str(seconds), "-c", str(clients), "-j", str(min(clients, 2)), spec=spec,
                   timeout=seconds + 120)
    found = TPS.findall(text)
    return float(found[-1]) if found else 0.0


HOT_RELATIONS = ("pgbench_accounts", "pgbench_accounts_pkey", "pgbench_branches", "pgbench_branches_pkey",
                 "pgbench_tellers", "pgbench_tellers_pkey", "pgbench_history")


def buffered_pages(spec: ConnectionSpec) -> tuple[int, int]:
    """(pages of the hot relations in shared buffers, their pages on disk): pg_buffercache."""
    with psycopg.connect(host=spec.host, port=spec.port, user="postgres", dbname=spec.database, autocommit=True) as c:
        row = c.execute(
            "SELECT (SELECT count(*) FROM pg_buffercache b JOIN pg_class r ON b.relfilenode = "
            "pg_relation_filenode(r.oid) AND b.reldatabase = (SELECT oid FROM pg_database "
            "WHERE datname = current_database()) WHERE r.relname = ANY(%s)), "
            "(SELECT sum(pg_relation_size(oid) / 8192) FROM pg_class WHERE relname = ANY(%s))",
            (list(HOT_RELATIONS), list(HOT_RELATIONS))).fetchone()
    return int(row[0]), int(row[1] or 0)


def statio(spec: ConnectionSpec) -> tuple[int, int]:
    """(blocks read, blocks hit) of the hot tables and their indexes so far: pg_statio_user_tables."""
    with psycopg.connect(host=spec.host, port=spec.port, user="postgres", dbname=spec.database, autocommit=True) as c:
        row = c.execute("SELECT sum(coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0)), "
                        "sum(coalesce(heap_blks_hit, 0) + coalesce(idx_blks_hit, 0)) FROM pg_statio_user_tables "
                        "WHERE schemaname = 'public'").fetchone()
    return int(row[0] or 0), int(row[1] or 0)


def warm(spec: ConnectionSpec, units: list, sessions: int, hot_units: set[str],
         after: int | None = None) -> tuple[float, float | None, tuple[int, int] | None]:
    """Every unit read by ``sessions`` engines taking units in plan order; (seconds, hot set read after s,
    the hot relations' pages in shared buffers then). ``after``: ``warmup.after_hot_set.max_concurrency``
    (a session beyond the slot rule's level takes no new unit)."""
    work: queue.Queue = queue.Queue()
    for unit in units:
        work.put(unit)
    started = time.monotonic()
    left, hot_done, lock = set(hot_units), [None, None], threading.Lock()

    def session(index: int) -> None:
        engine = PostgresEngine.connect(spec)
        try:
            while True:
                if index >= effective_level(sessions, after, hot_done[0] is not None):
                    return
                try:
                    unit = work.get_nowait()
                except queue.Empty:
                    return
                for rng in unit.ranges:
                    engine.read_range(rng)
                with lock:
                    left.discard(unit.unit_id)
                    if hot_units and not left and hot_done[0] is None:
                        hot_done[0] = time.monotonic() - started
                        hot_done[1] = buffered_pages(spec)
        finally:
            engine.close()

    threads = [threading.Thread(target=session, args=(i,)) for i in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - started, hot_done[0], hot_done[1]


def run_once(server: PrivateServer, volume: EmulatedVolume, spec: ConnectionSpec, hot_set: tuple[str, ...],
             args: argparse.Namespace, after: int | None = None, hot_mode: str = "read") -> dict:
    volume.restore()
    volume.mount()
    server.start()
    try:
        engine = PostgresEngine.connect(spec)
        segments = engine.discover(DiscoveryOptions(databases=(DATABASE,)))
        cache = engine.cache_bytes()
        engine.close()
        plan = plan_units(segments, PlanOptions(unit_bytes=args.unit_mb * MIB, hot_set=hot_set))
        hot_rank = 0 if hot_set else None
        cached = cache_hot_set(plan, hot_rank, cache) if hot_mode == "buffer" else None  # as Discover does
        hot_units = {u.unit_id for u in plan.units if u.priority == hot_rank}
        io_before = statio(spec)
        probe = Probe(spec, args.clients)
        seconds, hot_after, buffered = warm(spec, plan.units, args.concurrency, hot_units, after)
        io_after = statio(spec)
        offset = time.monotonic() - probe.t0 - seconds  # the probe started this much before the warm-up
        time.sleep(args.full_s + 1)
        probe.stop()
        probes = [(t - offset, v) for t, v in probe.samples]
        after = [v for t, v in probes if t > seconds]
        tail = after[-max(1, len(after) // 3):]  # the last third of the samples after the warm-up
        full = sum(tail) / len(tail) if tail else 0.0
        return {"units": len(plan.units), "bytes": plan.bytes, "hot_units": len(hot_units), "seconds": seconds,
                "hot_after": hot_after, "full_tps": full, "probes": probes, "buffered": buffered,
                "blks_read": io_after[0] - io_before[0], "blks_hit": io_after[1] - io_before[1],
                "method": engine.read_methods().get(DATABASE), "cached": cached._asdict() if cached else None}
    finally:
        server.stop()
        volume.unmount()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=5, help="pgbench scale (about 15 MiB each)")
    parser.add_argument("--cold-mb", type=int, default=1024)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--unit-mb", type=int, default=16)
    parser.add_argument("--clients", type=int, default=4, help="pgbench -S clients of each probe")
    parser.add_argument("--workload-s", type=int, default=10, help="the application's run before the profile")
    parser.add_argument("--full-s", type=int, default=15, help="seconds of the probe after the warm-up (the fully "
                        "warm tps is their mean)")
    parser.add_argument("--shared-buffers", default="256MB", help="the server's shared_buffers")
    parser.add_argument("--after-hot-set", type=int, default=1, help="warmup.after_hot_set.max_concurrency of the "
                        "back-off plans")
    parser.add_argument("--plans", default="none,profile,back-off,buffer,buffer+back-off",
                        help="the plans to run, in order (see the module's text)")
    parser.add_argument("--time-scale", type=float, help="the emulator's time scale (default: the profile's)")
    args = parser.parse_args()
    reason = fuse_unavailable()
    if reason:
        sys.exit(f"benchmarks/hotset.py: {reason}")
    if shutil.which("runuser") is None:
        sys.exit("benchmarks/hotset.py: needs runuser (util-linux) to run PostgreSQL as user postgres")
    global PGBENCH
    PGBENCH = shutil.which("pgbench") or _pg_bin() / "pgbench"
    profile: VolumeProfile = DEFAULT_PROFILE
    if args.time_scale:
        profile = dataclasses.replace(profile, time_scale=args.time_scale)
    with tempfile.TemporaryDirectory(prefix="cutover-prep-hotset-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        Server.shared_buffers = args.shared_buffers
        server = Server(work)
        builder, volume = EmulatedVolume(work / "vol", VolumeProfile.unlimited()), EmulatedVolume(work / "vol", profile)
        builder.mount()
        server.start()
        try:
            t0 = time.monotonic()
            build(server, builder, args.scale, args.cold_mb)
            spec = server.spec(DATABASE)
            with psycopg.connect(host=spec.host, port=spec.port, user="postgres", dbname=DATABASE,
                                 autocommit=True) as c:
                c.execute("SELECT pg_stat_reset()")
            app_tps = tps(spec, args.workload_s, args.clients)  # the source's application
            time.sleep(1.5)  # its counters flushed (PostgreSQL 15+: at exit, or within a second when idle)
            hot = take(spec, HotsetOptions(databases=(DATABASE,)), top=10)
            names = tuple(hot.names())
            print(f"built in {time.monotonic() - t0:.0f} s; workload {app_tps:.0f} tps on the unlimited volume; "
                  f"hot set {len(hot.relations)} relations, {sum(r.bytes or 0 for r in hot.relations) / MIB:.1f} MiB: "
                  f"{', '.join(r.name for r in hot.relations)}")
            print(f"emulated {profile.storage_type} {profile.allocated_gb:g} GiB on {profile.instance_class}, time "
                  f"scale {profile.time_scale:g}: ceiling {profile.ceiling_mib_per_s:.2f} MiB/s wall; "
                  f"{args.concurrency} sessions, units of {args.unit_mb} MiB, pgbench -S -c {args.clients}, "
                  f"shared_buffers {args.shared_buffers}")
            server.stop()
            builder.unmount()
            rows = []
            n = args.after_hot_set
            known = {"none": ("without profile", (), None, "read"), "profile": ("with profile", names, None, "read"),
                     "back-off": (f"with profile, after_hot_set {n}", names, n, "read"),
                     "buffer": ("with profile, hot set 'buffer'", names, None, "buffer"),
                     "buffer+back-off": (f"with profile, hot set 'buffer', after_hot_set {n}", names, n, "buffer")}
            plans = [known[p.strip()] for p in args.plans.split(",")]
            for label, hot_set, after, hot_mode in plans:
                result = run_once(server, volume, spec, hot_set, args, after, hot_mode)
                rows.append((label, result))
                pages = (f"{result['buffered'][0]} of {result['buffered'][1]}" if result["buffered"] else "—")
                print(f"{label}: read by {result['method']}; hot set into the cache: {result['cached']}; "
                      "hot relations' pages in shared buffers when the hot set "
                      f"was read: {pages}; their block reads / hits during the warm-up (pg_statio): "
                      f"{result['blks_read']} / {result['blks_hit']}")
                print(f"{label}: {result['units']} units, {result['bytes'] / MIB:.0f} MiB, warm-up "
                      f"{result['seconds']:.1f} s; pgbench -S each second (s since the warm-up began: tps): "
                      + " ".join(f"{t:.0f}:{v:.0f}" for t, v in result["probes"]), flush=True)
            # fully warm: the best of the runs' tails (the last third of the probe after each warm-up), one
            # reference for every row (a tail still rising after its warm-up would understate it)
            full = max(r["full_tps"] for _, r in rows)
            print(f"\nfully warm tps (the best run's tail mean): {full:.0f}; 90 %: {0.9 * full:.0f}\n")
            print("| plan | warm-up (s) | hot set read after (s) | hot pages in shared buffers then "
                  "| pgbench ≥ 100 tps after (s) | ≥ 10k tps after (s) | first probe ≥ 90 % of fully warm (s) "
                  "| share of the warm-up | against the 25 % goal | 5-s mean ≥ 90 % after (s), share |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            for label, r in rows:
                print(row(label, r, full))
        finally:
            for step in (server.stop, builder.unmount, volume.unmount):
                try:
                    step()
                except Exception:  # noqa: BLE001 (already stopped)
                    pass


def row(label: str, r: dict, full: float) -> str:
    """One table row: when the probes first passed 100 tps, 10k tps and 90 % of ``full`` (one probe, and a
    5-probe mean: one loaded second can pass alone), since the warm-up began, and the share of the warm-up."""
    probes, seconds = r["probes"], r["seconds"]

    def first(threshold: float) -> float | None:
        return next((t for t, v in probes if v >= threshold), None)

    held = next((probes[i + 4][0] for i in range(len(probes) - 4)
                 if sum(v for _, v in probes[i:i + 5]) / 5 >= 0.9 * full), None)
    reached, last = first(0.9 * full), probes[-1][0] if probes else 0

    def when(t: float | None) -> str:
        return f"{t:.0f}" if t is not None else f"not within {last:.0f} s"

    share = 100 * reached / seconds if reached is not None else None
    hot_after = f"{r['hot_after']:.1f}" if r["hot_after"] is not None else "—"
    pages = f"{r['buffered'][0]:,} of {r['buffered'][1]:,}" if r["buffered"] else "—"
    return (f"| {label} | {seconds:.1f} | {hot_after} | {pages} | {when(first(100))} | {when(first(10_000))} | "
            f"{when(reached)} | " + (f"{share:.0f} % | {share / 25:.2f}x | " if share is not None else "— | — | ")
            + (f"{held:.0f}, {100 * held / seconds:.0f} % |" if held is not None else f"{when(held)} |"))


PGBENCH: Path | str = "pgbench"

if __name__ == "__main__":
    main()
