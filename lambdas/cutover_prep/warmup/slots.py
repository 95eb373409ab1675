"""Admission control of the warm-up: a unit reads only while it holds one of ``level`` slots.

Step Functions fixes a Map's MaxConcurrency for the whole Map run, so the Map runs at
``warmup.max_concurrency`` and each item first asks for a slot (``acquire``); without one it
waits (the ASL's WaitForSlot) and asks again. The level is the controller's
(``concurrency.py``); it is decided here, once per window, from the run item's
``bytes_read`` and ``chunks_read`` (every committed chunk adds to them: the same bytes the
timeline is built from).

One DynamoDB item per run holds the state (``Store.put_warmup_control``), written whole
under a version check, so two units never take the last slot together:

- retries: a unit that holds a slot gets it again (a retried invocation keeps its slot);
  ``release`` of a slot not held does nothing;
- restarts: the item records the run's attempt (``restarts`` of the run item); a new attempt
  clears the holders of the old one (their executions are gone) and keeps the level, the
  best rate and the samples;
- failures: the ASL releases the slot after recording a failed unit.

After the hot set (``warmup.after_hot_set``, issue 23 §1): once every unit of the hot set is DONE, no
more than ``after_hot_set.max_concurrency`` units hold slots; the units holding one then finish their
unit, no new one is admitted until fewer than that hold slots. The hot set's units are the run item's
``hot_set_units`` (Discover); the item keeps the ones not yet seen DONE (``hot_left``) and, from the
acquire that found the last one DONE, ``after_hot_set`` (the level, when, how many held slots then,
how many were admitted after and the most that held slots at an admission after). The rule is applied
here, so it holds in Step Functions and in the local run alike; with it, a fixed level keeps the item too
(without it, a fixed level writes nothing: the Map's MaxConcurrency admits the units).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Self

from pydantic import BaseModel

from cutover_prep.dal.records.run import AfterHotSet, RunItem, WarmupControl
from cutover_prep.dal.store import Store
from cutover_prep.models.status import UnitStatus
from cutover_prep.models.steps import RunContext, SlotAnswer, SlotReleased
from cutover_prep.models.warmup import Warmup
from cutover_prep.warmup.concurrency import (
    Control,
    Counters,
    Number,
    Reading,
    Settings,
    SizingRate,
    Yielding,
    YieldSettings,
    application_window,
    capped,
    initial,
    observe,
    sizing_rate,
    window_closed,
    window_rate,
    yield_observe,
    yield_start,
)

ATTEMPTS = 20  # optimistic writes lost to other units before giving up (each loss means another unit moved)


class SlotContention(Exception):
    """The slot item kept changing under this unit; the workflow records the unit as failed."""


# what an acquire reads of the run item (not its plan summary, estimate or findings: each unit's every acquire reads it)
RUN_FIELDS = ("restarts", "bytes_read", "chunks_read", "hot_set_units")
POLL_SECONDS = 5.0  # a unit without a slot keeps asking for this long inside one invocation
POLL_INTERVAL = 0.5
WAIT_SECONDS = 1  # then the ASL's WaitForSlot waits this long before the next invocation


Activity = Callable[[], "dict[str, Any] | None"]  # deps.activity_reader: the engine's counters (None: no hook)


class YieldRecord(BaseModel):
    """The yield controller's state between acquires: its cap and samples, the last counters read, when they
    were last tried (``tried``, s; a reading that failed leaves no counters), since when it decides (s after the
    first acquire) and where the counters come from."""

    state: Yielding
    last: Reading | None = None
    tried: Number | None = None
    since: Number | None = None
    source: str | None = None


class ControlState(BaseModel):
    """What the findings read of the control item: the controller, the sizing rate, the after-hot-set mark and the
    yield controller."""

    control: Control
    rate: SizingRate | None = None
    adaptive: bool | None = None
    maximum: int | None = None
    after_hot_set: AfterHotSet | None = None
    yielding: YieldRecord | None = None

    @classmethod
    def of(cls, item: WarmupControl) -> Self:
        return cls.model_validate(item.state())


class SlotState(ControlState):
    """The control item as the slots read and write it (``WarmupControl``'s attributes but its keys and version)."""

    attempt: int
    holders: list[str] = []
    t0: Number
    window_started: Number
    window_bytes: int
    window_chunks: int | None = None
    hot_left: list[str] | None = None


def after_hot_set_level(warmup: Warmup) -> int | None:
    """``warmup.after_hot_set.max_concurrency`` (None: the rule is off)."""
    return warmup.after_hot_set.max_concurrency if warmup.after_hot_set else None


def effective_level(level: int, after: int | None, switched: bool) -> int:
    """The slots in force: the controller's level, at most ``after`` once the hot set is warm."""
    return min(level, after) if after is not None and switched else level


def _hot_left(hot_left: list[str], *, store: Store, run_id: str) -> list[str]:
    """The hot-set units not yet DONE; stops at the first one not DONE (the rule needs them all)."""
    left = list(hot_left)
    while left:
        item = store.get_unit(run_id, left[0])
        if item is None or item.status != UnitStatus.DONE:
            break
        left.pop(0)
    return left


def _fresh(run: RunContext, settings: Settings, *, store: Store, attempt: int, now: float,
           bytes_now: int, chunks_now: int, hot_units: list[str]) -> SlotState:
    return SlotState(hot_left=list(hot_units), attempt=attempt, control=initial(settings), t0=now, window_started=now,
                     window_bytes=bytes_now, window_chunks=chunks_now,
                     rate=sizing_rate(store.get_point(run.run_id, "probe-cold"), run.warmup.assumed_cold_mib_per_s),
                     adaptive=settings.adaptive, maximum=settings.maximum)


def acquire(run: RunContext, unit_id: str, *, store: Store, clock: Callable[[], float] = time.time,
            sleep: Callable[[float], None] | None = None, poll_seconds: float = POLL_SECONDS,
            activity: Activity | None = None) -> SlotAnswer:
    """``SlotAnswer``: granted, level, holders, wait_seconds, rate; a granted unit holds a slot.

    Without a free slot it asks again every ``POLL_INTERVAL`` for up to ``poll_seconds`` before it
    returns (the ASL then waits ``wait_seconds`` and calls again): a unit gets a freed slot within
    a second, and a waiting unit costs a few Lambda seconds instead of a stream of state
    transitions (locally, where Wait states do not sleep, it does not spin)."""
    started, nap = clock(), sleep or time.sleep
    while True:
        try:
            result = _acquire_once(run, unit_id, store=store, clock=clock, activity=activity)
        except SlotContention:  # many units at once changed the item: ask again, never fail the unit for it
            result = SlotAnswer(granted=False, level=None, holders=None, wait_seconds=WAIT_SECONDS, rate=None)
        if result.granted or clock() - started + POLL_INTERVAL > poll_seconds:
            return result
        nap(POLL_INTERVAL)



def _yield(state: SlotState, ysettings: YieldSettings, *, now: float, own_bytes: int,
           read: Callable[[], Counters | None]) -> Yielding:
    """The yield cap in force (``concurrency.yield_observe``), one decision per ``window_seconds``: each
    reads the engine's counters once (``read``: cached by the caller across its optimistic retries)."""
    record = state.yielding or YieldRecord(state=yield_start(ysettings), since=round(now - float(state.t0), 3))
    current, last = record.state, record.last
    tried = record.tried if record.tried is not None else (last.at if last is not None else None)
    if tried is not None and now - float(tried) < ysettings.window_seconds:  # one try a window, read or failed
        return current
    try:
        counters = read()
        error = None
    except Exception as exc:  # noqa: BLE001 - a signal not read this window: the cap stays, the error is kept
        counters, error = None, f"{type(exc).__name__}: {str(exc).strip()[:120]}"
    if counters is None and error is None:  # the engine has no signal: the warm-up does not yield
        return current
    reading = None if counters is None else Reading(**counters.model_dump(), at=now, own_bytes=own_bytes)
    if last is not None or reading is None:
        per_s, ms = application_window(last, reading) if (last is not None and reading is not None) else (None, None)
        current = yield_observe(current, ysettings, t_s=now - float(state.t0), reads_per_s=per_s,
                                ms_per_read=ms, error=error)
    state.yielding = YieldRecord(state=current, last=reading or last, tried=now, since=record.since,
                                 source=(reading.source if reading else None) or record.source)
    return current


def _read_once(activity: Activity | None) -> Callable[[], Counters | None]:
    """The engine's counters read at most once (an acquire's optimistic retries decide on the same reading):
    the counters, or the error raised again."""
    kept: list[tuple[Counters | None, Exception | None]] = []

    def read() -> Counters | None:
        if not kept:
            try:
                found = activity() if activity is not None else None
                kept.append((None if found is None else Counters.model_validate(found), None))
            except Exception as exc:  # noqa: BLE001 - kept and raised again to each retry's decision
                kept.append((None, exc))
        counters, exc = kept[0]
        if exc is not None:
            raise exc
        return counters
    return read


def _acquire_once(run: RunContext, unit_id: str, *, store: Store, clock: Callable[[], float],
                  activity: Activity | None = None) -> SlotAnswer:
    run_id, settings = run.run_id, Settings.of(run.warmup)
    after = after_hot_set_level(run.warmup)
    ysettings = YieldSettings.of(run.warmup)
    yielding = ysettings.enabled and activity is not None
    read = _read_once(activity)

    for _ in range(ATTEMPTS):
        run_item = store.get_run_fields(run_id, RUN_FIELDS) or RunItem(run_id=run_id)
        attempt, bytes_now = int(run_item.restarts or 0), int(run_item.bytes_read or 0)
        chunks_now = int(run_item.chunks_read or 0)
        item, now = store.get_warmup_control(run_id), clock()
        if (item is not None and not settings.adaptive and int(item.attempt or 0) == attempt
                and (after is None or after >= settings.maximum) and not yielding):
            # a fixed level: the Map's MaxConcurrency already admits max_concurrency units; no write
            return SlotAnswer(granted=True, level=settings.maximum, holders=None, wait_seconds=WAIT_SECONDS,
                              rate=item.rate.model_dump(exclude_unset=True) if item.rate else None)
        version = None if item is None else int(item.version or 0)
        state = _fresh(run, settings, store=store, attempt=attempt, now=now, bytes_now=bytes_now,
                       chunks_now=chunks_now, hot_units=[str(u) for u in run_item.hot_set_units or []]) \
            if item is None else SlotState.of(item)
        before = state.model_copy(deep=True)
        if state.attempt != attempt:  # a restart: the old attempt's holders are gone
            state.attempt, state.holders = attempt, []
            state.window_started, state.window_bytes, state.window_chunks = now, bytes_now, chunks_now
        control = capped(state.control, settings)
        holders = list(state.holders)
        if (after is not None or yielding) and state.after_hot_set is None and state.hot_left:
            state.hot_left = _hot_left(state.hot_left, store=store, run_id=run_id)
            if not state.hot_left and after is not None:  # the hot set is warm: from now on at most `after` slots
                state.after_hot_set = AfterHotSet(max_concurrency=after, t_s=round(now - float(state.t0), 3),
                                                  holders_then=len(holders), admitted=0, most_holders=None)
        switched = state.after_hot_set is not None
        elapsed = now - float(state.window_started)
        if window_closed(settings, control, seconds=elapsed, chunks=chunks_now - int(state.window_chunks or 0)):
            # decide first: a raised level admits this caller at once
            rate = window_rate(state.window_bytes, bytes_now, elapsed)
            # the caller wants a slot too: with it, every slot is wanted and the window is judged
            wanted = len(holders) + (0 if unit_id in holders else 1)
            control = observe(control, settings, t_s=now - float(state.t0), mib_per_s=rate, holders=wanted)
            state.window_started, state.window_bytes, state.window_chunks = now, bytes_now, chunks_now
        level = effective_level(control.level, after, switched)
        if yielding and not state.hot_left:  # the hot set is warm (or there is none): yield to the application
            level = min(level, _yield(state, ysettings, now=now, own_bytes=bytes_now, read=read).level)
        granted = unit_id in holders or len(holders) < level
        if granted and unit_id not in holders:
            holders.append(unit_id)
            if state.after_hot_set is not None:
                mark = state.after_hot_set
                mark.admitted, mark.most_holders = mark.admitted + 1, max(mark.most_holders or 0, len(holders))
        state.holders, state.control, state.adaptive, state.maximum = holders, control, settings.adaptive, \
            settings.maximum
        result = SlotAnswer(granted=granted, level=level, holders=len(holders), wait_seconds=WAIT_SECONDS,
                            rate=state.rate.model_dump() if state.rate else None)
        if item is not None and state == before:
            return result
        if store.put_warmup_control(run_id, WarmupControl.model_validate(state.model_dump(mode="json")),
                                    version=version):
            return result
    raise SlotContention(f"unit {unit_id}: the warm-up's slot item changed {ATTEMPTS} times while this unit "
                         "asked for a slot")


def release(run: RunContext, unit_id: str, *, store: Store) -> SlotReleased:
    """Give the unit's slot back (nothing to do when it holds none)."""
    run_id = run.run_id
    for _ in range(ATTEMPTS):
        item = store.get_warmup_control(run_id)
        if item is None or unit_id not in (item.holders or []):
            return SlotReleased(released=False)
        version = int(item.version or 0)
        item.holders = [h for h in item.holders or [] if h != unit_id]
        if store.put_warmup_control(run_id, item, version=version):
            return SlotReleased(released=True)
    raise SlotContention(f"unit {unit_id}: the warm-up's slot item changed {ATTEMPTS} times while this unit "
                         "gave its slot back")


def concurrency_findings(item: WarmupControl | None) -> dict[str, Any]:
    """The findings' ``warmup.concurrency`` and ``warmup.sizing_rate`` from the control item."""
    if item is None:
        return {"concurrency": None, "sizing_rate": None}
    state = ControlState.of(item)
    control = state.control
    return {
        "concurrency": {
            "adaptive": bool(state.adaptive), "max_concurrency": state.maximum,
            "level": control.level, "settled": control.settled, "best_level": control.best_level,
            "best_mib_per_s": control.best_mib_per_s,
            "samples": [{"t_s": t, "level": lv, "mib_per_s": r, "slots_wanted": h} for t, lv, r, h in control.samples],
            "after_hot_set": item.after_hot_set.model_dump(exclude_unset=True) if item.after_hot_set else None,
            "yielding": yielding_findings(state.yielding),
        },
        "sizing_rate": state.rate.model_dump() if state.rate else None,
    }


def yielding_findings(record: YieldRecord | None) -> dict[str, Any] | None:
    """The findings' ``warmup.concurrency.yielding``: the yield controller's decisions, one sample a window."""
    if record is None:
        return None
    state = record.state
    return {"since_t_s": record.since, "source": record.source, "level": state.level,
            "base_ms_per_read": state.base_ms,
            "samples": [{"t_s": t, "level": lv, "app_reads_per_s": r, "app_ms_per_read": ms, "decision": d}
                        for t, lv, r, ms, d in state.samples]}
