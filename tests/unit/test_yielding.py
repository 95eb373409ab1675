"""The warm-up's yield controller (issue 36 §1): AIMD decisions on recorded signal series, and the slots that
apply it once the hot set is warm (moto DynamoDB)."""

from __future__ import annotations

from typing import Any

from cutover_prep.dal.store import Store
from cutover_prep.warmup import slots
from cutover_prep.warmup.concurrency import (
    Reading,
    Yielding,
    YieldSettings,
    application_window,
    yield_observe,
    yield_start,
)
from tests.unit.test_slots import RUN_ID, Clock, ask, done, release, run, start

S = YieldSettings(maximum=8, window_seconds=2.0, latency_factor=1.5, min_reads_per_s=10.0)


def replay(series: list[tuple[float, float | None]], settings: YieldSettings = S) -> Yielding:
    """Feed the controller one window per (the application's blocks/s, its ms per read)."""
    state = yield_start(settings)
    for k, (per_s, ms) in enumerate(series):
        state = yield_observe(state, settings, t_s=2.0 * (k + 1), reads_per_s=per_s, ms_per_read=ms)
    return state


def decisions(state: Yielding) -> list[tuple[int, str]]:
    return [(lv, d) for _, lv, _, _, d in state.samples]


def test_an_idle_application_leaves_the_whole_volume_to_the_warm_up() -> None:
    state = replay([(0.0, None), (3.0, 0.4), (9.9, 5.0)])
    assert decisions(state) == [(8, "idle")] * 3


def test_the_application_reading_probes_at_one_then_climbs_one_a_window_while_its_latency_holds() -> None:
    # ~18 ms a cold read with the warm-up at 1, within 1.5x up the climb
    state = replay([(0, None), (120, 30.0), (120, 18.0), (118, 19.5), (121, 22.0), (119, 25.0), (120, 26.0)])
    assert decisions(state) == [(8, "idle"), (8, "noticed"), (1, "probe"), (2, "increase"), (3, "increase"),
                                (4, "increase"), (5, "increase")]
    assert state.base_ms == 19.5  # the window run at the cap of 1


def test_one_window_of_reads_alone_changes_nothing() -> None:
    """A stray reader (the benchmark's run without an application: 105 blocks/s for one window) is no probe."""
    state = replay([(0, None), (105, 0.017), (0, None), (0, None)])
    assert decisions(state) == [(8, "idle"), (8, "noticed"), (8, "idle"), (8, "idle")]


def test_latency_beyond_the_factor_halves_the_level_and_it_climbs_back_additively() -> None:
    series = [(100, 10.0)] * 9 + [(100, 31.0), (100, 14.0), (100, 12.0), (100, 40.0)]
    state = replay(series)
    levels = [lv for lv, _ in decisions(state)]
    assert levels == [8, 1, 2, 3, 4, 5, 6, 7, 8, 4, 5, 6, 3]
    assert [d for _, d in decisions(state)][9] == "decrease"


def test_a_level_at_the_maximum_stays_there_and_a_decrease_never_goes_below_one() -> None:
    state = replay([(100, 5.0)] * 12)
    assert state.level == 8
    state = replay([(100, 5.0), (100, 5.0), (100, 50.0), (100, 500.0), (100, 5000.0)])
    assert [lv for lv, _ in decisions(state)] == [8, 1, 2, 1, 1]  # 50 ms at 1 is the base: 500, 5000 are not


def test_without_read_timing_the_controller_cannot_tell_and_keeps_the_maximum() -> None:
    state = replay([(100, None), (500, None)])
    assert decisions(state) == [(8, "no_read_timing"), (8, "no_read_timing")]


def test_a_signal_not_read_keeps_the_level_and_says_why() -> None:
    state = replay([(100, 5.0)] * 4)
    state = yield_observe(state, S, t_s=10, reads_per_s=None, ms_per_read=None, error="OperationalError: gone")
    assert state.level == 3 and state.samples[-1][4] == "no_signal: OperationalError: gone"
    assert Yielding.model_validate(state.model_dump(mode="json")) == state


def test_the_window_takes_differences_and_subtracts_the_warm_ups_own_reads_where_counted() -> None:
    before = {"reads": 1000, "read_ms": 500.0, "block_size": 8192, "own_included": False, "at": 0.0, "own_bytes": 0}
    now = {**before, "reads": 1400, "read_ms": 2500.0, "at": 2.0, "own_bytes": 8192 * 300}
    def window(**changes: object) -> tuple[float, float | None]:
        return application_window(Reading.model_validate(before), Reading.model_validate({**now, **changes}))

    assert window() == (200.0, 5.0)
    assert window(own_included=True) == (50.0, 20.0)
    assert window(read_ms=None) == (200.0, None)
    assert window(reads=900) == (0.0, 0.0)  # a reset: never negative


# -- the slots apply it once the hot set is warm -------------------------------------------------------------

class Signal:
    """An engine's counters advancing by a recorded series, one step per reading."""

    def __init__(self, steps: list[tuple[int, float]]) -> None:
        self.steps, self.reads, self.ms, self.calls = list(steps), 0, 0.0, 0

    def __call__(self) -> dict[str, Any]:
        if self.calls:
            reads, ms = self.steps.pop(0)
            self.reads, self.ms = self.reads + reads, self.ms + ms
        self.calls += 1
        return {"reads": self.reads, "read_ms": self.ms, "block_size": 8192, "own_included": False,
                "source": "recorded"}


HOT = ["u000001", "u000002"]


def fixed(**warmup: Any):
    return run(adaptive=False, **warmup)


def test_the_hot_set_reads_at_full_concurrency_and_the_rest_yields_to_a_reading_application(store: Store) -> None:
    start(store)
    store.update_run(RUN_ID, hot_set_units=HOT)
    clock = Clock()
    # the application reads 200 blocks/s: 4 ms each at first, then 20 ms (the warm-up is in its way)
    signal = Signal([(400, 1600.0), (400, 1600.0), (400, 1600.0), (400, 8000.0)])
    grants = [ask(fixed(), f"u{i:06d}", store=store, clock=clock, activity=signal)["granted"] for i in range(1, 10)]
    assert grants == [True] * 8 + [False]  # the hot set not read: 8 slots, the signal not even read
    assert signal.calls == 0
    for unit in HOT:
        done(store, unit)
        release(fixed(), unit, store=store)
    found = ask(fixed(), "u000010", store=store, clock=clock, activity=signal)  # first reading: no decision yet
    assert found["granted"] is True and signal.calls == 1 and found["holders"] == 7  # 8 the cap
    clock.t += 2
    assert ask(fixed(), "u000011", store=store, clock=clock, activity=signal)["level"] == 8  # noticed
    clock.t += 2
    probe = ask(fixed(), "u000010", store=store, clock=clock, activity=signal)  # holds its slot, but the cap is 1
    assert probe["level"] == 1 and probe["granted"] is True
    assert ask(fixed(), "u000012", store=store, clock=clock, activity=signal)["granted"] is False
    clock.t += 1  # within the window: no new reading
    assert ask(fixed(), "u000010", store=store, clock=clock, activity=signal)["level"] == 1 and signal.calls == 3
    clock.t += 1
    assert ask(fixed(), "u000010", store=store, clock=clock, activity=signal)["level"] == 2  # 4 ms: within 1.5x
    clock.t += 2
    assert ask(fixed(), "u000010", store=store, clock=clock, activity=signal)["level"] == 1  # 20 ms: halved
    section = _yielding(store)
    assert [s["decision"] for s in section["samples"]] == ["noticed", "probe", "increase", "decrease"]
    assert section["samples"][-1] == {**section["samples"][-1], "level": 1, "app_reads_per_s": 200.0,
                                      "app_ms_per_read": 20.0}
    assert section["source"] == "recorded" and section["base_ms_per_read"] == 4.0


def test_an_idle_application_keeps_the_level_and_a_run_without_signal_or_with_yielding_off_never_reads_it(
        store: Store) -> None:
    start(store)
    clock = Clock()
    quiet = Signal([(0, 0.0)] * 5)
    for i in range(8):
        assert ask(fixed(), f"u{i}", store=store, clock=clock, activity=quiet)["granted"] is True
    clock.t += 2
    assert ask(fixed(), "u8", store=store, clock=clock, activity=quiet)["level"] == 8
    samples = _yielding(store)["samples"]
    assert [s["decision"] for s in samples] == ["idle"]
    off = Signal([(400, 8000.0)] * 5)
    assert ask(fixed(yielding={"enabled": False}), "u9", store=store, clock=clock, activity=off)["level"] == 8
    assert off.calls == 0
    assert ask(fixed(), "u9", store=store, clock=clock, activity=lambda: None)["level"] == 8  # no hook: no decision


def test_a_signal_that_fails_keeps_the_level_and_the_unit_is_not_failed(store: Store) -> None:
    start(store)
    clock = Clock()

    def broken() -> dict[str, Any]:
        raise RuntimeError("the server went away")

    assert ask(fixed(), "u0", store=store, clock=clock, activity=broken)["granted"] is True
    samples = _yielding(store)["samples"]
    assert samples[0]["decision"].startswith("no_signal: RuntimeError: the server went away")



# benchmarks/yielding.py, PostgreSQL with 64 MiB of shared buffers (2026-11-28 00:45): the application's blocks/s
# and ms per read, one window each, as the controller saw them (its decisions then in force, so the series only
# replays what the application read; the warm-up's effect on the latencies is in them)
RECORDED = [(99.4, 21.8), (79.5, 23.3), (52.5, 32.7), (65.0, 23.4), (114.9, 13.7), (77.5, 19.9), (72.5, 22.7),
            (79.0, 27.9), (58.0, 27.9), (64.0, 22.3), (68.0, 20.7), (46.5, 20.9), (54.5, 20.2), (61.8, 18.9),
            (49.0, 20.1), (54.5, 22.6), (61.6, 22.3), (27.0, 18.4), (42.8, 40.1), (59.5, 20.6), (57.4, 20.3),
            (43.5, 20.8), (48.0, 20.5), (33.0, 20.7), (76.5, 11.3), (47.0, 19.2), (36.5, 19.6), (44.0, 19.7),
            (41.0, 20.6), (30.0, 20.1), (45.5, 20.5), (29.0, 37.5), (36.4, 26.4), (41.0, 21.5), (46.4, 22.9)]


def longest_at_one(state: Yielding) -> int:
    longest = run = 0
    for _, lv, _, _, _ in state.samples:
        run = run + 1 if lv == 1 else 0
        longest = max(longest, run)
    return longest


def test_one_fast_window_does_not_hold_the_warm_up_at_one_for_good() -> None:
    """The base was the least latency of the recent windows: after one window at 11.3 ms the application's
    ordinary 19-21 ms reads were all 'too slow' and the warm-up stayed at 1 (28 windows in a row in the
    benchmark). The base is now the median at the lowest cap: ordinary reads are within 1.5x of it."""
    state = replay(RECORDED)
    assert longest_at_one(state) <= 3
    assert sum(lv for _, lv, _, _, _ in state.samples) / len(state.samples) >= 4
    assert 18 <= state.base_ms <= 24


def _yielding(store: Store) -> dict:
    """The findings' ``warmup.concurrency.yielding`` from the control item the slots wrote."""
    return slots.concurrency_findings(store.get_warmup_control(RUN_ID))["concurrency"]["yielding"]


def test_a_signal_that_fails_is_tried_once_a_window_not_on_every_acquire(store: Store) -> None:
    """A failed reading left no reading behind, and the window is counted from the last reading: every acquire
    of the run (each unit's, each poll of a unit waiting for a slot) read the counters again and wrote one more
    sample (a local run of 113 units: 100+ 'no_signal' samples, one at every acquire, and a write of the control
    item at each). A failing signal is tried once a window, as a working one is read."""
    start(store)
    clock = Clock()
    calls = []

    def broken() -> dict[str, Any]:
        calls.append(clock.t)
        raise RuntimeError("the server went away")

    for i in range(6):  # six acquires within one window
        assert ask(fixed(), f"u{i}", store=store, clock=clock, activity=broken)["granted"] is True
        clock.t += 0.3
    assert len(calls) == 1 and len(_yielding(store)["samples"]) == 1
    clock.t += 2
    ask(fixed(), "u6", store=store, clock=clock, activity=broken)
    assert len(calls) == 2 and len(_yielding(store)["samples"]) == 2
