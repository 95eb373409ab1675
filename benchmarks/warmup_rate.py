"""Benchmark: warm-up rate of the local run vs a raw sequential read of the same files.

One run, one machine: an embedded PostgreSQL (pgserver) with the generated sample
database; (1) the whole local workflow (moto Step Functions, real handlers), (2) a plain
sequential read of every planned relation fork's files with Python. Both read through the
OS page cache (no cold EBS here), so the ratio measures our overhead, not the disk.
Also prints read amplification (blocks read / blocks planned) from findings.json.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import psycopg

from cutover_prep.engines.postgres.sample_db import embedded_postgres
from cutover_prep.local.runner import LocalOptions, _execute


def raw_read(spec, plan: dict) -> tuple[int, float]:
    """Read every planned relation fork's files sequentially, 1 MiB at a time."""
    with psycopg.connect(host=spec.host, port=spec.port, dbname=spec.database, user=spec.user) as conn:
        data_dir = Path(conn.execute("SHOW data_directory").fetchone()[0])
        paths = []
        for seg in plan["segments"]:
            oid_fork = seg["kind"].split(".")[1]
            base = conn.execute("SELECT pg_relation_filepath(oid) FROM pg_class WHERE oid = %s",
                                (seg["oid"],)).fetchone()[0]
            suffix = "" if oid_fork == "main" else f"_{oid_fork}"
            first = data_dir / f"{base}{suffix}"
            paths += [first] + sorted(first.parent.glob(f"{first.name}.[0-9]*"))
    total, started = 0, time.perf_counter()
    for path in paths:
        with open(path, "rb", buffering=0) as fh:
            while chunk := fh.read(1 << 20):
                total += len(chunk)
    return total, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=300)
    parser.add_argument("--out", default="out/bench-warmup")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    with embedded_postgres(args.size_mb) as (spec, _):
        warmup = {"unit_mb": 64, "max_concurrency": 4}
        started = time.perf_counter()
        result = _execute(spec, LocalOptions(out=Path(args.out), warmup=warmup, progress=False))
        run_seconds = time.perf_counter() - started
        out = Path(result["out"])
        findings = json.loads((out / "findings.json").read_text())
        plan = json.loads((out / "plan.json").read_text())
        units = {u["unit_id"]: u for u in json.loads((out / "units.json").read_text())}
        oids = {r["segment"]: r["locator"]["oid"] for u in units.values() for r in u["ranges"]}
        for seg in plan["segments"]:
            seg["oid"] = oids[seg["key"]]
        raw_bytes, raw_seconds = raw_read(spec, plan)
    mib = findings["bytes"]["read"] / 2**20
    wall = findings["timings"]["warmup_wall_seconds"] or 0.001
    print(f"sample: {mib:,.1f} MiB planned and read, {findings['units']['total']} units, "
          f"method {findings['read_methods']}")
    print(f"local workflow: warm-up {wall:.2f} s ({mib / wall:,.1f} MiB/s), whole run incl. orchestration "
          f"{run_seconds:.2f} s ({mib / run_seconds:,.1f} MiB/s)")
    print(f"raw sequential read of the same files: {raw_bytes / 2**20:,.1f} MiB in {raw_seconds:.2f} s "
          f"({raw_bytes / 2**20 / raw_seconds:,.1f} MiB/s)")
    print(f"ratio warm-up rate / raw rate: {(mib / wall) / (raw_bytes / 2**20 / raw_seconds):.3f}; "
          f"whole run / raw: {(mib / run_seconds) / (raw_bytes / 2**20 / raw_seconds):.3f}")
    print(f"read amplification (blocks read / planned): {findings['read_amplification']}; "
          f"coverage {findings['coverage_pct']} %")


if __name__ == "__main__":
    main()
