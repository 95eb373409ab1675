"""The warm probe reads a fresh sample, so a warm-up that missed blocks shows in it.

A fake engine plays a volume restored from a snapshot: the first read of a block is
"cold" (it waits ``FIRST_TOUCH_S``) and hydrates it; later reads are immediate. The
cold probe, a warm-up over part of the database and the warm probe then run through the
real probe step (moto Store) and the real verdict.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from cutover_prep.benchmark.steps import probe
from cutover_prep.dal.store import evidence_key
from cutover_prep.engines.locators import PgLocator
from cutover_prep.measure.sample import BlockPicker, block_key, chunk_key, overlap
from cutover_prep.models.benchmark import Benchmark
from cutover_prep.models.steps import RunContext
from tests.unit.contexts import context
from tests.unit.verdict_of_documents import decide

# a first-touch read, long enough that a busy machine's stalls do not double a median; a hydrated one is a dict lookup
FIRST_TOUCH_S = 0.015

TABLE = {"database": "db", "oid": 16385, "fork": "main", "relkind": "r"}
INDEX = {"database": "db", "oid": 16386, "fork": "main", "relkind": "i"}
UNITS = [
    {"unit_id": "u1", "ranges": [{"segment": "db/app.big#table.main", "locator": TABLE,
                                  "extents": [[0, 0, 600], [0, 1000, 400]], "block_size": 8192}]},
    {"unit_id": "u2", "ranges": [{"segment": "db/app.big_idx#index.main", "locator": INDEX,
                                  "extents": [[0, 0, 5000]], "block_size": 8192}]},
]


def picker(seed: int = 7) -> BlockPicker:
    return BlockPicker((r for u in UNITS for r in u["ranges"]), seed=seed)


# ---- the sample -----------------------------------------------------------------------------

def test_a_sample_with_exclusions_leaves_them_out_and_keeps_the_distribution():
    cold = picker(1).sample(300)
    warm = picker(2).sample(300, exclude=cold)
    assert len({block_key(b) for b in warm}) == 300 and overlap(warm, cold) == 0
    assert {b["locator"]["oid"] for b in warm} == {16385}  # block-readable ranges only, as the cold sample
    assert all(0 <= b["block"] < 600 or 1000 <= b["block"] < 1400 for b in warm)  # both extents, nothing between
    assert any(b["block"] >= 1000 for b in warm) and any(b["block"] < 600 for b in warm)


def test_the_same_seed_gives_the_same_sample():
    cold = picker(1).sample(200)
    assert picker(1).sample(200) == cold
    assert picker(2).sample(200, exclude=cold) == picker(2).sample(200, exclude=cold)


BIG = [{"segment": "db/app.huge#table.main", "locator": TABLE, "extents": [[0, 0, 640_000]], "block_size": 8192}]


def test_each_probe_read_is_the_first_touch_of_its_snapshot_block():
    """A restored volume loads 512 KiB at the first read of any block in it: two sampled blocks in one
    snapshot block would time one first touch and one warm read (the old sample did, ~20 % of reads
    on the 321 MiB demo), so the cold probe under-stated the penalty."""
    cold = BlockPicker(BIG, seed=1).sample(2000)
    assert len({chunk_key(b) for b in cold}) == 2000
    warm = BlockPicker(BIG, seed=2).sample(2000, exclude=cold)
    assert not {chunk_key(b) for b in warm} & {chunk_key(b) for b in cold}
    assert chunk_key({"segment": "s", "file_id": 0, "block": 63, "block_size": 8192}) == ("s", 0, 0)
    assert chunk_key({"segment": "s", "file_id": 0, "block": 64, "block_size": 8192}) == ("s", 0, 1)


def test_a_small_database_gives_every_block_it_has_left():
    cold = picker(1).sample(700)
    warm = picker(2).sample(700, exclude=cold)  # 1,000 readable blocks: only 300 are not cold
    assert len(warm) == 300 and overlap(warm, cold) == 0
    assert {block_key(b) for b in warm} | {block_key(b) for b in cold} == {
        ("db/app.big#table.main", 0, n) for n in [*range(600), *range(1000, 1400)]}
    assert picker(3).sample(10, exclude=cold + warm) == []


# ---- a restored volume played by a fake engine ------------------------------------------------

class Volume:
    """Blocks of a volume restored from a snapshot: cold until read once."""

    def __init__(self) -> None:
        self.hydrated: set[tuple[int, int]] = set()
        self.cold_reads: dict[str, int] = {}
        self.phase = ""

    def read(self, oid: int, block: int) -> None:
        if (oid, block) not in self.hydrated:
            time.sleep(FIRST_TOUCH_S)
            self.hydrated.add((oid, block))
            self.cold_reads[self.phase] = self.cold_reads.get(self.phase, 0) + 1

    def warm_up(self, share: float) -> None:
        """The warm-up reads the first ``share`` of every extent (0.0: it was skipped)."""
        for unit in PROBED:
            for rng in unit["ranges"]:
                for _, first, blocks in rng["extents"]:
                    self.hydrated.update((rng["locator"]["oid"], first + n) for n in range(int(blocks * share)))


class Reader:
    def __init__(self, volume: Volume) -> None:
        self.volume = volume

    def read_block(self, locator: PgLocator, file_id: int, block: int) -> None:
        self.volume.read(locator.oid, block)

    def close(self) -> None:
        pass


class Driver:
    engine = "fake"

    def __init__(self, volume: Volume) -> None:
        self.volume = volume

    def counters(self) -> dict[str, float]:
        return {}

    def counts_reads_of(self, spec) -> bool:
        return True

    def latency_histogram(self) -> None:
        return None

    def random_reader(self) -> Reader:
        return Reader(self.volume)

    def close(self) -> None:
        pass


# the probes' database: 64,000 readable blocks of 8 KiB, 1,000 snapshot blocks of 512 KiB, room for a 60-block
# sample (at most a quarter of the snapshot blocks) whose warm reads each lie in a snapshot block of their own
PROBED = [{"unit_id": "u1", "ranges": [{"segment": "db/app.big#table.main", "locator": TABLE,
                                        "extents": [[0, 0, 38_400], [0, 64_000, 25_600]], "block_size": 8192}]}]


@pytest.fixture
def run(store) -> RunContext:
    store.put_json(evidence_key("r1", "units.json"), PROBED)
    bench = Benchmark(probe_blocks=60, seconds_per_point=1, sessions=[1]).model_dump(mode="json")
    return context("r1", benchmark=bench)


def probes_after_warm_up(run: RunContext, store, share: float) -> tuple[dict[str, Any], Volume]:
    volume = Volume()
    for phase, before in (("cold", None), ("warm", lambda: volume.warm_up(share))):
        if before:
            before()
        volume.phase = phase
        probe(run, phase, store=store, open_driver=lambda r, db: Driver(volume))
    findings = {"benchmark": {"probes": {p: store.get_point("r1", f"probe-{p}").stored() for p in ("cold", "warm")}}}
    return findings, volume


def warm_vs_cold(findings: dict[str, Any]) -> dict[str, Any]:
    return next(r for r in decide(findings)["reasons"] if r["code"] == "WARM_VS_COLD")


@pytest.mark.parametrize("share", [0.0, 0.3])
def test_a_warm_up_that_skipped_part_of_the_database_leaves_the_warm_probe_slow(run, store, share):
    """Re-reading the cold probe's blocks (the old warm probe) found them hydrated: warm looked fast."""
    findings, volume = probes_after_warm_up(run, store, share)
    cold, warm = findings["benchmark"]["probes"]["cold"], findings["benchmark"]["probes"]["warm"]
    assert warm["overlap_blocks"] == 0 and warm["blocks_read"] == cold["blocks_read"] == 60
    assert volume.cold_reads["warm"] > 30  # most of the fresh sample was never warmed
    assert warm["latency_us"]["p50"] >= FIRST_TOUCH_S * 1e6  # its median read is a first touch
    reason = warm_vs_cold(findings)
    # either wording names the cause: the warm probe's median as slow as a first touch ("penalty remains"), or,
    # when a loaded machine stretched the 4 ms sleeps of the warm probe past the cold one's (CI of 2026-11-27:
    # 10.7 ms vs 4.1 ms), "warm reads are slower than cold ... blocks the warm-up missed"
    assert reason["ok"] is False
    assert "penalty remains" in reason["message"] or "blocks the warm-up missed" in reason["message"], reason


def test_a_complete_warm_up_leaves_the_fresh_sample_warm(run, store):
    findings, volume = probes_after_warm_up(run, store, 1.0)
    assert volume.cold_reads.get("warm", 0) == 0 and volume.cold_reads["cold"] == 60
    reason = warm_vs_cold(findings)
    assert reason["ok"] is True and reason["message"].startswith("first-touch penalty removed")



def test_the_probe_sample_fits_the_database(store):
    """Issue 33 §4: 500 probe blocks in the 336 MiB demo put 280 of the warm probe's reads in snapshot blocks the cold
    probe had read. A probe reads at most a quarter of the readable 512 KiB snapshot blocks: here 1,000 blocks of
    8 KiB are 16 snapshot blocks (600 and 400 blocks of 64 per snapshot block, rounded up: 10 + 7 = 17; hand-counted),
    so 4 blocks each, and no warm read lies in a snapshot block the cold probe read; the probe says why it read
    fewer than asked."""
    store.put_json(evidence_key("r1", "units.json"), UNITS)
    bench = Benchmark(probe_blocks=500, seconds_per_point=1, sessions=[1]).model_dump(mode="json")
    small = context("r1", benchmark=bench)
    assert BlockPicker((r for u in UNITS for r in u["ranges"]), seed=1).snapshot_blocks == 17
    volume = Volume()
    for phase in ("cold", "warm"):
        volume.phase = phase
        probe(small, phase, store=store, open_driver=lambda r, db: Driver(volume))
    cold, warm = store.get_point("r1", "probe-cold").stored(), store.get_point("r1", "probe-warm").stored()
    assert cold["blocks_planned"] == warm["blocks_planned"] == 4
    cold_sample = store.get_json(evidence_key("r1", "probes/sample.json"))
    warm_sample = store.get_json(evidence_key("r1", "probes/sample-warm.json"))["blocks"]
    assert not {chunk_key(b) for b in warm_sample} & {chunk_key(b) for b in cold_sample}
    assert cold["sized"].startswith("4 blocks, not the 500 of benchmark.probe_blocks")
