"""The findings' ``volumes`` section (pure): coverage, measured warm-up rate and ceiling per storage
volume, for an instance with RDS additional storage volumes (RDS for Oracle; ``cutover_prep.engines.volumes``).

Which volume a block is on comes from the plan: the Oracle engine names, in a segment's locator,
``file_volumes`` = ``{file number as in the extents: volume}`` for each of its files that is on an
additional volume (``engines.oracle.volumes``); every other extent is on the primary volume. A unit's
range is counted per extent, so a segment spread over two volumes counts on both.

The measured rate of a volume is its bytes read over the wall time from the first start to the last end
of the units that read any of its bytes; units that read two volumes are timed on both, so the rate of
each is a lower bound (and the section says how many such units there were).

An instance without additional volumes (PostgreSQL, MySQL, and Oracle with one volume) has no section.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from cutover_prep.analysis.limits import volume_limits
from cutover_prep.dal.records.findings import Findings, VolumeCoverage
from cutover_prep.dal.records.findings_storage import VolumeRow, VolumesSection
from cutover_prep.dal.records.plan import PlanRange, PlanUnit
from cutover_prep.dal.records.section import Num
from cutover_prep.dal.records.units import Cursor, progress_by_unit
from cutover_prep.engines.volumes import PRIMARY_VOLUME, volumes_of
from cutover_prep.findings.coverage import NOT_STARTED, Items
from cutover_prep.models.status import UnitStatus

MIB = 2**20


class VolumeFacts(BaseModel):
    """A volume as ``engines.volumes.volumes_of`` gives it (RDS's settings, its storage status when it says one)."""

    name: str
    storage_type: str | None = None
    allocated_storage_gb: Num | None = None
    iops: Num | None = None
    storage_throughput: Num | None = None
    status: str | None = None


class VolumeLimit(BaseModel):
    """A volume's ceiling as ``analysis.limits.volume_limits`` computes it, or why it has none (``error``)."""

    volume: str | None = None
    ceiling_mib_s: Num | None = None
    ceiling_bound_by: str | None = None
    ceiling_iops: Num | None = None
    error: str | None = None


class InstanceClass(BaseModel):
    """What the volumes' ceilings need of the instance's facts."""

    engine: str | None = None
    db_instance_class: str | None = None


def extent_volume(rng: PlanRange, file_id: int | str) -> str:
    """The volume of one extent of a planned range."""
    files = (rng.locator.file_volumes if rng.locator else None) or {}
    return str(files.get(str(file_id)) or PRIMARY_VOLUME)


def range_volume_bytes(rng: PlanRange, index: int, status: str,
                       cursor: Cursor | None) -> dict[str, tuple[int, int]]:
    """Per volume, (planned bytes, read bytes) of one range of a unit: a DONE unit read all of it; else
    the committed cursor says how far (``{range, extent, offset}``, as ``coverage._read_of_range``)."""
    size = rng.block_size
    at = cursor.range if cursor else None
    out: dict[str, tuple[int, int]] = {}
    for e, (file_id, _first, blocks) in enumerate(rng.extents):
        if status == UnitStatus.DONE or (at is not None and index < at):
            read = blocks
        elif cursor is None or at is None or index > at or not rng.splittable:
            read = 0
        else:
            stop, offset = cursor.extent, cursor.offset
            read = blocks if e < stop else min(blocks, offset) if e == stop else 0
        planned0, read0 = out.get(extent_volume(rng, file_id), (0, 0))
        out[extent_volume(rng, file_id)] = (planned0 + blocks * size, read0 + read * size)
    return out


def _seconds(first: str | None, last: str | None) -> float | None:
    if not first or not last:
        return None
    return max(0.0, (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds())


@dataclass
class VolumeTally:
    """One volume's bytes planned and read, the units touching it, and when those that read it started and
    finished."""

    bytes_planned: int = 0
    bytes_read: int = 0
    units: int = 0
    starts: list[str] = field(default_factory=list)
    ends: list[str] = field(default_factory=list)

    def coverage(self) -> dict[str, int | float | None]:
        """``VolumeRow``'s coverage fields: bytes planned, read and unread, the units, the measured wall rate."""
        wall = _seconds(min(self.starts) if self.starts else None, max(self.ends) if self.ends else None)
        return {"bytes_planned": self.bytes_planned, "bytes_read": self.bytes_read,
                "bytes_unread": self.bytes_planned - self.bytes_read,
                "pct": round(100.0 * self.bytes_read / self.bytes_planned, 3) if self.bytes_planned else 100.0,
                "units": self.units, "wall_seconds": round(wall, 3) if wall is not None else None,
                "mib_per_s_wall": round(self.bytes_read / wall / MIB, 3) if wall else None}


def volume_coverage(units: Iterable[PlanUnit], unit_items: Items,
                    names: list[str]) -> tuple[dict[str, VolumeTally], int]:
    """Per volume: bytes planned and read, units touching it, their times; and how many units read more than one
    volume."""
    acc = {n: VolumeTally() for n in names}
    shared = 0
    progress = progress_by_unit(unit_items)
    for unit in units:
        item = progress.get(unit.unit_id) or NOT_STARTED
        mine: dict[str, tuple[int, int]] = {}
        for i, rng in enumerate(unit.ranges):
            for vol, (planned, read) in range_volume_bytes(rng, i, item.status, item.cursor).items():
                p0, r0 = mine.get(vol, (0, 0))
                mine[vol] = (p0 + planned, r0 + read)
        shared += len(mine) > 1
        for vol, (planned, read) in mine.items():
            a = acc.setdefault(vol, VolumeTally())
            a.bytes_planned += planned
            a.bytes_read += read
            a.units += 1
            if read and item.started_at and item.finished_at:
                a.starts.append(item.started_at)
                a.ends.append(item.finished_at)
    return acc, shared


def volumes_section(instance: dict[str, Any] | None, units: Iterable[PlanUnit],
                    unit_items: Items, engine: str | None = None) -> VolumesSection | None:
    """``volumes``: one row per volume (primary first) with its settings, RDS's storage status, coverage,
    measured warm-up rate and ceiling; None when the instance has no additional volume (``instance``:
    DescribeInstance's facts)."""
    found = volumes_of(instance)
    if not found:
        return None
    volumes = [VolumeFacts.model_validate(v) for v in found]
    facts = InstanceClass.model_validate(instance or {})
    names = [v.name for v in volumes]
    coverage, shared = volume_coverage(units, unit_items, names)
    engine = engine or facts.engine
    limits = {str(r.volume): r for r in map(VolumeLimit.model_validate, (
        volume_limits(facts.db_instance_class, found, engine=str(engine)) if engine
        else volume_limits(facts.db_instance_class, found)))}
    rows = []
    for v in volumes:
        cov = (coverage.get(v.name) or VolumeTally()).coverage()
        lim = limits.get(v.name) or VolumeLimit()
        rate, ceiling = cov["mib_per_s_wall"], lim.ceiling_mib_s
        rows.append(VolumeRow(
            volume=v.name, storage_type=v.storage_type, allocated_gb=v.allocated_storage_gb, iops=v.iops,
            storage_throughput=v.storage_throughput, **({"status": v.status} if v.status else {}), **cov,
            ceiling_mib_s=ceiling, ceiling_bound_by=lim.ceiling_bound_by, ceiling_iops=lim.ceiling_iops,
            pct_of_ceiling=round(100.0 * rate / ceiling, 1) if rate is not None and ceiling else None,
            **({"ceiling_note": lim.error} if lim.error else {})))
    unknown = sorted(set(coverage) - set(names))  # a file mapped to a volume RDS did not list
    for name in unknown:
        rows.append(VolumeRow(volume=name, **coverage[name].coverage(), ceiling_mib_s=None, ceiling_bound_by=None,
                              ceiling_iops=None, pct_of_ceiling=None,
                              ceiling_note="datafiles on this volume's path, but DescribeDBInstances does not list it"))
    notes = ["each volume's ceiling is its own storage's, capped by the instance class; the instance's EBS "
             "bandwidth is shared by all volumes"]
    if shared:
        notes.append(f"{shared} unit(s) read blocks of more than one volume: their time counts on each, so those "
                     "volumes' measured rates are lower bounds")
    return VolumesSection(volumes=rows, shared_units=shared, notes=notes)


def add_volume_findings(findings: Findings, instance: dict[str, Any] | None, units: Iterable[PlanUnit],
                        unit_items: Items) -> None:
    """Finalize's one call: ``findings.volumes`` and ``findings.coverage.by_volume`` when the instance has
    additional storage volumes; nothing otherwise (the findings of every other instance are unchanged)."""
    section = volumes_section(instance, units, unit_items, findings.engine)
    if section is None:
        return
    findings.volumes = section
    if findings.coverage is not None:
        findings.coverage.by_volume = [
            VolumeCoverage(volume=row.volume, bytes_planned=row.bytes_planned, bytes_read=row.bytes_read,
                           bytes_unread=row.bytes_unread, pct=row.pct) for row in section.volumes]
