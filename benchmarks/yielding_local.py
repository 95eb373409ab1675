"""The yielding benchmark through the product's own run (issue 36 §1): ``cutover-prep local`` beside pgbench.

``benchmarks/yielding.py`` judges the controller's algorithm in a loop of its own around the same functions; this
one judges the product: every plan is a real ``cutover-prep local --dsn`` run (moto playing AWS, the Step
Functions workflow, the handlers, the slots reading the yield signal through ``deps.activity_reader``) against
the same private PostgreSQL on the same emulated restored volume, with ``pgbench -S -R <half of fully warm>``
started with the run. The plan is the run input's ``warmup`` section (``--input``): the hot set from
``cutover-prep hotset``'s profile, ``max_concurrency``, ``unit_mb``, ``yielding.enabled`` and ``after_hot_set``.
Everything is read from the run's own findings: the warm-up's start and wall time (``timings``), when the hot set
was warm (``hot_set.warm_after_s``) and the controller's decisions (``warmup.concurrency.yielding``). The windows are
judged as ``yielding.py`` judges them (``judge``, ``print_table``), from the warm-up's first unit on.

``--pin``: the database server on CPU 1, everything else (the volume daemon, the run's moto and handlers, pgbench)
on CPU 0. In AWS the EBS volume, Lambda, Step Functions and the application's client do not run on the
instance's CPU; only the server's backends (the application's and the warm-up's own) do.

    .venv/bin/python benchmarks/yielding_local.py [--cold-mb 1536] [--shared-buffers 64MB] [--pin] [--save F]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import hotset  # benchmarks/hotset.py: the database, the hot set, pgbench
import yielding  # benchmarks/yielding.py: the server, the application, the judge
from hotset import DATABASE, tps

from cutover_prep.local.volume import DEFAULT_PROFILE, EmulatedVolume, VolumeProfile, fuse_unavailable

REPO = Path(__file__).resolve().parent.parent
CLI = REPO / ".venv" / "bin" / "cutover-prep"
SERVER_CPU, OTHERS_CPU = "1", "0"


class Server(yielding.Server):
    """yielding.py's server, started on ``cpus`` when set (taskset: the postmaster's children inherit it)."""

    cpus: str | None = None

    def _run(self, tool: str, *args: str) -> None:
        pin = ["taskset", "-c", self.cpus] if self.cpus and tool == "pg_ctl" else []
        subprocess.run([*pin, "runuser", "-u", "postgres", "--", str(self.bin / tool), *args], check=True,
                       capture_output=True)


def run_input(args: argparse.Namespace, hot: dict[str, Any], *, after: int | None, yielding_on: bool) -> dict:
    """The plan as a run input's ``warmup`` section (schema/run-input.schema.json)."""
    warmup: dict[str, Any] = {"max_concurrency": args.concurrency, "unit_mb": args.unit_mb, "hot_set": hot,
                              "yielding": {"enabled": yielding_on, "window_seconds": args.window_s}}
    if after is not None:
        warmup["after_hot_set"] = {"max_concurrency": after}
    return {"warmup": warmup, "benchmark": {"enabled": False}}


def local_run(dsn: str, pinned: bool, work: Path, name: str, data: dict) -> dict:
    """One ``cutover-prep local --dsn DSN`` run of the plan (on ``OTHERS_CPU`` when ``pinned``); its findings."""
    runs = work / "out"
    runs.mkdir(exist_ok=True)
    out = runs / f"{len(list(runs.iterdir()))}-{name}"  # a plan run twice writes its evidence anew
    plan_file = work / f"{out.name}.json"
    plan_file.write_text(json.dumps(data))
    cmd = [str(CLI), "local", "--dsn", dsn, "--input", str(plan_file), "--out", str(out), "--run-id",
           f"yielding-{name}-{int(time.time())}", "--no-progress", "--preflight", "warn"]
    pin = ["taskset", "-c", OTHERS_CPU] if pinned else []
    done = subprocess.run([*pin, *cmd], capture_output=True, text=True, cwd=work)  # noqa: S603 - our own CLI
    findings = out / "findings.json"
    if not findings.is_file():
        sys.exit(f"benchmarks/yielding_local.py: the {name} run wrote no findings (exit {done.returncode}): "
                 f"{done.stderr.strip()[-600:]}")
    return json.loads(findings.read_text())


def result_of(findings: dict) -> dict:
    """What the judge reads of a run's findings: the warm-up's wall time, start (epoch s), when the hot set was
    warm, and the controller's decisions."""
    timings, hot = findings["timings"], findings.get("hot_set") or {}
    concurrency = (findings.get("warmup") or {}).get("concurrency") or {}
    decisions = ((concurrency.get("yielding") or {}).get("samples")) or []
    return {"seconds": float(timings["warmup_wall_seconds"]),
            "started": datetime.fromisoformat(timings["warmup_started_at"]).timestamp(),
            "hot_after": float(hot.get("warm_after_s") or 0.0),
            "levels": [(s["t_s"], s["level"]) for s in concurrency.get("samples") or []],
            "decisions": [[d["t_s"], d["level"], d["app_reads_per_s"], d["app_ms_per_read"], d["decision"]]
                          for d in decisions],
            "verdict": (findings.get("verdict") or {}).get("verdict"),
            "source": (concurrency.get("yielding") or {}).get("source"),
            "buffer_cache": hot.get("buffer_cache"),
            "hot_set": {k: hot.get(k) for k in ("names_matched", "units", "units_done", "warm_after_s", "pct_of_warmup",
                                                "later_units_finished_first")}}


def run_once(server: Server, volume: EmulatedVolume, work: Path, name: str, args: argparse.Namespace, hot: dict,
             *, app: bool, after: int | None, yielding_on: bool, rate: float | None,
             hydrated_for: float | None = None) -> dict:
    """One plan from a restarted server on the restored volume (``hydrated_for``: the plan ``warm``, no run)."""
    if hydrated_for is None:
        volume.restore()
    volume.mount()
    server.start()
    logdir = work / "log"
    try:
        spec = server.spec(DATABASE)
        application = yielding.App(spec, rate, args.latency_limit_ms, args.clients, logdir) if app else None
        if application is not None and server.cpus:
            subprocess.run(["taskset", "-a", "-p", "-c", OTHERS_CPU, str(application.proc.pid)], check=True,
                           capture_output=True)
        if hydrated_for is not None and application is not None:
            started = time.time()
            time.sleep(hydrated_for + args.full_s)
            return {"seconds": hydrated_for, "started": started, "hot_after": 0.0, "levels": [], "decisions": [],
                    "app": application.stop()}
        dsn = f"host={spec.host} port={spec.port} user=postgres dbname={DATABASE}"
        result = result_of(local_run(dsn, bool(server.cpus), work, name,
                                     run_input(args, hot, after=after, yielding_on=yielding_on)))
        if application is None:  # fully warm, on the emulated volume
            result["full_tps"] = tps(spec, 10, args.clients)
        else:
            time.sleep(args.full_s)
            result["app"] = application.stop()
        return result
    finally:
        server.stop()
        volume.unmount()


def plans(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Each plan's application, ``after_hot_set`` level and yielding (``warm``: the application alone on the volume
    ``alone`` left hydrated; ``buffer``: full concurrency after the hot set)."""
    return {"alone": dict(app=False, after=None, yielding_on=True),
            "warm": dict(app=True, after=None, yielding_on=False),
            "buffer": dict(app=True, after=None, yielding_on=False),
            "after_hot_set": dict(app=True, after=args.after_hot_set, yielding_on=False),
            "yielding": dict(app=True, after=None, yielding_on=True)}


def run_plans(args: argparse.Namespace, script: str, run: Callable[..., dict],
              said: Callable[[float, float], str]) -> tuple[list[tuple[str, dict]], float]:
    """``args.plans`` in order, each ``run(name, rate, hydrated_for, **plan)``; the application's rate half the fully
    warm rate of the first plan that measured it (``said(tps, rate)`` prints it) unless ``--rate``; each plan's
    line and the controller's decisions printed; the rows and the rate."""
    rows: list[tuple[str, dict]] = []
    rate = args.rate
    for name in args.plans.split(","):
        r = run(name, rate, yielding.warm_seconds(name, rows, script), **plans(args)[name])
        rows.append((name, r))
        if rate is None and "full_tps" in r:
            rate = r["full_tps"] / 2
            print(said(r["full_tps"], rate), flush=True)
        print(f"{name}: warm-up {r['seconds']:.1f} s, hot set after {r['hot_after']:.1f} s, verdict "
              f"{r.get('verdict')}, signal {r.get('source')}, hot set into the cache {r.get('buffer_cache')}",
              flush=True)
        if r["decisions"]:
            print(f"{name}: decisions [t, cap, app reads/s, ms/read, decision]: {r['decisions']}", flush=True)
    return rows, rate


def arguments(parser: argparse.ArgumentParser, *, plans: str) -> argparse.Namespace:
    """The arguments both benchmarks through the product take (this one's and ``yielding_local_mariadb.py``'s),
    after the ones ``parser`` already holds; parsed."""
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--unit-mb", type=int, default=16)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--latency-limit-ms", type=float, default=50.0)
    parser.add_argument("--full-s", type=int, default=15)
    parser.add_argument("--after-hot-set", type=int, default=1)
    parser.add_argument("--window-s", type=float, default=2.0)
    parser.add_argument("--plans", default=plans)
    parser.add_argument("--rate", type=float)
    parser.add_argument("--pin", action="store_true", help="the server on CPU 1, every other process on CPU 0")
    parser.add_argument("--save", type=Path)
    return parser.parse_args()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=5)
    parser.add_argument("--cold-mb", type=int, default=1536)
    parser.add_argument("--shared-buffers", default="64MB")
    args = arguments(parser, plans="alone,warm,buffer,after_hot_set,yielding")
    if reason := fuse_unavailable():
        sys.exit(f"benchmarks/yielding_local.py: {reason}")
    if args.pin and (os.cpu_count() or 1) < 2:
        sys.exit("benchmarks/yielding_local.py: --pin needs two CPUs")
    hotset.PGBENCH = shutil.which("pgbench") or hotset._pg_bin() / "pgbench"
    with tempfile.TemporaryDirectory(prefix="cutover-prep-yielding-local-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        Server.shared_buffers = args.shared_buffers
        Server.cpus = SERVER_CPU if args.pin else None
        server = Server(work)
        builder = EmulatedVolume(work / "vol", VolumeProfile.unlimited())
        volume = EmulatedVolume(work / "vol", DEFAULT_PROFILE)
        (work / "log").mkdir()
        os.chmod(work / "log", 0o777)
        builder.mount()
        server.start()
        try:
            hot = yielding.prepare(server, builder, args)[2].to_input()
            if args.pin:
                os.sched_setaffinity(0, {int(OTHERS_CPU)})  # this process and what it starts: the volume daemon
            print(f"{args.concurrency} units at once, {args.cold_mb} MiB cold, shared_buffers {args.shared_buffers}, "
                  f"hot set {len(hot['names'])} names; pinned: {args.pin}", flush=True)
            rows, rate = run_plans(
                args, "benchmarks/yielding_local.py",
                lambda name, rate, hydrated_for, **plan: run_once(server, volume, work, name, args, hot, rate=rate,
                                                                  hydrated_for=hydrated_for, **plan),
                lambda full, rate: f"fully warm pgbench -S after the warm-up alone: {full:.0f} tps; the application: "
                f"-R {rate:.0f} --latency-limit {args.latency_limit_ms:g} -c {args.clients}")
            yielding.save_and_print(rows, rate, args)
        finally:
            yielding.quietly(server.stop, builder.unmount, volume.unmount)


if __name__ == "__main__":
    main()
