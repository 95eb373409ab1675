"""Admission control of the warm-up (warmup/slots.py) on a real Store (moto DynamoDB)."""

from __future__ import annotations

from typing import Any

import pytest

from cutover_prep.dal.records.run import PointItem, WarmupControl
from cutover_prep.dal.store import Store
from cutover_prep.models.steps import RunContext
from cutover_prep.warmup import slots
from cutover_prep.warmup.planning import MIB
from cutover_prep.warmup.slots import POLL_SECONDS, SlotContention, acquire, release
from tests.unit.contexts import context
from tests.unit.stored_sections import warmup_section

RUN_ID = "run-slots"


def ask(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """One try, no polling (the fake clock does not move while a real sleep would)."""
    return acquire(*args, poll_seconds=0, **kwargs).to_json()


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


def run(**warmup: Any) -> RunContext:
    return context(RUN_ID, "db1", warmup={"max_concurrency": 8, "assumed_cold_mib_per_s": 8.0, "adaptive": True,
                                          "adaptive_window_seconds": 30, "adaptive_window_chunks": 0, **warmup})


def start(store: Store) -> None:
    store.start_run({"run_id": RUN_ID, "target": {"db_instance_identifier": "db1"},
                     "started_at": "2026-01-01T00:00:00+00:00", "warmup": {}})


def read_bytes(store: Store, nbytes: int, chunks: int = 0) -> None:
    """What committed chunks do to the run item's counters."""
    store._ddb.update_item(TableName=store.table, Key=store._key(RUN_ID, "RUN"),
                          UpdateExpression="ADD bytes_read :b, chunks_read :c",
                          ExpressionAttributeValues={":b": {"N": str(nbytes)}, ":c": {"N": str(chunks)}})


def test_units_beyond_the_level_wait_and_take_a_slot_once_one_is_given_back(store: Store) -> None:
    start(store)
    clock = Clock()
    assert [ask(run(), f"u{i}", store=store, clock=clock)["granted"] for i in range(3)] == [True, True, False]
    waiting = ask(run(), "u2", store=store, clock=clock)
    assert waiting == {**waiting, "granted": False, "level": 2, "holders": 2, "wait_seconds": 1}
    assert release(run(), "u0", store=store).to_json() == {"released": True}
    assert ask(run(), "u2", store=store, clock=clock)["granted"] is True
    assert sorted(store.get_warmup_control(RUN_ID).holders) == ["u1", "u2"]


def test_a_waiting_unit_keeps_asking_within_one_invocation_and_gets_a_slot_freed_meanwhile(store: Store) -> None:
    start(store)
    clock = Clock()
    for unit in ("u0", "u1"):
        ask(run(), unit, store=store, clock=clock)
    naps: list[float] = []

    def sleep(seconds: float) -> None:
        naps.append(seconds)
        clock.t += seconds
        if len(naps) == 3:
            release(run(), "u0", store=store).to_json()

    out = acquire(run(), "u2", store=store, clock=clock, sleep=sleep).to_json()
    assert out["granted"] is True and naps == [0.5, 0.5, 0.5]
    naps.clear()

    def nap(seconds: float) -> None:
        naps.append(seconds)
        clock.t += seconds

    lonely = acquire(run(), "u3", store=store, clock=clock, sleep=nap).to_json()
    assert lonely["granted"] is False and sum(naps) == POLL_SECONDS and len(naps) == 10  # then the ASL waits


def test_a_retried_acquire_keeps_its_slot_and_a_second_release_does_nothing(store: Store) -> None:
    start(store)
    clock = Clock()
    for unit in ("u0", "u1"):
        ask(run(), unit, store=store, clock=clock)
    assert ask(run(), "u0", store=store, clock=clock)["granted"] is True  # a retry: still its slot
    assert store.get_warmup_control(RUN_ID).holders == ["u0", "u1"]
    assert release(run(), "u0", store=store).to_json()["released"] is True
    assert release(run(), "u0", store=store).to_json()["released"] is False
    assert release(run(), "never", store=store).to_json()["released"] is False


def test_the_level_rises_while_the_aggregate_rate_grows_and_holds_where_it_stops(store: Store) -> None:
    start(store)
    clock = Clock()
    held: set[str] = set()
    waiter = 0

    def fill() -> int:
        """Units ask until one is left waiting; returns the level."""
        nonlocal waiter
        while True:
            out = ask(run(), f"w{waiter}", store=store, clock=clock)
            if not out["granted"]:
                return out["level"]
            held.add(f"w{waiter}")
            waiter += 1

    per_level = {2: 20, 4: 40, 8: 44}  # MiB/s: 8 readers are no faster than 4
    level = fill()
    seen = [level]
    for _ in range(6):
        read_bytes(store, per_level[level] * 30 * MIB)
        clock.t += 30
        level = fill()
        seen.append(level)
    assert seen[:3] == [2, 4, 8] and seen[-1] == 4
    section = warmup_section(slots.concurrency_findings(store.get_warmup_control(RUN_ID)),
                             {"read_rate": {"mib_per_s_per_worker": 9.5}})
    concurrency = section["concurrency"]
    assert concurrency["level"] == 4 and concurrency["settled"] == "no_growth" and concurrency["adaptive"] is True
    assert [s["level"] for s in concurrency["samples"]][:3] == [2, 4, 8]
    assert concurrency["samples"][0]["mib_per_s"] == pytest.approx(20.0)
    assert section["sizing_rate"] == {"mib_per_s": 8.0, "source": "assumed", "then": "first_chunks",
                                      "measured_mib_per_s_per_reader": 9.5}


def test_a_window_ends_after_enough_chunks_per_slot_before_its_time(store: Store) -> None:
    start(store)
    clock = Clock()
    fast = run(adaptive_window_seconds=600, adaptive_window_chunks=8)
    for unit in ("a", "b"):
        ask(fast, unit, store=store, clock=clock)
    read_bytes(store, 15 * MIB, chunks=15)  # 15 chunks: fewer than 8 per slot at level 2
    clock.t += 3
    assert ask(fast, "c", store=store, clock=clock)["level"] == 2
    read_bytes(store, 1 * MIB, chunks=1)  # 16: the window is over after 3.5 s, not 600
    clock.t += 0.5
    out = ask(fast, "c", store=store, clock=clock)
    assert out["level"] == 4 and out["granted"] is True
    control = store.get_warmup_control(RUN_ID).control
    sample = control.samples[0] if control is not None and control.samples else []
    assert sample[1] == 2 and sample[2] == pytest.approx(16 / 3.5, rel=1e-3)


def test_a_restart_keeps_the_level_and_forgets_the_old_attempts_holders(store: Store) -> None:
    start(store)
    clock = Clock()
    ask(run(), "a", store=store, clock=clock)
    ask(run(), "b", store=store, clock=clock)
    read_bytes(store, 600 * MIB)
    clock.t += 30
    assert ask(run(), "c", store=store, clock=clock)["level"] == 4  # 20 MiB/s at 2: raised to 4
    # the execution stops with a, b, c holding slots; the run is restarted (ValidateInput counts it)
    start(store)
    assert store.get_run(RUN_ID).restarts == 1
    out = ask(run(), "d", store=store, clock=clock)
    assert out["granted"] is True and out["level"] == 4 and out["holders"] == 1
    assert store.get_warmup_control(RUN_ID).holders == ["d"]


def test_not_adaptive_grants_every_ask_without_writing(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixed level is the Map's MaxConcurrency: a slot item written by 16 short units at once made
    units fail with SlotContention on the emulated demo (4 of 88)."""
    start(store)
    clock = Clock()
    ask(run(adaptive=False, max_concurrency=3), "u0", store=store, clock=clock)  # creates the item once
    writes = []
    real_put = store.put_warmup_control
    monkeypatch.setattr(store, "put_warmup_control", lambda *a, **k: writes.append(a) or real_put(*a, **k))
    granted = [ask(run(adaptive=False, max_concurrency=3), f"u{i}", store=store, clock=clock)["granted"]
               for i in range(1, 5)]
    assert granted == [True] * 4 and writes == []


def test_the_sizing_rate_is_the_cold_probes_when_it_ran(store: Store) -> None:
    start(store)
    store.put_point(RUN_ID, PointItem.new(point_id="probe-cold", status="DONE", throughput_kbps=2048.0))
    out = ask(run(), "u0", store=store, clock=Clock())
    assert out["rate"] == {"mib_per_s": 2.0, "source": "cold_probe"}


def test_a_lost_write_is_decided_again_on_the_new_state(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two units read the state with one slot left; the first writes; the second's write fails its
    version check, it reads again and waits (never two units on the last slot)."""
    start(store)
    clock = Clock()
    ask(run(), "u0", store=store, clock=clock)
    real_put = store.put_warmup_control
    calls = {"n": 0}

    def racing(run_id: str, control: WarmupControl, *, version: int | None) -> bool:
        calls["n"] += 1
        if calls["n"] == 1:  # another unit takes the last slot between our read and our write
            assert real_put(run_id, control.model_copy(update={"holders": ["u0", "other"]}), version=version)
        return real_put(run_id, control, version=version)

    monkeypatch.setattr(store, "put_warmup_control", racing)
    out = ask(run(), "u1", store=store, clock=clock)
    assert out["granted"] is False and calls["n"] == 1  # decided again on the new state: nothing to write
    assert store.get_warmup_control(RUN_ID).holders == ["u0", "other"]


def test_contention_is_no_slot_yet_never_a_failed_unit(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    start(store)
    monkeypatch.setattr(store, "put_warmup_control", lambda *a, **k: False)
    monkeypatch.setattr(slots, "ATTEMPTS", 3)
    assert ask(run(), "u0", store=store, clock=Clock())["granted"] is False  # the ASL waits and asks again
    with pytest.raises(SlotContention, match="changed 3 times"):
        slots._acquire_once(run(), "u0", store=store, clock=Clock())


# -- warmup.after_hot_set: at most N slots once every unit of the hot set is DONE (issue 23 §1) ----------------

HOT = ["u000001", "u000002"]


def fixed(**warmup: Any) -> dict[str, Any]:
    """A fixed level of 8 (the default, not adaptive) with the back-off after the hot set at 2."""
    return run(adaptive=False, after_hot_set={"max_concurrency": 2}, **warmup)


def done(store: Store, unit_id: str) -> None:
    """What the unit's last committed chunk does to its item (dal.store.commit_progress, done=True)."""
    store.commit_progress(RUN_ID, unit_id, seq=0, cursor=None, blocks=1, bytes_=8192, seconds=0.1,
                          method="pg_prewarm", done=True, planned_bytes=8192)


def test_after_the_hot_set_no_new_unit_is_admitted_until_fewer_than_the_back_off_level_hold_slots(store):
    start(store)
    store.update_run(RUN_ID, hot_set_units=HOT)
    clock = Clock()
    rest = [f"u{i:06d}" for i in range(3, 12)]
    # the hot set and the first of the rest take all 8 slots of the fixed level
    assert [ask(fixed(), u, store=store, clock=clock)["granted"] for u in HOT + rest[:7]] == [True] * 8 + [False]
    for unit in HOT:
        done(store, unit)
        release(fixed(), unit, store=store).to_json()
    # 6 units of the rest hold slots when the hot set is found warm: they finish, no new one starts
    refused = ask(fixed(), rest[6], store=store, clock=clock)
    assert refused["granted"] is False and refused["level"] == 2 and refused["holders"] == 6
    for unit in rest[:5]:  # 6 -> 1 holder
        release(fixed(), unit, store=store).to_json()
        if unit != rest[4]:
            assert ask(fixed(), rest[6], store=store, clock=clock)["granted"] is False
    assert ask(fixed(), rest[6], store=store, clock=clock)["granted"] is True  # 2 hold slots now
    assert ask(fixed(), rest[7], store=store, clock=clock)["granted"] is False
    doc = store.get_warmup_control(RUN_ID).stored()
    assert sorted(doc["holders"]) == [rest[5], rest[6]]
    assert doc["after_hot_set"] == {**doc["after_hot_set"], "max_concurrency": 2, "holders_then": 6,
                                    "admitted": 1, "most_holders": 2}
    assert doc["hot_left"] == []
    section = slots.concurrency_findings(store.get_warmup_control(RUN_ID))["concurrency"]["after_hot_set"]
    assert section["max_concurrency"] == 2 and section["t_s"] >= 0


def test_while_one_unit_of_the_hot_set_is_not_done_the_full_level_holds(store):
    start(store)
    store.update_run(RUN_ID, hot_set_units=HOT)
    clock = Clock()
    assert ask(fixed(), HOT[0], store=store, clock=clock)["granted"] is True
    assert ask(fixed(), HOT[1], store=store, clock=clock)["granted"] is True
    done(store, HOT[1])  # the second finished first: the first still reads
    release(fixed(), HOT[1], store=store).to_json()
    grants = [ask(fixed(), f"u{i:06d}", store=store, clock=clock)["granted"] for i in range(3, 11)]
    assert grants == [True] * 7 + [False]  # 8 slots: the hot unit still reading and 7 of the rest
    doc = store.get_warmup_control(RUN_ID).stored()
    assert doc.get("after_hot_set") is None and HOT[0] in doc["hot_left"]


def test_a_run_without_hot_set_units_keeps_its_level(store):
    start(store)  # no hot_set_units: no profile, or it matched nothing
    clock = Clock()
    grants = [ask(fixed(), f"u{i:06d}", store=store, clock=clock)["granted"] for i in range(9)]
    assert grants == [True] * 8 + [False]
    assert store.get_warmup_control(RUN_ID).after_hot_set is None


def test_the_back_off_caps_an_adaptive_level_and_never_raises_it(store):
    start(store)
    store.update_run(RUN_ID, hot_set_units=HOT[:1])
    clock = Clock()
    warm = run(after_hot_set={"max_concurrency": 4})  # adaptive, starting at 2
    assert [ask(warm, u, store=store, clock=clock)["granted"] for u in ("u000001", "u000002", "u000003")] == [
        True, True, False]
    done(store, "u000001")
    release(warm, "u000001", store=store).to_json()
    # level 2 (the controller's) is below the back-off's 4: the back-off does not raise it
    out = ask(warm, "u000003", store=store, clock=clock)
    assert out["granted"] is True and out["level"] == 2
    assert ask(warm, "u000004", store=store, clock=clock)["granted"] is False


def test_a_restart_keeps_the_hot_set_warm_and_the_back_off(store):
    start(store)
    store.update_run(RUN_ID, hot_set_units=HOT[:1])
    clock = Clock()
    ask(fixed(), "u000001", store=store, clock=clock)
    done(store, "u000001")
    release(fixed(), "u000001", store=store).to_json()
    for unit in ("u000002", "u000003"):
        assert ask(fixed(), unit, store=store, clock=clock)["granted"] is True
    store.update_run(RUN_ID, restarts=1)  # the old attempt's holders are gone
    grants = [ask(fixed(), f"u{i:06d}", store=store, clock=clock)["granted"] for i in (4, 5, 6)]
    assert grants == [True, True, False]
    assert store.get_warmup_control(RUN_ID).after_hot_set.max_concurrency == 2
