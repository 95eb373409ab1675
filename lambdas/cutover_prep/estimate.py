"""The estimate of a warm-up before it starts: what it will read, at what rate, how long, what it costs.

Pure (no AWS, no database): ``cutover-prep estimate`` and the run's Discover step both feed it the
plan that ``warmup.discovery.make_plan`` made (the same discovery and planner), and what is known
about the rate. The rate comes from the first source that has one:

1. ``measured_run``: the wall-clock warm-up rate of an earlier run of the same target (its findings);
2. ``emulated_volume``: a local run on the emulated restored volume: the volume's own ceiling (wall
   clock, after its time scale), as the emulator enforces it;
3. ``instance_limits``: the instance class and storage RDS reports, through ``analysis.limits``
   (the *sustained* level: a warm-up outlasts a gp2 burst or an instance's EBS burst);
4. ``emulator_default``: the emulator's calibrated default profile (``local.volume.profile``:
   db.t3.medium, gp3 100 GiB, calibrated on seed 002), its ceiling as the emulator computes it.

Sources 2-4 are also bounded by the readers: ``concurrency`` x seed 002's cold rate of one reader
(630,808 blocks of 8 KiB read in 4:44 by one full scan of a restored db.t2.medium: 17.4 MiB/s),
divided by the emulator's time scale when the volume is emulated.

The cost is what AWS charges for the warm-up (prices below, us-east-1, x86, before free tiers):
Lambda GB-seconds (the WarmUnit function's memory x the estimated seconds x the readers) and
requests, Step Functions state transitions (per run and per unit, from the run's ASL file), and the
restored instance's hours when the run restores one and a price per hour is known.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from cutover_prep.analysis.limits import LimitsError, expected_limits
from cutover_prep.warmup.planning import RANGE_COST_BYTES
from cutover_prep.workflows import FUNCTIONS

MIB = 1024 * 1024
# seed 002: 630,808 physical reads of 8 KiB in 4 min 44 s, one cold direct-path full scan (db.t2.medium)
SEED_002_BYTES, SEED_002_SECONDS = 630_808 * 8192, 4 * 60 + 44
READER_COLD_MIB_PER_S = round(SEED_002_BYTES / SEED_002_SECONDS / MIB, 2)  # 17.35
EBS_IO_KIB = 256  # the largest IO an EBS SSD volume counts as one (the emulator's IO_KIB)

# The emulator's calibrated default profile (local/volume/profile.py DEFAULT_PROFILE; a test keeps them equal:
# local/ is not shipped to Lambda, so the Discover step cannot import it).
DEFAULT_PROFILE_FACTS = {"instance_class": "db.t3.medium", "storage_type": "gp3", "allocated_gb": 100,
                         "iops": None, "storage_throughput": None}

# Prices, us-east-1, x86, list prices before the free tiers (checked 2026-11-23):
# https://aws.amazon.com/lambda/pricing/ - duration $0.0000166667 per GB-second (first 6 billion GB-s a month),
# requests $0.20 per 1 million.
LAMBDA_USD_PER_GB_SECOND = 0.0000166667
LAMBDA_USD_PER_REQUEST = 0.20 / 1_000_000
# https://aws.amazon.com/step-functions/pricing/ - Standard workflows, $0.025 per 1,000 state transitions.
SFN_USD_PER_TRANSITION = 0.025 / 1_000
PRICES_SOURCE = ("aws.amazon.com/lambda/pricing and aws.amazon.com/step-functions/pricing, us-east-1 x86 list "
                 "prices (2026-11-23), free tiers not deducted")
# State transitions of statemachines/cutover-run.asl.json on its paths without failures (each branch and wait loop once;
# tests/unit/test_estimate.py derives both from the file): the run itself, and each work unit in the WarmUp Map.
TRANSITIONS_PER_RUN = 26
TRANSITIONS_PER_UNIT = 7
LAMBDA_REQUESTS_PER_UNIT = 3  # AcquireSlot, WarmUnit, ReleaseSlot
WARM_FUNCTION = "WarmUnit"

Source = Literal["measured_run", "emulated_volume", "instance_limits", "emulator_default"]


class Rate(BaseModel):
    """The read rate assumed for the whole warm-up (all readers together) and where it comes from."""

    mib_per_s: float = Field(gt=0)
    source: Source
    detail: str  # one line, for people


class Cost(BaseModel):
    lambda_gb_seconds: float
    lambda_requests: int
    lambda_usd: float
    state_transitions: int
    sfn_usd: float
    instance_hours: float | None = None
    instance_price_per_hour_usd: float | None = None
    instance_usd: float | None = None
    prices: str = PRICES_SOURCE
    notes: list[str] = Field(default_factory=list)


class Estimate(BaseModel):
    """``cutover-prep estimate --json`` and the run item's / findings' ``estimate``."""

    engine: str
    bytes_to_read: int
    units: int
    segments: int
    ranges: int = 0  # read calls planned (pieces of segments): each costs RANGE_COST_BYTES beyond its bytes
    concurrency: int  # readers at once: max_concurrency, at most one per unit
    assumed_mib_per_s: float
    source: Source
    source_detail: str
    estimated_seconds: float
    cost_usd: float
    cost: Cost


# ---- the rate ---------------------------------------------------------------------------------

def readers_for(max_concurrency: int, plan_summary: dict[str, Any]) -> int:
    """Readers at once: ``max_concurrency``, at most one per unit (at least one)."""
    return max(1, min(int(max_concurrency), int(plan_summary.get("units") or 0) or 1))


def _readers(count: int) -> str:
    return f"{count} reader" + ("" if count == 1 else "s")


def readers_bound(concurrency: int, time_scale: float = 1.0) -> float:
    """What ``concurrency`` cold readers read at most, MiB/s (seed 002's rate per reader)."""
    return concurrency * READER_COLD_MIB_PER_S / time_scale


def measured_rate(findings: list[dict[str, Any]]) -> Rate | None:
    """The latest earlier run (of the same target) that read something, by its wall-clock warm-up rate."""
    def finished(f: dict[str, Any]) -> str:
        return str((f.get("timings") or {}).get("finished_at") or "")

    for f in sorted(findings, key=finished, reverse=True):
        rate = (f.get("read_rate") or {}).get("mib_per_s_wall")
        read = (f.get("bytes") or {}).get("read") or 0
        if rate and rate > 0 and read > 0:
            level = ((f.get("warmup") or {}).get("concurrency") or {}).get("level")
            at = f" at concurrency {level}" if level else ""
            return Rate(mib_per_s=round(float(rate), 3), source="measured_run",
                        detail=f"run {f.get('run_id')} of this target read {read / MIB:,.1f} MiB at "
                               f"{float(rate):,.2f} MiB/s{at} (finished {finished(f)[:19] or '?'})")
    return None


def emulated_rate(evidence: dict[str, Any] | None, concurrency: int) -> Rate | None:
    """A local run on the emulated volume: its wall-clock ceiling, bounded by the readers (scaled)."""
    if not evidence or not evidence.get("emulated") or not evidence.get("ceiling_mib_per_s"):
        return None
    profile = evidence.get("profile") or {}
    scale = float(profile.get("time_scale") or 1.0)
    ceiling = float(evidence["ceiling_mib_per_s"])
    readers = readers_bound(concurrency, scale)
    return Rate(mib_per_s=round(min(ceiling, readers), 3), source="emulated_volume",
                detail=f"the emulated volume ({profile.get('storage_type')} {profile.get('allocated_gb')} GiB on "
                       f"{profile.get('instance_class')}, time scale {scale:g}): ceiling {ceiling:,.2f} MiB/s, "
                       f"{_readers(concurrency)} at most {readers:,.2f} MiB/s")


def emulator_ceiling_mib_s(facts: dict[str, Any], engine: str) -> float:
    """The emulator's ceiling of a configuration (``VolumeProfile.emulated_ceiling_mib_s``): the peak
    throughput, at most the peak IOPS x 256 KiB."""
    peak = _limits(facts, engine)["effective"]["peak"]
    by_iops = float(peak["iops"]) * EBS_IO_KIB / 1024
    kbps = peak["throughput_kbps"]
    return by_iops if kbps is None else min(float(kbps) / 1024, by_iops)


def limits_rate(facts: dict[str, Any], engine: str, concurrency: int) -> Rate | None:
    """The instance's and storage's sustained limit (``analysis.limits``), bounded by the readers; None
    when the class or storage is unknown to the table."""
    if not facts.get("instance_class") or not facts.get("storage_type") or not facts.get("allocated_gb"):
        return None
    try:
        limits = _limits(facts, engine)
    except LimitsError:
        return None
    level = limits["effective"]["sustained"]
    if level.get("throughput_kbps") is None:
        return None
    ceiling = float(level["throughput_kbps"]) / 1024
    readers = readers_bound(concurrency)
    return Rate(mib_per_s=round(min(ceiling, readers), 3), source="instance_limits",
                detail=f"{facts['instance_class']}, {facts['storage_type']} {facts['allocated_gb']:g} GiB: sustained "
                       f"{ceiling:,.1f} MiB/s ({level.get('throughput_label')}); {_readers(concurrency)} at most "
                       f"{readers:,.1f} MiB/s (seed 002: {READER_COLD_MIB_PER_S} MiB/s per cold reader)")


def default_rate(engine: str, concurrency: int) -> Rate:
    facts = DEFAULT_PROFILE_FACTS
    ceiling = emulator_ceiling_mib_s(facts, engine)
    readers = readers_bound(concurrency)
    return Rate(mib_per_s=round(min(ceiling, readers), 3), source="emulator_default",
                detail=f"no run of this target measured and no instance class known: the emulator's calibrated "
                       f"default ({facts['instance_class']}, {facts['storage_type']} {facts['allocated_gb']} GiB, "
                       f"seed 002): ceiling {ceiling:,.1f} MiB/s; {_readers(concurrency)} at most {readers:,.1f} MiB/s")


def choose_rate(*, engine: str, concurrency: int, measured: list[dict[str, Any]] | None = None,
                emulation: dict[str, Any] | None = None, instance: dict[str, Any] | None = None) -> Rate:
    """The first source that has a rate, in the module docstring's order."""
    return (measured_rate(measured or []) or emulated_rate(emulation, concurrency)
            or limits_rate(instance or {}, engine, concurrency) or default_rate(engine, concurrency))


def instance_limits_facts(instance: dict[str, Any] | None) -> dict[str, Any]:
    """DescribeInstance's facts (``rds.instance_facts``) as ``limits_rate`` takes them."""
    i = instance or {}
    return {"instance_class": i.get("db_instance_class") or i.get("instance_class"),
            "storage_type": i.get("storage_type"),
            "allocated_gb": i.get("allocated_storage_gb") or i.get("allocated_storage"),
            "iops": i.get("iops"), "storage_throughput": i.get("storage_throughput")}


def _limits(facts: dict[str, Any], engine: str) -> dict[str, Any]:
    return expected_limits(str(facts["instance_class"]), str(facts["storage_type"]), float(facts["allocated_gb"]),
                           iops=facts.get("iops"), throughput_mbps=facts.get("storage_throughput"), engine=engine)


# ---- time and cost ----------------------------------------------------------------------------

def cost_of(*, seconds: float, readers: int, units: int, restore: bool = False,
            instance_price_per_hour_usd: float | None = None, price_note: str | None = None) -> Cost:
    memory_gb = FUNCTIONS[WARM_FUNCTION].memory_mb / 1024
    gb_s = memory_gb * seconds * readers
    requests = units * LAMBDA_REQUESTS_PER_UNIT
    transitions = TRANSITIONS_PER_RUN + units * TRANSITIONS_PER_UNIT
    notes = ["the benchmark's points, waits for a slot and a unit's continuations add transitions and "
             "invocations not counted here"]
    cost = Cost(lambda_gb_seconds=round(gb_s, 1), lambda_requests=requests,
                lambda_usd=round(gb_s * LAMBDA_USD_PER_GB_SECOND + requests * LAMBDA_USD_PER_REQUEST, 6),
                state_transitions=transitions, sfn_usd=round(transitions * SFN_USD_PER_TRANSITION, 6), notes=notes)
    if restore:
        cost.instance_hours = round(seconds / 3600, 4)
        if instance_price_per_hour_usd is not None:
            cost.instance_price_per_hour_usd = instance_price_per_hour_usd
            cost.instance_usd = round(cost.instance_hours * instance_price_per_hour_usd, 6)
        cost.notes.append(price_note or "the restored instance's price per hour is not known: its hours are not in "
                                        "cost_usd")
    return cost


def estimate(*, engine: str, plan_summary: dict[str, Any], max_concurrency: int, rate: Rate, ranges: int = 0,
             restore: bool = False, instance_price_per_hour_usd: float | None = None,
             price_note: str | None = None) -> Estimate:
    """The estimate of a plan (``Plan.summary()``, its ``ranges`` over all units) read by ``max_concurrency``
    readers at ``rate``. Each range costs ``RANGE_COST_BYTES`` beyond its bytes, as the planner counts it (a
    call, a first touch): many tiny relations are bound by round trips, not bytes."""
    units, total = int(plan_summary.get("units") or 0), int(plan_summary.get("bytes") or 0)
    readers = readers_for(max_concurrency, plan_summary)
    seconds = (total + ranges * RANGE_COST_BYTES) / MIB / rate.mib_per_s
    cost = cost_of(seconds=seconds, readers=readers, units=units, restore=restore,
                   instance_price_per_hour_usd=instance_price_per_hour_usd, price_note=price_note)
    usd = cost.lambda_usd + cost.sfn_usd + (cost.instance_usd or 0.0)
    return Estimate(engine=engine, bytes_to_read=total, units=units, segments=int(plan_summary.get("segments") or 0),
                    ranges=ranges,
                    concurrency=readers, assumed_mib_per_s=rate.mib_per_s, source=rate.source,
                    source_detail=rate.detail, estimated_seconds=round(seconds, 1) if seconds >= 1 else
                    round(seconds, 3), cost_usd=_usd(usd), cost=cost)


def _usd(value: float) -> float:
    """Dollars, rounded to 6 places but never to zero: a positive cost stays positive."""
    return max(round(value, 6), 0.000001) if value > 0 else 0.0


def seconds_text(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:,.1f} s"
    minutes = seconds / 60
    return f"{minutes:,.0f} min" if minutes < 120 else f"{minutes / 60:,.1f} h"


def lines(est: Estimate) -> list[str]:
    """The estimate for the terminal."""
    c = est.cost
    out = [f"to read: {est.bytes_to_read / MIB:,.1f} MiB in {est.units} units ({est.segments} segments, "
           f"{est.ranges} ranges, {est.engine})",
           f"rate:    {est.assumed_mib_per_s:,.2f} MiB/s assumed ({est.source}: {est.source_detail})",
           f"time:    {seconds_text(est.estimated_seconds)} with {_readers(est.concurrency)}",
           f"cost:    ${est.cost_usd:,.4f} (Lambda {c.lambda_gb_seconds:,.0f} GB-s, {c.lambda_requests} requests: "
           f"${c.lambda_usd:,.4f}; Step Functions {c.state_transitions} transitions: ${c.sfn_usd:,.4f}"
           + (f"; instance {c.instance_hours:,.2f} h: " + (f"${c.instance_usd:,.4f}" if c.instance_usd is not None
                                                           else "price unknown") if c.instance_hours is not None
              else "") + ")"]
    out += [f"  note: {n}" for n in c.notes]
    return out

