"""warm_unit sizes its chunks from a measured rate: the one it was handed (cold probe, assumed, a previous
invocation's first chunks), then its own (moto Store, a fake engine with a set read rate)."""

from __future__ import annotations

import pytest

from cutover_prep.dal.store import Store
from cutover_prep.engines.base import ReadRange, ReadResult
from cutover_prep.models.status import WarmStep
from cutover_prep.models.steps import SlotGiven, UnitRate
from cutover_prep.warmup.planning import MIB
from cutover_prep.warmup.unit import Budget, known_rate
from tests.unit.contexts import warm_json
from tests.unit.test_warmup import BS, RUN_ID, make_event, rng, start


class RateEngine:
    """Reads at ``mib_per_s``: a chunk of N MiB reports N / mib_per_s seconds."""

    def __init__(self, mib_per_s: float) -> None:
        self.mib_per_s, self.reads = mib_per_s, []

    def read_range(self, r: ReadRange) -> ReadResult:
        self.reads.append(r)
        return ReadResult(blocks=r.blocks, bytes=r.bytes, seconds=r.bytes / MIB / self.mib_per_s, method="fake")

    def close(self) -> None:
        pass


def big_event(mib: int, chunk_mb: int = 64, **extra) -> dict:
    event = make_event([rng("app.big#table", [(0, 0, mib * MIB // BS)])])
    event["run"]["warmup"]["chunk_mb"] = chunk_mb
    return {**event, **extra}


ALWAYS = Budget(remaining_seconds=lambda: 10_000.0)


def test_first_chunk_from_the_cold_probes_rate_then_from_the_units_own(store: Store) -> None:
    start(store)
    engine = RateEngine(mib_per_s=2.0)
    event = big_event(100, slot={"granted": True, "rate": {"mib_per_s": 0.5, "source": "cold_probe"}})
    out = warm_json(event, store=store, engine=lambda: engine, budget=ALWAYS)
    sizes = [r.bytes // MIB for r in engine.reads]
    assert sizes[0] == 5  # 10 s at the cold probe's 0.5 MiB/s
    assert set(sizes[1:-1]) == {20}  # then 10 s at the 2 MiB/s it measured
    assert sum(sizes) == 100 and out["status"] == WarmStep.DONE
    assert out["rate"] == {"mib_per_s": 2.0, "source": "first_chunks"}


def test_chunks_never_grow_beyond_chunk_mb(store: Store) -> None:
    start(store)
    engine = RateEngine(mib_per_s=500.0)
    warm_json(big_event(64, chunk_mb=8), store=store, engine=lambda: engine, budget=ALWAYS)
    assert {r.bytes for r in engine.reads} == {8 * MIB}


def test_a_slow_volume_continues_instead_of_outlasting_the_invocation(store: Store) -> None:
    """At 0.05 MiB/s a 64 MiB chunk would take 21 minutes: chunks shrink to 1 MiB (20 s) and the unit
    continues while there is time for one more at half the rate, carrying its rate to the next invocation."""
    start(store)
    engine = RateEngine(mib_per_s=0.05)
    clock = {"left": 120.0}

    def read(r: ReadRange) -> ReadResult:
        result = RateEngine.read_range(engine, r)
        clock["left"] -= result.seconds
        return result

    engine.read_range = read  # type: ignore[method-assign]
    budget = Budget(remaining_seconds=lambda: clock["left"], safety_margin_seconds=30.0)
    probe = {"granted": True, "rate": {"mib_per_s": 0.1, "source": "cold_probe"}}
    out = warm_json(big_event(10, slot=probe), store=store, engine=lambda: engine, budget=budget)
    assert out["status"] == WarmStep.CONTINUE
    # 120 s left: 20 + 20 + 20 s, then 60 - 30 s is less than 40 s (1 MiB at half of 0.05 MiB/s)
    assert [r.bytes for r in engine.reads] == [MIB, MIB, MIB]
    assert out["rate"] == {"mib_per_s": 0.05, "source": "first_chunks"}
    clock["left"] = 120.0
    # the next invocation's event: the Map item (its slot stays, with the probe's rate) and the progress at $.warm,
    # whose measured rate wins
    again = warm_json({**big_event(10, slot=probe), "warm": out}, store=store, engine=lambda: engine, budget=budget)
    assert again["status"] == WarmStep.CONTINUE and [r.bytes for r in engine.reads[3:]] == [MIB, MIB, MIB]
    assert store.get_unit(RUN_ID, "u000001").bytes_read == 6 * MIB


@pytest.mark.parametrize(("event", "expected"), [
    ({"rate": {"mib_per_s": 3.0, "source": "first_chunks"},
      "slot": {"rate": {"mib_per_s": 1.0, "source": "cold_probe"}}}, {"mib_per_s": 3.0, "source": "first_chunks"}),
    ({"slot": {"rate": {"mib_per_s": 1.0, "source": "cold_probe"}}}, {"mib_per_s": 1.0, "source": "cold_probe"}),
    ({"slot": {"granted": True}}, {"mib_per_s": 8.0, "source": "assumed"}),
    ({"rate": {"mib_per_s": 0}}, {"mib_per_s": 8.0, "source": "assumed"}),
])
def test_the_rate_an_invocation_starts_from(event: dict, expected: dict) -> None:
    rates = (UnitRate.model_validate(event["rate"]) if "rate" in event else None,
             SlotGiven.model_validate(event.get("slot") or {}).rate)
    assert known_rate(rates, 8.0).model_dump() == expected


def test_every_committed_chunk_is_counted_on_the_run_for_the_concurrency_window(store: Store) -> None:
    start(store)
    engine = RateEngine(mib_per_s=500.0)
    warm_json(big_event(24, chunk_mb=8), store=store, engine=lambda: engine, budget=ALWAYS)
    run = store.get_run(RUN_ID).stored()
    assert run["chunks_read"] == len(engine.reads) == 3 and run["bytes_read"] == 24 * MIB
