"""Issue 32 §8: Finalize's memory does not grow with the plan. The run of benchmarks/finalize_memory.py (Discover and
EndCensus of the code under test on a synthetic volume, units done, failed and never started) at two sizes, its
Finalize measured in this interpreter by tracemalloc (Python's own account of the memory it allocated): the peak at
eight times the objects is within a few MiB of the small one's (before: the plan's segments, the units' ranges and
findings.json's segments list, about 4 KiB an object, 58.5 MiB more here; now about 3.6 MiB: bounded lists
filling, the units' items)."""

from __future__ import annotations

import importlib.util
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from cutover_prep.dal.store import Store, evidence_key
from cutover_prep.steps.finalize import Finalized, finalize

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "finalize_memory.py"
MIB = 2**20


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("finalize_memory_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _peak(bench: Any, n: int, root: Path, *, warm_up: bool = False) -> tuple[int, Finalized]:
    bench.setup(n, root)
    store = Store(dynamodb=bench.FileDynamo(root / "ddb.json"), s3=bench.FileS3(root / "s3"), table=bench.TABLE,
                  bucket=bench.BUCKET)
    if warm_up:  # what a first Finalize in an interpreter allocates once (lazy imports, compiled templates)
        finalize(bench.RUN_ID, store=store)
    tracemalloc.start()
    try:
        out = finalize(bench.RUN_ID, store=store)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, out


def test_finalize_peak_is_flat_in_the_plan_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the evidence writers hold up to one part each (8 MiB) and the readers one read of 1 MiB: parts of 256 KiB and
    # reads of 64 KiB here, so that both sizes fill them and what grows is what is held per object (FileS3 takes
    # parts of any size; S3 would want 5 MiB)
    try:
        from cutover_prep.dal import jsonlines, store
        monkeypatch.setattr(jsonlines, "JSON_LINES_PART_BYTES", 256 * 1024)
        monkeypatch.setattr(jsonlines, "JSON_LINES_READ_BYTES", 64 * 1024)
        monkeypatch.setattr(store, "JSON_LINES_READ_BYTES", 64 * 1024)
    except ImportError:  # the code before issue 32 §8
        pass
    for name in ("AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):  # the setup sets them
        monkeypatch.setenv(name, "us-east-1" if name == "AWS_DEFAULT_REGION" else "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    bench = _bench()
    small, out_small = _peak(bench, 2_000, tmp_path / "small", warm_up=True)
    large, out_large = _peak(bench, 16_000, tmp_path / "large")
    # the same run, eight times larger: NOT_READY both (failed and never-started units), same shape
    assert out_small.verdict == out_large.verdict == "NOT_READY"
    assert out_large.units.total > 7 * out_small.units.total
    # what still grows, about 3.6 MiB: the bounded lists filling up (1,000 listed segments of each status, up to
    # 2,000 unread census rows held to pick the largest 1,000) and the unit items (10 and 75 units)
    assert large - small < 6 * MIB, f"Finalize's peak grew {(large - small) / MIB:.1f} MiB (2k: {small / MIB:.1f} " \
                                    f"MiB, 16k: {large / MIB:.1f} MiB)"
    # findings.json stays bounded: a list of at most 1,000 segments whatever the plan's size
    findings = (tmp_path / "large" / "s3" / evidence_key(bench.RUN_ID, "findings.json")).stat().st_size
    assert findings < 2 * MIB
