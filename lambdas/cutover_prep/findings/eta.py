"""The warm-up's ETA: when it will be done, from the rate measured so far, never an assumed one (pure).

One estimator serves both sides:

- live, ``cutover-prep local``'s progress feeds it the run's counters as it polls them;
- afterwards, ``eta_findings`` replays it on the chunks the units recorded (``[finished_at, bytes, seconds]``,
  as ``findings.timeline``) and judges it: at 25, 50 and 75 % of the planned bytes, the finish it predicted
  against the finish that happened (``findings.warmup.eta``).

What it counts is work, not bytes alone: a unit of many tiny ranges (catalogues, small relations) costs far
more time per byte than one large table, so a bytes-only ETA runs early and then stalls on the tail (on
``make demo``: 41 % early at half the bytes). Each unit's work is three terms in seconds of one reader: its bytes,
its ranges and the unit itself (a Map item, its invocations, the commits of its chunks), priced first by the
estimate's time model (``CostModel``, the prior; ``UNIT_SECONDS`` for the unit) and then by the run itself: a ridge
least-squares fit of the units finished so far (each one's seconds from its first chunk's start to its finish,
against its three terms; ``CostFit``) scales each term. No constant fitted on one machine has to hold on another,
or in AWS: on a busy 2-core machine the demo's ranges cost 4x the estimate's price, and the fit sees it from the
first catalogue units that finish. Only the units' relative weights come from the fit; the pace is measured.

The rate is the work done over the trailing half of the elapsed time (at least ``MIN_WINDOW_S``): it follows
a change of pace (the admission control raising the concurrency, a throttle, a slower tail of large objects)
without the noise of the last few seconds alone, and without the ramp-up of the first ones.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from pydantic import BaseModel

from cutover_prep.dal.records.findings import EtaAt, EtaJudgement, EtaSample
from cutover_prep.dal.records.plan import UnitSummary
from cutover_prep.dal.records.section import Num
from cutover_prep.dal.records.units import UnitProgress, progress_by_unit
from cutover_prep.findings.timeline import warmup_wall

Items = Mapping[str, UnitProgress]  # unit id -> unit item (``units.progress_by_unit`` reads stored ones)

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


class TimeModel(BaseModel):
    """The estimate's time model as the run item keeps it (``estimate.run``; a replay keeps the same fields): the
    rate assumed, the seconds a range costs and the readers at once. A run recorded before it: None each."""

    assumed_mib_per_s: Num | None = None
    range_seconds: Num | None = None
    concurrency: Num | None = None


@dataclass(frozen=True)
class CostModel:
    """What a unit costs in time, relative to the others: its bytes at the aggregate rate plus its ranges at
    ``range_seconds`` each, spread over ``concurrency`` readers: the estimate's own model
    (``estimate/compute.py``, in the run record since Discover). It is the ETA's *prior* (``UnitCost.prior``): the
    run's own finished units correct it (``CostFit``). Without it (a run recorded before the estimate had its time
    model), a byte is a byte."""

    mib_per_s: float
    range_seconds: float
    concurrency: int

    @classmethod
    def of(cls, time: TimeModel | None) -> CostModel | None:
        if time is None:
            return None
        try:
            model = cls(float(time.assumed_mib_per_s), float(time.range_seconds),  # type: ignore[arg-type]
                        int(time.concurrency))  # type: ignore[arg-type]
        except (TypeError, ValueError):  # a field the estimate does not hold
            return None
        return model if model.mib_per_s > 0 and model.range_seconds >= 0 and model.concurrency > 0 else None

    def seconds(self, nbytes: int, ranges: int) -> float:
        return nbytes / (self.mib_per_s * 2**20) + ranges * self.range_seconds / self.concurrency


# A unit's own cost beyond its bytes and ranges (a Map item, its invocations, a connection, the commit of its end), in
# seconds of one reader: the prior's guess only, weighed as PRIOR_UNITS finished units and then corrected by the
# run's own (CostFit). On make demo beside other work (load 10-17, 2026-11-26) the fit found 1.3-5.8 s once half the
# bytes were read; replayed with a prior of 0 to 2 s, those runs' ETA errors moved by under 1 point.
UNIT_SECONDS = 0.5
PRIOR_UNITS = 2.0  # the prior weighs as much as this many finished units (per term)
FEATURES = 3  # bytes, ranges, the unit itself


@dataclass(frozen=True)
class UnitCost:
    """What one unit costs one reader, in seconds: ``per_byte`` x its bytes + ``per_range`` x its ranges +
    ``per_unit``. The prior comes from the estimate's time model (``prior``); ``CostFit`` learns the run's own."""

    per_byte: float
    per_range: float
    per_unit: float

    @classmethod
    def prior(cls, model: CostModel) -> UnitCost:
        return cls(model.concurrency / (model.mib_per_s * 2**20), model.range_seconds, UNIT_SECONDS)

    def terms(self, nbytes: int, ranges: int) -> tuple[float, float, float]:
        """The unit's three costs, in seconds of one reader (what ``CostFit`` scales)."""
        return (self.per_byte * nbytes, self.per_range * ranges, self.per_unit)

    def scaled(self, theta: Sequence[float]) -> UnitCost:
        return UnitCost(self.per_byte * theta[0], self.per_range * theta[1], self.per_unit * theta[2])


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """``a x = b`` by Gaussian elimination with partial pivoting (a few unknowns); None when singular."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-12:
            return None
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c], strict=True)]
    return [m[i][n] / m[i][i] for i in range(n)]


class CostFit:
    """The run's finished units, as the sums a least-squares fit needs (added one unit at a time, O(1) each):
    each unit's three prior terms (``UnitCost.terms``) against the seconds it took (``unit_span``)."""

    def __init__(self) -> None:
        self.n = 0
        self.xx = [[0.0] * FEATURES for _ in range(FEATURES)]
        self.xy = [0.0] * FEATURES

    def add(self, terms: Sequence[float], seconds: float) -> None:
        self.n += 1
        for i in range(FEATURES):
            self.xy[i] += terms[i] * seconds
            for j in range(FEATURES):
                self.xx[i][j] += terms[i] * terms[j]

    def theta(self) -> list[float]:
        """How much each of the prior's terms must be scaled to fit the finished units: ridge least squares pulled
        towards 1 (the prior) with the weight of ``PRIOR_UNITS`` units, no term below 0 (the best of the subsets of
        terms whose solution is not negative). All ones before a unit finished."""
        if not self.n:
            return [1.0] * FEATURES
        lam = [PRIOR_UNITS * self.xx[j][j] / self.n + 1e-12 for j in range(FEATURES)]
        best: tuple[float, list[float]] | None = None
        for mask in range(1, 2**FEATURES):
            idx = [j for j in range(FEATURES) if mask >> j & 1]
            sol = _solve([[self.xx[i][j] + (lam[i] if i == j else 0.0) for j in idx] for i in idx],
                         [self.xy[i] + lam[i] for i in idx])
            if sol is None or min(sol) < 0:
                continue
            theta = [0.0] * FEATURES
            for j, v in zip(idx, sol, strict=True):
                theta[j] = v
            # the objective without the constant sum of squared seconds: theta' XX theta - 2 theta' Xy + ridge
            obj = (sum(theta[i] * self.xx[i][j] * theta[j] for i in range(FEATURES) for j in range(FEATURES))
                   - 2 * sum(t * xy for t, xy in zip(theta, self.xy, strict=True))
                   + sum(lv * (t - 1) ** 2 for lv, t in zip(lam, theta, strict=True)))
            if best is None or obj < best[0]:
                best = (obj, theta)
        return best[1] if best else [1.0] * FEATURES


def unit_span(item: UnitProgress) -> float | None:
    """The seconds a finished unit took in its reader: from its first chunk's start to its finish (the last
    commit); None for a unit not DONE or without chunks."""
    if item.status != "DONE" or not item.finished_at or not item.chunks:
        return None
    first = min(datetime.fromisoformat(end) - timedelta(seconds=float(sec)) for end, _, sec in item.chunks)
    return max(0.0, (datetime.fromisoformat(item.finished_at) - first).total_seconds())


Vec = tuple[float, float, float]


class WorkEta:
    """The ETA on work the run itself prices: each unit's work is its prior terms (``UnitCost.terms``) scaled by
    the fit of the units finished so far (``CostFit``); the rate is that work done over the trailing half of the
    elapsed time (``eta_seconds``), so the fit sets only the units' relative weights and the measured rate the pace.
    Fed as the run goes (``progress``, ``finished``: the replay at Finalize and ``local``'s live progress alike)."""

    def __init__(self, units: Iterable[UnitSummary], model: CostModel) -> None:
        self.prior = UnitCost.prior(model)
        self.units = {u.unit_id: (u.bytes, u.ranges) for u in units}
        self.terms = {uid: self.prior.terms(b, r) for uid, (b, r) in self.units.items()}
        self.total: Vec = tuple(sum(t[i] for t in self.terms.values()) for i in range(FEATURES))  # type: ignore[assignment]
        self.fit = CostFit()
        self.done: Vec = (0.0, 0.0, 0.0)
        self.samples: list[tuple[float, Vec]] = [(0.0, self.done)]
        self._fitted: set[str] = set()
        self._times: list[float] = [0.0]

    def progress(self, t: float, uid: str, nbytes: int) -> None:
        """``nbytes`` more of unit ``uid`` read by ``t`` (s since the warm-up's start; ordered): its share of the
        unit's work, by bytes."""
        nb, _ = self.units.get(uid, (0, 0))
        terms = self.terms.get(uid)
        if terms is None or nb <= 0:
            return
        share = nbytes / nb
        self.done = tuple(d + share * x for d, x in zip(self.done, terms, strict=True))  # type: ignore[assignment]
        self.at(t)

    def at(self, t: float) -> None:
        """A sample of the work done at ``t`` (chunks that ended at the same instant: one sample, as a poll would
        see them)."""
        if self.samples[-1][0] == t:
            self.samples[-1] = (t, self.done)
        elif t > self.samples[-1][0]:
            self.samples.append((t, self.done))
            self._times.append(t)

    def finished(self, uid: str, seconds: float | None) -> None:
        """Unit ``uid`` finished in ``seconds`` of its reader (``unit_span``): one more point for the fit."""
        if seconds is None or uid in self._fitted or uid not in self.terms:
            return
        self._fitted.add(uid)
        self.fit.add(self.terms[uid], seconds)

    def eta(self) -> float | None:
        """Seconds left after the last sample, as ``eta_seconds`` reckons them (the trailing half of the elapsed
        time, at least ``MIN_WINDOW_S``), on work priced by the fit so far; None before there is a rate."""
        theta = self.fit.theta()

        def work(vec: Vec) -> float:
            return sum(th * v for th, v in zip(theta, vec, strict=True))

        t, done = self.samples[-1]
        left = work(self.total) - work(done)
        if left <= 0 or len(self.samples) < 2:
            return 0.0 if left <= 0 else None
        start = max(self.samples[0][0], t - max(MIN_WINDOW_S, t / 2))
        if t - start <= 0:
            return None
        rate = (work(done) - work(self._at(start))) / (t - start)
        return left / rate if rate > 0 else None

    def cost(self) -> UnitCost:
        return self.prior.scaled(self.fit.theta())

    def _at(self, t: float) -> Vec:
        """The work vector done at ``t``, interpolated between the samples."""
        times = self._times
        k = bisect_right(times, t) - 1
        if k < 0:
            return self.samples[0][1]
        if k >= len(times) - 1:
            return self.samples[-1][1]
        (t0, v0), (t1, v1) = self.samples[k], self.samples[k + 1]
        f = (t - t0) / (t1 - t0) if t1 > t0 else 1.0
        return tuple(a + (b - a) * f for a, b in zip(v0, v1, strict=True))  # type: ignore[return-value]


REPLAY_EVIDENCE = "warmup/eta_replay.json"


class EtaFindings(NamedTuple):
    """``findings.warmup``'s ``eta_samples`` and ``eta`` (``eta_findings``)."""

    samples: list[EtaSample]
    judgement: EtaJudgement


class ReplayUnit(BaseModel):
    unit_id: str
    bytes: int = 0
    ranges: int = 0


class ReplayItem(BaseModel):
    """A unit item as a replay keeps it: its status (DONE when it says none), times, bytes and chunks."""

    status: str = "DONE"
    started_at: str | None = None
    finished_at: str | None = None
    bytes_read: int = 0
    chunks: list[tuple[str, Num, Num]] = []


class EtaReplay(BaseModel):
    """What ``eta_findings`` judged the ETA on, small enough to keep (``runs/<id>/warmup/eta_replay.json``): each
    planned unit's bytes and range count, each unit item's times and chunks, the estimate's time model. ``replay``
    judges it again: an estimator can be judged again on a recorded run."""

    planned_bytes: int
    read_bytes: int
    estimate: TimeModel | None = None
    units: list[ReplayUnit] = []
    unit_items: dict[str, ReplayItem] = {}

    def stored(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True)

    def replay(self) -> EtaFindings:
        items = {uid: UnitProgress.model_validate(i.model_dump(exclude_unset=True) | {"status": i.status})
                 for uid, i in self.unit_items.items()}
        return eta_findings(items, self.planned_bytes, self.read_bytes,
                            units=[UnitSummary(u.unit_id, u.bytes, ranges=u.ranges) for u in self.units],
                            estimate=self.estimate)


REPLAY_KEEPS = tuple(ReplayItem.model_fields)


def replay_record(unit_items: Items, units: list[UnitSummary], planned_bytes: int,
                  read_bytes: int, estimate: TimeModel | None) -> EtaReplay:
    """The ``EtaReplay`` of a run: ``eta_findings``' own arguments."""
    return EtaReplay(
        planned_bytes=planned_bytes, read_bytes=read_bytes,
        estimate=TimeModel(**estimate.model_dump()) if estimate else None,  # every field, null where it has none
        units=[ReplayUnit(unit_id=u.unit_id, bytes=u.bytes, ranges=u.ranges) for u in units],
        unit_items={uid: ReplayItem.model_validate({k: stored[k] for k in REPLAY_KEEPS if k in stored})
                    for uid, stored in ((u, i.stored()) for u, i in progress_by_unit(unit_items).items())})


def _thin(rows: list[EtaSample], limit: int = MAX_SAMPLES) -> list[EtaSample]:
    if len(rows) <= limit:
        return rows
    last = len(rows) - 1
    return [rows[i] for i in sorted({round(k * last / (limit - 1)) for k in range(limit)})]


def _events(unit_items: dict[str, UnitProgress]) -> tuple[datetime | None, list[tuple[datetime, str, int]]]:
    """The warm-up's start (the first chunk's, or the first unit's when it started before) and each recorded
    chunk as ``(ended, unit id, bytes)``, ordered by its end."""
    chunks = [(datetime.fromisoformat(end), str(uid), int(nbytes), float(seconds))
              for uid, item in unit_items.items() for end, nbytes, seconds in item.chunks
              if int(nbytes) > 0]
    if not chunks:
        return None, []
    start = min(end - timedelta(seconds=seconds) for end, _, _, seconds in chunks)
    starts = [datetime.fromisoformat(i.started_at) for i in unit_items.values() if i.started_at]
    if starts and min(starts) < start:  # on the warm-up's one clock: from the first unit's start
        start = min(starts)
    return start, [(end, uid, nbytes) for end, uid, nbytes, _ in sorted(chunks, key=lambda c: c[0])]


def _replay(unit_items: dict[str, UnitProgress], units: list[UnitSummary], model: CostModel | None,
            planned_bytes: int) -> list[EtaSample]:
    """The ETA at each instant a chunk ended, as the live estimator would have said it then: ``t_s``,
    ``bytes_done``, ``eta_s``. With the estimate's model, on work (``WorkEta``: each unit's finish fed to the fit
    when it happened); without, on bytes (``eta_seconds``)."""
    start, events = _events(unit_items)
    if start is None:
        return []
    finishes = sorted((datetime.fromisoformat(str(i.finished_at)), str(uid), unit_span(i))
                      for uid, i in unit_items.items() if unit_span(i) is not None)
    work = WorkEta(units, model) if model is not None else None
    by_bytes: list[tuple[float, float]] = [(0.0, 0.0)]
    rows: list[EtaSample] = []
    done, f = 0, 0
    for k, (end, uid, nbytes) in enumerate(events):
        t = (end - start).total_seconds()
        done += nbytes
        if work is not None:
            while f < len(finishes) and finishes[f][0] <= end:
                work.finished(finishes[f][1], finishes[f][2])
                f += 1
            work.progress(t, uid, nbytes)
        elif by_bytes[-1][0] == t:
            by_bytes[-1] = (t, done)
        else:
            by_bytes.append((t, done))
        if k + 1 < len(events) and events[k + 1][0] == end:
            continue  # chunks that ended at the same instant: one row, as a poll would see them
        eta = work.eta() if work is not None else eta_seconds(by_bytes, float(planned_bytes))
        rows.append(EtaSample(t_s=round(t, 3), bytes_done=done, eta_s=None if eta is None else round(eta, 3)))
    return rows


def eta_findings(unit_items: Items, planned_bytes: int, read_bytes: int, *,
                 units: list[UnitSummary] | None = None, estimate: TimeModel | None = None) -> EtaFindings:
    """``findings.warmup``'s ``eta_samples`` (``t_s``, ``bytes_done``, ``eta_s``) and ``eta`` (the judgement:
    ``actual_s``, ``basis``, and at each of ``JUDGED_AT_PCT`` of the bytes the predicted and actual finish with
    the error in %). The ETA goes on work (``WorkEta``: a unit's bytes, ranges and itself, priced by the estimate's
    time model corrected by the units finished so far) at the measured rate; bytes alone when the run has no
    estimate (``estimate``: the run item's time model, ``estimate.run``). Not judged (``judged: false`` and why)
    when the warm-up did not read its plan, or when the chunks recorded do not hold the bytes read (a unit with more
    chunks than the store keeps)."""
    model = CostModel.of(estimate) if units else None
    unit_items = progress_by_unit(unit_items)
    rows = _replay(unit_items, units or [], model, planned_bytes)
    wall, _ = warmup_wall(list(unit_items.values()))
    recorded = rows[-1].bytes_done if rows else 0
    why = None
    if not rows or planned_bytes <= 0:
        why = "nothing was read"
    elif read_bytes < planned_bytes * COMPLETE_SHARE:
        why = (f"the warm-up read {read_bytes:,} of {planned_bytes:,} planned bytes: "
               "it did not finish, so no finish to judge the ETA by")
    elif recorded < read_bytes * COMPLETE_SHARE:
        why = (f"the units recorded chunks for {recorded:,} of the {read_bytes:,} bytes read "
               "(the store keeps a unit's first chunks only)")
    if why is not None:
        return EtaFindings(_thin(rows), EtaJudgement(judged=False, at=[], why=why))
    # the warm-up time every figure uses (timeline.warmup_wall); the last chunk's end without unit times
    actual = round(wall, 3) if wall else rows[-1].t_s
    judged = []
    for pct in JUDGED_AT_PCT:
        row = next((r for r in rows if r.bytes_done >= planned_bytes * pct / 100 and r.eta_s is not None), None)
        if row is None:
            continue
        predicted = row.t_s + row.eta_s  # type: ignore[operator]  (not None: chosen so)
        judged.append(EtaAt(pct=pct, t_s=row.t_s, predicted_s=round(predicted, 3), actual_s=actual,
                            error_pct=round(100 * (predicted - actual) / actual, 1) if actual else None))
    basis = ("bytes, ranges and units (the estimate's time model, fitted to the units finished so far)" if model
             else "bytes")
    return EtaFindings(_thin(rows), EtaJudgement(judged=True, actual_s=actual, at=judged, basis=basis))
