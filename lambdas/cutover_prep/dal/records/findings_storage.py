"""The storage sections of findings.json (``storage_initialization``: RDS's progress beside our coverage;
``volumes``: each additional storage volume)."""

from __future__ import annotations

from typing import Any

from cutover_prep.dal.records.section import Json, Num, Section


class StorageSampleRow(Section):
    at: str | None = None
    step: str | None = None
    status: str | None = None
    percent: Num | None = None
    gap: Json = None


class PctPoint(Section):
    at: str | None = None
    pct: Num


class VolumeLast(Section):
    at: str | None = None
    status: str | None = None
    percent: Num | None = None


class VolumeInitialization(Section):
    volume: str
    last: VolumeLast | None = None
    reported: bool = False
    operation_at_end: str | None = None
    initialized_at_end: bool | None = None
    rds_initialized_pct: list[PctPoint] = []


class StorageGaps(Section):
    count: int = 0
    codes: dict[str, int] = {}
    note: str | None = None


class JudgedAt(Section):
    """A point of a volume's ETA judgement: at ``pct`` (``t_s`` after the first sample) the finish predicted,
    the one that happened and the error (``rds.volume_eta.judge``)."""

    pct: Num
    t_s: Num | None = None
    predicted_s: Num | None = None
    actual_s: Num | None = None
    error_pct: Num | None = None


class VolumeEtaJudged(Section):
    """``storage_initialization.eta_judged``'s entry for a volume: the estimator replayed on what RDS reported
    (``rds.volume_eta.judge``; ``why`` when the series did not reach 100 %)."""

    judged: bool
    why: str | None = None
    at: list[JudgedAt] = []


class StorageInitialization(Section):
    """``storage_initialization``: what RDS said of the volume's initialization, beside our coverage over time."""

    samples: list[StorageSampleRow] = []
    reported: bool = False
    last: StorageSampleRow | None = None
    operation_at_end: str | None = None
    initialized_at_end: bool | None = None
    rds_initialized_pct: list[PctPoint] = []
    blocks_read_pct: list[PctPoint] = []
    volumes: list[VolumeInitialization] = []
    eta_judged: dict[str, VolumeEtaJudged] = {}  # rds.volume_eta.judge per volume
    gaps: StorageGaps | None = None
    blue_green: dict[str, Any] | None = None


class VolumeRow(Section):
    """A row of ``volumes.volumes``: the volume's settings (absent for a volume RDS did not list), RDS's storage
    status (when it says one), coverage, measured rate and ceiling (``findings.volumes``)."""

    volume: str
    storage_type: str | None = None
    allocated_gb: Num | None = None
    iops: Num | None = None
    storage_throughput: Num | None = None
    status: str | None = None
    bytes_planned: int = 0
    bytes_read: int = 0
    bytes_unread: int = 0
    pct: Num = 100.0
    units: int = 0
    wall_seconds: Num | None = None
    mib_per_s_wall: Num | None = None
    ceiling_mib_s: Num | None = None
    ceiling_bound_by: str | None = None
    ceiling_iops: Num | None = None
    pct_of_ceiling: Num | None = None
    ceiling_note: str | None = None


class VolumesSection(Section):
    volumes: list[VolumeRow] = []
    shared_units: int = 0
    notes: list[str] = []
