"""Expected IO limits of an RDS DB instance: the instance class caps, the storage caps, and the
effective caps (the lower of the two). Pure data and arithmetic, no AWS calls.

Units: IOPS; throughput in KiB/s (``*_kbps``, the unit of the sweep points and of seed 000's
"KB/s") and MiB/s (``*_mib_s``). AWS publishes EBS bandwidth in Mbps and the matching
throughput in "MB/s" = Mbps / 8; like seed 000 (db.m4.large: 450 Mbps -> 57,600 KB/s) that MB
is read as MiB, so 1 Mbps = 128 KiB/s.

Instance classes
    ``INSTANCE_CLASSES`` (in ``instance_classes``, with its sources): the caps per DB instance class.
Storage
    ``analysis.storage``: the caps per storage type, size and engine (gp2, gp3, io1, io2, magnetic).

``limits_of`` answers the typed ``Limits``; ``expected_limits`` its document (analysis.json's ``limits``, the
findings', ``cutover-prep analyze``'s), which ``Limits.from_document`` reads back.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple, NotRequired, TypedDict

from pydantic import BaseModel

from cutover_prep.analysis.instance_classes import (  # noqa: F401 (re-exported)
    INSTANCE_CLASSES,
    INSTANCE_SOURCES,
    RDS_PAGE_DIFFERS,
    STORAGE_SOURCES,
    TABLE_TAKEN,
)
from cutover_prep.analysis.storage import (  # noqa: F401 (re-exported)
    ENGINES,
    KIB_PER_MIB,
    STORAGE_TYPES,
    STRIPE_THRESHOLD_GB,
    InvalidStorage,
    LimitsError,
    StorageCaps,
    storage_caps,
)
from cutover_prep.engines.registry import DEFAULT_ENGINE

KBPS_PER_MBPS = 128  # 1 Mbps = 1/8 MB/s, MB read as MiB -> 1024/8 KiB/s
# what a volume's ceiling (``volume_limits``) repeats of its storage caps
VOLUME_STORAGE_FIELDS = ("type", "baseline_iops", "baseline_throughput_mib_s", "burst_iops", "burst_throughput_mib_s",
                         "striped", "volumes", "rough")


class UnknownInstanceClass(LimitsError):
    """The DB instance class is not in ``INSTANCE_CLASSES``."""


def known_instance_classes() -> list[str]:
    return sorted(INSTANCE_CLASSES)


def _lookup_class(instance_class: str) -> tuple[str, tuple[int, int, int, int] | None]:
    name = (instance_class or "").strip().lower()
    if name and not name.startswith("db."):
        name = "db." + name
    if name in INSTANCE_CLASSES:
        return name, INSTANCE_CLASSES[name]
    close = difflib.get_close_matches(name, INSTANCE_CLASSES, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    family = ".".join(name.split(".")[:2])
    listed = sorted({".".join(k.split(".")[:2]) for k in INSTANCE_CLASSES})
    if not close and family not in listed:
        hint = f"; known families: {', '.join(listed)}"
    raise UnknownInstanceClass(f"unknown DB instance class {instance_class!r}{hint} "
                               "(only classes with published EBS limits are known, see docs/analysis.md)")


@dataclass(frozen=True)
class InstanceCaps:
    """The EBS caps AWS publishes for a DB instance class (``None`` where it publishes none: not EBS-optimized)."""

    instance_class: str
    ebs_optimized: bool
    burstable: bool
    baseline_mbps: int | None
    max_mbps: int | None
    baseline_throughput_kbps: float | None
    max_throughput_kbps: float | None
    baseline_iops: int | None
    max_iops: int | None
    notes: list[str]
    baseline_mb_s: float | None = None
    max_mb_s: float | None = None

    def document(self) -> dict[str, Any]:
        """As ``analysis.json`` and ``cutover-prep analyze`` write it."""
        mbps = {"baseline_mbps": self.baseline_mbps, "max_mbps": self.max_mbps}
        kbps = {"baseline_throughput_kbps": self.baseline_throughput_kbps,
                "max_throughput_kbps": self.max_throughput_kbps}
        iops = {"baseline_iops": self.baseline_iops, "max_iops": self.max_iops}
        head = {"instance_class": self.instance_class, "ebs_optimized": self.ebs_optimized, "burstable": self.burstable}
        if not self.ebs_optimized:
            return {**head, **mbps, **iops, **kbps, "notes": self.notes}
        return {**head, **mbps, "baseline_mb_s": self.baseline_mb_s, "max_mb_s": self.max_mb_s, **kbps, **iops,
                "notes": self.notes}


def instance_caps(instance_class: str) -> InstanceCaps:
    """The EBS caps AWS publishes for ``instance_class`` (``db.`` prefix optional)."""
    name, spec = _lookup_class(instance_class)
    if spec is None:
        return InstanceCaps(name, ebs_optimized=False, burstable=False, baseline_mbps=None, max_mbps=None,
                            baseline_throughput_kbps=None, max_throughput_kbps=None, baseline_iops=None,
                            max_iops=None,
                            notes=[f"{name} is not EBS-optimized: AWS publishes no dedicated EBS bandwidth for it "
                                   "(EBS traffic shares the network link), so only the storage caps are compared"])
    base_mbps, max_mbps, base_iops, max_iops = spec
    notes = []
    if base_mbps < max_mbps:
        notes.append(f"{name} reaches its maximum EBS bandwidth ({max_mbps:,} Mbps, {max_iops:,} IOPS) for "
                     f"30 minutes at least once every 24 hours, then falls back to {base_mbps:,} Mbps, "
                     f"{base_iops:,} IOPS")
    if name in RDS_PAGE_DIFFERS:
        notes.append(f"the RDS page lists {RDS_PAGE_DIFFERS[name]} Mbps for {name}; the EC2 page's "
                     f"{max_mbps:,} Mbps is used")
    return InstanceCaps(name, ebs_optimized=True, burstable=base_mbps < max_mbps, baseline_mbps=base_mbps,
                        max_mbps=max_mbps, baseline_mb_s=base_mbps / 8, max_mb_s=max_mbps / 8,
                        baseline_throughput_kbps=float(base_mbps * KBPS_PER_MBPS),
                        max_throughput_kbps=float(max_mbps * KBPS_PER_MBPS),
                        baseline_iops=base_iops, max_iops=max_iops, notes=notes)



def _fmt_mb(kbps: float) -> str:
    mb = kbps / KIB_PER_MIB
    return f"{mb:,.0f} MiB/s" if mb >= 10 else f"{mb:,.1f} MiB/s"


def _storage_labels(s: StorageCaps) -> dict[str, str]:
    kind, gb = s.type, s.allocated_gb
    size = f"{gb:,g} GiB"
    labels = {
        "gp2": {"iops": f"the gp2 baseline of {s.baseline_iops:,} IOPS (3 IOPS/GiB x {size})",
                "burst_iops": f"the gp2 burst limit of {s.burst_iops or 0:,} IOPS",
                "tp": f"the gp2 throughput of {{mb}} ({s.baseline_iops:,} IOPS x 256 KiB, {size})",
                "burst_tp": f"the gp2 burst throughput of {{mb}} ({size})"},
        "gp3": {"iops": f"the gp3 limit of {s.baseline_iops:,} IOPS", "tp": "the gp3 limit of {mb}"},
        "io1": {"iops": f"the {s.baseline_iops:,} provisioned IOPS",
                "tp": f"the io1 throughput of {{mb}} for {s.baseline_iops:,} IOPS"},
        "io2": {"iops": f"the {s.baseline_iops:,} provisioned IOPS",
                "tp": f"the io2 throughput of {{mb}} for {s.baseline_iops:,} IOPS"},
        "standard": {"iops": "the magnetic storage's ~100 IOPS", "burst_iops": "the magnetic storage's 1,000 IOPS",
                     "tp": "the magnetic storage's throughput {mb}"},
    }[kind]
    return labels


class _Pick(NamedTuple):
    value: float | None
    bound_by: str | None
    label: str | None


def _pick(storage: tuple[float | None, str | None], instance: tuple[float | None, str]) -> _Pick:
    (s_val, s_label), (i_val, i_label) = storage, instance
    if s_val is None and i_val is None:
        return _Pick(None, None, None)
    if i_val is None or (s_val is not None and s_val < i_val):
        return _Pick(s_val, "storage", s_label)
    if s_val is None or i_val < s_val:
        return _Pick(i_val, "instance", i_label)
    return _Pick(s_val, "both", f"{s_label} and {i_label}")


@dataclass(frozen=True)
class Level:
    """The effective caps at one level (``peak`` or ``sustained``): the lower of storage and instance, which side
    binds and how to say it, and the IO size where throughput takes over from IOPS (``crossover_kb``)."""

    iops: float | None
    iops_bound_by: str | None
    iops_label: str | None
    throughput_kbps: float | None
    throughput_mb_s: float | None
    throughput_bound_by: str | None
    throughput_label: str | None
    crossover_kb: float | None


def _level(s: StorageCaps, inst: InstanceCaps, peak: bool) -> Level:
    labels = _storage_labels(s)
    use_burst = peak and s.burst_iops is not None
    s_iops = s.burst_iops if use_burst else s.baseline_iops
    s_iops_label = labels["burst_iops"] if use_burst else labels["iops"]
    s_tp = s.burst_throughput_kbps if peak and s.burst_throughput_kbps else s.baseline_throughput_kbps
    s_tp_label = labels["burst_tp" if peak and s.burst_throughput_kbps and "burst_tp" in labels else "tp"]
    s_tp_label = s_tp_label.format(mb=_fmt_mb(s_tp)) if s_tp else s_tp_label.format(mb="(not published)")
    i_iops = inst.max_iops if peak else inst.baseline_iops
    i_tp = inst.max_throughput_kbps if peak else inst.baseline_throughput_kbps
    name = inst.instance_class
    i_iops_label = f"the instance's {i_iops:,} IOPS ({name})" if i_iops else ""
    i_tp_label = f"the instance's {_fmt_mb(i_tp)} ({name})" if i_tp else ""
    iops, tp = _pick((s_iops, s_iops_label), (i_iops, i_iops_label)), _pick((s_tp, s_tp_label), (i_tp, i_tp_label))
    crossover = round(tp.value / iops.value, 1) if tp.value and iops.value else None
    return Level(iops=iops.value, iops_bound_by=iops.bound_by, iops_label=iops.label, throughput_kbps=tp.value,
                 throughput_mb_s=round(tp.value / KIB_PER_MIB, 1) if tp.value else None,
                 throughput_bound_by=tp.bound_by, throughput_label=tp.label, crossover_kb=crossover)


@dataclass(frozen=True)
class Limits:
    """Instance caps, storage caps and the effective caps at both levels (see ``limits_of``)."""

    instance_class: str
    storage_type: str
    allocated_gb: float
    iops: float | None
    throughput_mbps: float | None
    engine: str
    instance: InstanceCaps
    storage: StorageCaps
    peak: Level
    sustained: Level

    @classmethod
    def from_document(cls, doc: dict[str, Any]) -> Limits:
        """The limits an ``expected_limits`` document holds (``analysis.json``'s, the offline analysis')."""
        effective = doc["effective"]
        return cls(instance_class=doc["instance_class"], storage_type=doc["storage_type"],
                   allocated_gb=doc["allocated_gb"], iops=doc["iops"], throughput_mbps=doc["throughput_mbps"],
                   engine=doc["engine"], instance=InstanceCaps(**doc["instance"]),
                   storage=StorageCaps(**doc["storage"]),
                   peak=Level(**effective["peak"]), sustained=Level(**effective["sustained"]))

    @property
    def has_burst(self) -> bool:
        """The peak differs from the sustained level (gp2 credits, an instance's 30 minutes of maximum)."""
        return self.peak != self.sustained

    def document(self) -> dict[str, Any]:
        """``expected_limits``: ``effective`` repeats the peak beside both levels."""
        peak = asdict(self.peak)
        return {
            "instance_class": self.instance_class, "storage_type": self.storage_type,
            "allocated_gb": self.allocated_gb, "iops": self.iops, "throughput_mbps": self.throughput_mbps,
            "engine": self.engine, "instance": self.instance.document(), "storage": self.storage.document(),
            "effective": {**peak, "peak": peak, "sustained": asdict(self.sustained), "has_burst": self.has_burst},
            "notes": self.instance.notes + self.storage.notes,
            "sources": {"instance": list(INSTANCE_SOURCES), "storage": self.storage.sources, "taken": TABLE_TAKEN},
        }


def limits_of(instance_class: str, storage_type: str, allocated_gb: float, iops: float | None = None,
              throughput_mbps: float | None = None, engine: str = DEFAULT_ENGINE) -> Limits:
    """Instance caps, storage caps and the effective caps (the lower of both, and which side binds).

    ``peak`` is what a short benchmark on a fresh instance meets (gp2 burst, the maximum of an "up to" instance
    class); ``sustained`` holds once the gp2 credits or the instance's 30 minutes of maximum are spent.
    """
    inst = instance_caps(instance_class)
    storage = storage_caps(storage_type, allocated_gb, iops=iops, throughput_mbps=throughput_mbps, engine=engine)
    return Limits(instance_class=inst.instance_class, storage_type=storage.type, allocated_gb=allocated_gb, iops=iops,
                  throughput_mbps=throughput_mbps, engine=storage.engine, instance=inst, storage=storage,
                  peak=_level(storage, inst, peak=True), sustained=_level(storage, inst, peak=False))


def expected_limits(instance_class: str, storage_type: str, allocated_gb: float, iops: float | None = None,
                    throughput_mbps: float | None = None, engine: str = DEFAULT_ENGINE) -> dict[str, Any]:
    """``limits_of`` as ``analysis.json``, the findings and ``cutover-prep analyze`` write it: ``effective``
    repeats the peak beside ``effective["peak"]`` and ``effective["sustained"]``."""
    return limits_of(instance_class, storage_type, allocated_gb, iops=iops, throughput_mbps=throughput_mbps,
                     engine=engine).document()


class VolumeSettings(BaseModel):
    """One storage volume as ``cutover_prep.engines.volumes`` reports it (the fields its ceiling needs)."""

    name: str | None = None
    storage_type: str | None = None
    allocated_storage_gb: int | float | None = None
    iops: int | float | None = None
    storage_throughput: int | float | None = None


class VolumeCeiling(TypedDict):
    """One volume's ceiling as the findings' ``volumes`` section takes it: its settings, then its storage caps and
    ceiling, or why it has none (``error``)."""

    volume: str | None
    storage_type: str | None
    allocated_gb: int | float | None
    iops: int | float | None
    throughput_mbps: int | float | None
    error: NotRequired[str]
    storage: NotRequired[dict[str, int | float | str | bool | None]]  # VOLUME_STORAGE_FIELDS of its storage caps
    ceiling_mib_s: NotRequired[float | None]
    ceiling_bound_by: NotRequired[str | None]
    ceiling_iops: NotRequired[float | None]
    instance_note: NotRequired[str]
    ceiling_label: NotRequired[str | None]


def _volume_row(v: VolumeSettings, instance_class: str | None, engine: str) -> VolumeCeiling:
    row = VolumeCeiling(volume=v.name, storage_type=v.storage_type, allocated_gb=v.allocated_storage_gb, iops=v.iops,
                        throughput_mbps=v.storage_throughput)
    try:
        if not v.storage_type or not v.allocated_storage_gb:
            raise InvalidStorage("storage type or size not reported")
        caps = storage_caps(v.storage_type, float(v.allocated_storage_gb), iops=v.iops,
                            throughput_mbps=v.storage_throughput, engine=engine)
    except LimitsError as exc:
        return VolumeCeiling(**row, error=f"no ceiling: {exc}")
    storage = caps.document()
    row["storage"] = {k: storage[k] for k in VOLUME_STORAGE_FIELDS}
    row.update(ceiling_mib_s=caps.baseline_throughput_mib_s, ceiling_bound_by="storage",
               ceiling_iops=caps.baseline_iops)
    if instance_class:
        try:
            level = _level(caps, instance_caps(instance_class), peak=False)
        except LimitsError as exc:
            row["instance_note"] = f"instance class not compared: {exc}"
        else:
            row.update(ceiling_mib_s=level.throughput_mb_s, ceiling_bound_by=level.throughput_bound_by,
                       ceiling_iops=level.iops, ceiling_label=level.throughput_label)
    return row


def volume_limits(instance_class: str | None, volumes: list[dict[str, Any]],
                  engine: str = DEFAULT_ENGINE) -> list[VolumeCeiling]:
    """Each storage volume's own ceiling (RDS additional storage volumes, ``cutover_prep.engines.volumes``): the
    storage caps from *that* volume's storage type, size, IOPS and throughput, and the effective
    (sustained) caps against the instance class. The instance's EBS bandwidth is one for all its
    volumes: a volume's effective ceiling is what it reaches alone; together they share the instance's.
    A volume whose settings cannot be computed says why (``error``) instead of a ceiling.

    ASSUMPTION (not stated by RDS for additional volumes): a volume is striped from the engine's striping
    threshold, like the primary."""
    return [_volume_row(VolumeSettings.model_validate(v), instance_class, engine) for v in volumes]
