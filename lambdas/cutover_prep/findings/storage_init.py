"""The findings' ``storage_initialization`` section: what RDS said about the volume's initialization
over the run, beside our own coverage over time (pure).

RDS reports ``StorageOperationStatus`` and ``StorageOperationPercentProgress`` only while an
operation runs. A sample without them is read as "no operation" only once RDS reported one
earlier in the run (the initialization finished); before that it proves nothing (RDS had not
started, or never says), and the section says "not reported".

An instance with additional storage volumes (RDS for Oracle / SQL Server) has the same two fields per
volume in each sample (``volumes``, ``restore.progress``); ``volumes`` of the section then holds one entry
per additional volume with its own last answer and its own "RDS: volume initialized %" series, judged
by the same rule. The top-level fields stay the primary volume's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Any, NamedTuple

from pydantic import BaseModel

from cutover_prep.dal.records.findings_storage import (
    PctPoint,
    StorageGaps,
    StorageInitialization,
    StorageSampleRow,
    VolumeEtaJudged,
    VolumeInitialization,
    VolumeLast,
)
from cutover_prep.dal.records.run import StorageSample
from cutover_prep.findings.timeline import Items, coverage_series
from cutover_prep.rds import volume_eta

INITIALIZING = "Initializing"


class Answer(NamedTuple):
    """One answer of RDS about a volume: a storage sample's own, or one additional volume's in it; ``gap``: the
    error code when it could not be read."""

    at: str | None
    status: str | None = None
    percent: int | float | None = None
    gap: str | None = None

    @property
    def reported(self) -> bool:
        return self.status is not None or self.percent is not None


def _answer(sample: StorageSample) -> Answer:
    return Answer(sample.at, sample.status, sample.percent, sample.gap)


def initialized_pct_series(answers: Iterable[Answer | StorageSample]) -> list[PctPoint]:
    """"RDS: volume initialized %" over time: the percent of each ``Initializing`` answer, and 100 for
    every answer without an operation after RDS had reported one (its initialization was over)."""
    series, seen = [], False
    for a in answers:
        a = a if isinstance(a, Answer) else _answer(a)
        if a.gap:
            continue
        if a.status == INITIALIZING and a.percent is not None:
            series.append(PctPoint(at=a.at, pct=float(a.percent)))
        elif not a.reported and seen:
            series.append(PctPoint(at=a.at, pct=100.0))
        seen = seen or (a.reported and a.status in (None, INITIALIZING))
    return series


def _gaps(samples: list[StorageSample]) -> StorageGaps | None:
    gaps = [s for s in samples if s.gap]
    if not gaps:
        return None
    codes = Counter(str(s.gap) for s in gaps)
    named = ", ".join(f"{code} ×{n}" for code, n in codes.most_common())
    return StorageGaps(count=len(gaps), codes=dict(codes),
                       note=f"RDS's storage progress could not be read {len(gaps)} of {len(samples)} times ({named}): "
                            "those times are gaps in the series; the run went on")


class BlueGreenFacts(BaseModel):
    """What the findings read of the instance's ``blue_green`` facts (``rds.progress.blue_green_of``)."""

    checked: bool | None = None
    green: bool | None = None
    deployment_name: str | None = None
    deployment_id: str | None = None
    status: str | None = None
    error: str | None = None


def _blue_green(found: object) -> dict[str, Any] | None:
    """The instance's Blue/Green facts as RDS gave them, with a note when the target is a green instance or when
    whether it is one is not known."""
    if not isinstance(found, dict):
        return None
    facts = BlueGreenFacts.model_validate(found)
    if facts.green:
        return {**found, "note": f"the target is the green instance of RDS Blue/Green deployment "
                f"{facts.deployment_name or facts.deployment_id} ({facts.status}): RDS "
                "initializes the green storage itself in the background; Cutover Prep measured it all the same"}
    if not facts.checked:
        return {**found, "note": f"whether the target is a Blue/Green deployment's green instance is not known "
                f"({facts.error})"}
    return found


def volume_series(samples: list[StorageSample]) -> list[VolumeInitialization]:
    """Per additional volume named in any sample: its answers (a gap is a gap of every volume), its last
    answer, whether RDS reported an operation on it, and its "RDS: volume initialized %" series."""
    names = list(dict.fromkeys(str(v.volume) for s in samples for v in s.volumes or [] if v.volume))
    out = []
    for name in names:
        own = []
        for s in samples:
            if s.gap:
                own.append(Answer(s.at, gap=s.gap))
                continue
            v = next((v for v in s.volumes or [] if v.volume == name), None)
            if v is not None:  # a sample without this volume (not attached yet, or removed) proves nothing
                own.append(Answer(s.at, v.status, v.percent))
        answered = [a for a in own if not a.gap]
        last = answered[-1] if answered else None
        out.append(VolumeInitialization(
            volume=name, last=VolumeLast(at=last.at, status=last.status, percent=last.percent) if last else None,
            reported=any(a.reported for a in answered), operation_at_end=last.status if last else None,
            initialized_at_end=None if last is None else not last.reported,
            rds_initialized_pct=initialized_pct_series(own)))
    return out


def _row(s: StorageSample) -> StorageSampleRow:
    return StorageSampleRow(at=s.at, step=s.step, status=s.status, percent=s.percent, **({"gap": s.gap} if s.gap
                                                                                         else {}))


def _points(series: list[PctPoint]) -> list[dict[str, float | str | None]]:
    """A series as ``rds.volume_eta`` reads it (``[{at, pct}]``)."""
    return [p.stored() for p in series]


def storage_initialization(samples: Iterable[StorageSample], unit_items: Items, planned_bytes: int,
                           instance: dict[str, Any] | None = None) -> StorageInitialization:
    """The section: the samples, the last answer, whether RDS reported any, both series over time, gaps
    and Blue/Green (``instance``: DescribeInstance's facts)."""
    samples = sorted(samples, key=lambda s: str(s.at))
    answered = [s for s in samples if not s.gap]
    last = answered[-1] if answered else None
    section = StorageInitialization(
        samples=[_row(s) for s in samples],
        reported=any(_answer(s).reported for s in answered),
        last=StorageSampleRow(at=last.at, step=last.step, status=last.status, percent=last.percent) if last else None,
        # None: no answer at all to judge by
        operation_at_end=last.status if last else None,
        initialized_at_end=None if last is None else not _answer(last).reported,
        rds_initialized_pct=initialized_pct_series(samples),
        blocks_read_pct=coverage_series(unit_items, planned_bytes),
    )
    if volumes := volume_series(samples):
        section.volumes = volumes
    # the per-volume ETA replayed on what RDS reported and judged against the finish (rds/volume_eta.py)
    series = {"primary": section.rds_initialized_pct, **{v.volume: v.rds_initialized_pct for v in volumes}}
    section.eta_judged = {name: VolumeEtaJudged.model_validate(volume_eta.judge(_points(s)))
                          for name, s in series.items() if s}
    if gaps := _gaps(samples):
        section.gaps = gaps
    if blue_green := _blue_green((instance or {}).get("blue_green")):
        section.blue_green = blue_green
    return section


def etas_of_samples(samples: Iterable[StorageSample], *, allocated_gb: dict[str, float] | None = None,
                    read_mib_per_s: float | None = None, now: datetime | None = None) -> dict[str, Any]:
    """``volume_etas`` of a run's stored samples (``Store.storage_samples``): the primary and each additional
    volume's "initialized %" series as the findings build them."""
    ordered = sorted(samples, key=lambda s: str(s.at))
    series = {"primary": initialized_pct_series(ordered),
              **{v.volume: v.rds_initialized_pct for v in volume_series(ordered)}}
    return volume_eta.volume_etas({k: _points(v) for k, v in series.items() if v}, allocated_gb=allocated_gb,
                                  read_mib_per_s=read_mib_per_s, now=now)
