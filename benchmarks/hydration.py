"""Warm-up of a restored volume: each PostgreSQL read method x concurrency, against the ceiling.

Builds a sample database on an emulated restored volume (``local.volume``, FUSE; root) in a
private PostgreSQL instance started from Debian's binaries (pgserver has no contrib, so no
pg_prewarm; the machine's own server is not touched), then for each read method and
concurrency: stops the server (empty shared buffers), restores the volume (every chunk
cold), starts the server and reads every planned range with N sessions through the
engine's own code. Prints, from this one run: seconds, MiB confirmed by the method, the
database's hydrated %, the hydrated MiB/s and its ratio to the emulated ceiling.

    .venv/bin/python benchmarks/hydration.py [--size-mb 96] [--concurrency 1,4,8,16] [--methods ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import os
import pwd
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
from psycopg import sql

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.engines.postgres.sample_db import create_sample
from cutover_prep.local.volume import DEFAULT_PROFILE, EmulatedVolume, VolumeProfile, fuse_unavailable
from cutover_prep.warmup.planning import PlanOptions, plan_units

METHODS = {  # name -> (read_method, prewarm_mode)
    "pg_prewarm/read": ("pg_prewarm", "read"),
    "pg_prewarm/prefetch": ("pg_prewarm", "prefetch"),
    "pg_prewarm/buffer": ("pg_prewarm", "buffer"),
    "pg_read_binary_file": ("pg_read_binary_file", "read"),
    "tid_range_scan": ("tid_range_scan", "read"),
}
DATABASE = "hydration_bench"
MIB = 2**20


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not found:
        sys.exit("benchmarks/hydration.py: needs Debian's PostgreSQL server binaries (/usr/lib/postgresql/*/bin)")
    return Path(found[-1]).parent


class PrivateServer:
    """A PostgreSQL instance of its own (datadir, socket, port) run as OS user postgres."""

    def __init__(self, work: Path) -> None:
        self.bin, self.data, self.socket = _pg_bin(), work / "pgdata", work / "socket"
        self.user = pwd.getpwnam("postgres")
        for path in (self.data, self.socket):
            path.mkdir(mode=0o700)
            os.chown(path, self.user.pw_uid, self.user.pw_gid)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync")

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", str(self.bin / tool), *args], check=True,
                       capture_output=True)

    def start(self) -> None:
        opts = f"-p 55439 -k {self.socket} -c listen_addresses='' -c shared_buffers=32MB -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", opts, "-l", str(self.data / "log"), "-w", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def spec(self, database: str) -> ConnectionSpec:
        return ConnectionSpec(engine="postgres", host=str(self.socket), port=55439, database=database,
                              user="postgres", password="", tls="disable")


def build(server: PrivateServer, builder: EmulatedVolume, size_mb: int) -> str:
    """The sample database in a tablespace on the volume; returns its directory on the volume."""
    location = builder.mountpoint / "pg"
    location.mkdir()
    os.chown(location, server.user.pw_uid, server.user.pw_gid)
    admin = server.spec("postgres")
    with psycopg.connect(host=admin.host, port=admin.port, user="postgres", dbname="postgres", autocommit=True) as c:
        c.execute(sql.SQL("CREATE TABLESPACE bench_restored LOCATION {}").format(sql.Literal(str(location))))
        c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
    # the relations on the volume, the catalogue not (as the demo: the emulator would give each tiny file a chunk)
    create_sample(f"host={admin.host} port={admin.port} user=postgres dbname={DATABASE} "
                  "options='-c default_tablespace=bench_restored'", size_mb=size_mb)
    with psycopg.connect(host=admin.host, port=admin.port, user="postgres", dbname=DATABASE, autocommit=True) as c:
        c.execute("CREATE EXTENSION pg_prewarm")  # the bench's own database
        c.execute("CHECKPOINT")
        oid = c.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]
    version_dir = next(p.name for p in location.iterdir() if p.name.startswith("PG_"))
    return f"pg/{version_dir}/{oid}"


def warm(spec: ConnectionSpec, ranges: list, method: str, mode: str, sessions: int) -> tuple[float, int, list[str]]:
    """Every range read by ``sessions`` engines at once; (seconds, bytes confirmed, errors)."""
    work: queue.Queue = queue.Queue()
    for rng in ranges:
        work.put(rng)
    confirmed, errors, lock = [0], [], threading.Lock()

    def session() -> None:
        engine = PostgresEngine.connect(spec, read_method=method, prewarm_mode=mode)
        try:
            while True:
                try:
                    rng = work.get_nowait()
                except queue.Empty:
                    return
                try:
                    got = engine.read_range(rng).bytes
                except Exception as exc:  # tid_range_scan cannot read indexes: counted, named once
                    with lock:
                        errors.append(type(exc).__name__)
                    continue
                with lock:
                    confirmed[0] += got
        finally:
            engine.close()

    started = time.monotonic()
    threads = [threading.Thread(target=session) for _ in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - started, confirmed[0], errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=128)
    parser.add_argument("--concurrency", default="1,4,8,16")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--unit-mb", type=int, default=4, help="range size handed to one read call")
    parser.add_argument("--time-scale", type=float, help="the emulator's time scale (default: the profile's)")
    args = parser.parse_args()
    reason = fuse_unavailable()
    if reason:
        sys.exit(f"benchmarks/hydration.py: {reason}")
    if shutil.which("runuser") is None:
        sys.exit("benchmarks/hydration.py: needs runuser (util-linux) to run PostgreSQL as user postgres")
    profile: VolumeProfile = DEFAULT_PROFILE
    if args.time_scale:
        profile = dataclasses.replace(profile, time_scale=args.time_scale)
    levels = [int(x) for x in args.concurrency.split(",")]
    with tempfile.TemporaryDirectory(prefix="cutover-prep-hydration-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        server = PrivateServer(work)
        builder, volume = EmulatedVolume(work / "vol", VolumeProfile.unlimited()), EmulatedVolume(work / "vol", profile)
        builder.mount()
        server.start()
        try:
            t0 = time.monotonic()
            database_dir = build(server, builder, args.size_mb)
            spec = server.spec(DATABASE)
            engine = PostgresEngine.connect(spec)
            segments = engine.discover(DiscoveryOptions(databases=(DATABASE,)))
            engine.close()
            ranges = [r for u in plan_units(segments, PlanOptions(unit_bytes=args.unit_mb * MIB)).units
                      for r in u.ranges]
            planned = sum(e.blocks for r in ranges for e in r.extents) * 8192
            print(f"sample {planned / MIB:.1f} MiB in {len(ranges)} ranges, built in {time.monotonic() - t0:.0f} s; "
                  f"emulated {profile.storage_type} {profile.allocated_gb:g} GiB on {profile.instance_class}, "
                  f"time scale {profile.time_scale:g}: ceiling {profile.ceiling_mib_per_s:.2f} MiB/s wall")
            server.stop()
            builder.unmount()
            print(f"{'method':22} {'sessions':>8} {'seconds':>8} {'MiB read':>9} {'hydrated':>9} "
                  f"{'MiB/s':>7} {'/ceiling':>8}  notes")
            for name in args.methods.split(","):
                method, mode = METHODS[name]
                for sessions in levels:
                    volume.restore()
                    volume.mount()
                    server.start()
                    try:
                        seconds, confirmed, errors = warm(spec, ranges, method, mode, sessions)
                        hydrated = volume.hydrated_pct(database_dir) or 0.0
                        counters = volume.counters()
                    finally:
                        server.stop()
                        volume.unmount()
                    rate = planned * hydrated / 100 / MIB / seconds
                    note = (f"fetches {counters.get('fetches')}, fetch wait {counters.get('fetch_wait_s', 0):.1f} s, "
                            f"throttled {counters.get('throttle_s', 0):.1f} s, IOs {counters.get('ios_counted')}")
                    if errors:
                        note += f"; {len(errors)} ranges not readable ({errors[0]})"
                    print(f"{name:22} {sessions:>8} {seconds:>8.1f} {confirmed / MIB:>9.1f} {hydrated:>8.1f}% "
                          f"{rate:>7.2f} {rate / profile.ceiling_mib_per_s:>8.2f}  {note}", flush=True)
        finally:
            for step in (server.stop, builder.unmount, volume.unmount):
                try:
                    step()
                except Exception:  # noqa: BLE001 (already stopped)
                    pass


if __name__ == "__main__":
    main()
