"""The whole local run on the emulated restored volume: the first-touch penalty is real.

Skipped where FUSE cannot be had (not root, no /dev/fuse, no libfuse3), with the reason;
CI installs it (`make fuse`) so these run there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cutover_prep.engines import PermanentReadError
from cutover_prep.local.emulated import demo_database, unavailable
from cutover_prep.local.runner import LocalOptions, _execute
from cutover_prep.local.volume import DEFAULT_PROFILE

# CI sets CUTOVER_PREP_REQUIRE_FUSE: there these tests run, or fail saying why the volume cannot be had
pytestmark = pytest.mark.skipif(unavailable() is not None and not os.environ.get("CUTOVER_PREP_REQUIRE_FUSE"),
                                reason=f"no emulated volume: {unavailable()}")

SIZE_MB = 40


def options(tmp_path: Path, run_id: str) -> LocalOptions:
    return LocalOptions(out=tmp_path / run_id, size_mb=SIZE_MB, run_id=run_id, progress=False,
                        warmup={"max_concurrency": 8, "unit_mb": 4},
                        benchmark={"probe_blocks": 40, "seconds_per_point": 1, "sessions": [1, 4],
                                   "mbrc_values": [], "io_combine_kb_values": [128],
                                   "metrics_wait_minutes": 0, "compare_limits": False})


def findings(result: dict) -> dict:
    return json.loads((Path(result["out"]) / "findings.json").read_text())


def reason(doc: dict, code: str) -> dict:
    return next(r for r in doc["verdict"]["reasons"] if r["code"] == code)


def test_a_warm_up_of_the_emulated_volume_removes_the_penalty_the_cold_probe_measured(tmp_path):
    with demo_database(SIZE_MB, DEFAULT_PROFILE) as (spec, emulation):
        result = _execute(spec, options(tmp_path, "emulated-ready"), emulation)
    doc = findings(result)
    assert result["status"] == "SUCCEEDED", result.get("cause")
    emulated = doc["storage_emulation"]
    assert emulated["emulated"] is True and emulated["hydrated_pct"] >= 99
    assert emulated["counters"]["fetches"] > 0 and emulated["first_touch_ms"] > 0
    assert emulated["profile"]["storage_type"] == DEFAULT_PROFILE.storage_type
    assert doc["instance"]["emulated"] is True
    assert doc["instance"]["db_instance_class"] == DEFAULT_PROFILE.instance_class  # not moto's db.m5.large
    assert reason(doc, "WARM_VS_COLD")["ok"] is True, reason(doc, "WARM_VS_COLD")
    assert doc["verdict"]["verdict"] == "READY"


def test_a_skipped_warm_up_leaves_the_warm_probe_cold_and_warm_vs_cold_fails(tmp_path):
    def skip(_event):
        raise PermanentReadError("warm-up skipped by the test")

    with demo_database(SIZE_MB, DEFAULT_PROFILE) as (spec, emulation):
        result = _execute(spec, options(tmp_path, "emulated-skipped"), emulation,
                          faults={"handlers.warm_unit": [skip] * 500})
    doc = findings(result)
    assert doc["storage_emulation"]["hydrated_pct"] < 90  # only what the probes and the sweep touched
    warm_vs_cold = reason(doc, "WARM_VS_COLD")
    assert warm_vs_cold["ok"] is False, warm_vs_cold
    assert doc["verdict"]["verdict"] == "NOT_READY"
