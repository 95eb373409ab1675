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
from typing import Any

from cutover_prep.dal.store import Store
from cutover_prep.models.status import UnitStatus
from cutover_prep.models.steps import RunContext, SlotAnswer, SlotReleased
from cutover_prep.models.warmup import Warmup
from cutover_prep.warmup.concurrency import (
    Control,
    Settings,
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


POLL_SECONDS = 5.0  # a unit without a slot keeps asking for this long inside one invocation
POLL_INTERVAL = 0.5
WAIT_SECONDS = 1  # then the ASL's WaitForSlot waits this long before the next invocation


STATE_KEYS = ("attempt", "holders", "control", "t0", "window_started", "window_bytes", "window_chunks", "rate",
              "adaptive", "maximum", "hot_left", "after_hot_set", "yielding")
Activity = Callable[[], "dict[str, Any] | None"]  # deps.activity_reader: the engine's counters (None: no hook)


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
           bytes_now: int, chunks_now: int, hot_units: list[str]) -> dict[str, Any]:
    cold = point.stored() if (point := store.get_point(run.run_id, "probe-cold")) else None
    return {"hot_left": list(hot_units), "after_hot_set": None,
            "attempt": attempt, "holders": [], "control": initial(settings).to_json(), "t0": now,
            "window_started": now, "window_bytes": bytes_now, "window_chunks": chunks_now,
            "rate": sizing_rate(cold, run.warmup.assumed_cold_mib_per_s),
            "adaptive": settings.adaptive, "maximum": settings.maximum}


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



def _yield(state: dict[str, Any], ysettings: YieldSettings, *, now: float, own_bytes: int,
           read: Callable[[], dict[str, Any]]) -> Yielding:
    """The yield cap in force (``concurrency.yield_observe``), one decision per ``window_seconds``: each
    reads the engine's counters once (``read``: cached by the caller across its optimistic retries)."""
    doc = state.get("yielding") or {"state": yield_start(ysettings).to_json(), "last": None,
                                     "since": round(now - float(state["t0"]), 3)}
    current = Yielding.from_json(doc["state"])
    last = doc.get("last")
    if last is not None and now - float(last["at"]) < ysettings.window_seconds:
        return current
    try:
        counters = read()
        error = None
    except Exception as exc:  # noqa: BLE001 - a signal not read this window: the cap stays, the error is kept
        counters, error = None, f"{type(exc).__name__}: {str(exc).strip()[:120]}"
    if counters is None and error is None:  # the engine has no signal: the warm-up does not yield
        return current
    if counters is not None:
        counters = {**counters, "at": now, "own_bytes": own_bytes}
    if last is not None or counters is None:
        per_s, ms = application_window(last, counters) if (last is not None and counters is not None) else (None, None)
        current = yield_observe(current, ysettings, t_s=now - float(state["t0"]), reads_per_s=per_s,
                                ms_per_read=ms, error=error)
    state["yielding"] = {**doc, "state": current.to_json(), "last": counters or last,
                         "source": (counters or {}).get("source") or doc.get("source")}
    return current


def _acquire_once(run: RunContext, unit_id: str, *, store: Store, clock: Callable[[], float],
                  activity: Activity | None = None) -> SlotAnswer:
    run_id, settings = run.run_id, Settings.of(run.warmup)
    after = after_hot_set_level(run.warmup)
    ysettings = YieldSettings.of(run.warmup)
    yielding = ysettings.enabled and activity is not None
    read_once: list[Any] = []

    def read() -> dict[str, Any]:
        if not read_once:
            try:
                read_once.append((activity(), None))  # type: ignore[misc]
            except Exception as exc:  # noqa: BLE001 - kept and raised again to each retry's decision
                read_once.append((None, exc))
        found, exc = read_once[0]
        if exc is not None:
            raise exc
        return found

    for _ in range(ATTEMPTS):
        run_item = item.stored() if (item := store.get_run(run_id)) else {}
        attempt, bytes_now = int(run_item.get("restarts") or 0), int(run_item.get("bytes_read") or 0)
        chunks_now = int(run_item.get("chunks_read") or 0)
        doc, now = control.stored() if (control := store.get_warmup_control(run_id)) else None, clock()
        if (doc is not None and not settings.adaptive and int(doc.get("attempt") or 0) == attempt
                and (after is None or after >= settings.maximum) and not yielding):
            # a fixed level: the Map's MaxConcurrency already admits max_concurrency units; no write
            return SlotAnswer(granted=True, level=settings.maximum, holders=None, wait_seconds=WAIT_SECONDS,
                              rate=doc.get("rate"))
        version = None if doc is None else int(doc["version"])
        state = _fresh(run, settings, store=store, attempt=attempt, now=now, bytes_now=bytes_now,
                       chunks_now=chunks_now, hot_units=[str(u) for u in run_item.get("hot_set_units") or []]) \
            if doc is None else {k: doc.get(k) for k in STATE_KEYS}
        before = dict(state)
        if int(state["attempt"]) != attempt:  # a restart: the old attempt's holders are gone
            state.update(attempt=attempt, holders=[], window_started=now, window_bytes=bytes_now,
                         window_chunks=chunks_now)
        control = capped(Control.from_json(state["control"]), settings)
        holders = list(state["holders"])
        if (after is not None or yielding) and state.get("after_hot_set") is None and state.get("hot_left"):
            state["hot_left"] = _hot_left(state["hot_left"], store=store, run_id=run_id)
            if not state["hot_left"] and after is not None:  # the hot set is warm: from now on at most `after` slots
                state["after_hot_set"] = {"max_concurrency": after, "t_s": round(now - float(state["t0"]), 3),
                                          "holders_then": len(holders), "admitted": 0, "most_holders": None}
        switched = state.get("after_hot_set") is not None
        elapsed = now - float(state["window_started"])
        if window_closed(settings, control, seconds=elapsed, chunks=chunks_now - int(state["window_chunks"] or 0)):
            # decide first: a raised level admits this caller at once
            rate = window_rate(int(state["window_bytes"]), bytes_now, elapsed)
            # the caller wants a slot too: with it, every slot is wanted and the window is judged
            wanted = len(holders) + (0 if unit_id in holders else 1)
            control = observe(control, settings, t_s=now - float(state["t0"]), mib_per_s=rate, holders=wanted)
            state.update(window_started=now, window_bytes=bytes_now, window_chunks=chunks_now)
        level = effective_level(control.level, after, switched)
        if yielding and not state.get("hot_left"):  # the hot set is warm (or there is none): yield to the application
            level = min(level, _yield(state, ysettings, now=now, own_bytes=bytes_now, read=read).level)
        granted = unit_id in holders or len(holders) < level
        if granted and unit_id not in holders:
            holders.append(unit_id)
            if switched:
                mark = dict(state["after_hot_set"])
                mark.update(admitted=int(mark.get("admitted") or 0) + 1,
                            most_holders=max(int(mark.get("most_holders") or 0), len(holders)))
                state["after_hot_set"] = mark
        state.update(holders=holders, control=control.to_json(), adaptive=settings.adaptive,
                     maximum=settings.maximum)
        result = SlotAnswer(granted=granted, level=level, holders=len(holders), wait_seconds=WAIT_SECONDS,
                            rate=state["rate"])
        if doc is not None and state == before:
            return result
        if store.put_warmup_control(run_id, state, version=version):
            return result
    raise SlotContention(f"unit {unit_id}: the warm-up's slot item changed {ATTEMPTS} times while this unit "
                         "asked for a slot")


def release(run: RunContext, unit_id: str, *, store: Store) -> SlotReleased:
    """Give the unit's slot back (nothing to do when it holds none)."""
    run_id = run.run_id
    for _ in range(ATTEMPTS):
        doc = control.stored() if (control := store.get_warmup_control(run_id)) else None
        if doc is None or unit_id not in (doc.get("holders") or []):
            return SlotReleased(released=False)
        state = {k: v for k, v in doc.items() if k not in ("pk", "sk", "version", "updated_at")}
        state["holders"] = [h for h in doc["holders"] if h != unit_id]
        if store.put_warmup_control(run_id, state, version=int(doc["version"])):
            return SlotReleased(released=True)
    raise SlotContention(f"unit {unit_id}: the warm-up's slot item changed {ATTEMPTS} times while this unit "
                         "gave its slot back")


def concurrency_findings(doc: dict[str, Any] | None) -> dict[str, Any]:
    """The findings' ``warmup.concurrency`` and ``warmup.sizing_rate`` from the control item."""
    if not doc:
        return {"concurrency": None, "sizing_rate": None}
    control = Control.from_json(doc["control"])
    return {
        "concurrency": {
            "adaptive": bool(doc.get("adaptive", False)), "max_concurrency": doc.get("maximum"),
            "level": control.level, "settled": control.settled, "best_level": control.best_level,
            "best_mib_per_s": control.best_mib_per_s,
            "samples": [{"t_s": t, "level": lv, "mib_per_s": r, "slots_wanted": h} for t, lv, r, h in control.samples],
            "after_hot_set": doc.get("after_hot_set"),
            "yielding": yielding_findings(doc.get("yielding")),
        },
        "sizing_rate": doc.get("rate"),
    }


def yielding_findings(doc: dict[str, Any] | None) -> dict[str, Any] | None:
    """The findings' ``warmup.concurrency.yielding``: the yield controller's decisions, one sample a window."""
    if not doc:
        return None
    state = Yielding.from_json(doc["state"])
    return {"since_t_s": doc.get("since"), "source": doc.get("source"), "level": state.level,
            "base_ms_per_read": state.base_ms,
            "samples": [{"t_s": t, "level": lv, "app_reads_per_s": r, "app_ms_per_read": ms, "decision": d}
                        for t, lv, r, ms, d in state.samples]}
