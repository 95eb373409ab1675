"""The local harness's own time per warm-up unit, against the database's (issue 33 §3).

A local run's warm-up wall time holds the database's reads and the harness's time between them: moto's Step
Functions interpreter (AcquireSlot, WarmUnit, ReleaseSlot for each unit), its DynamoDB and S3, the handlers' own
Python, all in one process. This runs the warm-up alone (no benchmark, no probes) on the embedded sample database
(ordinary disk: the reads are the page cache's, so what is left is the harness) at a few unit sizes and prints, from
the run's own findings and unit items:

- ``wall``: the warm-up's wall time (first unit start to last unit end, ``timings.warmup_wall_seconds``);
- ``reading``: the time during which a reader was inside a read (``read_rate.database_reading_seconds``);
- ``harness share``: 1 - reading / wall;
- ``cpu_s_per_unit``: the process's CPU seconds (every thread) for the run, per unit: the harness's cost, which a
  busy machine's wall times hide;
- ``per unit``: the slot-seconds not spent reading, per unit: (concurrency x wall - the chunks' summed seconds)
  / units; and ``in handler``: the WarmUnit handlers' own seconds outside their reads, per unit (unit ``seconds``
  minus its chunks' seconds): the rest is the workflow between units.

Run: PYTHONPATH=lambdas python benchmarks/harness_overhead.py [--size-mb 40] [--unit-mb 1 4] [--concurrency 4]
     [--arms cuts none]
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path


def measure(size_mb: int, unit_mbs: list[int], concurrency: int, arms: list[str]) -> list[dict]:
    from cutover_prep.engines.postgres.sample_db import embedded_postgres
    from cutover_prep.local import moto_fast
    from cutover_prep.local.emulated import Emulation
    from cutover_prep.local.input_file import Sections
    from cutover_prep.local.runner import LocalOptions, _execute

    cuts = moto_fast.patches
    rows = []
    with embedded_postgres(size_mb) as (spec, _), tempfile.TemporaryDirectory() as work:
        for unit_mb, arm in ((u, a) for u in unit_mbs for a in arms):
            moto_fast.patches = cuts if arm == "cuts" else list  # "none": moto as it is
            run_id = f"overhead-{unit_mb}mb-{arm}-{int(time.time())}"
            sections = Sections(warmup={"max_concurrency": concurrency, "unit_mb": unit_mb},
                                benchmark={"enabled": False, "metrics_wait_minutes": 0, "compare_limits": False})
            options = LocalOptions(out=Path(work) / run_id, run_id=run_id, progress=False, sections=sections)
            started, cpu = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF)
            result = _execute(spec, options, Emulation(reason="benchmark: the ordinary disk"))
            seconds = time.monotonic() - started
            after = resource.getrusage(resource.RUSAGE_SELF)
            cpu_s = after.ru_utime - cpu.ru_utime + after.ru_stime - cpu.ru_stime
            doc = json.loads((Path(result.out) / "findings.json").read_text())
            wall = doc["timings"]["warmup_wall_seconds"]
            reading = doc["read_rate"].get("database_reading_seconds")
            busy = doc["timings"]["unit_busy_seconds"]
            n = doc["units"]["total"]
            timeline = doc.get("warmup_timeline") or {}
            chunk_seconds = sum(float(s) for s in _chunk_seconds(Path(result.out)))
            rows.append({"unit_mb": unit_mb, "arm": arm, "units": n, "cpu_s_per_unit": round(cpu_s / n, 3),
                         "run_seconds": round(seconds, 1), "wall": round(wall, 2),
                         "reading": reading, "harness_share": round(1 - reading / wall, 3) if wall else None,
                         "per_unit_s": round((concurrency * wall - chunk_seconds) / n, 3),
                         "in_handler_per_unit_s": round((busy - chunk_seconds) / n, 3),
                         "mib_per_s_wall": doc["read_rate"]["mib_per_s_wall"],
                         "mib_per_s_database": doc["read_rate"].get("mib_per_s_database"),
                         "buckets": timeline.get("bucket_seconds")})
    return rows


def _chunk_seconds(out: Path) -> list[float]:
    """Every chunk's seconds, from the unit items the local run saved (``local.state``: ``.local-state``)."""
    from cutover_prep.dal.store import _item as plain_item
    from cutover_prep.local.state import STATE_DIR, TABLE_FILE

    items = json.loads((out / STATE_DIR / TABLE_FILE).read_text())["items"]
    seconds: list[float] = []
    for raw in items:
        item = plain_item(raw)
        if str(item.get("sk", "")).startswith("UNIT#"):
            seconds += [float(c[2]) for c in item.get("chunks") or []]
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=40)
    parser.add_argument("--unit-mb", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--arms", nargs="+", default=["cuts"], choices=["cuts", "none"],
                        help="with local.moto_fast's cuts, or moto as it is (A/B, interleaved)")
    args = parser.parse_args()
    for row in measure(args.size_mb, args.unit_mb, args.concurrency, args.arms):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
