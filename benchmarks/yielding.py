"""A warm-up that yields to the application (issue 36 §1), measured: pgbench -S at a fixed rate during the warm-up.

``benchmarks/hotset.py``'s private PostgreSQL (its own port, ``track_io_timing`` on) with its pgbench database
(the hot set) beside ``--cold-mb`` of cold tables on an emulated restored volume (FUSE; root). The fully warm
tps is measured on the unlimited volume once everything was read; the application is then
``pgbench -S -R <half of it> --latency-limit <ms>``, started with the warm-up and run until ``--full-s``
after it (the tail: the fully warm p99). Per plan (the volume restored, the server restarted each time):

- ``alone``: the warm-up with yielding on and no application (the reference time of the 1.3x goal);
- ``buffer``: today's default (the profile, the hot set into shared buffers, full concurrency after it);
- ``after_hot_set``: that and ``warmup.after_hot_set.max_concurrency`` = ``--after-hot-set``;
- ``yielding``: that with the product's yield controller after the hot set (``concurrency.yield_observe``
  fed by the PostgreSQL family's ``activity`` hook each ``warmup.yielding.window_seconds``, the warm-up's own
  bytes subtracted where counted, as ``slots._yield`` does).

Per window of the application (whole seconds holding ~200 scheduled transactions: ``judge_window_s``), by
scheduled start: its transactions' p99 latency (pgbench's per-transaction log: time plus schedule lag) and how many
of those scheduled ran (``judge``); a window meets the goal when p99 <= 2x the fully warm p99 and >= 95 % of its
scheduled transactions ran. Printed: the warm-up's time and its ratio to ``alone``; from when on (s, share of the
warm-up) every window to the warm-up's end met the goal; the controller's decisions. ``--save`` keeps a run (the
application's transactions too) and ``--judge`` prints its table again.

    .venv/bin/python benchmarks/yielding.py [--cold-mb 512] [--scale 5] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hotset  # benchmarks/hotset.py: the database, the hot set, pgbench
import psycopg
from hotset import DATABASE, build, tps

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions, registry
from cutover_prep.engines.hotset import HotsetOptions
from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.hotset import take
from cutover_prep.local.volume import DEFAULT_PROFILE, EmulatedVolume, VolumeProfile, fuse_unavailable
from cutover_prep.warmup.concurrency import Reading, YieldSettings, application_window, yield_observe, yield_start
from cutover_prep.warmup.planning import PlanOptions, cache_hot_set, plan_units

MIB = 2**20
P99_SAMPLES = 200  # scheduled transactions a judged window holds, at least (judge_window_s)
PORT = 55447  # not hotset.py's / hydration.py's 55439: another benchmark may run beside this one


class Server(hotset.Server):
    def start(self) -> None:
        opts = (f"-p {PORT} -k {self.socket} -c listen_addresses='' -c shared_buffers={self.shared_buffers} "
                "-c fsync=off -c track_io_timing=on")
        self._run("pg_ctl", "-D", str(self.data), "-o", opts, "-l", str(self.data / "log"), "-w", "start")

    def spec(self, database: str) -> ConnectionSpec:
        return ConnectionSpec(engine="postgres", host=str(self.socket), port=PORT, database=database,
                              user="postgres", password="")


class App:
    """``pgbench -S -R rate --latency-limit`` with a per-transaction log, from ``start`` until ``stop``."""

    def __init__(self, spec: ConnectionSpec, rate: float, limit_ms: float, clients: int, logdir: Path) -> None:
        self.logdir = logdir
        for old in glob.glob(str(logdir / "app*")):
            os.unlink(old)
        self.proc = subprocess.Popen(  # noqa: S603 - the machine's pgbench, fixed arguments
            [str(hotset.PGBENCH), "-h", spec.host, "-p", str(spec.port), "-U", "postgres", "-S", "-n",
             "-R", f"{rate:.0f}", "--latency-limit", f"{limit_ms:g}", "-T", "3600", "-c", str(clients),
             "-j", str(min(clients, 2)), "-l", "--log-prefix", str(logdir / "app"), spec.database],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=logdir)
        self.t0 = time.time()

    def stop(self) -> list[tuple[float, float | None]]:
        """(scheduled start, epoch s; latency ms or None: skipped) per transaction."""
        self.proc.terminate()
        self.proc.wait(timeout=60)
        rows = []
        for path in glob.glob(str(self.logdir / "app*")):
            for line in Path(path).read_text().splitlines():
                f = line.split()
                if len(f) < 6:
                    continue
                end = int(f[4]) + int(f[5]) / 1e6
                lag = int(f[6]) / 1000 if len(f) > 6 else 0.0
                if f[2] == "skipped":
                    rows.append((end, None))
                else:
                    rows.append((end - int(f[2]) / 1e6 - lag / 1000, int(f[2]) / 1000 + lag))
        return sorted(rows, key=lambda r: r[0])


def p99(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(0.99 * len(values)))] if values else 0.0


def warm(connect: Callable[[], Any], family: str, units: list, sessions: int, hot_units: set[str],
         after: int | None, ysettings: YieldSettings | None) -> dict:
    """Every unit read by ``sessions`` engines (``connect()``) in plan order; a session takes a new unit only while
    its index is below the level in force (it waits while it is not: the level may rise again). The yield signal
    is ``family``'s hook (``EngineFamily.activity``) on an engine of its own, as the slots read it."""
    work: queue.Queue = queue.Queue()
    for unit in units:
        work.put(unit)
    started = time.time()
    state = {"left": set(hot_units), "hot_after": None if hot_units else 0.0, "bytes": 0, "level": sessions,
             "done": False}
    lock = threading.Lock()
    ystate = yield_start(ysettings) if ysettings else None
    levels: list[tuple[float, int]] = []

    def monitor() -> None:
        nonlocal ystate
        engine = connect()
        hook = registry.family(family).activity
        last = None
        try:
            while not state["done"]:
                time.sleep(ysettings.window_seconds)
                if state["hot_after"] is None:
                    continue
                counters = Reading(**hook(engine).to_json(), at=time.time(), own_bytes=state["bytes"])
                if last is not None:
                    per_s, ms = application_window(last, counters)
                    ystate = yield_observe(ystate, ysettings, t_s=time.time() - started, reads_per_s=per_s,
                                           ms_per_read=ms)
                    state["level"] = ystate.level
                last = counters
        finally:
            engine.close()

    def level() -> int:
        base = sessions if state["hot_after"] is None else (min(sessions, after) if after else sessions)
        return min(base, state["level"]) if ysettings and state["hot_after"] is not None else base

    def session(index: int) -> None:
        engine = connect()
        try:
            while True:
                if index >= level():
                    if work.empty():
                        return
                    time.sleep(0.05)
                    continue
                try:
                    unit = work.get_nowait()
                except queue.Empty:
                    return
                for rng in unit.ranges:
                    result = engine.read_range(rng)
                    with lock:
                        state["bytes"] += result.bytes
                with lock:
                    state["left"].discard(unit.unit_id)
                    if not state["left"] and state["hot_after"] is None:
                        state["hot_after"] = time.time() - started
        finally:
            engine.close()

    def sampler() -> None:
        while not state["done"]:
            levels.append((round(time.time() - started, 1), level()))
            time.sleep(0.5)

    threads = [threading.Thread(target=session, args=(i,)) for i in range(sessions)]
    extra = [threading.Thread(target=sampler)] + ([threading.Thread(target=monitor)] if ysettings else [])
    for t in threads + extra:
        t.start()
    for t in threads:
        t.join()
    state["done"] = True
    for t in extra:
        t.join()
    return {"seconds": time.time() - started, "started": started, "hot_after": state["hot_after"],
            "levels": levels, "decisions": list(ystate.samples) if ystate else []}


def run_once(server: Server, volume: EmulatedVolume, spec: ConnectionSpec, names: tuple[str, ...],
             args: argparse.Namespace, *, app: bool, after: int | None, yielding: bool, rate: float | None,
             logdir: Path, hydrated_for: float | None = None) -> dict:
    """One plan from a restarted server. ``hydrated_for``: no warm-up and no restore (the volume as the plan before
    left it: ``alone`` read all of it), the application alone for that many seconds and the tail: the fully warm
    reference from the same cold start of the server's own buffers (``direct_io``: no page cache either)."""
    if hydrated_for is None:
        volume.restore()
    volume.mount()
    server.start()
    try:
        engine = PostgresEngine.connect(spec)
        segments = engine.discover(DiscoveryOptions(databases=(DATABASE,)))
        cache = engine.cache_bytes()
        engine.close()
        plan = plan_units(segments, PlanOptions(unit_bytes=args.unit_mb * MIB, hot_set=names))
        decided = cache_hot_set(plan, 0, cache)
        if decided is not None:
            print(f"hot set {decided.bytes / MIB:.1f} MiB, shared_buffers {(decided.cache_bytes or 0) / MIB:.0f} MiB: "
                  f"{decided.marked_bytes / MIB:.1f} MiB of it read into them", flush=True)
        hot_units = {u.unit_id for u in plan.units if u.priority == 0}
        application = App(spec, rate, args.latency_limit_ms, args.clients, logdir) if app else None
        if hydrated_for is not None and application is not None:
            started = time.time()
            time.sleep(hydrated_for + args.full_s)
            return {"seconds": hydrated_for, "started": started, "hot_after": 0.0, "levels": [], "decisions": [],
                    "app": application.stop()}
        ysettings = YieldSettings(maximum=args.concurrency, window_seconds=args.window_s) if yielding else None
        result = warm(lambda: PostgresEngine.connect(spec), "postgres", plan.units, args.concurrency, hot_units,
                      after, ysettings)
        if application is None:  # fully warm, on the emulated volume and beside the same machine's load
            result["full_tps"] = tps(spec, 10, args.clients)
        else:
            time.sleep(args.full_s)
            result["app"] = application.stop()
        return result
    finally:
        server.stop()
        volume.unmount()


def judge_window_s(rate: float) -> int:
    """The judge's window: whole seconds holding about ``P99_SAMPLES`` scheduled transactions (one second at a high
    rate), so that a window's p99 is not merely its slowest transaction."""
    return max(1, math.ceil(P99_SAMPLES / rate)) if rate > 0 else 1


def warm_seconds(name: str, rows: list[tuple[str, dict]], script: str) -> float | None:
    """For the plan ``warm``: how long the application runs alone on the volume ``alone`` (the plan right before
    it) left hydrated, ``alone``'s warm-up time; None for every other plan. Exits when ``warm`` does not follow
    ``alone``."""
    if name != "warm":
        return None
    if not rows or rows[0][0] != "alone":
        sys.exit(f"{script}: the plan warm runs right after alone (--plans alone,warm,...)")
    return rows[0][1]["seconds"]


def windows_of(r: dict, width: int) -> dict[int, list]:
    """The application's transactions of a plan by window of its warm-up (scheduled start)."""
    windows: dict[int, list] = {}
    for at, ms in r.get("app") or []:
        windows.setdefault(int((at - r["started"]) // width), []).append(ms)
    return windows


def judge(r: dict, rate: float, reference: Callable[[int], float]) -> dict:
    """Per window of the warm-up (``judge_window_s``), by the transactions' scheduled start: their p99 against twice
    ``reference(window)``, and whether the rate was met, i.e. at least 95 % of the transactions pgbench scheduled in
    it ran (the others it skipped: already later than ``--latency-limit``). A fixed count (95 % of the mean rate)
    would fail windows that only drew fewer arrivals: pgbench's documentation of --rate, "The rate is targeted by
    starting transactions along a Poisson-distributed schedule time line", and of --latency-limit, transactions
    "that lag behind schedule by more than limit ms ... are not sent to the server at all ... counted and reported
    separately as skipped"; at 68 tx/s a 1-s window draws fewer than 65 about a third of the time. From when on
    every window met the goal."""
    seconds, width = r["seconds"], judge_window_s(rate)
    windows = windows_of(r, width)
    last_bad, worst = -1, 0.0
    for w in range(math.ceil(seconds / width)):
        txs = windows.get(w, [])
        done = [ms for ms in txs if ms is not None]
        p = p99(done) if done else float("inf")
        ok = p <= 2 * reference(w) and len(done) >= 0.95 * len(txs) and len(txs) >= 0.5 * rate * width
        worst = max(worst, p if done else 0.0)
        if not ok:
            last_bad = w
    met_from = min(seconds, (last_bad + 1) * width)
    return {"met_from_s": met_from, "share": met_from / seconds if seconds else 0.0, "worst_p99": worst}


def print_table(rows: list[tuple[str, dict]], rate: float) -> None:
    """The goal's table of one benchmark's plans (this module's and ``yielding_mariadb``'s). Two references of
    "fully warm": the steady one, the least of the runs' tails after their warm-up (the application's own buffers
    warm by then), and, where the plan ``warm`` ran, the application on the fully hydrated volume from the same
    restart at the same time since it (the server's buffers start cold in every plan: what the warm-up cannot
    change). Each plan's warm-up against the warm-up alone, and ``judge``'s windows against each reference."""
    tails = [p99([ms for at, ms in r["app"] if at > r["started"] + r["seconds"] + 2 and ms is not None])
             for _, r in rows if r.get("app")]
    steady = min(t for t in tails if t > 0) if tails else 0.0
    width = judge_window_s(rate)
    warm = next((r for n, r in rows if n == "warm"), None)
    curve = {w: p99([ms for ms in txs if ms is not None]) for w, txs in windows_of(warm, width).items()} if warm \
        else {}
    alone = next((r["seconds"] for n, r in rows if n == "alone"), None)
    print(f"\nthe goal: p99 <= 2x fully warm and >= 95 % of the transactions scheduled at {rate:.0f} tx/s run, in "
          f"every {width}-s window from <= 10 % of the warm-up on; warm-up <= 1.3x alone. Fully warm: steady "
          f"{steady:.2f} ms (the least of the runs' tails)"
          + (f"; the warm run's p99 per {width}-s window since the restart: "
             + " ".join(f"{w * width}:{p:.0f}" for w, p in sorted(curve.items())[:40]) if curve else "") + "\n")
    print("| plan | warm-up (s) | / alone | hot set read after (s) | goal met from, vs the warm run at the same time "
          f"(s, share) | vs the steady p99 (s, share) | worst {width}-s p99 (ms) |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        ratio = f"{r['seconds'] / alone:.2f}" if alone else "—"
        if r.get("app") and name != "warm":
            j = judge(r, rate, lambda w: curve.get(w, steady)) if curve else None
            k = judge(r, rate, lambda w: steady)
            same = f"{j['met_from_s']:.0f} ({100 * j['share']:.0f} %)" if j else "—"
            app = f"{same} | {k['met_from_s']:.0f} ({100 * k['share']:.0f} %) | {k['worst_p99']:.1f}"
        else:
            app = "— | — | —"
        print(f"| {name} | {r['seconds']:.1f} | {ratio} | {r['hot_after']:.1f} | {app} |")


def prepare(server: Server, builder: EmulatedVolume, args: argparse.Namespace) -> tuple[ConnectionSpec, float, Any]:
    """The database built on the unlimited volume (``builder``, mounted, the server started), everything read, its
    statistics reset, pgbench -S run on it (its tps) and the hot set profiled (``cutover_prep.hotset.take``); the
    server stopped and the volume unmounted after. The connection spec, the tps and the profile."""
    build(server, builder, args.scale, args.cold_mb)
    spec = server.spec(DATABASE)
    with psycopg.connect(host=spec.host, port=spec.port, user="postgres", dbname=DATABASE, autocommit=True) as c:
        c.execute("SELECT pg_stat_reset()")
        c.execute("SELECT pg_prewarm(oid) FROM pg_class WHERE relnamespace = 'public'::regnamespace "
                  "AND relkind IN ('r', 'i')")
    unlimited_tps = tps(spec, 10, args.clients)
    time.sleep(1.5)
    profile = take(spec, HotsetOptions(databases=(DATABASE,)), top=10)
    server.stop()
    builder.unmount()
    return spec, unlimited_tps, profile


def save_and_print(rows: list[tuple[str, dict]], rate: float, args: argparse.Namespace) -> None:
    """``--save``'s file (every plan's result, the application's transactions too), then the goal's table."""
    if args.save:
        args.save.write_text(json.dumps({"rate": rate, "args": vars(args) | {"save": str(args.save)}, "rows": rows},
                                        default=str))
    print_table(rows, rate)


def quietly(*steps: Callable[[], Any]) -> None:
    """Each step of a benchmark's cleanup, whatever the one before did (the server or volume already stopped)."""
    for step in steps:
        try:
            step()
        except Exception:  # noqa: BLE001 (already stopped)
            pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=5)
    parser.add_argument("--cold-mb", type=int, default=512)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--unit-mb", type=int, default=16)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--latency-limit-ms", type=float, default=50.0)
    parser.add_argument("--full-s", type=int, default=15, help="the application's run after the warm-up: the "
                        "fully warm p99 is the least of the runs' tails")
    parser.add_argument("--after-hot-set", type=int, default=1)
    parser.add_argument("--window-s", type=float, default=2.0, help="warmup.yielding.window_seconds")
    parser.add_argument("--shared-buffers", default="256MB")
    parser.add_argument("--plans", default="alone,warm,buffer,after_hot_set,yielding", help="alone first: the rate "
                        "is half of the fully warm tps measured after it (unless --rate); warm right after it: the "
                        "application on the volume alone left fully hydrated, from a restarted server (the reference)")
    parser.add_argument("--rate", type=float, help="the application's fixed rate (tx/s)")
    parser.add_argument("--save", type=Path, help="write every plan's result (the application's transactions too) "
                        "to this JSON file: --judge prints the table of a saved run again")
    parser.add_argument("--judge", type=Path, help="print the table of a run saved with --save, run nothing")
    args = parser.parse_args()
    if args.judge:
        saved = json.loads(args.judge.read_text())
        print_table([(name, r) for name, r in saved["rows"]], saved["rate"])
        return
    if reason := fuse_unavailable():
        sys.exit(f"benchmarks/yielding.py: {reason}")
    hotset.PGBENCH = shutil.which("pgbench") or hotset._pg_bin() / "pgbench"
    with tempfile.TemporaryDirectory(prefix="cutover-prep-yielding-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        Server.shared_buffers = args.shared_buffers
        server = Server(work)
        builder, volume = EmulatedVolume(work / "vol", VolumeProfile.unlimited()), EmulatedVolume(work / "vol",
                                                                                                   DEFAULT_PROFILE)
        logdir = work / "log"
        logdir.mkdir()
        os.chmod(logdir, 0o777)
        builder.mount()
        server.start()
        try:
            spec, unlimited_tps, profile = prepare(server, builder, args)
            names = tuple(profile.names())
            print(f"pgbench -S on the unlimited volume, everything read: {unlimited_tps:.0f} tps; {args.concurrency} "
                  f"sessions, {args.cold_mb} MiB cold; ceiling {DEFAULT_PROFILE.ceiling_mib_per_s:.2f} MiB/s wall",
                  flush=True)
            rate = args.rate
            plans = {"alone": dict(app=False, after=None, yielding=True),
                     "warm": dict(app=True, after=None, yielding=False),
                     "buffer": dict(app=True, after=None, yielding=False),
                     "after_hot_set": dict(app=True, after=args.after_hot_set, yielding=False),
                     "yielding": dict(app=True, after=None, yielding=True)}
            rows = []
            for name in args.plans.split(","):
                hydrated_for = warm_seconds(name, rows, "benchmarks/yielding.py")
                r = run_once(server, volume, spec, names, args, rate=rate, logdir=logdir, hydrated_for=hydrated_for,
                             **plans[name])
                rows.append((name, r))
                if rate is None and "full_tps" in r:  # half of fully warm, measured after the warm-up alone
                    rate = r["full_tps"] / 2
                    print(f"fully warm pgbench -S (emulated volume, after the warm-up alone): {r['full_tps']:.0f} tps; "
                          f"the application: -R {rate:.0f} --latency-limit {args.latency_limit_ms:g} "
                          f"-c {args.clients}", flush=True)
                print(f"{name}: warm-up {r['seconds']:.1f} s, hot set after {r['hot_after']:.1f} s; levels "
                      + " ".join(f"{t:.0f}:{lv}" for t, lv in r["levels"][::4]), flush=True)
                if r["decisions"]:
                    print(f"{name}: decisions [t, cap, app reads/s, ms/read, decision]: {r['decisions']}", flush=True)
            save_and_print(rows, rate, args)
        finally:
            quietly(server.stop, builder.unmount, volume.unmount)


if __name__ == "__main__":
    main()
