"""The modelled warm-up time per TiB for common configurations (docs/hours-per-tib.md; issue 36 §4; pure).

One row per configuration: the sustained read ceiling (``estimate.ceiling``), the hours per TiB at a few
concurrencies (``min(readers x 17.35 MiB/s, ceiling)``: the estimate's own model), and the concurrency that
reaches the ceiling. ``python benchmarks/hours_per_tib.py --write`` writes the page; a test keeps the page
equal to this module's output.
"""

from __future__ import annotations

from cutover_prep.engines.registry import DEFAULT_ENGINE
from cutover_prep.estimate.ceiling import (
    READER_COLD_MIB_PER_S,
    InstanceFacts,
    ceiling,
    hours_per_tib,
    readers_to_ceiling,
)

CLASSES = ("db.t3.medium", "db.m6i.large", "db.r6i.xlarge", "db.r6i.2xlarge", "db.r6i.4xlarge", "db.r6i.8xlarge",
           "db.r6i.16xlarge")
STORAGE = (  # (label, storage facts): 1 TiB each
    ("gp2 1 TiB", {"storage_type": "gp2", "allocated_gb": 1024}),
    ("gp3 1 TiB (12,000 IOPS, 500 MiB/s)", {"storage_type": "gp3", "allocated_gb": 1024}),
    ("gp3 1 TiB (16,000 IOPS, 1,000 MiB/s)", {"storage_type": "gp3", "allocated_gb": 1024, "iops": 16000,
                                             "storage_throughput": 1000}),
    ("io2 1 TiB (40,000 IOPS)", {"storage_type": "io2", "allocated_gb": 1024, "iops": 40000}),
)
CONCURRENCIES = (4, 16, 64)
# AWS's paid EBS initialization (Provisioned Rate for Volume Initialization, 100-300 MiB/s; EC2 volumes only,
# not offered for RDS: ../shared/NOTES.md, "RDS facts")
EBS_PROVISIONED_RATES_MIB_S = (100, 300)


def _h(hours: float) -> str:
    return f"{hours:.1f}" if hours < 10 else f"{hours:.0f}"


def rows(engine: str = DEFAULT_ENGINE) -> list[list[str]]:
    out = []
    for cls in CLASSES:
        for label, storage in STORAGE:
            top = ceiling(InstanceFacts(instance_class=cls, **storage), engine)
            if top is None:
                continue
            ceil = top.mib_per_s
            per = [_h(hours_per_tib(min(c * READER_COLD_MIB_PER_S, ceil))) for c in CONCURRENCIES]
            out.append([cls, label, f"{ceil:,.0f} ({top.bound_by})", *per, str(readers_to_ceiling(ceil)),
                        _h(hours_per_tib(ceil))])
    return out


def markdown(engine: str = DEFAULT_ENGINE) -> str:
    head = ["instance class", "storage", "ceiling MiB/s (bound by)",
            *[f"h/TiB at {c} readers" for c in CONCURRENCIES], "readers to the ceiling", "h/TiB at the ceiling"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows(engine)]
    ebs = "; ".join(f"{r} MiB/s: {hours_per_tib(r) * 60:.0f} min per TiB" for r in EBS_PROVISIONED_RATES_MIB_S)
    tail = f"For comparison, EBS's paid volume initialization on EC2 (not offered for RDS): {ebs}."
    return "\n".join(lines) + f"\n\n{tail}\n"
