"""The warm-up's MiB/s over time, from the chunks the units recorded."""

from __future__ import annotations

import pytest

from tests.unit.stored_sections import warmup_timeline

MIB = 2**20


def chunk(end_s: float, mib: float, seconds: float) -> list:
    return [f"2026-11-22T10:00:{end_s:06.3f}+00:00", int(mib * MIB), seconds]


def total_mib(timeline: dict) -> float:
    return sum(p["mib_per_s"] for p in timeline["series"]) * timeline["bucket_seconds"]


def test_two_units_in_parallel_add_up():
    units = [{"chunks": [chunk(10, 100, 10)]}, {"chunks": [chunk(10, 50, 10)]}]
    timeline = warmup_timeline(units, max_buckets=10)
    assert timeline["bucket_seconds"] == 1.0 and len(timeline["series"]) == 10
    assert {p["mib_per_s"] for p in timeline["series"]} == {15.0}
    assert timeline["started_at"] == "2026-11-22T10:00:00+00:00"


def test_bytes_are_conserved_and_rates_follow_the_chunks():
    units = [{"chunks": [chunk(4, 40, 4), chunk(8, 8, 4)]}, {"chunks": [chunk(8, 16, 2)]}]
    timeline = warmup_timeline(units, max_buckets=8)
    assert total_mib(timeline) == pytest.approx(64)
    rates = [p["mib_per_s"] for p in timeline["series"]]
    assert rates[:4] == [10.0] * 4  # the first chunk: 40 MiB in 4 s
    assert rates[4:6] == [2.0, 2.0] and rates[6:] == [10.0, 10.0]  # 2 MiB/s, plus 8 MiB/s in the last 2 s


def test_a_long_warmup_is_bucketed_in_whole_seconds():
    units = [{"chunks": [chunk(59, 590, 59)]}] + [{"chunks": [["2026-11-22T11:00:00+00:00", MIB, 1.0]]}]
    timeline = warmup_timeline(units)
    assert timeline["bucket_seconds"] == 30.0 and len(timeline["series"]) == 120  # one hour
    assert total_mib(timeline) == pytest.approx(591, rel=1e-3)


def test_no_chunks_or_only_empty_chunks_is_an_empty_series():
    assert warmup_timeline([])["series"] == []
    assert warmup_timeline([{"status": "FAILED"}, {"chunks": [chunk(1, 0, 0.0)]}])["series"] == []


def test_a_chunk_recorded_in_no_time_lands_where_it_finished():
    timeline = warmup_timeline([{"chunks": [chunk(2, 10, 2), chunk(2, 1, 0.0)]}], max_buckets=2)
    assert total_mib(timeline) == pytest.approx(11)


def test_the_database_reading_time_is_the_union_of_the_readers_chunks():
    """Issue 33 §3: the database's rate is its bytes over the time a reader was reading, not the wall time the
    local tool took. By hand: unit a reads [0, 2] s and [5, 6] s, unit b [1, 3] s: the union is [0, 3] + [5, 6]
    = 4 s for 4 + 1 + 3 = 8 MiB; a chunk of no bytes counts for neither."""
    from cutover_prep.findings.timeline import database_reading

    def chunk(end_s: float, mib: int, seconds: float) -> list:
        return [f"2026-11-27T00:00:{end_s:06.3f}+00:00", mib * 2**20, seconds]

    items = [{"chunks": [chunk(2, 4, 2), chunk(6, 1, 1)]}, {"chunks": [chunk(3, 3, 2), chunk(9, 0, 3)]}]
    busy, nbytes = database_reading(items)
    assert (round(busy, 6), nbytes) == (4.0, 8 * 2**20)
    assert database_reading([]) == (0.0, 0)
