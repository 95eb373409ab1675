"""The warm-up's ETA: when it will be done, from the rate measured so far, never an assumed one (pure).

One estimator serves both sides:

- live, ``cutover-prep local``'s progress feeds it the run's counters as it polls them;
- afterwards, ``eta_findings`` replays it on the chunks the units recorded (``[finished_at, bytes, seconds]``,
  as ``findings.timeline``) and judges it: at 25, 50 and 75 % of the planned bytes, the finish it predicted
  against the finish that happened (``findings.warmup.eta``).

The rate is the bytes read over the trailing half of the elapsed time (at least ``MIN_WINDOW_S``): it follows
a change of pace (the admission control raising the concurrency, a throttle, a slower tail of large objects)
without the noise of the last few seconds alone, and without the ramp-up of the first ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

MIN_WINDOW_S = 5.0
JUDGED_AT_PCT = (25, 50, 75)
MAX_SAMPLES = 120
COMPLETE_SHARE = 0.99  # the chunks recorded must hold this share of the bytes read for the replay to be judged


def _bytes_at(samples: Sequence[tuple[float, int]], t: float) -> float:
    """Bytes done at time ``t``, interpolated between the samples (``samples`` ordered by time)."""
    if t <= samples[0][0]:
        return float(samples[0][1])
    for (t0, b0), (t1, b1) in zip(samples, samples[1:], strict=False):
        if t0 <= t <= t1:
            return b0 + (b1 - b0) * ((t - t0) / (t1 - t0) if t1 > t0 else 1.0)
    return float(samples[-1][1])


def eta_seconds(samples: Sequence[tuple[float, int]], total: int) -> float | None:
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


def chunk_samples(unit_items: list[dict[str, Any]]) -> tuple[datetime | None, list[tuple[float, int]]]:
    """The warm-up's start and ``(t_s, bytes_done)`` at each recorded chunk's end, from the unit items."""
    chunks = [(datetime.fromisoformat(end), int(nbytes), float(seconds))
              for item in unit_items for end, nbytes, seconds in item.get("chunks") or [] if int(nbytes) > 0]
    if not chunks:
        return None, []
    start = min(end - timedelta(seconds=seconds) for end, _, seconds in chunks)
    samples, done = [(0.0, 0)], 0
    for end, nbytes, _ in sorted(chunks, key=lambda c: c[0]):
        done += nbytes
        t = (end - start).total_seconds()
        if samples[-1][0] == t:  # chunks that ended at the same instant: one sample, as a poll would see them
            samples[-1] = (t, done)
        else:
            samples.append((t, done))
    return start, samples


def _thin(rows: list[dict[str, Any]], limit: int = MAX_SAMPLES) -> list[dict[str, Any]]:
    if len(rows) <= limit:
        return rows
    last = len(rows) - 1
    return [rows[i] for i in sorted({round(k * last / (limit - 1)) for k in range(limit)})]


def eta_findings(unit_items: list[dict[str, Any]], planned_bytes: int, read_bytes: int) -> dict[str, Any]:
    """``findings.warmup``'s ``eta_samples`` (``t_s``, ``bytes_done``, ``eta_s``) and ``eta`` (the judgement:
    ``actual_s``, and at each of ``JUDGED_AT_PCT`` the predicted and actual finish with the error in %).
    Not judged (``judged: false`` and why) when the warm-up did not read its plan, or when the chunks recorded
    do not hold the bytes read (a unit with more chunks than the store keeps)."""
    _, samples = chunk_samples(unit_items)
    rows = []
    for i in range(1, len(samples)):
        eta = eta_seconds(samples[: i + 1], planned_bytes)
        t, done = samples[i]
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
        actual = rows[-1]["t_s"]
        judgement = {"judged": True, "actual_s": actual, "at": []}
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
