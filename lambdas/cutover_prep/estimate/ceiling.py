"""Which concurrency reaches a configuration's read ceiling, and what limits the warm-up (issue 36 §4; pure).

The ceiling is the sustained read throughput of the instance class and its storage (``analysis.limits``:
the lower of the instance's EBS bandwidth and the volume's throughput, and which side binds). Each cold
reader reads at most seed 002's one-reader rate (``READER_COLD_MIB_PER_S``); ``readers_to_ceiling`` readers
reach the ceiling; fewer readers are the limit themselves, more only queue. The deployed run's readers are
Lambda functions: the account's concurrency (1,000 by default per Region, AWS Lambda quotas:
https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html) and ``warmup.max_concurrency`` cap them.
"""

from __future__ import annotations

import math
from typing import Any

from cutover_prep.analysis.limits import LimitsError, expected_limits

READER_COLD_MIB_PER_S = 17.35  # estimate.compute's (seed 002); equal by a test
LAMBDA_DEFAULT_CONCURRENCY = 1000
TIB_MIB = 1024 * 1024


def ceiling(facts: dict[str, Any], engine: str) -> dict[str, Any] | None:
    """``{mib_per_s, bound_by, label}`` of the sustained level, or None when the class or storage is unknown."""
    try:
        level = expected_limits(facts["instance_class"], facts["storage_type"], float(facts["allocated_gb"]),
                                iops=facts.get("iops"), throughput_mbps=facts.get("storage_throughput"),
                                engine=engine)["effective"]["sustained"]
    except (LimitsError, KeyError, TypeError, ValueError):
        return None
    if not level.get("throughput_kbps"):
        return None
    return {"mib_per_s": round(float(level["throughput_kbps"]) / 1024, 1),
            "bound_by": level.get("throughput_bound_by"), "label": level.get("throughput_label")}


def readers_to_ceiling(ceiling_mib_s: float) -> int:
    return max(1, math.ceil(ceiling_mib_s / READER_COLD_MIB_PER_S))


def advice(facts: dict[str, Any], engine: str, concurrency: int) -> dict[str, Any] | None:
    """What limits a warm-up of ``concurrency`` readers on this configuration, and the concurrency that
    reaches its ceiling; None when the configuration is unknown."""
    top = ceiling(facts, engine)
    if top is None:
        return None
    needed = readers_to_ceiling(top["mib_per_s"])
    readers_mib = concurrency * READER_COLD_MIB_PER_S
    limited_by = "readers" if readers_mib < top["mib_per_s"] else str(top["bound_by"] or "storage")
    rate = min(readers_mib, top["mib_per_s"])
    text = (f"ceiling {top['mib_per_s']:,.1f} MiB/s ({top['label']}), reached at concurrency {needed}; "
            + (f"{concurrency} readers reach {rate:,.1f} MiB/s: the readers limit it (raise "
               f"warmup.max_concurrency to {needed})" if limited_by == "readers" else
               f"{concurrency} readers are enough: the {limited_by} limits it"
               + (f" ({concurrency - needed} more than needed only queue)" if concurrency > needed else "")))
    if needed > LAMBDA_DEFAULT_CONCURRENCY:
        text += f"; above the default Lambda concurrency of {LAMBDA_DEFAULT_CONCURRENCY} per Region"
    return {"ceiling_mib_per_s": top["mib_per_s"], "bound_by": top["bound_by"], "readers_to_ceiling": needed,
            "limited_by": limited_by, "mib_per_s": round(rate, 1), "text": text}


def hours_per_tib(mib_per_s: float) -> float:
    return TIB_MIB / mib_per_s / 3600
