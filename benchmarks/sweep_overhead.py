"""Benchmark: how long the default benchmark phase takes locally, and how much of it is
orchestration (Step Functions states, Lambda calls, DynamoDB/S3 evidence, metrics and
analysis) rather than measuring.

One run, one machine: an embedded PostgreSQL (pgserver) with the generated sample; the
local workflow with the local run's defaults (``cutover-prep local``: 5 s per point, the
default sessions 1/2/4/8, CloudWatch recorded missing at once since moto has none).

measuring   = the probes' and points' own windows (started_at .. finished_at)
phase wall  = from the cold probe's start to the end of the run, minus the warm-up's wall
orchestration = phase wall - measuring;  ratio = orchestration / phase wall
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from datetime import datetime
from pathlib import Path

from cutover_prep.engines.postgres.sample_db import embedded_postgres
from cutover_prep.local.runner import LocalOptions, _execute


def seconds(a: str, b: str) -> float:
    return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=300)
    parser.add_argument("--point-seconds", type=float, default=5)
    parser.add_argument("--out", default="out/bench-sweep")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    with embedded_postgres(args.size_mb) as (spec, _):
        bench = {"seconds_per_point": args.point_seconds, "metrics_wait_minutes": 0, "compare_limits": False}
        started = time.perf_counter()
        result = _execute(spec, LocalOptions(out=Path(args.out), warmup={"unit_mb": 64, "max_concurrency": 4},
                                             benchmark=bench, progress=False))
        run_seconds = time.perf_counter() - started
    findings = json.loads((Path(result["out"]) / "findings.json").read_text())
    b, t = findings["benchmark"], findings["timings"]
    probes = [p for p in b["probes"].values() if p.get("status") == "DONE"]
    points = [p for p in b["points"] if p.get("status") == "DONE"]
    measuring = sum(seconds(p["started_at"], p["finished_at"]) for p in probes + points)
    phase = seconds(b["probes"]["cold"]["started_at"], t["finished_at"]) - (t["warmup_wall_seconds"] or 0)
    print(f"benchmark {b['status']}: {len(probes)} probes, {len(points)} points "
          f"({args.point_seconds:g} s each); whole local run {run_seconds:.1f} s")
    print(f"benchmark phase wall {phase:.2f} s, measuring {measuring:.2f} s, "
          f"orchestration {phase - measuring:.2f} s; ratio orchestration/phase {(phase - measuring) / phase:.3f}")
    for p in points:
        print(f"  {p['point_id']:<22} {p['iops']:>12,.0f} IO/s {p['throughput_kbps'] / 1024:>9,.1f} MiB/s "
              f"{(p.get('latency_us') or {}).get('p99', 0):>9,.0f} us p99")


if __name__ == "__main__":
    main()
