"""The daemon's clock of served work (``volume.clock``) on a fake clock: costs are due times, a
request past its due time does not wait again, a stream's lateness is carried (capped)."""

from __future__ import annotations

import pytest

from cutover_prep.local.volume.clock import ServiceClock
from tests.unit.fake_clock import FakeClock


def service(clock: FakeClock, **kw: float) -> ServiceClock:
    return ServiceClock(clock=clock, sleep=clock.sleep, **kw)


def test_costs_add_up_to_one_due_time_and_one_sleep():
    clock = FakeClock()
    t = service(clock).begin("s")
    t.charge(0.04)
    t.charge(0.02)
    assert t.wait() == pytest.approx(0.06)
    assert clock.slept == [pytest.approx(0.06)]
    assert t.finish() == 0


def test_time_lost_while_in_hand_counts_toward_the_cost():
    clock = FakeClock()
    t = service(clock).begin("s")
    t.charge(0.05)
    clock.now += 0.03  # the handler was starved for 30 ms
    assert t.wait() == pytest.approx(0.02)
    assert clock.now == pytest.approx(0.05)


def test_a_request_past_its_due_time_does_not_wait_again():
    clock = FakeClock()
    t = service(clock).begin("s")
    t.charge(0.0184)
    clock.now += 0.05
    assert t.wait() == 0
    assert clock.slept == []


def test_a_late_sleep_is_made_up_by_the_streams_next_request():
    clock = FakeClock(overshoot=0.005)
    svc = service(clock)
    for _ in range(20):
        t = svc.begin("reader")
        t.charge(0.0184)
        t.wait()
        t.finish()
    # 20 requests cost 20 x 18.4 ms; only the last one's lateness is not made up
    assert clock.now == pytest.approx(20 * 0.0184 + 0.005)


def test_the_callers_own_time_between_requests_is_not_taken_from_the_next():
    clock = FakeClock()
    svc = service(clock)
    for _ in range(5):
        t = svc.begin("reader")
        t.charge(0.01)
        t.wait()
        t.finish()
        clock.now += 0.1  # the caller works between its reads
    assert clock.slept == [pytest.approx(0.01)] * 5


def test_lateness_is_carried_per_stream_and_capped():
    clock = FakeClock()
    svc = service(clock, max_lag_s=0.25)
    t = svc.begin("a")
    clock.now += 2.0  # a stall of 2 s
    t.finish()
    assert svc.lag("a") == pytest.approx(0.25)
    assert svc.lag("b") == 0
    t = svc.begin("b")  # another stream owes nothing
    t.charge(0.1)
    assert t.wait() == pytest.approx(0.1)
    t = svc.begin("a")
    t.charge(0.1)
    assert t.wait() == 0  # 0.1 of the carried 0.25
    t.finish()
    assert svc.lag("a") == pytest.approx(0.15)


def test_not_before_holds_a_request_until_a_wall_clock_moment():
    clock = FakeClock()
    t = service(clock).begin("s")
    t.charge(0.01)
    t.not_before(0.05)  # e.g. the buckets' tokens are earned then
    t.charge(0.02)
    assert t.wait() == pytest.approx(0.07)
