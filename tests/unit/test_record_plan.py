"""The plan's records (dal/records/plan.py) read what Discover writes and write it back as it was."""

from __future__ import annotations

import pytest

from cutover_prep.dal.records.base import NewerRecord
from cutover_prep.dal.records.plan import Plan, PlanUnit
from cutover_prep.dal.store import Store, evidence_key
from cutover_prep.models.warmup import Warmup
from tests.unit.test_census_streaming import run_to_the_end

# plan.json as Discover wrote it before issue 32 (each list inside the document) and before versions were kept
PLAN_OF_BEFORE = {
    "run_id": "r-old", "engine": "postgres",
    "target": {"db_instance_identifier": "db1", "engine": "postgres", "secret_arn": "arn:aws:secretsmanager:x"},
    "options": {"unit_mb": 1, "max_concurrency": 2},
    "summary": {"units": 1, "segments": 1, "bytes": 8192, "ranges": 1, "unit_bytes_target": 1048576,
                "max_unit_bytes": 8192, "mean_unit_bytes": 8192, "oversized_units": 0, "mode": "segments",
                "engine": "postgres", "read_methods": {}, "connection": {"transport": None},
                "selection": "reads 1 relation", "assumed_cold_mib_per_s": 8.0},
    "segments": [{"key": "app/s.t", "bytes": 8192}],
    "oversized_units": [],
    "census": None,
    "mode": "segments", "oversized_segments": [], "datafile_units": [],
}


def test_a_plan_discover_writes_today_reads_and_writes_back_identical(store: Store) -> None:
    run_to_the_end(store, "r-plan")
    stored = store.get_json(evidence_key("r-plan", "plan.json"))
    plan = Plan.read(stored)
    assert plan.stored() == stored  # schema_version included: Discover writes the record
    assert plan.schema_version == Plan.SCHEMA_VERSION
    assert plan.options.unit_mb == 1 and plan.warmup.chunk_mb == Warmup().chunk_mb  # unset: the default
    assert plan.summary.units == len(store.get_json(evidence_key("r-plan", "units.json")))
    assert isinstance(plan.census, dict) and plan.census["key"].endswith(".jsonl")


def test_the_units_of_units_json_write_back_as_the_map_hands_them_on(store: Store) -> None:
    units, _ = run_to_the_end(store, "r-units")
    for unit in units:
        assert "schema_version" not in unit  # the Map's item reaches every WarmUnit event as it is
        assert PlanUnit.model_validate(unit).stored() == unit


def test_a_plan_of_before_reads_and_writes_back_with_its_version_added() -> None:
    plan = Plan.read(PLAN_OF_BEFORE)
    assert plan.stored() == {**PLAN_OF_BEFORE, "schema_version": 1}
    assert plan.census is None and isinstance(plan.segments, list)


def test_a_plan_of_a_newer_schema_is_refused_by_name() -> None:
    with pytest.raises(NewerRecord, match="Plan schema_version 2"):
        Plan.read({**PLAN_OF_BEFORE, "schema_version": 2})
