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
from datetime import datetime
from typing import Any

from cutover_prep.dal.records.findings_storage import StorageInitialization
from cutover_prep.findings.timeline import Items, coverage_series
from cutover_prep.rds import volume_eta

INITIALIZING = "Initializing"


def _reported(sample: dict[str, Any]) -> bool:
    return sample.get("status") is not None or sample.get("percent") is not None


def initialized_pct_series(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """"RDS: volume initialized %" over time: the percent of each ``Initializing`` sample, and 100 for
    every sample without an operation after RDS had reported one (its initialization was over)."""
    series, seen = [], False
    for s in samples:
        if s.get("gap"):
            continue
        if s.get("status") == INITIALIZING and s.get("percent") is not None:
            series.append({"at": s["at"], "pct": float(s["percent"])})
        elif not _reported(s) and seen:
            series.append({"at": s["at"], "pct": 100.0})
        seen = seen or (_reported(s) and s.get("status") in (None, INITIALIZING))
    return series


def _gaps(samples: list[dict[str, Any]]) -> dict[str, Any] | None:
    gaps = [s for s in samples if s.get("gap")]
    if not gaps:
        return None
    codes = Counter(str(s["gap"]) for s in gaps)
    named = ", ".join(f"{code} ×{n}" for code, n in codes.most_common())
    return {"count": len(gaps), "codes": dict(codes),
            "note": f"RDS's storage progress could not be read {len(gaps)} of {len(samples)} times ({named}): "
                    "those times are gaps in the series; the run went on"}


def _blue_green(instance: dict[str, Any]) -> dict[str, Any] | None:
    found = instance.get("blue_green")
    if not isinstance(found, dict):
        return None
    if found.get("green"):
        return {**found, "note": f"the target is the green instance of RDS Blue/Green deployment "
                f"{found.get('deployment_name') or found.get('deployment_id')} ({found.get('status')}): RDS "
                "initializes the green storage itself in the background; Cutover Prep measured it all the same"}
    if not found.get("checked"):
        return {**found, "note": f"whether the target is a Blue/Green deployment's green instance is not known "
                f"({found.get('error')})"}
    return found


def volume_series(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per additional volume named in any sample: its samples (a gap is a gap of every volume), its last
    answer, whether RDS reported an operation on it, and its "RDS: volume initialized %" series."""
    names = list(dict.fromkeys(str(v.get("volume")) for s in samples for v in s.get("volumes") or []
                               if isinstance(v, dict) and v.get("volume")))
    out = []
    for name in names:
        own = []
        for s in samples:
            if s.get("gap"):
                own.append({"at": s.get("at"), "gap": s["gap"]})
                continue
            v = next((v for v in s.get("volumes") or [] if isinstance(v, dict) and v.get("volume") == name), None)
            if v is not None:  # a sample without this volume (not attached yet, or removed) proves nothing
                own.append({"at": s.get("at"), "status": v.get("status"), "percent": v.get("percent")})
        answered = [s for s in own if not s.get("gap")]
        last = answered[-1] if answered else None
        out.append({"volume": name,
                    "last": ({"at": last["at"], "status": last.get("status"), "percent": last.get("percent")}
                             if last else None),
                    "reported": any(_reported(s) for s in answered),
                    "operation_at_end": (last.get("status") if last else None),
                    "initialized_at_end": (None if last is None else not _reported(last)),
                    "rds_initialized_pct": initialized_pct_series(own)})
    return out


def storage_initialization(samples: list[dict[str, Any]], unit_items: Items, planned_bytes: int,
                           instance: dict[str, Any] | None = None) -> StorageInitialization:
    """The section: the samples, the last answer, whether RDS reported any, both series over time, gaps
    and Blue/Green."""
    samples = sorted(samples, key=lambda s: str(s.get("at")))
    answered = [s for s in samples if not s.get("gap")]
    last = answered[-1] if answered else None
    reported = any(_reported(s) for s in answered)
    section: dict[str, Any] = {
        "samples": [{"at": s.get("at"), "step": s.get("step"), "status": s.get("status"), "percent": s.get("percent"),
                     **({"gap": s["gap"]} if s.get("gap") else {})} for s in samples],
        "reported": reported,
        "last": ({"at": last["at"], "step": last.get("step"), "status": last.get("status"),
                  "percent": last.get("percent")} if last else None),
        # None: no answer at all to judge by
        "operation_at_end": (last.get("status") if last else None),
        "initialized_at_end": (None if last is None else not _reported(last)),
        "rds_initialized_pct": initialized_pct_series(samples),
        "blocks_read_pct": coverage_series(unit_items, planned_bytes),
    }
    if volumes := volume_series(samples):
        section["volumes"] = volumes
    # the per-volume ETA replayed on what RDS reported and judged against the finish (rds/volume_eta.py)
    series = {"primary": section["rds_initialized_pct"], **{v["volume"]: v["rds_initialized_pct"] for v in volumes}}
    section["eta_judged"] = {name: volume_eta.judge(s) for name, s in series.items() if s}
    if gaps := _gaps(samples):
        section["gaps"] = gaps
    if blue_green := _blue_green(instance or {}):
        section["blue_green"] = blue_green
    return StorageInitialization.model_validate(section)


def etas_of_samples(samples: list[dict[str, Any]], *, allocated_gb: dict[str, float] | None = None,
                    read_mib_per_s: float | None = None, now: datetime | None = None) -> dict[str, Any]:
    """``volume_etas`` of a run's stored samples (``Store.storage_samples``): the primary and each additional
    volume's "initialized %" series as the findings build them."""
    ordered = sorted(samples, key=lambda s: str(s.get("at")))
    series = {"primary": initialized_pct_series(ordered),
              **{v["volume"]: v["rds_initialized_pct"] for v in volume_series(ordered)}}
    return volume_eta.volume_etas({k: v for k, v in series.items() if v}, allocated_gb=allocated_gb,
                                  read_mib_per_s=read_mib_per_s, now=now)
