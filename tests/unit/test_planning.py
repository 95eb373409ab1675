"""Planning: unit size, splitting, grouping, priority order, exact block coverage."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from cutover_prep.engines.base import Extent, Segment
from cutover_prep.warmup.planning import MIB, PlanOptions, WorkUnit, cache_hot_set, plan_units, unit_bytes_for

BS = 8192


def seg(name: str, extents: list[tuple[int, int, int]], *, schema: str = "app", splittable: bool = True,
        block_size: int = BS) -> Segment:
    exts = tuple(Extent(*e) for e in extents)
    blocks = sum(e.blocks for e in exts)
    return Segment(schema=schema, name=name, kind="table", bytes=blocks * block_size, block_size=block_size,
                   extents=exts, locator={"name": name}, splittable=splittable)


def blocks_of(segment_key: str, units: list[WorkUnit]) -> list[tuple[int, int]]:
    """Every (file_id, block) planned for one segment, in plan order."""
    out = []
    for u in units:
        for r in u.ranges:
            if r.segment_key == segment_key:
                for e in r.extents:
                    out.extend((e.file_id, b) for b in range(e.first_block, e.first_block + e.blocks))
    return out


def expected_blocks(s: Segment) -> list[tuple[int, int]]:
    return [(e.file_id, b) for e in s.extents for b in range(e.first_block, e.first_block + e.blocks)]


def test_unit_bytes_default_is_2400_mib() -> None:
    assert unit_bytes_for() == 2400 * MIB
    assert unit_bytes_for(cold_mib_per_s=8, lambda_timeout_s=900, budget_fraction=1 / 3) == 2400 * MIB
    assert unit_bytes_for(cold_mib_per_s=16, lambda_timeout_s=600, budget_fraction=0.5) == 4800 * MIB
    assert PlanOptions().unit_bytes == 2400 * MIB


def test_big_splittable_segment_split_near_equal_across_extents() -> None:
    # 1000 blocks in 3 extents of 2 files; unit holds 300 blocks -> 4 pieces of ~250 blocks.
    s = seg("big", [(1, 100, 130), (1, 500, 470), (2, 0, 400)])
    plan = plan_units([s], PlanOptions(unit_bytes=300 * BS))
    assert len(plan.units) == 4
    sizes = [u.bytes for u in plan.units]
    assert max(sizes) / min(sizes) < 1.05
    assert all(size <= 300 * BS for size in sizes)
    assert sum(sizes) == s.bytes == plan.bytes
    assert sum(r.blocks for u in plan.units for r in u.ranges) == 1000
    # contiguous, non-overlapping, in order: concatenation equals the original block list
    assert blocks_of(s.key, plan.units) == expected_blocks(s)
    # at least one piece crosses an extent boundary (has more than one extent)
    assert any(len(r.extents) > 1 for u in plan.units for r in u.ranges)
    assert plan.oversized_units == []


def test_split_piece_spanning_several_extents() -> None:
    # many small extents, pieces must each cover several of them
    s = seg("frag", [(0, i * 10, 7) for i in range(60)])  # 420 blocks
    plan = plan_units([s], PlanOptions(unit_bytes=100 * BS))
    assert len(plan.units) == 5
    assert [u.bytes // BS for u in plan.units] == [84] * 5
    assert blocks_of(s.key, plan.units) == expected_blocks(s)


def test_unsplittable_segment_larger_than_unit_stays_whole_and_is_oversized() -> None:
    small = seg("small", [(0, 0, 10)])
    lob = seg("lob", [(3, 0, 500), (3, 1000, 500)], splittable=False)
    plan = plan_units([small, lob, seg("after", [(0, 0, 10)])], PlanOptions(unit_bytes=100 * BS))
    lob_units = [u for u in plan.units if any(r.segment_key == lob.key for r in u.ranges)]
    assert len(lob_units) == 1
    (u,) = lob_units
    assert len(u.ranges) == 1 and u.ranges[0].extents == lob.extents
    assert u.ranges[0].splittable is False
    assert u.bytes == 1000 * BS
    assert plan.oversized_units == [u.unit_id]
    assert plan.summary()["oversized_units"] == 1


def test_many_tiny_segments_spread_over_units_by_their_round_trips() -> None:
    """700 catalogue forks of one block went into two units read serially (80 s of the emulated demo's
    warm-up); each range now also costs RANGE_COST_BYTES, so they spread over units read in parallel."""
    segs = [seg(f"pg_{i}", [(0, 0, 1)]) for i in range(700)]
    plan = plan_units(segs, PlanOptions(unit_bytes=12 * MIB))
    assert len(plan.units) >= 40 and max(len(u.ranges) for u in plan.units) <= 15
    assert Counter(r.segment_key for u in plan.units for r in u.ranges) == Counter({s.key: 1 for s in segs})
    big = plan_units([seg("big", [(0, 0, 1536)])], PlanOptions(unit_bytes=12 * MIB))  # 12 MiB of 8 KiB blocks
    assert sum(u.bytes for u in big.units) == 12 * MIB


def test_a_ranges_weight_is_never_counted_as_bytes() -> None:
    """Issue 23 §4: the planner weighs each range as 1 MiB of a cold reader's time to balance units; the
    plan's, the summary's and each unit's bytes are what the units read (blocks x block size), and the summary
    says how many ranges there are (the estimate's time per range), never their weight in bytes."""
    segs = [seg(f"pg_{i}", [(0, 0, 1)]) for i in range(700)] + [seg("big", [(0, 0, 1000)])]
    plan = plan_units(segs, PlanOptions(unit_bytes=12 * MIB))
    summary = plan.summary()
    read = sum(r.bytes for u in plan.units for r in u.ranges)
    assert plan.bytes == summary["bytes"] == read == 1700 * BS
    assert all(u.bytes == sum(r.bytes for r in u.ranges) for u in plan.units)
    assert summary["ranges"] == 701 and summary["max_unit_bytes"] <= 1000 * BS
    assert summary["mean_unit_bytes"] == read // len(plan.units)


def test_small_units_still_take_many_tiny_ranges() -> None:
    """With warmup.unit_mb 2 each catalogue fork was a unit of its own (a range's 1 MiB cost left room for
    one): 359 units for 36 MiB, each a Map item, an invocation and a commit for a read of 8 KiB."""
    segs = [seg(f"pg_{i}", [(0, 0, 1)]) for i in range(300)]
    plan = plan_units(segs, PlanOptions(unit_bytes=2 * MIB))
    assert min(len(u.ranges) for u in plan.units[:-1]) >= 15 and len(plan.units) <= 20
    assert Counter(r.segment_key for u in plan.units for r in u.ranges) == Counter({s.key: 1 for s in segs})


def test_small_segments_are_grouped_each_once() -> None:
    segs = [seg(f"t{i}", [(0, 0, 3)]) for i in range(100)]  # 300 blocks
    plan = plan_units(segs, PlanOptions(unit_bytes=100 * BS, range_cost_bytes=0))
    # 33 segments of 3 blocks fit a 100-block unit
    assert [u.bytes // BS for u in plan.units] == [99, 99, 99, 3]
    keys = Counter(r.segment_key for u in plan.units for r in u.ranges)
    assert keys == Counter({s.key: 1 for s in segs})
    # discovery order kept
    assert [r.segment_key for u in plan.units for r in u.ranges] == [s.key for s in segs]
    assert all(u.bytes <= 100 * BS for u in plan.units)
    assert plan.segments == 100


def test_max_ranges_per_unit_cap() -> None:
    segs = [seg(f"t{i}", [(0, 0, 1)]) for i in range(25)]
    plan = plan_units(segs, PlanOptions(unit_bytes=10_000 * BS, max_ranges_per_unit=4))
    assert [len(u.ranges) for u in plan.units] == [4, 4, 4, 4, 4, 4, 1]
    assert len({u.unit_id for u in plan.units}) == len(plan.units)


def test_priority_patterns_first_in_pattern_order_rest_in_discovery_order() -> None:
    segs = [
        seg("a", [(0, 0, 5)]),
        seg("orders", [(0, 0, 5)], schema="sales"),
        seg("b", [(0, 0, 5)]),
        seg("hot_1", [(0, 0, 5)]),
        seg("lines", [(0, 0, 5)], schema="sales"),
        seg("hot_2", [(0, 0, 5)]),
        seg("c", [(0, 0, 5)]),
    ]
    plan = plan_units(segs, PlanOptions(unit_bytes=1000 * BS, priority=("app.hot_*", "sales")))
    order = [r.segment_key for u in plan.units for r in u.ranges]
    assert order == ["app.hot_1#table", "app.hot_2#table", "sales.orders#table", "sales.lines#table",
                     "app.a#table", "app.b#table", "app.c#table"]
    # units never mix priority ranks: one unit per rank here
    assert [u.priority for u in plan.units] == [0, 1, 2]
    for u in plan.units:
        assert len({r.segment_key.split(".")[0] for r in u.ranges}) == 1 or u.priority == 2


def test_units_never_mix_priority_ranks() -> None:
    rng = random.Random(7)
    segs = [seg(f"{'hot' if rng.random() < 0.3 else 'cold'}_{i}", [(0, 0, rng.randint(1, 20))])
            for i in range(200)]
    plan = plan_units(segs, PlanOptions(unit_bytes=150 * BS, priority=("app.hot_*",)))
    for u in plan.units:
        ranks = {0 if r.segment_key.startswith("app.hot_") else 1 for r in u.ranges}
        assert ranks == {u.priority}
    prios = [u.priority for u in plan.units]
    assert prios == sorted(prios)


def test_every_block_planned_exactly_once_random_mix() -> None:
    rng = random.Random(20240611)
    unit_blocks = 256
    segs = []
    for i in range(300):
        n_ext = rng.randint(1, 6)
        exts, pos = [], rng.randint(0, 50)
        for _ in range(n_ext):
            size = rng.choice([1, 2, 5, 17, 64, 130, 300, 900])
            exts.append((rng.randint(0, 4), pos, size))
            pos += size + rng.randint(0, 20)
        segs.append(seg(f"s{i}", exts, splittable=rng.random() > 0.15))
    plan = plan_units(segs, PlanOptions(unit_bytes=unit_blocks * BS, priority=("app.s1*",),
                                        max_ranges_per_unit=50))
    for s in segs:
        assert blocks_of(s.key, plan.units) == expected_blocks(s), s.key
    assert plan.bytes == sum(s.bytes for s in segs) == sum(u.bytes for u in plan.units)
    assert plan.segments == len(segs)
    for u in plan.units:
        assert u.bytes == sum(r.bytes for r in u.ranges)
        assert len(u.ranges) <= 50
        if u.bytes > unit_blocks * BS:  # only an unsplittable range can overflow, and it is alone
            assert len(u.ranges) == 1 and not u.ranges[0].splittable
            assert u.unit_id in plan.oversized_units
        else:
            assert u.unit_id not in plan.oversized_units
    assert len({u.unit_id for u in plan.units}) == len(plan.units)


def test_unit_json_round_trip_counts_blocks() -> None:
    plan = plan_units([seg("x", [(1, 0, 10), (1, 20, 5)])], PlanOptions(unit_bytes=100 * BS))
    data = plan.units[0].to_json()
    assert data["blocks"] == 15 and data["bytes"] == 15 * BS
    assert data["ranges"][0]["extents"] == [[1, 0, 10], [1, 20, 5]]


@pytest.mark.parametrize("size", [0, -1])
def test_invalid_unit_size_raises(size: int) -> None:
    with pytest.raises(ValueError, match="unit size"):
        plan_units([seg("x", [(0, 0, 1)])], PlanOptions(unit_bytes=size))


def test_empty_plan() -> None:
    plan = plan_units([], PlanOptions(unit_bytes=BS))
    assert plan.units == [] and plan.bytes == 0
    assert plan.summary()["max_unit_bytes"] == 0


def test_pieces_never_exceed_a_unit_that_is_not_a_whole_number_of_blocks():
    from cutover_prep.engines.base import Extent, Segment
    from cutover_prep.warmup.planning import PlanOptions, plan_units

    seg = Segment(schema="s", name="t", kind="table.main", bytes=4 * 8192, block_size=8192,
                  extents=(Extent(0, 0, 4),), locator={})
    plan = plan_units([seg], PlanOptions(unit_bytes=12288))  # 1.5 blocks
    assert [u.bytes for u in plan.units] == [8192] * 4
    assert plan.oversized_units == []


# -- the hot set into the engine's buffer cache (planning.cache_hot_set, issue 23 §1) ----------------------------

def _hot_plan():
    segments = [seg("history", [(1, 0, 256)]), seg("accounts", [(1, 1000, 128)]), seg("branches", [(1, 2000, 8)])]
    return plan_units(segments, PlanOptions(unit_bytes=1 * MIB, hot_set=("app.accounts", "app.branches")))


def test_a_hot_set_within_half_the_cache_is_marked_for_it_and_nothing_else_is() -> None:
    plan = _hot_plan()
    hot_bytes = (128 + 8) * BS  # accounts and branches, the hot rank (0: no priority patterns)
    decided = cache_hot_set(plan, 0, cache_bytes=2 * hot_bytes, share=0.5)  # exactly half: fits
    assert decided is not None
    assert decided._asdict() == {"bytes": hot_bytes, "cache_bytes": 2 * hot_bytes, "share": 0.5, "marked": True,
                                 "marked_bytes": hot_bytes}
    marked = {r.segment_key for u in plan.units for r in u.ranges if r.locator.to_json().get("cache")}
    assert marked == {"app.accounts#table", "app.branches#table"}
    assert all(not r.locator.to_json().get("cache") for u in plan.units if u.priority == 1 for r in u.ranges)


def test_an_engine_without_a_cache_size_or_a_run_without_a_hot_set_marks_nothing() -> None:
    plan = _hot_plan()
    decided = cache_hot_set(plan, 0, cache_bytes=None)
    assert decided is not None and decided.marked is False and decided.marked_bytes == 0
    assert not any(r.locator.to_json().get("cache") for u in plan.units for r in u.ranges)
    assert cache_hot_set(_hot_plan(), None, cache_bytes=10**12) is None  # no hot set


def _blocks(r) -> list[tuple[int, int]]:
    return [(e.file_id, e.first_block + k) for e in r.extents for k in range(e.blocks)]


def _marked(plan) -> dict[str, int]:
    out: dict[str, int] = {}
    for unit in plan.units:
        for r in unit.ranges:
            if r.locator.to_json().get("cache"):
                out[r.segment_key] = out.get(r.segment_key, 0) + r.blocks
    return out


def test_a_hot_set_over_half_the_cache_has_what_fits_marked_the_indexes_first_then_the_hottest() -> None:
    """pgbench -S with 64 MB of shared buffers (benchmarks/yielding.py, docs/yielding.md): the hot set (accounts'
    heap 64 MiB, its primary key 11 MiB, branches) is over half the cache, and nothing went into it before: every
    lookup then read its index leaf and heap page from the volume for the first minute of the run. What fits of it
    goes in now, the index first (each lookup reads an index page before the heap page it points to)."""
    accounts = seg("accounts", [(1, 0, 64)])
    pkey = Segment(schema="app", name="accounts_pkey", kind="index.main", bytes=16 * BS, block_size=BS,
                   extents=(Extent(2, 0, 16),), locator={"name": "accounts_pkey"})
    branches = seg("branches", [(3, 0, 4)])
    history = seg("history", [(4, 0, 256)])
    plan = plan_units([history, accounts, pkey, branches],
                      PlanOptions(unit_bytes=16 * BS, hot_set=("app.accounts", "app.accounts_pkey", "app.branches")))
    hot_bytes = (64 + 16 + 4) * BS
    blocks_before = sorted((r.segment_key, b) for u in plan.units for r in u.ranges for b in _blocks(r))
    decided = cache_hot_set(plan, 0, cache_bytes=80 * BS, share=0.5)  # room for 40 blocks
    assert decided is not None
    assert decided._asdict() == {"bytes": hot_bytes, "cache_bytes": 80 * BS, "share": 0.5, "marked": False,
                                 "marked_bytes": 40 * BS}
    # the index whole, then accounts (hotter than branches) up to the last block of room: its second piece cut in two
    assert _marked(plan) == {"app.accounts_pkey#index.main": 16, "app.accounts#table": 24}
    assert sorted((r.segment_key, b) for u in plan.units for r in u.ranges for b in _blocks(r)) == blocks_before
    assert sum(u.bytes for u in plan.units) == sum(r.bytes for u in plan.units for r in u.ranges)
    assert all(not r.locator.cache for u in plan.units if u.priority == 1 for r in u.ranges)  # never the rest


def test_a_range_the_engine_cannot_read_in_part_is_not_cut_for_the_cache() -> None:
    lob = seg("lob", [(1, 0, 64)], splittable=False)
    plan = plan_units([lob], PlanOptions(unit_bytes=128 * BS, hot_set=("app.lob",)))
    decided = cache_hot_set(plan, 0, cache_bytes=80 * BS, share=0.5)
    assert decided is not None and decided.marked_bytes == 0 and _marked(plan) == {}
    assert [len(u.ranges) for u in plan.units] == [1]
