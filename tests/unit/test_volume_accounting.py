"""EBS SSD IO accounting (merge and split at 256 KiB) and the buckets, on a fake clock."""

from __future__ import annotations

import pytest

from cutover_prep.local.volume.accounting import BurstCredits, IoCounter, Limits, TokenBucket

KIB = 1024


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_eight_sequential_32k_ios_count_as_one_and_eight_random_as_eight():
    c = IoCounter()
    assert sum(c.count("/f", i * 32 * KIB, 32 * KIB) for i in range(8)) == 1
    c = IoCounter()
    offsets = [7, 1, 5, 3, 0, 6, 2, 4]  # the same blocks out of order: not physically sequential
    assert sum(c.count("/f", o * 64 * KIB, 32 * KIB) for o in offsets) == 8


def test_a_ninth_sequential_io_starts_a_new_one():
    c = IoCounter()
    assert [c.count("/f", i * 32 * KIB, 32 * KIB) for i in range(9)] == [1, 0, 0, 0, 0, 0, 0, 0, 1]


def test_large_ios_split_in_256k_units():
    c = IoCounter()
    assert c.count("/f", 0, 1024 * KIB) == 4
    assert c.count("/g", 0, 300 * KIB) == 2
    assert c.count("/h", 0, 256 * KIB) == 1
    assert c.count("/h", 256 * KIB, 8 * KIB) == 1  # the previous IO was full
    assert c.count("/i", 0, 0) == 0


def test_a_large_io_tail_merges_with_the_next_sequential_one():
    c = IoCounter()
    assert c.count("/f", 0, 300 * KIB) == 2  # 256 + 44
    assert c.count("/f", 300 * KIB, 200 * KIB) == 0  # 44 + 200 <= 256
    assert c.count("/f", 500 * KIB, 100 * KIB) == 1


def test_sequential_on_another_file_does_not_merge_and_parallel_streams_each_merge():
    c = IoCounter()
    assert c.count("/a", 0, 8 * KIB) == 1
    assert c.count("/b", 8 * KIB, 8 * KIB) == 1
    c = IoCounter()
    counts = []
    for i in range(4):  # two readers interleaved on one file, each sequential
        counts.append(c.count("/f", i * 8 * KIB, 8 * KIB))
        counts.append(c.count("/f", 10 * 1024 * KIB + i * 8 * KIB, 8 * KIB))
    assert sum(counts) == 2


def test_forget_ends_the_streams_of_a_file():
    c = IoCounter()
    c.count("/f", 0, 8 * KIB)
    c.forget("/f")
    assert c.count("/f", 8 * KIB, 8 * KIB) == 1


def test_token_bucket_blocks_for_the_deficit_and_reports_it():
    clock = FakeClock()
    b = TokenBucket(100.0, capacity=10, clock=clock, sleep=clock.sleep)
    assert b.take(10) == 0
    assert b.take(5) == pytest.approx(0.05)  # 5 tokens at 100/s
    assert b.take(100) == pytest.approx(1.0)  # queued behind nothing: 100 tokens = 1 s
    clock.now += 10
    assert b.take(10) == 0  # refilled, but never above the capacity
    assert b.take(1) == pytest.approx(0.01)


def test_token_bucket_without_a_rate_never_waits():
    clock = FakeClock()
    b = TokenBucket(None, clock=clock, sleep=clock.sleep)
    assert b.take(1e9) == 0 and clock.slept == []


def test_reservations_queue_in_order():
    clock = FakeClock()
    b = TokenBucket(10.0, capacity=1, clock=clock, sleep=clock.sleep)
    assert [b.reserve(1) for _ in range(4)] == pytest.approx([0, 0.1, 0.2, 0.3])


def test_burst_credits_spend_and_refill_at_the_baseline():
    clock = FakeClock()
    credits = BurstCredits(1000, refill_per_s=100, clock=clock)
    assert credits.spend(600) == 400
    clock.now += 2
    assert credits.balance == 600
    clock.now += 100
    assert credits.balance == 1000  # never above the bucket
    assert credits.spend(5000) == -4000  # a debt the refill pays back
    clock.now += 40
    assert credits.balance == 0


def test_gp2_limits_fall_to_the_baseline_when_the_credits_are_spent():
    clock = FakeClock()
    limits = Limits(3000, None, sustained_iops=300, credits=3000, clock=clock, sleep=clock.sleep)
    assert limits.iops.rate == 3000
    ios = 0
    while limits.iops.rate == 3000 and ios < 10_000:
        limits.admit(30, 0)
        ios += 30
    # the bucket (3,000) plus its refill at the baseline while it drains: 3000 / (3000 - 300) s
    assert clock.now == pytest.approx(3000 / 2700 + 0.1, rel=0.05)  # + the first IO at the baseline
    assert ios == pytest.approx(3000 + 300 * 3000 / 2700, rel=0.05)
    start = clock.now
    for _ in range(100):  # the next 3,000 IOs at the baseline
        limits.admit(30, 0)
    assert clock.now - start == pytest.approx(10.0, rel=0.1)


def test_limits_wait_for_the_slower_of_iops_and_throughput():
    clock = FakeClock()
    limits = Limits(100, 1024 * KIB, clock=clock, sleep=clock.sleep)
    limits.admit(1, 256 * KIB)
    limits.admit(1, 256 * KIB)
    limits.admit(1, 256 * KIB)
    waited = limits.admit(1, 1024 * KIB)  # bytes bind: 1 MiB/s
    assert waited == pytest.approx(1.0, rel=0.05)
    assert sum(clock.slept) == pytest.approx(1.5, rel=0.01)  # 3 x 256 KiB past the bucket's 256 KiB + 1 MiB
