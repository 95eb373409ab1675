"""The adaptive concurrency controller (pure) and the sizing of units and chunks from a rate."""

from __future__ import annotations

import pytest

from cutover_prep.dal.records.run import PointItem
from cutover_prep.warmup.concurrency import (
    Control,
    Settings,
    capped,
    initial,
    observe,
    sizing_rate,
    window_closed,
    window_rate,
)
from cutover_prep.warmup.planning import MIB, MIN_CHUNK_BYTES, MIN_UNIT_BYTES, chunk_bytes_for, unit_bytes_for

S = Settings(maximum=16, start=2, margin=0.10)


def run_windows(settings: Settings, rate_of_level, windows: int = 12) -> Control:
    """Feed the controller windows whose rate is ``rate_of_level(level)``, every slot taken."""
    control = initial(settings)
    for k in range(windows):
        control = observe(control, settings, t_s=30.0 * (k + 1), mib_per_s=rate_of_level(control.level),
                          holders=control.level)
    return control


def test_starts_low_and_doubles_while_the_rate_grows() -> None:
    control = initial(S)
    assert control.level == 2
    control = observe(control, S, t_s=30, mib_per_s=20, holders=2)
    assert control.level == 4 and control.best_level == 2
    control = observe(control, S, t_s=60, mib_per_s=40, holders=4)
    assert control.level == 8 and control.best_level == 4 and control.settled is None


def test_holds_at_the_level_where_the_rate_stopped_growing() -> None:
    # the volume gives 10 MiB/s per reader up to 60 MiB/s: 8 readers are no faster than 4... (40 vs 60: faster)
    # here 4 readers reach the ceiling: 8 only add load
    control = run_windows(S, lambda level: min(10.0 * level, 40.0))
    assert control.settled == "no_growth"
    assert control.level == 4 == control.best_level
    assert control.best_mib_per_s == 40.0
    levels = [s[1] for s in control.samples]
    assert max(levels) == 8 and levels[-1] == 4  # it tried 8 (twice) and came back


def test_growth_below_the_margin_is_not_growth() -> None:
    control = run_windows(S, lambda level: 30.0 + level * 0.1)  # +0.4 MiB/s from 2 to 4 readers: under 10 %
    assert control.settled == "no_growth" and control.level == 2


def test_never_above_max_concurrency() -> None:
    settings = Settings(maximum=6, start=2)
    control = run_windows(settings, lambda level: 10.0 * level)
    assert control.level == 6 and control.settled == "capped"
    assert all(s[1] <= 6 for s in control.samples)


def test_one_noisy_window_does_not_stop_the_climb() -> None:
    control = initial(S)
    control = observe(control, S, t_s=30, mib_per_s=20, holders=2)  # -> 4
    control = observe(control, S, t_s=60, mib_per_s=12, holders=4)  # a noisy dip: one more window at 4
    assert control.level == 4 and control.settled is None and control.strikes == 1
    control = observe(control, S, t_s=90, mib_per_s=40, holders=4)  # it does grow
    assert control.level == 8 and control.strikes == 0 and control.best_level == 4


def test_a_window_without_every_slot_taken_is_recorded_but_not_judged() -> None:
    control = observe(initial(S), S, t_s=30, mib_per_s=5, holders=1)
    assert control.level == 2 and control.best_mib_per_s is None and len(control.samples) == 1


def test_not_adaptive_is_max_concurrency_from_the_start_and_never_moves() -> None:
    settings = Settings(maximum=8, adaptive=False)
    control = run_windows(settings, lambda level: 1.0 * level, windows=3)
    assert control.level == 8 and control.settled == "fixed" and len(control.samples) == 3


def test_a_restart_with_a_lower_max_concurrency_lowers_the_level_and_a_higher_one_lets_it_climb() -> None:
    settled = run_windows(Settings(maximum=8), lambda level: 10.0 * level)
    assert settled.level == 8 and settled.settled == "capped"
    assert capped(settled, Settings(maximum=4)).level == 4
    again = capped(settled, Settings(maximum=32))
    assert again.level == 8 and again.settled is None


def test_the_control_survives_its_json_form() -> None:
    control = run_windows(S, lambda level: min(10.0 * level, 40.0))
    assert Control.model_validate(control.model_dump(mode="json")) == control


def test_a_window_ends_on_chunks_per_slot_or_on_time_never_before_a_second() -> None:
    settings = Settings(maximum=16, window_seconds=120, window_chunks=8)
    at4 = Control(level=4)
    assert not window_closed(settings, at4, seconds=10, chunks=31)
    assert window_closed(settings, at4, seconds=10, chunks=32)
    assert not window_closed(settings, at4, seconds=0.5, chunks=500)  # a burst of commits is no window
    assert window_closed(settings, at4, seconds=120, chunks=0)  # a slow volume: by time
    assert not window_closed(Settings(maximum=16, window_seconds=120, window_chunks=0), at4, seconds=60, chunks=999)


def test_window_rate() -> None:
    assert window_rate(10 * MIB, 70 * MIB, 30) == pytest.approx(2.0)
    assert window_rate(10, 5, 30) == 0.0 and window_rate(0, 10, 0) == 0.0


def test_sizing_rate_comes_from_the_cold_probe_when_it_ran() -> None:
    def probe(status: str, kbps: float) -> PointItem:
        return PointItem.read({"point_id": "probe-cold", "status": status, "throughput_kbps": kbps})

    assert sizing_rate(probe("DONE", 1024.0 * 3), 8.0).model_dump() == {"mib_per_s": 3.0, "source": "cold_probe"}
    assert sizing_rate(probe("FAILED", 99.0), 8.0).model_dump() == {"mib_per_s": 8.0, "source": "assumed"}
    assert sizing_rate(None, 5.0).source == "assumed"
    assert sizing_rate(probe("DONE", 0), 5.0).source == "assumed"


def test_chunk_bytes_follow_the_rate_between_a_floor_and_chunk_mb() -> None:
    cap = 64 * MIB
    assert chunk_bytes_for(2 * MIB, cap_bytes=cap) == 20 * MIB  # 10 s at 2 MiB/s
    assert chunk_bytes_for(500 * MIB, cap_bytes=cap) == cap
    assert chunk_bytes_for(1024, cap_bytes=cap) == MIN_CHUNK_BYTES  # never trivially small
    assert chunk_bytes_for(0, cap_bytes=cap) == MIN_CHUNK_BYTES
    assert chunk_bytes_for(1024, cap_bytes=MIB // 2) == MIB // 2  # the cap wins over the floor


def test_unit_bytes_leave_units_enough_for_the_concurrency() -> None:
    by_time = unit_bytes_for()
    assert by_time == 2400 * MIB
    # 10 GiB over 8 slots: 32 units of 320 MiB, not 5 of 2,400
    assert unit_bytes_for(total_bytes=10 * 1024 * MIB, max_concurrency=8) == 320 * MIB
    assert unit_bytes_for(total_bytes=100 * MIB, max_concurrency=8) == MIN_UNIT_BYTES
    assert unit_bytes_for(total_bytes=10**13, max_concurrency=8) == by_time  # the time bound still holds
