"""What the RDS storage can deliver (the storage side of ``analysis.limits``): pure data and arithmetic.

Units: IOPS; throughput in MiB/s (``*_mib_s``) and KiB/s (``*_kbps``).

Storage (RDS stripes gp2/gp3/io1/io2 over 4 volumes from 400 GiB on PostgreSQL, MySQL and
MariaDB, from 200 GiB on Oracle)
    gp2: baseline 3 IOPS/GiB, min 100, max 16,000 per volume; a volume below 1,000 GiB bursts
        to 3,000 IOPS from a bucket of 5.4 million I/O credits (refilled at the baseline
        rate). Throughput = IOPS x 256 KiB, capped at 250 MiB/s, and at 128 MiB/s for a
        volume of 170 GiB or less (seed 000 measured 75 MB/s on 100 GiB and 24.5 MB/s on
        30 GiB at baseline: 300 and 100 IOPS x 256 KiB).
    gp3: 3,000 IOPS / 125 MiB/s; striped 12,000 IOPS / 500 MiB/s; provisioned IOPS and
        throughput (MiB/s) above the threshold when given.
    io1: provisioned IOPS; per volume up to 32,000 IOPS: IOPS x 256 KiB up to 500 MiB/s,
        above: 16 KiB per IOPS up to 1,000 MiB/s; RDS maximum 500 MiB/s below the striping
        threshold, 4,000 MiB/s above.
    io2: provisioned IOPS; Block Express rule 0.256 MiB/s per IOPS up to 4,000 MiB/s.
    standard (magnetic): about 100 IOPS, RDS maximum 1,000 IOPS, no published throughput:
        rough, flagged ``rough``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from cutover_prep.analysis.instance_classes import STORAGE_SOURCES
from cutover_prep.engines.registry import DEFAULT_ENGINE, limits_facts

KIB_PER_MIB = 1024

# Per engine, from the registry: its families and the RDS engines only this analysis knows yet.
STRIPE_THRESHOLD_GB = {name: facts.stripe_threshold_gb for name, facts in limits_facts().items()}
ENGINES = tuple(STRIPE_THRESHOLD_GB)
STORAGE_TYPES = ("gp2", "gp3", "io1", "io2", "standard")
STRIPED_VOLUMES = 4

GP2_IOPS_PER_GB, GP2_MIN_IOPS, GP2_MAX_IOPS = 3, 100, 16_000
GP2_BURST_IOPS, GP2_BURST_BELOW_GB, GP2_CREDITS = 3_000, 1_000, 5_400_000
GP2_IO_KIB, GP2_MAX_MIB_S, GP2_SMALL_MIB_S, GP2_SMALL_GB = 256, 250, 128, 170
GP3_IOPS, GP3_MIB_S = 3_000, 125
IO1_IO_KIB, IO1_VOLUME_MIB_S, IO1_HIGH_IOPS, IO1_HIGH_KIB, IO1_HIGH_MIB_S = 256, 500, 32_000, 16, 1_000
RDS_PIOPS_MIB_S = {False: 500, True: 4_000}  # RDS maximum throughput, below / above the striping threshold
IO2_MIB_S_PER_IOPS, IO2_MAX_MIB_S = 0.256, 4_000
MAGNETIC_IOPS, MAGNETIC_MAX_IOPS = 100, 1_000


class LimitsError(ValueError):
    """A value the limits cannot be computed for."""



class InvalidStorage(LimitsError):
    """Storage type, size, IOPS, throughput or engine that RDS does not have."""


def _kbps(mib_s: float | None) -> float | None:
    return None if mib_s is None else round(float(mib_s) * KIB_PER_MIB, 1)


def _normalize_engine(engine: str) -> str:
    e = (engine or "").strip().lower()
    for name in ENGINES:  # a family name or an RDS engine name starting with it: oracle-ee, postgresql
        if e.startswith(name):
            return name
    raise InvalidStorage(f"unknown engine {engine!r}: expected one of {', '.join(ENGINES)}")


def _check_number(name: str, value: float | None, *, required: bool = False) -> None:
    if value is None:
        if required:
            raise InvalidStorage(f"{name} is required")
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise InvalidStorage(f"{name} must be a positive number, not {value!r}")


def _gp2_volume_mib_s(volume_gb: float, volume_iops: float, burst: bool) -> float:
    cap = GP2_SMALL_MIB_S if volume_gb <= GP2_SMALL_GB else GP2_MAX_MIB_S
    if burst:
        return cap
    return min(cap, volume_iops * GP2_IO_KIB / KIB_PER_MIB)


@dataclass(frozen=True)
class _Caps:
    """What one storage type delivers (before the volume's size, engine and sources are added)."""

    baseline_iops: int
    baseline_throughput_mib_s: float | None
    notes: list[str]
    burst_iops: int | None = None
    burst_throughput_mib_s: float | None = None
    burst_credits: int | None = None
    burst_minutes_from_full: float | None = None
    rough: bool = False


@dataclass(frozen=True, kw_only=True)
class StorageCaps(_Caps):
    """What the RDS storage can deliver: its caps, how many volumes it is striped over, and the sources."""

    type: str
    allocated_gb: float
    engine: str
    volumes: int
    striped: bool
    stripe_threshold_gb: int
    baseline_throughput_kbps: float | None
    burst_throughput_kbps: float | None
    sources: list[str]

    def document(self) -> dict[str, Any]:
        """As ``analysis.json`` and ``cutover-prep analyze`` write it (magnetic storage names ``rough`` first)."""
        caps = {"baseline_iops": self.baseline_iops, "baseline_throughput_mib_s": self.baseline_throughput_mib_s,
                "burst_iops": self.burst_iops, "burst_throughput_mib_s": self.burst_throughput_mib_s,
                "burst_credits": self.burst_credits, "burst_minutes_from_full": self.burst_minutes_from_full}
        flags = {"rough": self.rough, "notes": self.notes} if self.type == "standard" else \
            {"notes": self.notes, "rough": self.rough}
        return {**caps, **flags, "type": self.type, "allocated_gb": self.allocated_gb, "engine": self.engine,
                "volumes": self.volumes, "striped": self.striped, "stripe_threshold_gb": self.stripe_threshold_gb,
                "baseline_throughput_kbps": self.baseline_throughput_kbps,
                "burst_throughput_kbps": self.burst_throughput_kbps, "sources": self.sources}


def _gp2(gb: float, volumes: int) -> _Caps:
    volume_gb = gb / volumes
    volume_iops = min(GP2_MAX_IOPS, max(GP2_MIN_IOPS, GP2_IOPS_PER_GB * volume_gb))
    bursts = volume_iops < GP2_BURST_IOPS and volume_gb < GP2_BURST_BELOW_GB
    base_mib = volumes * _gp2_volume_mib_s(volume_gb, volume_iops, burst=False)
    caps = _Caps(baseline_iops=round(volumes * volume_iops), baseline_throughput_mib_s=round(base_mib, 2),
                 notes=[f"gp2 baseline {GP2_IOPS_PER_GB} IOPS/GiB (min {GP2_MIN_IOPS}, max {GP2_MAX_IOPS:,} per "
                        f"volume); throughput = IOPS x {GP2_IO_KIB} KiB up to {GP2_MAX_MIB_S} MiB/s "
                        f"({GP2_SMALL_MIB_S} MiB/s for a volume of {GP2_SMALL_GB} GiB or less)"])
    if not bursts:
        return caps
    minutes = round(GP2_CREDITS / (GP2_BURST_IOPS - volume_iops) / 60, 1)
    return replace(caps, burst_iops=volumes * GP2_BURST_IOPS,
                   burst_throughput_mib_s=volumes * _gp2_volume_mib_s(volume_gb, volume_iops, burst=True),
                   burst_credits=volumes * GP2_CREDITS, burst_minutes_from_full=minutes,
                   notes=[*caps.notes, f"gp2 volumes below {GP2_BURST_BELOW_GB:,} GiB burst to {GP2_BURST_IOPS:,} "
                          f"IOPS each from {GP2_CREDITS / 1e6:.1f} million I/O credits, about {minutes:,} minutes "
                          "from a full bucket"])


def _gp3(gb: float, volumes: int, iops: float | None, mib_s: float | None) -> _Caps:
    base_iops, base_mib = volumes * GP3_IOPS, volumes * GP3_MIB_S
    striped = " (striped over 4 volumes)" if volumes > 1 else ""
    notes = [f"gp3 baseline {base_iops:,} IOPS / {base_mib} MiB/s{striped}"]
    if volumes == 1 and ((iops and iops != base_iops) or (mib_s and mib_s != base_mib)):
        notes.append("RDS does not provision gp3 IOPS or throughput below the striping threshold; "
                     "the values given are used as they are")
    return _Caps(baseline_iops=round(iops or base_iops), baseline_throughput_mib_s=float(mib_s or base_mib),
                 notes=notes)


def _io1_volume_mib_s(volume_iops: float) -> float:
    if volume_iops <= IO1_HIGH_IOPS:
        return min(IO1_VOLUME_MIB_S, volume_iops * IO1_IO_KIB / KIB_PER_MIB)
    return min(IO1_HIGH_MIB_S, volume_iops * IO1_HIGH_KIB / KIB_PER_MIB)


def _piops(kind: str, volumes: int, iops: float, mib_s: float | None) -> _Caps:
    if kind == "io1":
        derived = min(RDS_PIOPS_MIB_S[volumes > 1], volumes * _io1_volume_mib_s(iops / volumes))
        note = (f"io1 throughput = IOPS x {IO1_IO_KIB} KiB per volume up to {IO1_VOLUME_MIB_S} MiB/s "
                f"({IO1_HIGH_KIB} KiB per IOPS above {IO1_HIGH_IOPS:,} IOPS), RDS maximum "
                f"{RDS_PIOPS_MIB_S[volumes > 1]:,} MiB/s")
    else:
        derived = min(IO2_MAX_MIB_S, iops * IO2_MIB_S_PER_IOPS)
        note = (f"io2 throughput = {IO2_MIB_S_PER_IOPS} MiB/s per provisioned IOPS up to {IO2_MAX_MIB_S:,} MiB/s "
                "(EBS io2 Block Express rule)")
    notes = [note]
    if mib_s:
        notes.append(f"throughput {mib_s} MiB/s as given (derived from the IOPS: {derived:g} MiB/s)")
    return _Caps(baseline_iops=round(iops), baseline_throughput_mib_s=round(float(mib_s or derived), 2), notes=notes)


def _magnetic() -> _Caps:
    return _Caps(baseline_iops=MAGNETIC_IOPS, baseline_throughput_mib_s=None, burst_iops=MAGNETIC_MAX_IOPS, rough=True,
                 notes=["magnetic (standard) storage: about 100 IOPS on average, bursts to hundreds, RDS maximum "
                        "1,000 IOPS; AWS publishes no throughput limit: rough figures only"])


def storage_caps(storage_type: str, allocated_gb: float, iops: float | None = None,
                 throughput_mbps: float | None = None, engine: str = DEFAULT_ENGINE) -> StorageCaps:
    """What the RDS storage can deliver. ``throughput_mbps`` is MiB/s, as RDS ``StorageThroughput``."""
    kind = (storage_type or "").strip().lower()
    if kind == "magnetic":
        kind = "standard"
    if kind not in STORAGE_TYPES:
        raise InvalidStorage(f"unknown storage type {storage_type!r}: expected one of {', '.join(STORAGE_TYPES)}")
    _check_number("allocated storage (GiB)", allocated_gb, required=True)
    _check_number("IOPS", iops, required=kind in ("io1", "io2"))
    _check_number("storage throughput (MiB/s)", throughput_mbps)
    eng = _normalize_engine(engine)
    threshold = STRIPE_THRESHOLD_GB[eng]
    volumes = STRIPED_VOLUMES if kind != "standard" and allocated_gb >= threshold else 1
    if kind == "gp2":
        caps = _gp2(allocated_gb, volumes)
    elif kind == "gp3":
        caps = _gp3(allocated_gb, volumes, iops, throughput_mbps)
    elif kind in ("io1", "io2"):
        caps = _piops(kind, volumes, float(iops or 0), throughput_mbps)
    else:
        caps = _magnetic()
    return StorageCaps(**{f.name: getattr(caps, f.name) for f in fields(_Caps)}, type=kind,
                       allocated_gb=allocated_gb, engine=eng, volumes=volumes, striped=volumes > 1,
                       stripe_threshold_gb=threshold,
                       baseline_throughput_kbps=_kbps(caps.baseline_throughput_mib_s),
                       burst_throughput_kbps=_kbps(caps.burst_throughput_mib_s),
                       sources=[STORAGE_SOURCES["rds"], STORAGE_SOURCES[_source_key(kind)]])


def _source_key(kind: str) -> str:
    return {"gp2": "gp", "gp3": "gp", "io1": "piops", "io2": "piops"}.get(kind, "magnetic")

