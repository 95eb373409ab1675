"""Benchmark: plan 1,000,000 synthetic extents.

Prints seconds, peak memory (tracemalloc) and unit sizes. A mix shaped like an Oracle
catalogue: many small segments (1 extent), mid-size tables (tens of extents) and a few
huge partitioned tables (thousands of extents), some of them unsplittable (indexes, LOBs).
"""

from __future__ import annotations

import random
import time
import tracemalloc

from cutover_prep.engines.base import Extent, Segment
from cutover_prep.warmup.planning import PlanOptions, plan_units

TARGET_EXTENTS = 1_000_000
BLOCK = 8192


def synthetic_segments(seed: int = 7) -> list[Segment]:
    rng = random.Random(seed)
    segments: list[Segment] = []
    extents_made = 0
    block = 0
    while extents_made < TARGET_EXTENTS:
        shape = rng.random()
        if shape < 0.6:
            n, size = 1, 8
        elif shape < 0.97:
            n, size = rng.randint(10, 60), 128
        else:
            n, size = rng.randint(2_000, 8_000), 1024
        n = min(n, TARGET_EXTENTS - extents_made)
        extents = []
        for _ in range(n):
            extents.append(Extent(rng.randint(1, 64), block, size))
            block += size
        splittable = rng.random() > 0.2
        segments.append(Segment(schema=f"S{len(segments) % 50}", name=f"T{len(segments)}",
                                kind="TABLE" if splittable else "INDEX", bytes=n * size * BLOCK,
                                block_size=BLOCK, extents=tuple(extents), locator={"n": len(segments)},
                                splittable=splittable))
        extents_made += n
    return segments


def main() -> None:
    segments = synthetic_segments()
    total = sum(s.bytes for s in segments)
    tracemalloc.start()
    started = time.perf_counter()
    plan = plan_units(segments, PlanOptions(priority=("S1.*", "S2.*")))
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    summary = plan.summary()
    planned_extents = sum(len(r.extents) for u in plan.units for r in u.ranges)
    print(f"segments: {len(segments):,}  extents: {TARGET_EXTENTS:,}  bytes: {total / 2**30:,.1f} GiB")
    print(f"planning: {seconds:.2f} s, peak traced memory during planning: {peak / 2**20:,.1f} MiB")
    print(f"units: {summary['units']:,}  target {summary['unit_bytes_target'] / 2**20:,.0f} MiB  "
          f"max {summary['max_unit_bytes'] / 2**20:,.0f} MiB  mean {summary['mean_unit_bytes'] / 2**20:,.0f} MiB  "
          f"max/mean {summary['max_unit_bytes'] / max(1, summary['mean_unit_bytes']):.2f}  "
          f"oversized (unsplittable) {summary['oversized_units']}")
    oversized = set(plan.oversized_units)
    regular = [u.bytes for u in plan.units if u.unit_id not in oversized]
    mean = sum(regular) / len(regular)
    print(f"units within target: max {max(regular) / 2**20:,.0f} MiB  mean {mean / 2**20:,.0f} MiB"
          f"  max/mean {max(regular) / mean:.2f}")
    print(f"extent pieces planned: {planned_extents:,}; bytes conserved: {plan.bytes == total}")


if __name__ == "__main__":
    main()
