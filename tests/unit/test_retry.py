"""retry.Retries: a restart or failover is ridden out (issue 32 §4).

A lost session or a database that does not answer (reconnectable ``DatabaseUnreachable``) is retried with
exponential backoff and full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter": each wait drawn
uniformly between 0 and the capped exponential) for a bounded time, then fails by name; an outage longer than
the invocation hands its clock on to the next one. A fake clock: the sleeps advance it.
"""

from __future__ import annotations

import random

import pytest

from cutover_prep.engines.base import ConnectionLost, DatabaseUnreachable, TransientDatabaseError
from cutover_prep.engines.retry import Outage, OutageContinues, Retries


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def failing(*errors: Exception, then: object = "read") -> tuple[list[int], object]:
    """A call that raises ``errors`` in turn (the last one forever when ``then`` is None), then returns ``then``."""
    calls = [0]

    def fn() -> object:
        calls[0] += 1
        if calls[0] <= len(errors) or then is None:
            raise errors[min(calls[0], len(errors)) - 1]
        return then
    return calls, fn


def down(message: str = "connection refused") -> DatabaseUnreachable:
    return DatabaseUnreachable(message, reconnectable=True)


def test_an_unreachable_database_is_retried_with_jittered_backoff_until_the_bound_then_fails_by_name() -> None:
    clock = Clock()
    start = clock.now
    calls, fn = failing(ConnectionLost("terminating connection due to administrator command"), down(), then=None)
    retries = Retries(3, sleep=clock.sleep, clock=clock, reconnect_seconds=600, rng=random.Random(1))
    with pytest.raises(DatabaseUnreachable) as err:
        retries.call(fn)
    assert "unreachable for 600 s" in str(err.value) and "warmup.reconnect_minutes" in str(err.value)
    assert "connection refused" in str(err.value)  # the last error, by name
    assert clock.now - start == pytest.approx(600)  # the bound, not the attempts (3), ended it
    assert calls[0] > 3 and retries.count == calls[0] - 1
    # full jitter: each wait uniform in [0, min(cap, 2^n)]: below its envelope, and not the envelope itself
    envelope = [min(Retries.RECONNECT_CAP_SECONDS, 2.0 ** n) for n in range(len(clock.slept))]
    assert all(0 <= w <= e + 1e-9 for w, e in zip(clock.slept[:-1], envelope, strict=False))
    assert len({round(w, 6) for w in clock.slept}) > len(clock.slept) // 2
    assert max(clock.slept) <= Retries.RECONNECT_CAP_SECONDS
    other = Clock()
    with pytest.raises(DatabaseUnreachable):
        Retries(3, sleep=other.sleep, clock=other, reconnect_seconds=600, rng=random.Random(2)).call(
            failing(down(), then=None)[1])
    assert other.slept[:5] != clock.slept[:5]  # another draw, other waits: the units do not reconnect in step


def test_an_outage_ridden_out_is_counted_with_its_length() -> None:
    clock = Clock()
    _, fn = failing(ConnectionLost("server closed the connection unexpectedly"), down(), down(), down())
    retries = Retries(3, sleep=clock.sleep, clock=clock, reconnect_seconds=600, rng=random.Random(3))
    assert retries.call(fn) == "read"
    assert retries.reconnects == 1 and retries.count == 4
    assert retries.longest_outage_seconds == pytest.approx(sum(clock.slept))
    assert retries.outage is None
    _, fn = failing(down())
    retries.call(fn)
    assert retries.reconnects == 2 and retries.longest_outage_seconds == pytest.approx(max(
        sum(clock.slept[:4]), clock.slept[4]))


def test_an_outage_longer_than_the_invocation_hands_its_clock_to_the_next_one() -> None:
    clock = Clock()
    start = clock.now
    left = lambda: 60 - (clock.now - start)  # noqa: E731 - this invocation's time for waiting
    retries = Retries(3, sleep=clock.sleep, clock=clock, reconnect_seconds=300, time_left=left,
                      rng=random.Random(4))
    with pytest.raises(OutageContinues) as err:
        retries.call(failing(down(), then=None)[1])
    outage = err.value.outage
    assert outage.started_at == start and outage.attempts > 1 and clock.now - start <= 60
    carried = Outage.from_json(outage.to_json())
    assert carried == outage
    # the next invocation goes on with the same outage: it fails by name at the bound from the first failure
    clock.now += 5  # between two invocations
    nxt = Retries(3, sleep=clock.sleep, clock=clock, reconnect_seconds=300, outage=carried, rng=random.Random(5))
    with pytest.raises(DatabaseUnreachable, match="unreachable for 300 s"):
        nxt.call(failing(down(), then=None)[1])
    assert clock.now - start == pytest.approx(300)
    # or it reconnects, and the whole outage is the one counted
    clock2 = Clock(start + 100)
    ok = Retries(3, sleep=clock2.sleep, clock=clock2, reconnect_seconds=300, outage=carried)
    assert ok.call(failing(down())[1]) == "read"
    assert ok.reconnects == 1 and ok.longest_outage_seconds == pytest.approx(clock2.now - start)


def test_a_refused_login_is_not_waited_for() -> None:
    clock = Clock()
    calls, fn = failing(DatabaseUnreachable("password authentication failed"), then=None)
    with pytest.raises(DatabaseUnreachable, match="password authentication failed"):
        Retries(3, sleep=clock.sleep, clock=clock, reconnect_seconds=600).call(fn)
    assert calls[0] == 1 and clock.slept == []


def test_without_a_reconnect_bound_an_unreachable_database_fails_at_once_and_other_errors_count_attempts() -> None:
    """Discovery and the benchmark keep the attempts: only the warm-up waits out an outage."""
    clock = Clock()
    calls, fn = failing(down(), then=None)
    with pytest.raises(DatabaseUnreachable):
        Retries(3, sleep=clock.sleep, clock=clock).call(fn)
    assert calls[0] == 1
    calls, fn = failing(TransientDatabaseError("statement timeout"), then=None)
    with pytest.raises(TransientDatabaseError, match="statement timeout"):
        Retries(3, sleep=clock.sleep, clock=clock, reconnect_seconds=600).call(fn)
    assert calls[0] == 3  # a statement-level error is not an outage: the attempts bound it
