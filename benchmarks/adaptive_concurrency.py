"""Benchmark: the adaptive warm-up concurrency against fixed levels, on a modelled volume.

One run per setting of the whole local workflow (moto Step Functions, the real ASL and
handlers, the slots in moto's DynamoDB) over the same embedded PostgreSQL sample database.
The database's files are in the page cache here, so concurrency would change nothing;
every read is therefore stretched to what a modelled volume allows (printed with the
results, it is a model, not a measurement of EBS):

- one reader gets at most ``--reader-mib`` MiB/s (the latency-bound rate of one session
  on a cold volume: each first touch waits for S3),
- all readers together at most ``--ceiling-mib`` MiB/s (the volume's or instance's
  throughput cap).

The best fixed level is ``ceiling / reader``; above it more readers only add load. The
table shows, per setting, the warm-up's wall time and rate, its ratio to the ceiling, and
for the adaptive run the level it settled on and the levels it went through.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest import mock

from cutover_prep.engines.postgres.engine import PostgresEngine
from cutover_prep.engines.postgres.sample_db import embedded_postgres
from cutover_prep.local.runner import LocalOptions, _execute

MIB = 2**20


class ModelledVolume:
    """Stretch each read to ``max(bytes / reader_rate, the ceiling's queue)``."""

    def __init__(self, reader_mib_s: float, ceiling_mib_s: float) -> None:
        self.reader, self.ceiling = reader_mib_s * MIB, ceiling_mib_s * MIB
        self.next_free = 0.0
        self.lock = threading.Lock()

    def wrap(self, real_read: Any) -> Any:
        volume = self

        def read_range(engine: PostgresEngine, rng: Any) -> Any:
            started = time.perf_counter()
            result = real_read(engine, rng)
            with volume.lock:  # the shared ceiling: each read takes its turn of bytes / ceiling
                volume.next_free = max(volume.next_free, started) + result.bytes / volume.ceiling
                done_by_ceiling = volume.next_free
            finish = max(started + result.bytes / volume.reader, done_by_ceiling)
            # not time.sleep: the local harness patches it process-wide (its Wait states do not sleep)
            threading.Event().wait(max(0.0, finish - time.perf_counter()))
            return replace(result, seconds=time.perf_counter() - started)
        return read_range


def run_once(spec: Any, out: Path, warmup: dict[str, Any], volume: ModelledVolume) -> dict[str, Any]:
    with mock.patch.object(PostgresEngine, "read_range", volume.wrap(PostgresEngine.read_range)):
        result = _execute(spec, LocalOptions(out=out, warmup=warmup, progress=False, emulate=False))
    return json.loads((Path(result["out"]) / "findings.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mb", type=int, default=400)
    parser.add_argument("--reader-mib", type=float, default=4.0)
    parser.add_argument("--ceiling-mib", type=float, default=24.0)
    parser.add_argument("--max-concurrency", type=int, default=16)
    parser.add_argument("--out", default="out/bench-adaptive")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    base = {"unit_mb": 8, "chunk_mb": 1, "max_concurrency": args.max_concurrency}
    settings = {
        "adaptive (start 2)": {**base, "adaptive": True},
        "fixed 2": {**base, "adaptive": False, "max_concurrency": 2},
        f"fixed {args.max_concurrency} (max)": {**base, "adaptive": False},
    }
    best = args.ceiling_mib / args.reader_mib
    print(f"modelled volume: {args.reader_mib} MiB/s per reader, {args.ceiling_mib} MiB/s in all "
          f"(best fixed level {best:g}); sample database {args.size_mb} MB, 8 MiB units, 1 MiB chunks")
    print(f"{'setting':<22} {'MiB':>7} {'wall s':>7} {'MiB/s':>7} {'/ceiling':>8}  levels (settled)")
    with embedded_postgres(args.size_mb) as (spec, _):
        for name, warmup in settings.items():
            findings = run_once(spec, Path(args.out) / name.split()[0], warmup,
                                ModelledVolume(args.reader_mib, args.ceiling_mib))
            mib = findings["bytes"]["read"] / MIB
            wall = findings["timings"]["warmup_wall_seconds"] or 0.001
            concurrency = (findings.get("warmup") or {}).get("concurrency") or {}
            levels = [s["level"] for s in concurrency.get("samples") or []]
            path = " > ".join(str(lv) for i, lv in enumerate(levels) if i == 0 or lv != levels[i - 1])
            print(f"{name:<22} {mib:>7.1f} {wall:>7.2f} {mib / wall:>7.1f} {mib / wall / args.ceiling_mib:>8.2f}  "
                  f"{path or '-'} (level {concurrency.get('level')}, {concurrency.get('settled')})")


if __name__ == "__main__":
    main()
