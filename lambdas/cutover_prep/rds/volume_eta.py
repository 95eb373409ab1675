"""An ETA for RDS's own storage initialization, per volume and for the instance (issue 36 §3; pure).

RDS reports ``StorageOperationPercentProgress`` per volume (the primary and each of
``AdditionalStorageVolumes``), without a rate or an ETA. The rate here is the slope of that percent over the
trailing half of the time since the first sample (at least ``MIN_WINDOW_S``), as the warm-up's own ETA
measures its pace (``findings.eta``): it follows a change of pace and does not swing with one sample. While
RDS's percent stands still (a pause) or there is only one sample, the rate falls back on the warm-up's
measured read rate over the volume's allocated size, labelled as such; with neither, no ETA (never an assumed
rate). The instance is initialized when its slowest volume is: its ETA is the largest.

``judge`` replays the estimator on a recorded series and compares the finish it predicted at 25, 50 and 75 %
with the finish that happened, in % of the time from the first sample (the warm-up's ETA is judged the same way).
"""

from __future__ import annotations

from datetime import datetime
from typing import NotRequired, TypedDict

MIN_WINDOW_S = 300.0
JUDGED_AT_PCT = (25, 50, 75)


class PctSample(TypedDict):
    """A point of a volume's "initialized %" series (``findings.storage_init.initialized_pct_series``)."""

    at: str
    pct: float


class VolumeEta(TypedDict):
    """A volume's ETA after its last sample: how far, how fast, when, and what the rate is."""

    pct: float
    pct_per_min: float | None
    eta_s: float | None
    source: str


class InstanceEta(TypedDict):
    volumes: dict[str, VolumeEta]
    instance_eta_s: float | None  # the slowest volume's; None while a volume has no ETA


class JudgedAt(TypedDict):
    pct: int
    t_s: float
    predicted_s: float
    actual_s: float
    error_pct: float | None


class EtaJudgement(TypedDict):
    """The estimator replayed on a series that reached 100 %: the finish it predicted at 25/50/75 %."""

    judged: bool
    at: NotRequired[list[JudgedAt]]
    why: NotRequired[str]


def _t(at: str) -> float:
    return datetime.fromisoformat(at).timestamp()


def _pct_at(points: list[tuple[float, float]], t: float) -> float:
    if t <= points[0][0]:
        return points[0][1]
    for (t0, p0), (t1, p1) in zip(points, points[1:], strict=False):
        if t0 <= t <= t1:
            return p0 + (p1 - p0) * ((t - t0) / (t1 - t0) if t1 > t0 else 1.0)
    return points[-1][1]


def pct_rate(points: list[tuple[float, float]]) -> float | None:
    """Percent per second over the trailing window; None with fewer than two samples."""
    if len(points) < 2 or points[-1][0] <= points[0][0]:
        return None
    t_end = points[-1][0]
    window = max(MIN_WINDOW_S, (t_end - points[0][0]) / 2)
    t_start = max(points[0][0], t_end - window)
    return max(0.0, (points[-1][1] - _pct_at(points, t_start)) / (t_end - t_start))


def read_rate_pct(read_mib_per_s: float | None, allocated_gb: float | None) -> float | None:
    """The warm-up's read rate as percent of the volume per second (a floor: the blocks it reads are initialized)."""
    if not read_mib_per_s or not allocated_gb or read_mib_per_s <= 0 or allocated_gb <= 0:
        return None
    return 100.0 * read_mib_per_s * 2**20 / (allocated_gb * 2**30)


def eta(points: list[tuple[float, float]], *, floor_pct_per_s: float | None = None) -> VolumeEta | None:
    """``{pct, pct_per_min, eta_s, source}`` after the last point; None without a rate."""
    if not points:
        return None
    pct = points[-1][1]
    if pct >= 100:
        return {"pct": 100.0, "pct_per_min": None, "eta_s": 0.0, "source": "done"}
    slope = pct_rate(points)
    if slope:
        rate, source = slope, "RDS progress slope"
    elif floor_pct_per_s:
        rate, source = floor_pct_per_s, ("warm-up read rate (RDS's progress stood still)" if slope == 0
                                         else "warm-up read rate (one RDS sample so far)")
    else:
        return {"pct": pct, "pct_per_min": 0.0 if slope == 0 else None, "eta_s": None,
                "source": "paused: RDS's progress stood still" if slope == 0 else "one sample: no rate yet"}
    return {"pct": pct, "pct_per_min": round(rate * 60, 3), "eta_s": round((100 - pct) / rate, 1), "source": source}


def points_of(series: list[PctSample]) -> list[tuple[float, float]]:
    """``[{at, pct}]`` (``storage_init.initialized_pct_series``) as ``(t_s, pct)`` in time order."""
    return sorted((_t(s["at"]), float(s["pct"])) for s in series if s.get("at") and s.get("pct") is not None)


def volume_etas(series_by_volume: dict[str, list[PctSample]], *, allocated_gb: dict[str, float] | None = None,
                read_mib_per_s: float | None = None, now: datetime | None = None) -> InstanceEta:
    """Each volume's ETA and the instance's (the largest); ``now``: counts the time since the last sample off."""
    volumes: dict[str, VolumeEta] = {}
    for name, series in series_by_volume.items():
        points = points_of(series)
        found = eta(points, floor_pct_per_s=read_rate_pct(read_mib_per_s, (allocated_gb or {}).get(name)))
        if found is not None and found["eta_s"] and now is not None:
            found["eta_s"] = round(max(0.0, found["eta_s"] - (now.timestamp() - points[-1][0])), 1)
        if found is not None:
            volumes[name] = found
    known = [v["eta_s"] for v in volumes.values() if v["eta_s"] is not None]
    instance = None if not volumes or len(known) < len(volumes) else max(known)
    return {"volumes": volumes, "instance_eta_s": instance}


def judge(series: list[PctSample]) -> EtaJudgement:
    """Replay the estimator on a recorded series that reached 100 %: the finish predicted at 25/50/75 % against
    the finish that happened, ``error_pct`` in % of the time from the first sample to the finish."""
    points = points_of(series)
    done = next((t for t, p in points if p >= 100), None)
    if not points or done is None:
        return {"judged": False, "why": "the series did not reach 100 %"}
    t0 = points[0][0]
    out: list[JudgedAt] = []
    for target in JUDGED_AT_PCT:
        i = next((i for i, (_, p) in enumerate(points) if p >= target), None)
        if i is None or points[i][1] >= 100:
            continue
        found = eta(points[: i + 1])
        if found is None or found["eta_s"] is None:
            continue
        predicted = points[i][0] + found["eta_s"]
        out.append({"pct": target, "t_s": round(points[i][0] - t0, 1), "predicted_s": round(predicted - t0, 1),
                    "actual_s": round(done - t0, 1),
                    "error_pct": round(100 * (predicted - done) / (done - t0), 1) if done > t0 else None})
    return {"judged": bool(out), "at": out}

