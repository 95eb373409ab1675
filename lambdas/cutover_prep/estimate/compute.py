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

Bytes are bytes: ``bytes_to_read`` is exactly what the work units read (each range's blocks x block
size, as ``warmup.unit`` counts ``bytes_read``), and ``counted`` says what they are (user relations,
catalogues, large objects, per database) and what the census names that is not counted (left out by
the input's selection, or not readable by the run). A range also costs *time* beyond its bytes (a
call, the commit of its progress, the first touch of a cold block): ``range_seconds`` per range and
reader, so the time is ``bytes / rate + ranges x range_seconds / readers``. The planner weighs a
range as ``RANGE_COST_BYTES`` (1 MiB) to balance units by time; that weight is a time (what one cold
reader reads in it: ``RANGE_SECONDS``), never bytes, and is never reported as bytes.

The cost is what AWS charges for the warm-up (prices below, us-east-1, x86, before free tiers):
Lambda GB-seconds (the WarmUnit function's memory x the estimated seconds x the readers) and
requests, Step Functions state transitions (per run and per unit, from the run's ASL file), and the
restored instance's hours when the run restores one and a price per hour is known.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, Field

from cutover_prep.analysis.limits import LimitsError
from cutover_prep.dal.records.census import CensusObjectJson
from cutover_prep.dal.records.findings import Findings
from cutover_prep.dal.records.plan import PlanSummary
from cutover_prep.engines.registry import UnknownEngine, family
from cutover_prep.estimate.ceiling import InstanceFacts
from cutover_prep.estimate.ceiling import advice as concurrency_advice
from cutover_prep.models.warmup import RANGE_COST_BYTES
from cutover_prep.pricing.costs import Cost, cost_of

MIB = 1024 * 1024
# seed 002: 630,808 physical reads of 8 KiB in 4 min 44 s, one cold direct-path full scan (db.t2.medium)
SEED_002_BYTES, SEED_002_SECONDS = 630_808 * 8192, 4 * 60 + 44
READER_COLD_MIB_PER_S = round(SEED_002_BYTES / SEED_002_SECONDS / MIB, 2)  # 17.35
EBS_IO_KIB = 256  # the largest IO an EBS SSD volume counts as one (the emulator's IO_KIB)
# What one range costs beyond its bytes, in seconds of one reader: the planner's RANGE_COST_BYTES (1 MiB) at one
# cold reader's rate (0.058 s). On AWS a range is at least one read call, one DynamoDB commit of its progress and
# a first touch of a cold snapshot block; an emulated volume says its own (first touch + service time, scaled).
RANGE_SECONDS = round(RANGE_COST_BYTES / MIB / READER_COLD_MIB_PER_S, 4)
# What a range costs a local run beyond the volume's own latency (the emulated volume exists only in a local run):
# its chunk's commit through moto's DynamoDB and the in-process Step Functions, on this project's 2-core machines.
# Measured 2026-11-25: `make demo` (615 ranges, 16 readers) spent ~13 s of its 36 s at ~0 MiB/s reading the
# catalogues' tiny ranges, 0.38 s per range and reader with the volume's 65 ms; a local --dsn run of 300 small
# tables (2,091 ranges, 4 readers, no emulation) 0.29 s per range and reader. A fit, not a law: a faster machine
# pays less.
LOCAL_RANGE_SECONDS = 0.3
NOT_READABLE = ("no privilege", "not readable by SQL", "engine-internal")  # engine-internal: issue 33
EXCLUDED_NAMES = 20  # databases named in counted.excluded_databases (the run item stays small on a server of many)

# The emulator's calibrated default profile (local/volume/profile.py DEFAULT_PROFILE; a test keeps them equal:
# local/ is not shipped to Lambda, so the Discover step cannot import it).
DEFAULT_PROFILE_FACTS = InstanceFacts(instance_class="db.t3.medium", storage_type="gp3", allocated_gb=100)


Source = Literal["measured_run", "emulated_volume", "instance_limits", "emulator_default"]


class Rate(BaseModel):
    """The read rate assumed for the whole warm-up (all readers together) and where it comes from, and the
    time one range costs one reader beyond its bytes (``range_seconds``; 0 when the rate already holds it)."""

    mib_per_s: float = Field(gt=0)
    source: Source
    detail: str  # one line, for people
    range_seconds: float = Field(default=RANGE_SECONDS, ge=0)
    range_detail: str = (f"{RANGE_SECONDS * 1000:.0f} ms per range and reader: the planner's 1 MiB per range "
                         f"at one cold reader's {READER_COLD_MIB_PER_S} MiB/s")
    # which concurrency reaches the configuration's ceiling and what limits this one (estimate.ceiling; issue 36)
    advice: str | None = None


class DatabaseBytes(BaseModel):
    """The bytes the units read of one database (None: the engine has no databases, e.g. MySQL's schemas)."""

    database: str | None
    bytes: int


class Counted(BaseModel):
    """What ``bytes_to_read`` is (bytes each, they add up to it) and what the census names that it is not."""

    user_relations: int = 0
    catalogues: int = 0
    large_objects: int = 0
    by_database: list[DatabaseBytes] = Field(default_factory=list)  # largest first
    excluded_by_input: int | None = None  # the census's objects the selection leaves out (None: no census)
    excluded_databases: list[str] = Field(default_factory=list)  # the first EXCLUDED_NAMES
    excluded_database_count: int = 0
    not_readable: int | None = None  # "no privilege" / "not readable by SQL", per the census


class Estimate(BaseModel):
    """``cutover-prep estimate --json`` and the run item's / findings' ``estimate``."""

    engine: str
    bytes_to_read: int
    units: int
    segments: int
    ranges: int = 0  # pieces of segments, each read by at least one call: each costs range_seconds
    counted: Counted | None = None  # what the bytes are (None: not told, e.g. no segments handed in)
    concurrency: int  # readers at once: max_concurrency, at most one per unit
    assumed_mib_per_s: float
    source: Source
    source_detail: str
    range_seconds: float = 0.0  # per range and reader, beyond its bytes
    range_detail: str = ""
    seconds_bytes: float = 0.0  # bytes_to_read at assumed_mib_per_s
    seconds_ranges: float = 0.0  # ranges x range_seconds / concurrency
    estimated_seconds: float
    hint: str | None = None  # one line when the selection reads no user relation (set by the caller)
    advice: str | None = None  # the rate's: the concurrency that reaches the ceiling, and what limits it
    cost_usd: float
    cost: Cost


class EmulatedProfile(BaseModel):
    """The emulated volume's profile (``local.volume.profile``'s ``describe``: the fields the estimate reads)."""

    time_scale: float | None = None
    storage_type: str | None = None
    allocated_gb: int | float | None = None
    instance_class: str | None = None
    first_touch_mean_ms: float | None = None
    io_latency_ms: float | None = None


class EmulationEvidence(BaseModel):
    """A local run's emulated volume, as its evidence object says it (``EMULATION_EVIDENCE``)."""

    emulated: bool = False
    ceiling_mib_per_s: float | None = None
    profile: EmulatedProfile = EmulatedProfile()


class FindingsTarget(BaseModel):
    """What an earlier run's findings name as its target: the RDS instance, or a local run's database."""

    db_instance_identifier: str | None = None
    engine: str | None = None
    host: str | None = None
    port: int | str | None = None
    database: str | None = None


class Selection(BaseModel):
    """What the warm-up selects, in the run input's words (``cutover-prep estimate``'s output and hint)."""

    databases: list[str] | None = None
    include_schemas: list[str] | None = None
    exclude_schemas: list[str] | None = None
    include_system: bool | None = None


class RangeCost(NamedTuple):
    """What one range costs one reader beyond its bytes, and how that was found."""

    seconds: float
    detail: str


# ---- the rate ---------------------------------------------------------------------------------

def readers_for(max_concurrency: int, plan_summary: PlanSummary) -> int:
    """Readers at once: ``max_concurrency``, at most one per unit of the plan's summary (at least one)."""
    return _readers_for(max_concurrency, plan_summary.units)


def _readers_for(max_concurrency: int, units: int) -> int:
    return max(1, min(int(max_concurrency), int(units or 0) or 1))


def _readers(count: int) -> str:
    return f"{count} reader" + ("" if count == 1 else "s")


def readers_bound(concurrency: int, time_scale: float = 1.0) -> float:
    """What ``concurrency`` cold readers read at most, MiB/s (seed 002's rate per reader)."""
    return concurrency * READER_COLD_MIB_PER_S / time_scale


def measured_rate(findings: list[Findings]) -> Rate | None:
    """The latest earlier run (of the same target) that read something, by its wall-clock warm-up rate."""
    def finished(f: Findings) -> str:
        return str(f.timings.finished_at or "")

    for f in sorted(findings, key=finished, reverse=True):
        rates = f.read_rate
        # a local run's wall time is the local harness's as much as the database's (issue 33 §3): its database rate
        local = f.storage_emulation is not None and bool(rates.mib_per_s_database)
        rate = rates.mib_per_s_database if local else rates.mib_per_s_wall
        read = (f.bytes.read if f.bytes else 0) or 0
        if rate and rate > 0 and read > 0:
            level = f.warmup.concurrency.level if f.warmup and f.warmup.concurrency else None
            at = f" at concurrency {level}" if level else ""
            which = " (the database's read rate: bytes over the time a reader was reading, not the local run's wall)"
            return Rate(mib_per_s=round(float(rate), 3), source="measured_run",
                        detail=f"run {f.run_id} of this target read {read / MIB:,.1f} MiB at "
                               f"{float(rate):,.2f} MiB/s{which if local else ''}{at} "
                               f"(finished {finished(f)[:19] or '?'})",
                        range_seconds=0.0, range_detail="in the measured wall-clock rate (its ranges took their "
                                                        "time in it)")
    return None


def emulated_rate(evidence: EmulationEvidence | None, concurrency: int) -> Rate | None:
    """A local run on the emulated volume: its wall-clock ceiling, bounded by the readers (scaled)."""
    if not evidence or not evidence.emulated or not evidence.ceiling_mib_per_s:
        return None
    profile = evidence.profile
    scale = float(profile.time_scale or 1.0)
    ceiling = float(evidence.ceiling_mib_per_s)
    readers = readers_bound(concurrency, scale)
    rate = Rate(mib_per_s=round(min(ceiling, readers), 3), source="emulated_volume",
                detail=f"the emulated volume ({profile.storage_type} {profile.allocated_gb} GiB on "
                       f"{profile.instance_class}, time scale {scale:g}): ceiling {ceiling:,.2f} MiB/s, "
                       f"{_readers(concurrency)} at most {readers:,.2f} MiB/s")
    cost = emulated_range_cost(profile)
    return rate if cost is None else rate.model_copy(update={"range_seconds": cost.seconds,
                                                             "range_detail": cost.detail})


def emulated_range_cost(profile: EmulatedProfile) -> RangeCost | None:
    """One range on the emulated volume: a first touch (the profile's mean) and one request's service time, in
    emulated ms times the time scale, plus the local run's own cost of a range (``LOCAL_RANGE_SECONDS``); None
    (the planner's default) when the profile does not say."""
    touch, service = profile.first_touch_mean_ms, profile.io_latency_ms
    if touch is None or service is None:
        return None
    scale = float(profile.time_scale or 1.0)
    volume = (float(touch) + float(service)) * scale / 1000
    seconds = volume + LOCAL_RANGE_SECONDS
    return RangeCost(round(seconds, 4),
                     f"{seconds * 1000:.0f} ms per range and reader: the emulated volume's first touch "
                     f"({float(touch):g} ms) and service time ({float(service):g} ms) x time scale {scale:g}: "
                     f"{volume * 1000:.0f} ms, and the local run's commit of it: "
                     f"{LOCAL_RANGE_SECONDS * 1000:.0f} ms")


def emulator_ceiling_mib_s(facts: InstanceFacts, engine: str) -> float:
    """The emulator's ceiling of a configuration (``VolumeProfile.emulated_ceiling_mib_s``): the peak
    throughput, at most the peak IOPS x 256 KiB."""
    peak = facts.limits(engine).peak
    by_iops = float(peak.iops) * EBS_IO_KIB / 1024
    kbps = peak.throughput_kbps
    return by_iops if kbps is None else min(float(kbps) / 1024, by_iops)


def limits_rate(facts: InstanceFacts, engine: str, concurrency: int) -> Rate | None:
    """The instance's and storage's sustained limit (``analysis.limits``), bounded by the readers; None
    when the class or storage is unknown to the table."""
    if not facts.instance_class or not facts.storage_type or not facts.allocated_gb:
        return None
    try:
        level = facts.limits(engine).sustained
    except LimitsError:
        return None
    if level.throughput_kbps is None:
        return None
    ceiling = float(level.throughput_kbps) / 1024
    readers = readers_bound(concurrency)
    found = concurrency_advice(facts, engine, concurrency)
    return Rate(mib_per_s=round(min(ceiling, readers), 3), source="instance_limits",
                advice=found.text if found else None,
                detail=f"{facts.instance_class}, {facts.storage_type} {facts.allocated_gb:g} GiB: sustained "
                       f"{ceiling:,.1f} MiB/s ({level.throughput_label}); {_readers(concurrency)} at most "
                       f"{readers:,.1f} MiB/s (seed 002: {READER_COLD_MIB_PER_S} MiB/s per cold reader)")


def default_rate(engine: str, concurrency: int) -> Rate:
    facts = DEFAULT_PROFILE_FACTS
    ceiling = emulator_ceiling_mib_s(facts, engine)
    readers = readers_bound(concurrency)
    found = concurrency_advice(facts, engine, concurrency)
    return Rate(mib_per_s=round(min(ceiling, readers), 3), source="emulator_default",
                advice=found.text if found else None,
                detail=f"no run of this target measured and no instance class known: the emulator's calibrated "
                       f"default ({facts.instance_class}, {facts.storage_type} {facts.allocated_gb} GiB, "
                       f"seed 002): ceiling {ceiling:,.1f} MiB/s; {_readers(concurrency)} at most {readers:,.1f} MiB/s")


def choose_rate(*, engine: str, concurrency: int, measured: list[Findings] | None = None,
                emulation: EmulationEvidence | None = None, instance: InstanceFacts | None = None) -> Rate:
    """The first source that has a rate, in the module docstring's order: the ``emulation`` evidence object and the
    ``instance`` facts (``instance_limits_facts``, with a restore's class and storage) read here."""
    return (measured_rate(measured or [])
            or emulated_rate(emulation, concurrency)
            or limits_rate(instance or InstanceFacts(), engine, concurrency)
            or default_rate(engine, concurrency))


class DescribedInstance(BaseModel):
    """DescribeInstance's facts (``rds.instance_facts``: the fields the estimate reads)."""

    db_instance_class: str | None = None
    instance_class: str | None = None
    storage_type: str | None = None
    allocated_storage_gb: int | float | None = None
    allocated_storage: int | float | None = None
    iops: int | float | None = None
    storage_throughput: int | float | None = None


def instance_limits_facts(instance: dict[str, Any] | None) -> InstanceFacts:
    """DescribeInstance's facts (``rds.instance_facts``) as ``choose_rate`` takes them (``InstanceFacts``'s)."""
    i = DescribedInstance.model_validate(instance or {})
    return InstanceFacts(instance_class=i.db_instance_class or i.instance_class, storage_type=i.storage_type,
                         allocated_gb=i.allocated_storage_gb or i.allocated_storage, iops=i.iops,
                         storage_throughput=i.storage_throughput)


# ---- time and cost ----------------------------------------------------------------------------

def estimate(*, engine: str, plan_summary: PlanSummary, max_concurrency: int, rate: Rate,
             ranges: int | None = None, counted: Counted | None = None, restore: bool = False,
             instance_price_per_hour_usd: float | None = None, price_note: str | None = None) -> Estimate:
    """The estimate of a plan (``Plan.summary()``; ``ranges`` over all units, default the summary's) read by
    ``max_concurrency`` readers at ``rate``. Its bytes are the plan's bytes, nothing added; each range costs
    ``rate.range_seconds`` of one reader beyond them (many tiny relations are bound by round trips, not bytes)."""
    units, total = plan_summary.units, plan_summary.bytes
    ranges = plan_summary.ranges if ranges is None else ranges
    readers = _readers_for(max_concurrency, units)
    seconds_bytes = total / MIB / rate.mib_per_s
    seconds_ranges = ranges * rate.range_seconds / readers
    seconds = seconds_bytes + seconds_ranges
    cost = cost_of(seconds=seconds, readers=readers, units=units, restore=restore,
                   instance_price_per_hour_usd=instance_price_per_hour_usd, price_note=price_note)
    usd = cost.lambda_usd + cost.sfn_usd + (cost.instance_usd or 0.0)
    return Estimate(engine=engine, bytes_to_read=total, units=units, segments=plan_summary.segments,
                    ranges=ranges, counted=counted,
                    concurrency=readers, assumed_mib_per_s=rate.mib_per_s, source=rate.source,
                    source_detail=rate.detail, range_seconds=rate.range_seconds, range_detail=rate.range_detail,
                    seconds_bytes=_round_s(seconds_bytes), seconds_ranges=_round_s(seconds_ranges),
                    estimated_seconds=_round_s(seconds), cost_usd=_usd(usd), cost=cost, advice=rate.advice)


def _round_s(seconds: float) -> float:
    return round(seconds, 1) if seconds >= 1 else round(seconds, 3)


# ---- what is counted --------------------------------------------------------------------------

def category_of(engine: str, schema: str, name: str) -> str:
    """``user_relations``, ``catalogues`` or ``large_objects`` of a segment (schema and name as discovery names
    them), by the engine family's ``catalogue_schemas`` and ``large_objects``."""
    try:
        fam = family(engine)
    except UnknownEngine:
        return "user_relations"
    if any(schema == s and name.startswith(prefix) for s, prefix in fam.large_objects):
        return "large_objects"
    folded = schema if fam.upper_case_identifiers else schema.lower()
    return "catalogues" if folded in fam.catalogue_schemas else "user_relations"


def counted_of(engine: str, segments: Iterable[Any], census: list[CensusObjectJson] | None = None) -> Counted:
    """What the planned ``segments`` are, in the bytes the units read (blocks x block size), and what the
    ``census`` (plan.json's) names beside them: left out by the selection, or not readable by the run."""
    out = Counted()
    planned: set[str] = set()
    by_db: dict[str | None, int] = {}
    for seg in segments:
        size = int(seg.blocks) * int(seg.block_size)
        planned.add(seg.key)
        kind = category_of(engine, str(seg.schema), str(seg.name))
        setattr(out, kind, getattr(out, kind) + size)
        by_db[seg.database] = by_db.get(seg.database, 0) + size
    out.by_database = [DatabaseBytes(database=db, bytes=n)
                       for db, n in sorted(by_db.items(), key=lambda kv: (-kv[1], str(kv[0])))]
    if census is not None:
        out.excluded_by_input, out.not_readable = 0, 0
        for obj in census:
            key, reason, size = obj.get("key"), obj.get("reason"), int(obj.get("bytes") or 0)
            if key in planned:
                continue
            if reason == "excluded by input":
                out.excluded_by_input += size
                database = obj.get("database") if obj.get("kind") == "database" else None
                if database:
                    out.excluded_database_count += 1
                    if len(out.excluded_databases) < EXCLUDED_NAMES:
                        out.excluded_databases.append(str(database))
            elif reason in NOT_READABLE:
                out.not_readable += size
    return out


def _usd(value: float) -> float:
    """Dollars, rounded to 6 places but never to zero: a positive cost stays positive."""
    return max(round(value, 6), 0.000001) if value > 0 else 0.0


def seconds_text(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:,.1f} s"
    minutes = seconds / 60
    return f"{minutes:,.0f} min" if minutes < 120 else f"{minutes / 60:,.1f} h"


def _mib(n: int) -> str:
    return f"{n / MIB:,.1f} MiB"


def counted_lines(c: Counted) -> list[str]:
    """``counted:`` (what the bytes are, per database) and ``not counted:`` (what the census names beside them)."""
    dbs = [f"{d.database} {_mib(d.bytes)}" for d in c.by_database if d.database]
    out = [f"counted: user relations {_mib(c.user_relations)}, catalogues {_mib(c.catalogues)}, large objects "
           f"{_mib(c.large_objects)}" + (f"; {len(dbs)} database{'' if len(dbs) == 1 else 's'}: "
                                          + ", ".join(dbs[:6]) + (", ..." if len(dbs) > 6 else "") if dbs else "")]
    if c.excluded_by_input is not None:
        left = ""
        n = max(c.excluded_database_count, len(c.excluded_databases))
        if n:
            shown = ", ".join(c.excluded_databases[:6]) + (", ..." if n > 6 else "")
            left = f" ({n} database{'' if n == 1 else 's'}: {shown})"
        out.append(f"not counted: {_mib(c.excluded_by_input)} the selection leaves out{left}; "
                   f"{_mib(c.not_readable or 0)} the run may not read")
    return out


def nothing_hint(est: Estimate, selection: dict[str, Any]) -> str | None:
    """One line when the ``selection`` (``Selection``'s fields) reads no user relation: what was selected and how
    to widen it (None: it reads some)."""
    c = est.counted
    if est.bytes_to_read > 0 and (c is None or c.user_relations > 0):
        return None
    chosen = Selection.model_validate(selection)
    picked = [f"{flag} {', '.join(values)}" for flag, values in (
        ("--database", chosen.databases or ()), ("--include-schema", chosen.include_schemas or ()),
        ("--exclude-schema", chosen.exclude_schemas or ())) if values]
    what = "; ".join(picked) if picked else "every database and schema (the defaults)"
    try:
        applies = family(est.engine).include_system_applies
    except UnknownEngine:
        applies = False
    system = "; the system schemas only with the run input's warmup.include_system true" if applies else ""
    if est.bytes_to_read == 0:
        return (f"nothing to read: {what} selected no relation with storage; widen it with --database, "
                f"--include-schema, --exclude-schema{system} (a run of it would be NOT_READY: NOTHING_PLANNED)")
    return (f"no user relation selected: {what} selected only the catalogues ({_mib(est.bytes_to_read)}); widen it "
            f"with --database, --include-schema, --exclude-schema{system}")


def lines(est: Estimate) -> list[str]:
    """The estimate for the terminal."""
    c = est.cost
    time_parts = (f": bytes {seconds_text(est.seconds_bytes)} + ranges {seconds_text(est.seconds_ranges)} "
                  f"({est.ranges:,} x {est.range_seconds * 1000:,.0f} ms / {est.concurrency})")
    out = [f"to read: {est.bytes_to_read / MIB:,.1f} MiB in {est.units} units ({est.segments} segments, "
           f"{est.ranges} ranges, {est.engine})",
           *(counted_lines(est.counted) if est.counted is not None else []),
           f"rate:    {est.assumed_mib_per_s:,.2f} MiB/s assumed ({est.source}: {est.source_detail})",
           f"time:    {seconds_text(est.estimated_seconds)} with {_readers(est.concurrency)}{time_parts}",
           f"range:   {est.range_detail}",
           *([f"limit:   {est.advice}"] if est.advice else []),
           f"cost:    ${est.cost_usd:,.4f} (Lambda {c.lambda_gb_seconds:,.0f} GB-s, {c.lambda_requests} requests: "
           f"${c.lambda_usd:,.4f}; Step Functions {c.state_transitions} transitions: ${c.sfn_usd:,.4f}"
           + (f"; instance {c.instance_hours:,.2f} h: " + (f"${c.instance_usd:,.4f}" if c.instance_usd is not None
                                                           else "price unknown") if c.instance_hours is not None
              else "") + ")"]
    out += [f"  note: {n}" for n in c.notes]
    if est.hint:
        out.append(f"hint:    {est.hint}")
    return out

