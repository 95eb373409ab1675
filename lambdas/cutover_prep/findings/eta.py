"""The warm-up's ETA: when it will be done, from the rate measured so far, never an assumed one (pure).

One estimator serves both sides:

- live, ``cutover-prep local``'s progress feeds it the run's counters as it polls them;
- afterwards, ``eta_findings`` replays it on the chunks the units recorded (``[finished_at, bytes, seconds]``,
  as ``findings.timeline``) and judges it: at 25, 50 and 75 % of the planned bytes, the finish it predicted
  against the finish that happened (``findings.warmup.eta``).

What it counts is work, not bytes alone: a unit of many tiny ranges (catalogues, small relations) costs far
more time per byte than one large table, so a bytes-only ETA runs early and then stalls on the tail (on
``make demo``: 41 % early at half the bytes). Each unit's work is its bytes and ranges weighed by the estimate's
time model (``CostModel``); only those relative weights are modelled: the rate is measured.

The rate is the work done over the trailing half of the elapsed time (at least ``MIN_WINDOW_S``): it follows
a change of pace (the admission control raising the concurrency, a throttle, a slower tail of large objects)
without the noise of the last few seconds alone, and without the ramp-up of the first ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cutover_prep.findings.timeline import warmup_wall

MIN_WINDOW_S = 5.0
JUDGED_AT_PCT = (25, 50, 75)
MAX_SAMPLES = 120
COMPLETE_SHARE = 0.99  # the chunks recorded must hold this share of the bytes read for the replay to be judged


def clock_text(seconds: float) -> str:
    """An ETA for people: ``42 s``, ``3:07`` or ``1:02:03``."""
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    return f"{s // 60}:{s % 60:02d}" if s < 3600 else f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _bytes_at(samples: Sequence[tuple[float, float]], t: float) -> float:
    """Bytes done at time ``t``, interpolated between the samples (``samples`` ordered by time)."""
    if t <= samples[0][0]:
        return float(samples[0][1])
    for (t0, b0), (t1, b1) in zip(samples, samples[1:], strict=False):
        if t0 <= t <= t1:
            return b0 + (b1 - b0) * ((t - t0) / (t1 - t0) if t1 > t0 else 1.0)
    return float(samples[-1][1])


def eta_seconds(samples: Sequence[tuple[float, float]], total: float) -> float | None:
    """Seconds until ``total`` bytes are done, after the last of ``samples`` (``(t_s, bytes_done)`` from the
    warm-up's start, ordered by time); None before there is a rate to go on."""
    if not samples:
        return None
    t, done = samples[-1]
    if done >= total:
        return 0.0
    start = max(samples[0][0], t - max(MIN_WINDOW_S, t / 2))
    if t - start <= 0:
        return None
    rate = (done - _bytes_at(samples, start)) / (t - start)
    return (total - done) / rate if rate > 0 else None


@dataclass(frozen=True)
class CostModel:
    """What a unit costs in time, relative to the others: its bytes at the aggregate rate plus its ranges at
    ``range_seconds`` each, spread over ``concurrency`` readers: the estimate's own model
    (``estimate/compute.py``, in the run record since Discover). Only the units' relative weights come from
    it; the rate the ETA goes on is measured. Without it (a run recorded before the estimate had its time
    model), a byte is a byte."""

    mib_per_s: float
    range_seconds: float
    concurrency: int

    @classmethod
    def of(cls, estimate: dict[str, Any] | None) -> CostModel | None:
        est = estimate or {}
        try:
            model = cls(float(est["assumed_mib_per_s"]), float(est["range_seconds"]), int(est["concurrency"]))
        except (KeyError, TypeError, ValueError):
            return None
        return model if model.mib_per_s > 0 and model.range_seconds >= 0 and model.concurrency > 0 else None

    def seconds(self, nbytes: int, ranges: int) -> float:
        return nbytes / (self.mib_per_s * 2**20) + ranges * self.range_seconds / self.concurrency


def unit_weights(units: list[dict[str, Any]], model: CostModel | None) -> dict[str, float]:
    """Work per byte of each planned unit (``units.json``): 1 without a model."""
    out = {}
    for unit in units:
        nbytes = int(unit.get("bytes") or 0)
        if model is None or nbytes <= 0:
            out[str(unit["unit_id"])] = 1.0
        else:
            out[str(unit["unit_id"])] = model.seconds(nbytes, len(unit.get("ranges") or [])) / nbytes
    return out


def chunk_samples(unit_items: dict[str, dict[str, Any]], weights: dict[str, float] | None = None
                  ) -> tuple[datetime | None, list[tuple[float, int, float]]]:
    """The warm-up's start and ``(t_s, bytes_done, work_done)`` at each recorded chunk's end, from the unit items
    (unit id -> item); a chunk's work is its bytes times its unit's weight (``unit_weights``; 1 without)."""
    weights = weights or {}
    chunks = [(datetime.fromisoformat(end), int(nbytes), float(seconds), weights.get(uid, 1.0))
              for uid, item in unit_items.items() for end, nbytes, seconds in item.get("chunks") or []
              if int(nbytes) > 0]
    if not chunks:
        return None, []
    start = min(end - timedelta(seconds=seconds) for end, _, seconds, _ in chunks)
    samples: list[tuple[float, int, float]] = [(0.0, 0, 0.0)]
    done, work = 0, 0.0
    for end, nbytes, _, weight in sorted(chunks, key=lambda c: c[0]):
        done, work = done + nbytes, work + nbytes * weight
        t = (end - start).total_seconds()
        if samples[-1][0] == t:  # chunks that ended at the same instant: one sample, as a poll would see them
            samples[-1] = (t, done, work)
        else:
            samples.append((t, done, work))
    return start, samples


REPLAY_EVIDENCE = "warmup/eta_replay.json"


def replay_record(unit_items: dict[str, dict[str, Any]], units: list[dict[str, Any]], planned_bytes: int,
                  read_bytes: int, estimate: dict[str, Any] | None) -> dict[str, Any]:
    """What ``eta_findings`` judged the ETA on, small enough to keep (``runs/<id>/warmup/eta_replay.json``):
    each planned unit's bytes and range count, each unit item's times and chunks, the estimate's time model.
    ``eta_findings(**replay_args(record))`` replays it: an estimator can be judged again on a recorded run."""
    keep = ("status", "started_at", "finished_at", "bytes_read", "chunks")
    return {"planned_bytes": planned_bytes, "read_bytes": read_bytes,
            "estimate": {k: (estimate or {}).get(k) for k in ("assumed_mib_per_s", "range_seconds", "concurrency")}
            if estimate else None,
            "units": [{"unit_id": str(u["unit_id"]), "bytes": int(u.get("bytes") or 0),
                       "ranges": len(u.get("ranges") or [])} for u in units],
            "unit_items": {uid: {k: item[k] for k in keep if k in item} for uid, item in unit_items.items()}}


def replay_args(record: dict[str, Any]) -> dict[str, Any]:
    """``eta_findings``'s arguments from a ``replay_record`` (its units' ranges as a list of that many)."""
    return {"unit_items": record["unit_items"], "planned_bytes": record["planned_bytes"],
            "read_bytes": record["read_bytes"], "estimate": record.get("estimate"),
            "units": [{**u, "ranges": [{}] * int(u["ranges"])} for u in record["units"]]}


def _thin(rows: list[dict[str, Any]], limit: int = MAX_SAMPLES) -> list[dict[str, Any]]:
    if len(rows) <= limit:
        return rows
    last = len(rows) - 1
    return [rows[i] for i in sorted({round(k * last / (limit - 1)) for k in range(limit)})]


def eta_findings(unit_items: dict[str, dict[str, Any]], planned_bytes: int, read_bytes: int, *,
                 units: list[dict[str, Any]] | None = None, estimate: dict[str, Any] | None = None) -> dict[str, Any]:
    """``findings.warmup``'s ``eta_samples`` (``t_s``, ``bytes_done``, ``eta_s``) and ``eta`` (the judgement:
    ``actual_s``, ``basis``, and at each of ``JUDGED_AT_PCT`` of the bytes the predicted and actual finish with
    the error in %). The ETA goes on work done (``unit_weights``: a unit's bytes and ranges, weighed by the
    estimate's time model) at the measured rate; bytes alone when the run has no estimate.
    Not judged (``judged: false`` and why) when the warm-up did not read its plan, or when the chunks recorded
    do not hold the bytes read (a unit with more chunks than the store keeps)."""
    model = CostModel.of(estimate)
    weights = unit_weights(units or [], model)
    total_work = (sum(weights.get(str(u["unit_id"]), 1.0) * int(u.get("bytes") or 0) for u in units or [])
                  or float(planned_bytes))
    start, samples = chunk_samples(unit_items, weights)
    wall, _ = warmup_wall(list(unit_items.values()))
    starts = [datetime.fromisoformat(i["started_at"]) for i in unit_items.values() if i.get("started_at")]
    if start is not None and starts and min(starts) < start:  # on the warm-up's one clock: from the first unit's start
        offset = (start - min(starts)).total_seconds()
        samples = [(0.0, 0, 0.0)] + [(t + offset, done, w) for t, done, w in samples]
    work = [(t, w) for t, _, w in samples]
    rows = []
    for i in range(1, len(samples)):
        eta = eta_seconds(work[: i + 1], total_work)
        t, done, _ = samples[i]
        rows.append({"t_s": round(t, 3), "bytes_done": done, "eta_s": None if eta is None else round(eta, 3)})
    recorded = samples[-1][1] if samples else 0
    judgement: dict[str, Any] = {"judged": False, "at": []}
    if not rows or planned_bytes <= 0:
        judgement["why"] = "nothing was read"
    elif read_bytes < planned_bytes * COMPLETE_SHARE:
        judgement["why"] = (f"the warm-up read {read_bytes:,} of {planned_bytes:,} planned bytes: "
                            "it did not finish, so no finish to judge the ETA by")
    elif recorded < read_bytes * COMPLETE_SHARE:
        judgement["why"] = (f"the units recorded chunks for {recorded:,} of the {read_bytes:,} bytes read "
                            "(the store keeps a unit's first chunks only)")
    else:
        # the warm-up time every figure uses (timeline.warmup_wall); the last chunk's end without unit times
        actual = round(wall, 3) if wall else rows[-1]["t_s"]
        judgement = {"judged": True, "actual_s": actual, "at": [],
                     "basis": "bytes and ranges (the estimate's time model)" if model else "bytes"}
        for pct in JUDGED_AT_PCT:
            row = next((r for r in rows if r["bytes_done"] >= planned_bytes * pct / 100 and r["eta_s"] is not None),
                       None)
            if row is None:
                continue
            predicted = row["t_s"] + row["eta_s"]
            judgement["at"].append({"pct": pct, "t_s": row["t_s"], "predicted_s": round(predicted, 3),
                                    "actual_s": actual,
                                    "error_pct": round(100 * (predicted - actual) / actual, 1) if actual else None})
    return {"eta_samples": _thin(rows), "eta": judgement}
