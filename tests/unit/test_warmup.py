"""warm_unit: chunked reading, idempotency, time budget resume, retries (moto Store, fake engine)."""

from __future__ import annotations

from typing import Any

import pytest

from cutover_prep.dal.store import Store
from cutover_prep.engines.base import (
    ConnectionLost,
    DatabaseUnreachable,
    Extent,
    PermanentReadError,
    ReadRange,
    ReadResult,
    ShortRead,
    TransientDatabaseError,
)
from cutover_prep.warmup.planning import MIB
from cutover_prep.warmup.unit import Budget
from tests.unit.contexts import warm_json

BS = 8192
CHUNK_BLOCKS = MIB // BS  # chunk_mb=1 -> 128 blocks per chunk
RUN_ID = "run-1"


class FakeEngine:
    name = "fake"

    def __init__(self, failures: list[Exception] | None = None) -> None:
        self.reads: list[ReadRange] = []
        self.calls = 0
        self.failures = list(failures or [])
        self.closed = False

    def discover(self, options: Any) -> list[Any]:
        return []

    def read_range(self, rng: ReadRange) -> ReadResult:
        self.calls += 1
        if self.failures:
            exc = self.failures.pop(0) if not isinstance(self.failures[0], type) else self.failures[0]
            raise exc if isinstance(exc, Exception) else exc()
        self.reads.append(rng)
        return ReadResult(blocks=rng.blocks, bytes=rng.bytes, seconds=0.01, method="fake")

    def close(self) -> None:
        self.closed = True


def rng(key: str, extents: list[tuple[int, int, int]], splittable: bool = True) -> ReadRange:
    return ReadRange(key, {"k": key}, tuple(Extent(*e) for e in extents), BS, splittable)


def make_event(ranges: list[ReadRange], unit_id: str = "u000001") -> dict[str, Any]:
    blocks = sum(r.blocks for r in ranges)
    run = {"run_id": RUN_ID, "warmup": {"assumed_cold_mib_per_s": 8.0, "chunk_mb": 1}}
    unit = {"unit_id": unit_id, "priority": 0, "bytes": blocks * BS, "blocks": blocks,
            "ranges": [r.to_json() for r in ranges]}
    return {"run": run, "unit": unit}


def start(store: Store) -> None:
    store.start_run({"run_id": RUN_ID, "target": {"db_instance_identifier": "db1"},
                     "started_at": "2024-01-01T00:00:00+00:00", "warmup": {}})


def read_blocks(reads: list[ReadRange]) -> list[tuple[str, int, int]]:
    return [(r.segment_key, e.file_id, b) for r in reads for e in r.extents
            for b in range(e.first_block, e.first_block + e.blocks)]


def planned_blocks(ranges: list[ReadRange]) -> list[tuple[str, int, int]]:
    return read_blocks(ranges)


ALWAYS = Budget(remaining_seconds=lambda: 10_000.0, safety_margin_seconds=30.0)
NO_SLEEP = {"sleep": lambda s: None}


@pytest.fixture
def ranges() -> list[ReadRange]:
    # 300 blocks in two extents + 50 blocks in another range -> chunks 128,128,44 | 50 | 50
    return [rng("app.a#table", [(0, 0, 256), (0, 1000, 44)]), rng("app.b#table", [(1, 10, 50), (1, 100, 50)])]


def test_reads_all_chunks_and_marks_done(store: Store, ranges: list[ReadRange]) -> None:
    start(store)
    eng = FakeEngine()
    out = warm_json(make_event(ranges), store=store, engine=lambda: eng, budget=ALWAYS, **NO_SLEEP)
    assert out["status"] == "DONE"
    assert [r.blocks for r in eng.reads] == [128, 128, 44, 50, 50]
    assert all(len(r.extents) == 1 and r.bytes <= MIB for r in eng.reads)
    assert read_blocks(eng.reads) == planned_blocks(ranges)
    unit = store.get_unit(RUN_ID, "u000001").stored()
    assert unit is not None
    assert unit["status"] == "DONE"
    assert unit["blocks_read"] == 400 and unit["bytes_read"] == 400 * BS
    assert unit["seq"] == 3  # commits at 128, 128, then 44 + 50 + 50: the last two ranges' chunks in one batch
    assert unit["method"] == "fake"
    assert unit.get("cursor") is None
    run = store.get_run(RUN_ID).stored()
    assert run is not None
    assert run["bytes_read"] == 400 * BS and run["blocks_read"] == 400
    assert run["units_done"] == 1


def test_second_call_is_already_done_and_reads_nothing(store: Store, ranges: list[ReadRange]) -> None:
    start(store)
    warm_json(make_event(ranges), store=store, engine=FakeEngine, budget=ALWAYS, **NO_SLEEP)
    eng = FakeEngine()
    out = warm_json(make_event(ranges), store=store, engine=lambda: eng, budget=ALWAYS, **NO_SLEEP)
    assert out["status"] == "ALREADY_DONE"
    assert eng.calls == 0
    run = store.get_run(RUN_ID).stored()
    assert run is not None and run["units_done"] == 1 and run["bytes_read"] == 400 * BS


class ShrinkingBudget:
    """Plenty of time until ``after`` chunks were read, then less than the margin."""

    def __init__(self, eng: FakeEngine, after: int) -> None:
        self.eng, self.after = eng, after

    def __call__(self) -> float:
        return 10_000.0 if len(self.eng.reads) < self.after else 5.0


def test_time_budget_continue_then_resume_reads_each_block_once(
        store: Store, ranges: list[ReadRange]) -> None:
    start(store)
    event = make_event(ranges)
    all_reads: list[ReadRange] = []
    statuses = []
    for _ in range(20):
        eng = FakeEngine()
        budget = Budget(remaining_seconds=ShrinkingBudget(eng, after=1), safety_margin_seconds=30.0)
        out = warm_json(event, store=store, engine=lambda eng=eng: eng, budget=budget, **NO_SLEEP)
        statuses.append(out["status"])
        all_reads.extend(eng.reads)
        if out["status"] == "CONTINUE":
            assert len(eng.reads) >= 1
            assert out["cursor"] == store.get_unit(RUN_ID, "u000001").stored()["cursor"]
        else:
            break
    # one chunk per invocation: 5 chunks -> 4 CONTINUE then DONE
    assert statuses == ["CONTINUE"] * 4 + ["DONE"]
    assert read_blocks(all_reads) == planned_blocks(ranges)
    assert len(set(read_blocks(all_reads))) == len(read_blocks(all_reads))
    unit = store.get_unit(RUN_ID, "u000001").stored()
    assert unit["status"] == "DONE" and unit["blocks_read"] == 400
    assert store.get_run(RUN_ID).blocks_read == 400


def test_continue_cursor_points_after_last_committed_chunk(store: Store, ranges: list[ReadRange]) -> None:
    start(store)
    eng = FakeEngine()
    budget = Budget(remaining_seconds=ShrinkingBudget(eng, after=2), safety_margin_seconds=30.0)
    out = warm_json(make_event(ranges), store=store, engine=lambda: eng, budget=budget, **NO_SLEEP)
    assert out["status"] == "CONTINUE"
    assert out["cursor"] == {"range": 0, "extent": 1, "offset": 0}
    assert store.get_unit(RUN_ID, "u000001").blocks_read == 256


def test_first_chunk_always_read_even_without_time(store: Store, ranges: list[ReadRange]) -> None:
    start(store)
    eng = FakeEngine()
    out = warm_json(make_event(ranges), store=store, engine=lambda: eng,
                    budget=Budget(remaining_seconds=lambda: 0.0), **NO_SLEEP)
    assert out["status"] == "CONTINUE"
    assert len(eng.reads) == 1


def test_unsplittable_range_read_in_one_call(store: Store) -> None:
    start(store)
    lob = rng("app.lob#lob", [(5, 0, 300), (5, 900, 300)], splittable=False)
    eng = FakeEngine()
    out = warm_json(make_event([lob]), store=store, engine=lambda: eng, budget=ALWAYS, **NO_SLEEP)
    assert out["status"] == "DONE"
    assert eng.reads == [lob]
    assert store.get_unit(RUN_ID, "u000001").blocks_read == 600


def test_transient_error_retried_then_done(store: Store) -> None:
    start(store)
    r = rng("app.a#table", [(0, 0, 10)])
    eng = FakeEngine(failures=[TransientDatabaseError("lost"), TransientDatabaseError("lost again")])
    slept: list[float] = []
    out = warm_json(make_event([r]), store=store, engine=lambda: eng, budget=ALWAYS, sleep=slept.append)
    assert out["status"] == "DONE"
    assert eng.calls == 3
    assert len(slept) == 2
    unit = store.get_unit(RUN_ID, "u000001").stored()
    assert unit["blocks_read"] == 10 and unit["retries"] == 2  # counted, for the findings


def test_permanent_error_not_retried(store: Store) -> None:
    start(store)
    eng = FakeEngine(failures=[PermanentReadError("dropped")])
    with pytest.raises(PermanentReadError):
        warm_json(make_event([rng("app.a#table", [(0, 0, 10)])]), store=store, engine=lambda: eng,
                  budget=ALWAYS, **NO_SLEEP)
    assert eng.calls == 1
    assert store.get_unit(RUN_ID, "u000001") is None


def test_transient_forever_raises_after_read_attempts(store: Store) -> None:
    start(store)
    eng = FakeEngine(failures=[TransientDatabaseError])  # a class: raised on every call
    with pytest.raises(TransientDatabaseError):
        warm_json(make_event([rng("app.a#table", [(0, 0, 10)])]), store=store, engine=lambda: eng,
                  budget=ALWAYS, read_attempts=4, **NO_SLEEP)
    assert eng.calls == 4
    assert store.get_unit(RUN_ID, "u000001") is None


def test_resume_mid_extent_after_failure(store: Store, ranges: list[ReadRange]) -> None:
    """A failure after some chunks leaves the cursor; the retry reads only the rest."""
    start(store)

    class FailThird(FakeEngine):
        def read_range(self, r: ReadRange) -> ReadResult:
            if len(self.reads) == 2:
                raise PermanentReadError("boom")
            return super().read_range(r)

    first = FailThird()
    with pytest.raises(PermanentReadError):
        warm_json(make_event(ranges), store=store, engine=lambda: first, budget=ALWAYS, **NO_SLEEP)
    second = FakeEngine()
    out = warm_json(make_event(ranges), store=store, engine=lambda: second, budget=ALWAYS, **NO_SLEEP)
    assert out["status"] == "DONE"
    assert read_blocks(first.reads + second.reads) == planned_blocks(ranges)
    assert store.get_run(RUN_ID).blocks_read == 400


class ShortEngine(FakeEngine):
    """Confirms one block less than asked for on the ``short_call``-th read."""

    def __init__(self, short_call: int) -> None:
        super().__init__()
        self.short_call = short_call

    def read_range(self, rng: ReadRange) -> ReadResult:
        result = super().read_range(rng)
        if self.calls == self.short_call:
            return ReadResult(blocks=rng.blocks - 1, bytes=(rng.blocks - 1) * BS, seconds=0.01, method="fake")
        return result


@pytest.mark.parametrize("short_call", [1, 3])
def test_a_short_read_is_never_counted_as_done(store: Store, ranges: list[ReadRange], short_call: int) -> None:
    start(store)
    engine = ShortEngine(short_call)
    event = make_event(ranges)
    with pytest.raises(ShortRead, match="planned blocks"):
        warm_json(event, store=store, engine=lambda: engine, budget=ALWAYS, **NO_SLEEP)
    item = u.stored() if (u := store.get_unit(RUN_ID, "u000001")) else {}
    assert item.get("status") != "DONE"
    assert int(item.get("blocks_read", 0)) == (short_call - 1) * CHUNK_BLOCKS  # the chunks before it, exactly
    assert store.get_run(RUN_ID).units_done == 0


# -- a restart or failover under the warm-up (issue 32 §4) -------------------------------------------
class FakeClock:
    """The wall clock of the outage policy: the retries' sleeps advance it."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class Restarting(FakeEngine):
    """Reads ``before`` chunks, then the session is dropped and the database refuses connections for
    ``down_calls`` calls (``None``: for good)."""

    def __init__(self, before: int, down_calls: int | None) -> None:
        super().__init__()
        self.before, self.down_calls, self.failed = before, down_calls, 0

    def read_range(self, r: ReadRange) -> ReadResult:
        if len(self.reads) >= self.before and (self.down_calls is None or self.failed < self.down_calls):
            self.calls += 1
            self.failed += 1
            raise (ConnectionLost("terminating connection due to administrator command") if self.failed == 1
                   else DatabaseUnreachable("connection refused", reconnectable=True))
        return super().read_range(r)


def test_a_unit_rides_out_a_restart_and_reads_each_block_once(store: Store, ranges: list[ReadRange]) -> None:
    start(store)
    clock = FakeClock()
    eng = Restarting(before=2, down_calls=6)
    out = warm_json(make_event(ranges), store=store, engine=lambda: eng, budget=ALWAYS, sleep=clock.sleep,
                    clock=clock)
    assert out["status"] == "DONE"
    assert read_blocks(eng.reads) == planned_blocks(ranges)  # from the last committed chunk on, once
    unit = store.get_unit(RUN_ID, "u000001").stored()
    assert unit["status"] == "DONE" and unit["blocks_read"] == 400
    assert unit["reconnects"] == 1 and unit["retries"] == 6
    assert unit["longest_outage_seconds"] == pytest.approx(clock.now - 1_000_000.0, abs=0.01)


def test_a_unit_that_starts_while_the_database_is_down_waits_for_it(store: Store, ranges: list[ReadRange]) -> None:
    """The connection is made inside the retries: a unit started during the outage is not FAILED at once."""
    start(store)
    clock, eng, tries = FakeClock(), FakeEngine(), [0]

    def engine() -> FakeEngine:
        tries[0] += 1
        if tries[0] <= 3:
            raise DatabaseUnreachable("the database system is starting up", reconnectable=True)
        return eng

    out = warm_json(make_event(ranges), store=store, engine=engine, budget=ALWAYS, sleep=clock.sleep, clock=clock)
    assert out["status"] == "DONE" and tries[0] == 4
    assert store.get_unit(RUN_ID, "u000001").reconnects == 1


def test_a_refused_login_fails_the_unit_by_name_at_once(store: Store, ranges: list[ReadRange]) -> None:
    start(store)

    def engine() -> FakeEngine:
        raise DatabaseUnreachable("password authentication failed")

    with pytest.raises(DatabaseUnreachable, match="password"):
        warm_json(make_event(ranges), store=store, engine=engine, budget=ALWAYS, **NO_SLEEP)


def test_an_outage_longer_than_the_invocation_continues_from_the_committed_chunk_then_fails_by_name(
        store: Store, ranges: list[ReadRange]) -> None:
    """The invocation's time runs out first (the Lambda's limit): CONTINUE with the outage's clock; the next
    invocation goes on until warmup.reconnect_minutes from the first failure, then the unit fails by name."""
    start(store)
    clock = FakeClock()
    began = clock.now
    eng = Restarting(before=2, down_calls=None)
    budget = Budget(remaining_seconds=lambda: 200 - (clock.now - began), safety_margin_seconds=30.0)
    event = make_event(ranges)
    event["run"]["warmup"]["reconnect_minutes"] = 5
    out = warm_json(event, store=store, engine=lambda: eng, budget=budget, sleep=clock.sleep, clock=clock)
    assert out["status"] == "CONTINUE" and out["cursor"] == {"range": 0, "extent": 1, "offset": 0}
    assert out["outage"]["started_at"] >= began and clock.now - began <= 170
    assert store.get_unit(RUN_ID, "u000001").blocks_read == 256  # the chunks before it stay committed
    nxt = {**event, **{k: out[k] for k in ("cursor", "rate", "outage")}, "status": "CONTINUE"}
    with pytest.raises(DatabaseUnreachable, match="unreachable for 300 s"):
        warm_json(nxt, store=store, engine=lambda: eng, budget=ALWAYS, sleep=clock.sleep, clock=clock)
    assert clock.now - out["outage"]["started_at"] == pytest.approx(300)
    # had the database come back, the next invocation would have read the rest from the committed chunk
    eng.down_calls = 0
    done = warm_json(nxt, store=store, engine=lambda: eng, budget=ALWAYS, sleep=clock.sleep, clock=clock)
    assert done["status"] == "DONE" and read_blocks(eng.reads) == planned_blocks(ranges)


# -- small ranges are committed together (warmup.unit.Batch) -------------------------------------------------
def small_ranges(n: int = 40, blocks: int = 4) -> list[ReadRange]:
    """A catalog's worth of relations: ``n`` ranges of ``blocks`` blocks, each its own chunk."""
    return [rng(f"pg_catalog.r{i}#table", [(0, i * 100, blocks)]) for i in range(n)]


def test_many_small_ranges_are_committed_a_chunks_worth_at_a_time_and_each_block_is_read_once(store: Store) -> None:
    start(store)
    eng, ranges = FakeEngine(), small_ranges()
    out = warm_json(make_event(ranges), store=store, engine=lambda: eng, budget=ALWAYS, **NO_SLEEP)
    assert out["status"] == "DONE" and read_blocks(eng.reads) == planned_blocks(ranges)
    assert len(eng.reads) == 40  # one read a relation, as before
    unit = store.get_unit(RUN_ID, "u000001").stored()
    # 160 blocks: one commit at 128 (a 1 MiB chunk's worth, 32 relations), one at the end: 2 transactions, not 40
    assert unit["seq"] == 2 and len(unit["chunks"]) == 2 and unit["blocks_read"] == 160
    run = store.get_run(RUN_ID)
    assert run.chunks_read == 40 and run.blocks_read == 160 and run.units_done == 1  # chunks counted, not commits


def test_an_error_mid_batch_keeps_the_chunks_before_it_counted_and_the_retry_reads_only_the_rest(store: Store) -> None:
    start(store)
    ranges = small_ranges()

    class FailTenth(FakeEngine):
        def read_range(self, r: ReadRange) -> ReadResult:
            if len(self.reads) == 9:
                raise PermanentReadError("boom")
            return super().read_range(r)

    first = FailTenth()
    with pytest.raises(PermanentReadError):
        warm_json(make_event(ranges), store=store, engine=lambda: first, budget=ALWAYS, **NO_SLEEP)
    unit = store.get_unit(RUN_ID, "u000001").stored()
    assert unit["status"] != "DONE" and unit["blocks_read"] == 9 * 4  # the nine read before it, committed
    second = FakeEngine()
    out = warm_json(make_event(ranges), store=store, engine=lambda: second, budget=ALWAYS, **NO_SLEEP)
    assert out["status"] == "DONE"
    assert read_blocks(first.reads + second.reads) == planned_blocks(ranges)  # no block twice, none missed
    assert store.get_run(RUN_ID).blocks_read == 160


def test_a_budget_stop_commits_the_batch_and_the_next_invocation_goes_on_from_it(store: Store) -> None:
    start(store)
    ranges = small_ranges()
    calls = []

    def remaining() -> float:  # asked before every chunk but the first (always read): time for six, then none
        calls.append(1)
        return 10_000.0 if len(calls) <= 5 else 0.0

    first = FakeEngine()
    out = warm_json(make_event(ranges), store=store, engine=lambda: first,
                    budget=Budget(remaining_seconds=remaining, safety_margin_seconds=30.0), **NO_SLEEP)
    assert out["status"] == "CONTINUE" and len(first.reads) == 6
    unit = store.get_unit(RUN_ID, "u000001").stored()
    assert unit["blocks_read"] == 24 and unit["cursor"] == out["cursor"] == {"range": 6, "extent": 0, "offset": 0}
    second = FakeEngine()
    assert warm_json(make_event(ranges), store=store, engine=lambda: second, budget=ALWAYS,
                     **NO_SLEEP)["status"] == "DONE"
    assert read_blocks(first.reads + second.reads) == planned_blocks(ranges)
