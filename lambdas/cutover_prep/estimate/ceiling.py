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
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from cutover_prep.analysis.limits import InvalidStorage, Limits, LimitsError, limits_of

READER_COLD_MIB_PER_S = 17.35  # estimate.compute's (seed 002); equal by a test
LAMBDA_DEFAULT_CONCURRENCY = 1000
TIB_MIB = 1024 * 1024


class InstanceFacts(BaseModel):
    """A configuration's instance class and storage (the estimate's ``instance``: DescribeInstance's facts, or the
    restore's class and storage)."""

    model_config = ConfigDict(frozen=True)

    instance_class: str | None = None
    storage_type: str | None = None
    allocated_gb: int | float | None = None
    iops: int | float | None = None
    storage_throughput: int | float | None = None  # MiB/s, as RDS StorageThroughput

    def limits(self, engine: str) -> Limits:
        """Its limits (``analysis.limits``); ``LimitsError`` when the class, storage or size is unknown."""
        if not self.instance_class or not self.storage_type or self.allocated_gb is None:
            raise InvalidStorage("the instance class, storage type and size are not all known")
        return limits_of(self.instance_class, self.storage_type, float(self.allocated_gb), iops=self.iops,
                         throughput_mbps=self.storage_throughput, engine=engine)


@dataclass(frozen=True)
class Ceiling:
    """The sustained read throughput of a configuration, which side binds it and how to say it."""

    mib_per_s: float
    bound_by: str | None
    label: str | None


@dataclass(frozen=True)
class Advice:
    """What limits a warm-up of some readers on a configuration, and the concurrency that reaches its ceiling."""

    ceiling_mib_per_s: float
    bound_by: str | None
    readers_to_ceiling: int
    limited_by: str
    mib_per_s: float
    text: str


def ceiling(facts: InstanceFacts, engine: str) -> Ceiling | None:
    """The sustained level's ceiling, or None when the class or storage is unknown."""
    try:
        level = facts.limits(engine).sustained
    except (LimitsError, TypeError, ValueError):
        return None
    if not level.throughput_kbps:
        return None
    return Ceiling(mib_per_s=round(float(level.throughput_kbps) / 1024, 1), bound_by=level.throughput_bound_by,
                   label=level.throughput_label)


def readers_to_ceiling(ceiling_mib_s: float) -> int:
    return max(1, math.ceil(ceiling_mib_s / READER_COLD_MIB_PER_S))


def advice(facts: InstanceFacts, engine: str, concurrency: int) -> Advice | None:
    """What limits a warm-up of ``concurrency`` readers on this configuration, and the concurrency that
    reaches its ceiling; None when the configuration is unknown."""
    top = ceiling(facts, engine)
    if top is None:
        return None
    needed = readers_to_ceiling(top.mib_per_s)
    readers_mib = concurrency * READER_COLD_MIB_PER_S
    limited_by = "readers" if readers_mib < top.mib_per_s else str(top.bound_by or "storage")
    rate = min(readers_mib, top.mib_per_s)
    text = (f"ceiling {top.mib_per_s:,.1f} MiB/s ({top.label}), reached at concurrency {needed}; "
            + (f"{concurrency} readers reach {rate:,.1f} MiB/s: the readers limit it (raise "
               f"warmup.max_concurrency to {needed})" if limited_by == "readers" else
               f"{concurrency} readers are enough: the {limited_by} limits it"
               + (f" ({concurrency - needed} more than needed only queue)" if concurrency > needed else "")))
    if needed > LAMBDA_DEFAULT_CONCURRENCY:
        text += f"; above the default Lambda concurrency of {LAMBDA_DEFAULT_CONCURRENCY} per Region"
    return Advice(ceiling_mib_per_s=top.mib_per_s, bound_by=top.bound_by, readers_to_ceiling=needed,
                  limited_by=limited_by, mib_per_s=round(rate, 1), text=text)


def hours_per_tib(mib_per_s: float) -> float:
    return TIB_MIB / mib_per_s / 3600
