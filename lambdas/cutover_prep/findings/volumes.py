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

from datetime import datetime
from typing import Any

from cutover_prep.analysis.limits import volume_limits
from cutover_prep.dal.records.findings import Findings, VolumeCoverage
from cutover_prep.dal.records.findings_storage import VolumeRow, VolumesSection
from cutover_prep.dal.records.units import Cursor, progress_by_unit
from cutover_prep.engines.volumes import PRIMARY_VOLUME, volumes_of
from cutover_prep.findings.coverage import NOT_STARTED, Items
from cutover_prep.models.status import UnitStatus

MIB = 2**20


def extent_volume(rng: dict[str, Any], file_id: Any) -> str:
    """The volume of one extent of a planned range."""
    files = (rng.get("locator") or {}).get("file_volumes") or {}
    return str(files.get(str(file_id)) or PRIMARY_VOLUME)


def range_volume_bytes(rng: dict[str, Any], index: int, status: str,
                       cursor: Cursor | None) -> dict[str, tuple[int, int]]:
    """Per volume, (planned bytes, read bytes) of one range of a unit: a DONE unit read all of it; else
    the committed cursor says how far (``{range, extent, offset}``, as ``coverage._read_of_range``)."""
    size = int(rng.get("block_size") or 0)
    extents = rng.get("extents") or []
    at = cursor.range if cursor else None
    out: dict[str, tuple[int, int]] = {}
    for e, (file_id, _first, blocks) in enumerate(extents):
        blocks = int(blocks)
        if status == UnitStatus.DONE or (at is not None and index < at):
            read = blocks
        elif at is None or index > at or not rng.get("splittable", True):
            read = 0
        else:
            stop, offset = cursor.extent, cursor.offset  # type: ignore[union-attr]
            read = blocks if e < stop else min(blocks, offset) if e == stop else 0
        planned0, read0 = out.get(extent_volume(rng, file_id), (0, 0))
        out[extent_volume(rng, file_id)] = (planned0 + blocks * size, read0 + read * size)
    return out


def _seconds(first: str | None, last: str | None) -> float | None:
    if not first or not last:
        return None
    return max(0.0, (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds())


def volume_coverage(units: list[dict[str, Any]], unit_items: Items, names: list[str]) -> dict[str, dict[str, Any]]:
    """Per volume: bytes planned, read and unread, units touching it, the measured wall rate."""
    acc = {n: {"bytes_planned": 0, "bytes_read": 0, "units": 0, "starts": [], "ends": []} for n in names}
    shared = 0
    progress = progress_by_unit(unit_items)
    for unit in units:
        item = progress.get(unit["unit_id"]) or NOT_STARTED
        status = item.status
        mine: dict[str, tuple[int, int]] = {}
        for i, rng in enumerate(unit.get("ranges") or []):
            for vol, (planned, read) in range_volume_bytes(rng, i, status, item.cursor).items():
                p0, r0 = mine.get(vol, (0, 0))
                mine[vol] = (p0 + planned, r0 + read)
        shared += len(mine) > 1
        for vol, (planned, read) in mine.items():
            a = acc.setdefault(vol, {"bytes_planned": 0, "bytes_read": 0, "units": 0, "starts": [], "ends": []})
            a["bytes_planned"] += planned
            a["bytes_read"] += read
            a["units"] += 1
            if read and item.started_at and item.finished_at:
                a["starts"].append(item.started_at)
                a["ends"].append(item.finished_at)
    out = {}
    for vol, a in acc.items():
        wall = _seconds(min(a["starts"]) if a["starts"] else None, max(a["ends"]) if a["ends"] else None)
        out[vol] = {"bytes_planned": a["bytes_planned"], "bytes_read": a["bytes_read"],
                    "bytes_unread": a["bytes_planned"] - a["bytes_read"],
                    "pct": round(100.0 * a["bytes_read"] / a["bytes_planned"], 3) if a["bytes_planned"] else 100.0,
                    "units": a["units"], "wall_seconds": round(wall, 3) if wall is not None else None,
                    "mib_per_s_wall": round(a["bytes_read"] / wall / MIB, 3) if wall else None}
    out["_shared_units"] = {"count": shared}
    return out


def volumes_section(instance: dict[str, Any] | None, units: list[dict[str, Any]],
                    unit_items: Items, engine: str | None = None) -> VolumesSection | None:
    """``volumes``: one row per volume (primary first) with its settings, RDS's storage status, coverage,
    measured warm-up rate and ceiling; None when the instance has no additional volume."""
    volumes = volumes_of(instance)
    if not volumes:
        return None
    facts = instance or {}
    names = [str(v["name"]) for v in volumes]
    coverage = volume_coverage(units, unit_items, names)
    shared = coverage.pop("_shared_units")["count"]
    engine = engine or facts.get("engine")
    limits = {str(r["volume"]): r for r in (volume_limits(facts.get("db_instance_class"), volumes, engine=str(engine))
                                            if engine else volume_limits(facts.get("db_instance_class"), volumes))}
    rows = []
    for v in volumes:
        name = str(v["name"])
        cov = coverage.get(name) or {"bytes_planned": 0, "bytes_read": 0, "bytes_unread": 0, "pct": 100.0,
                                     "units": 0, "wall_seconds": None, "mib_per_s_wall": None}
        lim = limits.get(name) or {}
        ceiling = lim.get("ceiling_mib_s")
        rate = cov["mib_per_s_wall"]
        row = {"volume": name, "storage_type": v.get("storage_type"), "allocated_gb": v.get("allocated_storage_gb"),
               "iops": v.get("iops"), "storage_throughput": v.get("storage_throughput"),
               **({"status": v.get("status")} if v.get("status") else {}),
               **cov,
               "ceiling_mib_s": ceiling, "ceiling_bound_by": lim.get("ceiling_bound_by"),
               "ceiling_iops": lim.get("ceiling_iops"),
               "pct_of_ceiling": round(100.0 * rate / ceiling, 1) if rate is not None and ceiling else None}
        if lim.get("error"):
            row["ceiling_note"] = lim["error"]
        rows.append(VolumeRow(**row))
    unknown = sorted(set(coverage) - set(names))  # a file mapped to a volume RDS did not list
    for name in unknown:
        rows.append(VolumeRow(volume=name, **coverage[name], ceiling_mib_s=None, ceiling_bound_by=None,
                              ceiling_iops=None, pct_of_ceiling=None,
                              ceiling_note="datafiles on this volume's path, but DescribeDBInstances does not list it"))
    notes = ["each volume's ceiling is its own storage's, capped by the instance class; the instance's EBS "
             "bandwidth is shared by all volumes"]
    if shared:
        notes.append(f"{shared} unit(s) read blocks of more than one volume: their time counts on each, so those "
                     "volumes' measured rates are lower bounds")
    return VolumesSection(volumes=rows, shared_units=shared, notes=notes)


def add_volume_findings(findings: Findings, instance: dict[str, Any] | None, units: list[dict[str, Any]],
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
