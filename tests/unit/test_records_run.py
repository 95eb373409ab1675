"""The run's records (issue 34 §1): what today's code stores is what the code of before stored, each stored item
of before reads and writes back identical (plus its schema_version), a newer one is refused, and the
deployment's items (``dal.deployment``) keep their conditions."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cutover_prep.dal.deployment import DeploymentTable
from cutover_prep.dal.dynamo import item_of
from cutover_prep.dal.records import evidence
from cutover_prep.dal.records.base import NewerRecord, Record
from cutover_prep.dal.records.deployment import (
    ComparisonItem,
    InstanceOutcome,
    PriceItem,
    ProfileItem,
    RestoreClaim,
    RestoreRejection,
)
from cutover_prep.dal.records.run import (
    PointItem,
    RecordedInput,
    RunItem,
    ScratchItem,
    StorageClaim,
    StorageSample,
    WarmupControl,
)
from cutover_prep.models.benchmark import Benchmark
from cutover_prep.models.warmup import Warmup
from tests.unit.records_scenario import masked, stored_items

BEFORE = json.loads((Path(__file__).with_name("records_before_34.json")).read_text())
LAMBDAS = Path(__file__).resolve().parents[2] / "lambdas" / "cutover_prep"


def record_class(sk: str) -> type[Record] | None:
    """The record of an item by its sort key (None: a unit item, the findings' record)."""
    if sk.startswith("UNIT#"):
        return None
    exact = {"RUN": RunItem, "RDSINIT-CLAIM": StorageClaim, "WARMUP#CONTROL": WarmupControl, "RESTORE": RestoreClaim,
             "PROFILE": ProfileItem, "COMPARISON": ComparisonItem, "PRICE": PriceItem}
    prefixes = {"POINT#": PointItem, "SCRATCH#": ScratchItem, "RDSINIT#": StorageSample, "REJECTED#": RestoreRejection}
    return exact.get(sk) or next(cls for prefix, cls in prefixes.items() if sk.startswith(prefix))


def test_the_items_are_stored_as_the_code_before_the_records_stored_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The judge: items the code of before issue 34 wrote for the same calls (``records_scenario``). Each item
    written whole now carries its schema_version; nothing else differs but the clock's times."""
    monkeypatch.delenv("CUTOVER_PREP_DEPLOYMENT_ID", raising=False)
    now = stored_items()
    assert [(i["pk"], i["sk"]) for i in now] == [(i["pk"], i["sk"]) for i in BEFORE]
    for item, before in zip(now, BEFORE, strict=True):
        assert "schema_version" not in before
        assert masked(_without_newer_options(item)) == masked(before), item["sk"]
    versioned = {i["sk"]["S"].split("#")[0] for i in now if i.get("schema_version") == {"N": "1"}}
    assert versioned == {"RUN", "POINT", "SCRATCH", "RDSINIT", "WARMUP", "RESTORE", "REJECTED", "PROFILE",
                         "COMPARISON", "PRICE"}  # not the unit (the findings') nor the sample claim (one attribute)


NEWER_OPTIONS = ("yielding", "hot_set_cache")


def _without_newer_options(item: dict[str, Any]) -> dict[str, Any]:
    """The item but its schema_version and the run input's options added after ``records_before_34.json`` was
    written (issue 36 §1: ``warmup.yielding``, a new section of the input, and ``warmup.hot_set_cache``, a new
    option: not changes of the records)."""
    out = {k: v for k, v in item.items() if k != "schema_version"}
    warmup = out.get("input", {}).get("M", {}).get("warmup", {}).get("M")
    if warmup is not None:
        out["input"] = {"M": {**out["input"]["M"], "warmup": {"M": {k: v for k, v in warmup.items()
                                                                     if k not in NEWER_OPTIONS}}}}
    return out


@pytest.mark.parametrize("raw", BEFORE, ids=lambda raw: raw["sk"]["S"].split("#")[0])
def test_a_stored_item_of_before_reads_and_writes_back_identical(raw: dict[str, Any]) -> None:
    cls = record_class(raw["sk"]["S"])
    if cls is None:
        pytest.skip("the unit item is the findings' record (records.units)")
    plain = item_of(raw)
    record = cls.read(plain)  # no schema_version: version 1
    assert record.schema_version == 1
    assert record.stored() == {**plain, "schema_version": 1}
    assert cls.read(record.stored()).stored() == record.stored()  # and again


def test_the_records_read_what_their_consumers_read() -> None:
    items = {(i["pk"]["S"], i["sk"]["S"]): item_of(i) for i in BEFORE}
    run = RunItem.read(items[("RUN#r1", "RUN")])
    assert (run.status, run.coverage_pct, run.bytes_read, run.verdict, run.db_instance_identifier) == (
        "SUCCEEDED", 100, 131072, "READY", "db1")
    assert isinstance(run.coverage_pct, int)  # 100.0 comes back as 100 and stays an int (no "100.0" in an event)
    assert run.recorded_input().thresholds().min_coverage_pct == 99.5
    assert run.recorded_input().warmup_options().max_concurrency == 4
    assert run.estimate is not None and run.estimate.estimated_seconds == 12.5 and run.estimate.units is None
    restore = RunItem.read(items[("RUN#r2", "RUN")]).restore
    assert restore is not None and restore.snapshot_identifier == "s1" and restore.max_wait_minutes is None
    assert restore.model_dump(exclude_unset=True) == {"snapshot_identifier": "s1"}  # written back as it was
    sample = StorageSample.read(items[("RUN#r1", "RDSINIT#2001-02-03T04:07:00.000001+00:00#Finalize")])
    assert sample.summary() == {"at": "2001-02-03T04:07:00.000001+00:00", "step": "Finalize", "status": None,
                                "percent": None, "gap": "Throttling"}
    control = WarmupControl.read(items[("RUN#r1", "WARMUP#CONTROL")])
    assert control.version == 1 and control.holders == ["u1"] and "version" not in control.state()
    assert control.control is not None and control.control.level == 2 and control.control.settled is False
    assert control.control.samples == [[1.5, 2, 30.25]] and isinstance(control.control.samples[0][1], int)
    comparison = ComparisonItem.read(items[("COMPARISON#cmp", "COMPARISON")])
    assert comparison.restore_of("cprep-cmp-a").run_id == "cmp-a" and comparison.restore_of("other") is None


def test_a_run_item_of_before_decision_52_reads_the_options_it_was_started_with() -> None:
    old = {"run_id": "old", "target": {"db_instance_identifier": "db"}, "options": {"max_concurrency": 3},
           "verdict_options": {"min_coverage_pct": 90}}
    recorded = RunItem.read(old).recorded_input()
    assert recorded.warmup_options().max_concurrency == 3 and recorded.thresholds().min_coverage_pct == 90
    assert recorded.benchmark_options() == RecordedInput.of(None).benchmark_options()  # the defaults


def test_the_typed_input_sections_of_an_older_run_item_read_with_defaults_and_write_back_as_stored() -> None:
    """Issue 34: target, restore and input are typed; a section stored in part (before a field was added) reads
    with the model's defaults, and the item written back holds what it was read with (no default added, NULL kept,
    an attribute the section does not name kept)."""
    old = {"run_id": "old", "target": {"db_instance_identifier": "db", "engine": None, "later": "x"},
           "restore": None, "input": {"warmup": {"max_concurrency": 3}, "verdict": {"min_coverage_pct": 90}}}
    run = RunItem.read(old)
    recorded = run.recorded_input()
    assert run.db_instance_identifier == "db" and run.restore is None and recorded.target is not None
    assert recorded.target.engine is None and recorded.warmup.chunk_mb == Warmup().chunk_mb  # a default
    assert recorded.warmup.max_concurrency == 3 and recorded.verdict.min_coverage_pct == 90
    assert recorded.benchmark == Benchmark()  # a section the item leaves out: every default
    assert run.stored() == {**old, "schema_version": 1}
    assert RunItem.read(run.stored()).stored() == run.stored()


def test_a_record_a_newer_deployment_wrote_is_refused_by_name() -> None:
    with pytest.raises(NewerRecord, match="RunItem schema_version 2 is newer"):
        RunItem.read({"run_id": "r", "schema_version": 2})
    assert RunItem.read({"run_id": "r", "later_field": 1}).stored() == {  # an attribute it does not name is kept
        "run_id": "r", "later_field": 1, "schema_version": 1}


def test_update_run_refuses_an_attribute_the_run_item_does_not_name(store) -> None:
    store.start_run({"run_id": "r", "target": {"db_instance_identifier": "db"}, "started_at": "2001-01-01"})
    with pytest.raises(TypeError, match="no attribute bytes_raed"):
        store.update_run("r", bytes_raed=1)


# -- dal.deployment against moto ----------------------------------------------------------------------------------
def table(store) -> DeploymentTable:
    return store.deployment


def test_a_restore_is_claimed_once_confirmed_and_a_rejection_told_once(store) -> None:
    items = table(store)
    assert items.claim_restore("db-1", "RDS-EVENT-0043") is True
    assert items.claim_restore("db-1", "schedule") is False  # the other path finds it taken
    assert items.restore_claim("db-1").status == "CLAIMED" and items.restore_claim("db-1").via == "RDS-EVENT-0043"
    items.confirm_restore("db-1", "arn:exec")
    claim = items.restore_claim("db-1")
    assert (claim.status, claim.execution_arn) == ("STARTED", "arn:exec")
    assert items.restore_claim("db-2") is None
    assert items.reject_restore("db-3", "d1", why="bad tag", via="schedule") is True
    assert items.reject_restore("db-3", "d1", why="bad tag", via="RDS-EVENT-0043") is False
    assert items.reject_restore("db-3", "d2", why="another reason", via="schedule") is True


def test_a_comparison_is_started_by_one_execution_and_claimed_only_as_planned(store) -> None:
    items = table(store)
    record = ComparisonItem.new(comparison_id="c", status="RUNNING", execution_arn="arn:me", instances=["i-a"],
                                restores={})
    assert items.start_comparison(record) is True
    assert items.start_comparison(record) is True  # a retried StartComparison of the same execution
    assert items.start_comparison(record.model_copy(update={"execution_arn": "arn:other"})) is False
    assert items.claim_comparison_restore("c", "i-b", run_id="c-b", parent="arn:me") is False  # not planned
    assert items.claim_comparison_restore("c", "i-a", run_id="c-a", parent="arn:other") is False  # not its parent
    assert items.claim_comparison_restore("nope", "i-a", run_id="c-a", parent="arn:me") is False  # no record
    assert items.claim_comparison_restore("c", "i-a", run_id="c-a", parent="arn:me") is True
    assert items.comparison("c").restore_of("i-a").run_id == "c-a"
    items.update_comparison("c", status="SUCCEEDED")
    assert items.claim_comparison_restore("c", "i-a", run_id="c-a", parent="arn:me") is False  # ended
    items.record_reaped("c", [InstanceOutcome(db_instance_identifier="i-a")], [])
    items.record_reaped("c", [InstanceOutcome(db_instance_identifier="i-b")],
                        [InstanceOutcome(db_instance_identifier="i-c")])
    done = items.comparison("c")
    assert [r.db_instance_identifier for r in done.reaped] == ["i-a", "i-b"] and len(done.reaper_left) == 1
    assert done.status == "SUCCEEDED" and items.comparison("none") is None


def test_prices_and_profiles_round_trip(store) -> None:
    items = table(store)
    assert items.price("k") is None and items.profile("p") is None
    items.put_price("k", usd=0.26, fetched="2001-02-03", expires_at=1_800_000_000)
    price = items.price("k")
    assert (price.usd, price.fetched, price.expires_at) == (0.26, "2001-02-03", 1_800_000_000)
    items.put_profile("p", '{"warmup": {}}')
    assert items.profile("p").input == '{"warmup": {}}'


def test_the_store_does_not_expose_its_clients(store) -> None:
    assert not hasattr(store, "ddb") and not hasattr(store, "s3")


# -- the evidence catalogue -------------------------------------------------------------------------------------
def test_the_catalogue_names_each_object_once_and_its_keys_are_where_they_were() -> None:
    names = [e.name for e in evidence.CATALOGUE]
    assert len(names) == len(set(names))
    assert evidence.key("r1", evidence.FINDINGS) == "runs/r1/findings.json"
    assert evidence.key("r1", evidence.sweep_point("seq-8")) == "runs/r1/sweep/points/seq-8.json"
    assert evidence.key("r1", evidence.probe("cold")) == "runs/r1/probes/cold.json"


OWNED = ("comparison/workflow.py", "comparison/result.py", "pricing/book.py", "restore", "gate", "benchmark",
         "metrics", "estimate", "analysis", "live", "steps/validate_input.py", "live/completion.py", "dal/store.py")


def test_no_evidence_name_is_spelled_out_in_the_code_the_records_own() -> None:
    """Issue 34: the evidence's names were string literals in 8 files; in these they are the catalogue's."""
    names = {e.name for e in evidence.CATALOGUE if "<" not in e.name}
    literal = re.compile(r"""["']([\w./-]+\.(?:json|jsonl|md|html|csv))["']""")
    found = []
    for owned in OWNED:
        path = LAMBDAS / owned
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            for number, line in enumerate(file.read_text().splitlines(), 1):
                found += [f"{file.relative_to(LAMBDAS)}:{number}: {m}" for m in literal.findall(line) if m in names]
    assert found == []
